"""Which nanobot layout a workspace has — 0.1.4.post4 or 0.3.x — and where each of its files lives.

This is the one place that decides. The decision comes from what is on disk (never from a guess
about which nanobot is installed):

- nanobot 0.3.x marks a workspace with `.nanobot/workspace-id` (32 hex characters) and keeps its
  history in `memory/history.jsonl`; either of them makes a workspace "0.3";
- a workspace with `memory/HISTORY.md` or a `sessions/` folder and neither 0.3 mark is "post4";
- a workspace with none of these follows the config: keys only 0.3.x writes (`contextWindowTokens`,
  `dream`) mean "0.3", anything else "post4".

Where the layouts differ (facts read from the released nanobot-ai 0.3.5):

| what | post4 | 0.3 |
|---|---|---|
| sessions | `<workspace>/sessions/<safe key>.jsonl` | `<config dir>/sessions/<workspace id>/<base64url key>.jsonl` |
| session lock | `sessions/.session-files.lock` (ours) | `.session-files.lock` in that folder (an OS file lock, `filelock`) |
| history | `memory/HISTORY.md` (paragraphs) | `memory/history.jsonl` + `memory/.cursor`, `.dream_cursor` |
| versions of MEMORY.md | `memory/.versions/` (this app's) | the git repository in the workspace (Dream's) |
| bootstrap files | AGENTS, SOUL, USER, TOOLS | AGENTS, SOUL, USER |
"""

from __future__ import annotations

import base64
import binascii
import enum
import logging
import os
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.config import ConfigError
from nanobot_desktop.engine.sessions.lock import LOCK_NAME, session_files_lock
from nanobot_desktop.engine.workspace import atomic_write_text

log = logging.getLogger(__name__)

WORKSPACE_STATE_DIR = ".nanobot"
WORKSPACE_ID_FILE = "workspace-id"
NAMESPACE_MARKER = ".workspace"
SESSION_FILES_LOCK = LOCK_NAME  # ".session-files.lock"
MIGRATION_LOCK = ".workspace-migration.lock"
LOCK_TIMEOUT_S = 30.0
_WORKSPACE_ID = re.compile(r"^[0-9a-f]{32}$")
_UNSAFE_FILENAME_CHARS = '<>:"/\\|?*'
# Config keys (agents.defaults) that only nanobot 0.3.x writes.
_V03_CONFIG_KEYS = ("contextWindowTokens", "context_window_tokens", "dream")


class LayoutKind(enum.Enum):
    POST4 = "post4"
    V03 = "0.3"


class LayoutError(ConfigError):
    """The workspace's 0.3 markers are unusable; the message says which file and what to do (a
    ConfigError, so the app and the CLI report it the same way: one line, nothing changed)."""


# ---- session file naming ---------------------------------------------------------------------------


def post4_file_stem(key: str) -> str:
    """post4's name rule: `telegram:12/3` → `telegram_12_3` (lossy: different keys may collide)."""
    name = key.replace(":", "_")
    for char in _UNSAFE_FILENAME_CHARS:
        name = name.replace(char, "_")
    return name.strip()


def encode_session_key(key: str) -> str:
    """0.3's name rule: the key's UTF-8 in URL-safe base64 without `=` padding (`cli:direct` → `Y2xpOmRpcmVjdA`)."""
    return base64.urlsafe_b64encode(key.encode("utf-8")).decode("ascii").rstrip("=")


def decode_session_stem(stem: str) -> str | None:
    """The key of a canonical 0.3 file name, or None when the name is not one (e.g. a lossy legacy name)."""
    try:
        key = base64.urlsafe_b64decode(stem + "=" * (-len(stem) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return key if key and encode_session_key(key) == stem else None


class SessionPaths:
    """Where the session files of one workspace are and how they are named: post4's rule.

    The session store asks this object for every path, so the same store serves both layouts.
    """

    migrates_global_legacy = True
    shadows_files = False
    """Whether `shadowed` can ever be true (the session index then need not ask for each of 20,000 files)."""

    def __init__(self, sessions_dir: Path) -> None:
        self.sessions_dir = Path(sessions_dir)

    def path_for(self, key: str) -> Path:
        """The file a session is written to."""
        stem = post4_file_stem(key)
        if not stem:
            raise ValueError(f"session key {key!r} gives an empty file name")
        return self.sessions_dir / f"{stem}.jsonl"

    def read_candidates(self, key: str) -> list[Path]:
        """Files a session may be read from, preferred first (the first is always `path_for`)."""
        return [self.path_for(key)]

    def key_from_name(self, path: Path) -> str | None:
        """The key a file name stands for when its metadata line does not say (None: guess as post4 does)."""
        return None

    def shadowed(self, path: Path, key: str) -> bool:
        """True for a file not to list because `key` has its proper file beside it."""
        return False

    def lock(self) -> AbstractContextManager[Any]:
        """Held around every write: `.session-files.lock` in the sessions folder (sessions/lock.py).

        post4 has no lock of its own; we take one anyway, so two of our processes never lose a line.
        It is the same OS lock (flock) that 0.3's `filelock` takes, and the session file functions take
        it too (re-entrant in this process): one mechanism, so they can never wait on each other.
        """
        return session_files_lock(self.sessions_dir)

    @property
    def header_defaults(self) -> dict[str, Any]:
        """Metadata-line keys a new session file starts with besides post4's."""
        return {}


class V03SessionPaths(SessionPaths):
    """0.3's rule: `<config dir>/sessions/<workspace id>/<base64url key>.jsonl`, writes under its file lock."""

    migrates_global_legacy = False  # 0.3 leaves ~/.nanobot/sessions/*.jsonl alone: so do we
    shadows_files = True

    def __init__(self, sessions_dir: Path) -> None:
        super().__init__(sessions_dir)

    def path_for(self, key: str) -> Path:
        if not key:
            raise ValueError("a session key must not be empty")
        return self.sessions_dir / f"{encode_session_key(key)}.jsonl"

    def lossy_path(self, key: str) -> Path:
        """The name an older nanobot gave the same key (files copied in keep it)."""
        return super().path_for(key)

    def read_candidates(self, key: str) -> list[Path]:
        # A session only known under its lossy legacy name is read from there; the first write then
        # creates the canonical file (with everything read), which is the one 0.3.5 loads.
        return [self.path_for(key), self.lossy_path(key)]

    def key_from_name(self, path: Path) -> str | None:
        return decode_session_stem(path.stem)

    def shadowed(self, path: Path, key: str) -> bool:
        canonical = self.path_for(key)
        return path != canonical and decode_session_stem(path.stem) is None and canonical.exists()

    @property
    def header_defaults(self) -> dict[str, Any]:
        return {"last_archived": 0}


# ---- the layout ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkspaceLayout:
    """One workspace's layout and the paths that depend on it."""

    kind: LayoutKind
    root: Path
    data_dir: Path  # the folder of the config file (0.3: of the file a symlinked config points to)
    reason: str  # what on disk decided, for the log and tooltips

    @property
    def is_v03(self) -> bool:
        return self.kind is LayoutKind.V03

    @property
    def label(self) -> str:
        return "nanobot 0.3 workspace" if self.is_v03 else "nanobot 0.1.4 workspace"

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def history_file(self) -> Path:
        return self.memory_dir / ("history.jsonl" if self.is_v03 else "HISTORY.md")

    @property
    def workspace_id_file(self) -> Path:
        return self.root / WORKSPACE_STATE_DIR / WORKSPACE_ID_FILE

    @property
    def sessions_root(self) -> Path:
        """0.3: the folder holding one namespace folder per workspace."""
        return self.data_dir / "sessions"

    @property
    def git_dir(self) -> Path:
        return self.root / ".git"

    @property
    def has_git_versions(self) -> bool:
        """0.3's memory versions live in the workspace's own git repository, when it has one."""
        return self.is_v03 and self.git_dir.is_dir()

    @property
    def bootstrap_files(self) -> tuple[str, ...]:
        return ("AGENTS.md", "SOUL.md", "USER.md") if self.is_v03 else ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")

    def session_paths(self, on_repair: Callable[[str], None] | None = None) -> SessionPaths:
        """The session naming of this layout (0.3: finds or creates the workspace id as 0.3.5 does;
        `on_repair` is told when a damaged id file was repaired)."""
        if not self.is_v03:
            return SessionPaths(self.root / "sessions")
        return V03SessionPaths(self.sessions_root / claim_workspace_id(self.root, self.sessions_root, on_repair))


def _has_v03_config_keys(defaults: Mapping[str, Any] | None) -> bool:
    return bool(defaults) and any(name in defaults for name in _V03_CONFIG_KEYS)  # type: ignore[operator]


def detect_layout(root: Path, config_path: Path, config_defaults: Mapping[str, Any] | None = None,
                  *, new_workspace: str | None = None) -> WorkspaceLayout:
    """Decide the layout of the workspace at `root` from what is on disk.

    `config_defaults` are the raw keys of `agents.defaults` (to read 0.3-only keys); `new_workspace`
    ("post4" or "0.3") is the choice for a folder that has no nanobot files yet.
    """
    root = Path(root)
    memory = root / "memory"

    def make(kind: LayoutKind, reason: str) -> WorkspaceLayout:
        # 0.3.x keeps its sessions (and run/, cron's old store) beside the *resolved* config: a symlinked
        # config.json means the folder of its target, so both programs continue the same conversations.
        config = Path(config_path)
        data_dir = config.resolve(strict=False).parent if kind is LayoutKind.V03 else config.parent
        return WorkspaceLayout(kind=kind, root=root, data_dir=data_dir, reason=reason)

    if (root / WORKSPACE_STATE_DIR / WORKSPACE_ID_FILE).exists():
        return make(LayoutKind.V03, f"{WORKSPACE_STATE_DIR}/{WORKSPACE_ID_FILE} exists")
    if (memory / "history.jsonl").exists():
        return make(LayoutKind.V03, "memory/history.jsonl exists")
    if (memory / "HISTORY.md").exists():
        return make(LayoutKind.POST4, "memory/HISTORY.md exists")
    if (root / "sessions").is_dir():
        return make(LayoutKind.POST4, "the workspace has a sessions/ folder")
    if new_workspace == LayoutKind.V03.value:
        return make(LayoutKind.V03, "chosen for a new workspace")
    if new_workspace == LayoutKind.POST4.value:
        return make(LayoutKind.POST4, "chosen for a new workspace")
    if _has_v03_config_keys(config_defaults):
        return make(LayoutKind.V03, "the config has nanobot 0.3 keys (contextWindowTokens, dream)")
    return make(LayoutKind.POST4, "no nanobot 0.3 marks on disk")


# ---- the workspace id (0.3) -----------------------------------------------------------------------


def _read_id(marker: Path) -> str | None:
    """The id in `.nanobot/workspace-id`; None when the file is damaged (a link, not an id, unreadable)."""
    if marker.is_symlink():
        return None
    try:
        value = marker.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        return None
    return value if _WORKSPACE_ID.fullmatch(value) else None


def _move_aside(path: Path) -> None:
    """Keep a damaged id file that is a link or a folder under another name, so a new one can be written."""
    aside = path.with_name(f"{path.name}.damaged-{secrets.token_hex(4)}")
    os.rename(path, aside)


def _recorded_workspace(namespace: Path) -> Path | None:
    marker = namespace / NAMESPACE_MARKER
    try:
        text = marker.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        return None
    return Path(text).expanduser().resolve(strict=False) if text else None


def _same_place(a: Path, b: Path) -> bool:
    try:
        return a == b or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _find_namespace(root: Path, sessions_root: Path) -> str | None:
    """A namespace folder whose `.workspace` names this workspace (its id file was lost)."""
    if not sessions_root.is_dir():
        return None
    found = [entry.name for entry in sessions_root.iterdir()
             if _WORKSPACE_ID.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink()
             and (recorded := _recorded_workspace(entry)) is not None and _same_place(recorded, root)]
    if len(found) > 1:
        raise LayoutError(f"several session folders in {sessions_root} claim {root}; remove the stale one")
    return found[0] if found else None


@contextmanager
def _migration_lock(sessions_root: Path) -> Iterator[None]:
    from filelock import FileLock

    sessions_root.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(sessions_root, 0o700)  # as 0.3 creates it: conversations are private
    except OSError:
        pass
    with FileLock(str(sessions_root / MIGRATION_LOCK), timeout=LOCK_TIMEOUT_S):
        yield


def claim_workspace_id(root: Path, sessions_root: Path, on_repair: Callable[[str], None] | None = None) -> str:
    """The workspace's id, and its session folder made ready, following 0.3.5's rules.

    Reads `.nanobot/workspace-id`; without it, recovers the id from a session folder that names this
    workspace, else makes a new random one. The folder `<sessions root>/<id>` gets a `.workspace` file
    naming the workspace. A workspace copied elsewhere (its folder's `.workspace` names another
    existing workspace) gets a fresh id, so two copies never share one session folder.

    A damaged id file (anything may write in the workspace, a command too) is repaired the same way
    (the id recovered from the session folder naming this workspace, else a new one), and `on_repair`
    is told, instead of every later turn failing on it.
    """
    root = Path(root).resolve(strict=False)
    marker = root / WORKSPACE_STATE_DIR / WORKSPACE_ID_FILE
    with _migration_lock(sessions_root):
        damaged = marker.exists() or marker.is_symlink()
        read = _read_id(marker) if damaged else None
        if read is not None:
            workspace_id = read
        else:
            workspace_id = _find_namespace(root, sessions_root) or secrets.token_hex(16)
            if marker.is_symlink() or marker.is_dir():
                _move_aside(marker)
            atomic_write_text(marker, f"{workspace_id}\n")
            if damaged and on_repair is not None:
                on_repair(f"{marker} did not hold a workspace id; it was rewritten with {workspace_id} "
                          "(the id of this workspace's session folder, or a new one).")
        for _attempt in range(3):
            namespace = sessions_root / workspace_id
            if namespace.is_symlink():
                raise LayoutError(f"{namespace} must not be a symlink")
            recorded = _recorded_workspace(namespace)
            if not namespace.exists() or recorded is None:
                if namespace.exists() and recorded is None and any(
                        entry.name != NAMESPACE_MARKER for entry in namespace.iterdir()):
                    raise LayoutError(f"{namespace} holds sessions but no {NAMESPACE_MARKER} file naming "
                                      "its workspace; nanobot 0.3 refuses it too")
                namespace.mkdir(parents=True, exist_ok=True)
                atomic_write_text(namespace / NAMESPACE_MARKER, f"{root}\n")
                return workspace_id
            if recorded == root:
                return workspace_id
            if _same_place(recorded, root) or not recorded.exists():
                atomic_write_text(namespace / NAMESPACE_MARKER, f"{root}\n")  # moved or renamed
                return workspace_id
            workspace_id = secrets.token_hex(16)  # a copy of another live workspace: its own folder
            atomic_write_text(marker, f"{workspace_id}\n")
    raise LayoutError(f"could not give {root} a session folder of its own in {sessions_root}")


def prepare_workspace(root: Path, kind: LayoutKind) -> list[Path]:
    """Set up a folder as a workspace of `kind` (missing files only; nothing is overwritten).

    For 0.3 this makes what `nanobot onboard` of 0.3.5 makes: the template files with an empty
    `memory/history.jsonl` (no HISTORY.md, no TOOLS.md) and the memory repository. The workspace id
    and its session folder follow when the engine first opens it.
    """
    from nanobot_desktop.engine.memory.git import MemoryGit
    from nanobot_desktop.engine.workspace import Workspace

    workspace = Workspace.at(root)
    created = workspace.sync_templates(v03=kind is LayoutKind.V03)
    if kind is LayoutKind.V03:
        MemoryGit(workspace.root).init()
    return created


# ---- 0.3 settings kept in the config (read and written as the CLI's own keys) ----------------------

DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000  # what `nanobot onboard` of 0.3.5 writes
DEFAULT_DREAM = {"enabled": True, "intervalH": 2, "modelOverride": None}


def context_window_tokens(layout: WorkspaceLayout, defaults_extra: Mapping[str, Any] | None) -> int:
    """0.3's token window (`agents.defaults.contextWindowTokens`) for a 0.3 workspace; 0 for post4."""
    if not layout.is_v03:
        return 0
    value = (defaults_extra or {}).get("contextWindowTokens", DEFAULT_CONTEXT_WINDOW_TOKENS)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else DEFAULT_CONTEXT_WINDOW_TOKENS


DEFAULT_MAX_CONCURRENT_SUBAGENTS = 4  # 0.3.5's default (its schema: an int, at least 1)


def max_concurrent_subagents(defaults_extra: Mapping[str, Any] | None) -> int:
    """`agents.defaults.maxConcurrentSubagents` (0.3.x), 4 when absent or not a whole number of at least 1."""
    extra = defaults_extra or {}
    value = extra.get("maxConcurrentSubagents", extra.get("max_concurrent_subagents"))
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return DEFAULT_MAX_CONCURRENT_SUBAGENTS


def dream_settings(defaults_extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """`agents.defaults.dream` with 0.3.5's defaults filled in (keys as the CLI writes them)."""
    raw = (defaults_extra or {}).get("dream")
    merged = dict(DEFAULT_DREAM)
    if isinstance(raw, Mapping):
        merged.update(raw)
        for snake, camel in (("interval_h", "intervalH"), ("model_override", "modelOverride")):
            if snake in raw and camel not in raw:
                merged[camel] = merged.pop(snake)
    return merged
