"""The session store's file layer: where files are, their locks, loading (cached, tail only for a turn),
and the record of each file as the store last wrote or loaded it, which tells its own writes from
outside changes. `SessionStore` (sessions/store.py) owns one and hands it to its `SessionWriter`
(sessions/writing.py); neither inherits from it.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.events import Event, EventBus, Notice, SessionChanged, SessionLinesLost
from nanobot_desktop.engine.layout import SessionPaths
from nanobot_desktop.engine.changes import ChangeTracker
from nanobot_desktop.engine.sessions.changes import SessionChanges, Signature, signature_of
from nanobot_desktop.engine.sessions.export import derive_title
from nanobot_desktop.engine.sessions.file import (
    HEADER_KEYS, ParsedSession, file_name_problem, leads_out, parse_header, parse_session_bytes, read_first_line,
)
from nanobot_desktop.engine.sessions.listing import SessionInfo, mtime_iso
from nanobot_desktop.engine.sessions.own_lines import OwnLines
from nanobot_desktop.engine.sessions.paging import SessionPage, read_page, read_tail
from nanobot_desktop.engine.sessions.session import Session, valid_offset
from nanobot_desktop.engine.sync.merge import session_conflict_copies

log = logging.getLogger(__name__)


class SessionFiles:
    """Paths, locks, loading and change records of one workspace's session files (see `SessionStore`)."""

    def __init__(self, sessions_dir: Path | None = None, legacy_dir: Path | None = None,
                 paths: SessionPaths | None = None, bus: EventBus | None = None,
                 changes: ChangeTracker | None = None) -> None:
        """`paths` (from engine/layout.py) decides where files are and how they are named: post4's rule
        under `sessions_dir` by default, 0.3's base64url names and file lock for a 0.3 workspace.
        `changes` is the engine's one change tracker (a store of its own when None)."""
        if paths is None:
            if sessions_dir is None:
                raise ValueError("a SessionStore needs a sessions folder or a SessionPaths")
            paths = SessionPaths(Path(sessions_dir))
        self.paths = paths
        self.sessions_dir = paths.sessions_dir
        self._legacy_dir = Path(legacy_dir) if legacy_dir is not None else None
        self.bus = bus
        self._told_links: set[tuple[Path, str]] = set()  # session files refused as links out (_leads_out)
        self.cache: dict[str, Session] = {}
        self.summaries: dict[Path, tuple[tuple[int, ...], SessionInfo]] = {}
        self.changes = SessionChanges(paths.key_from_name, changes)  # each file as the store last wrote or loaded it
        self.own = OwnLines()  # what this run appended, to notice another program erasing it
        self.suspect: Callable[[str], str] = lambda _key: ""  # who may have erased lines (set by the Engine)
        # Sessions may be written from the event loop and from executor threads.
        self.lock = threading.RLock()

    # --- paths -------------------------------------------------------------------------------------

    @property
    def legacy_dir(self) -> Path:
        """Where nanobot kept sessions before they moved into the workspace (read from HOME each time)."""
        return self._legacy_dir if self._legacy_dir is not None else Path.home() / ".nanobot" / "sessions"

    @property
    def trash_dir(self) -> Path:
        return self.sessions_dir / ".trash"

    @property
    def archive_dir(self) -> Path:
        return self.sessions_dir / ".archive"

    def path_for(self, key: str) -> Path:
        try:
            path: Path | None = self.paths.path_for(key)
        except ValueError:
            path = None
        problem = file_name_problem(path.stem if path is not None else "", key)
        if problem or path is None:
            raise ValueError(problem)
        return path

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Held around every write: our thread lock, and the layout's file lock (`.session-files.lock`)."""
        with self.lock, self.paths.lock():
            yield

    # --- loading -----------------------------------------------------------------------------------

    def get_or_create(self, key: str) -> Session:
        """The cached session, else the one on disk, else a new empty one (no file until first write).

        A cached session whose file changed outside is read again here (the loop calls this when a turn
        starts, so a session is never swapped under a running turn).
        """
        with self.lock:
            cached = self.cache.get(key)
            if cached is not None and not self.changes.is_stale(key):
                return cached
            session, signature = self._read(key, tail=True)
            if session is None:
                session = Session(key=key, path=self.path_for(key), header_extra=dict(self.paths.header_defaults))
            self.cache[key] = session
            self.changes.loaded(session.path, key, signature)
            return session

    def cached(self, key: str) -> Session | None:
        """The session this store holds for `key` (None when it has not been read); never reads the file."""
        with self.lock:
            return self.cache.get(key)

    def load(self, key: str) -> Session | None:
        """A fresh read of the session's file (the cache and its record are left alone); None when there
        is no file."""
        return self._read(key)[0]

    def read_metadata(self, key: str) -> dict[str, Any]:
        """The `metadata` of the session's metadata line, read from that line alone ({} when there is
        no file or no such line): what a question about the session as a whole needs, without
        parsing its messages (a long session's file is many megabytes)."""
        for candidate in self.paths.read_candidates(key):
            try:
                header = parse_header(read_first_line(candidate))
            except FileNotFoundError:
                continue
            metadata = header.get("metadata") if header is not None else None
            return metadata if isinstance(metadata, dict) else {}
        return {}

    def _read(self, key: str, tail: bool = False) -> tuple[Session | None, Signature | None]:
        """The session on disk and the signature taken just before reading it (so a change made while
        reading shows up as a change later, never as missed). With `tail`, only the messages from
        `last_consolidated` on are parsed when the file allows it (sessions/paging.py): what a turn
        needs, at a fraction of the cost for a long session."""
        path = self.path_for(key)
        with self.lock:
            self._migrate_legacy(path)
            for candidate in self.paths.read_candidates(key):
                if self._leads_out(candidate):
                    continue
                signature = signature_of(candidate)
                try:
                    data = candidate.read_bytes()
                except FileNotFoundError:
                    continue
                quick = read_tail(candidate, data) if tail else None
                if quick is not None:
                    session = self._session_from_parsed(key, candidate, quick.parsed, quick.size, quick.base)
                    session.head_title = derive_title(quick.head_messages)
                else:
                    session = self._session_from_bytes(key, candidate, data)
                session.path = path  # read from a legacy name, written (in full) under the current one
                # The current file's signature: a legacy name read means the current file is not there yet.
                return session, signature if candidate == path else None
        return None, None

    def read_page(self, key: str, end: int | None = None, min_messages: int = 100) -> SessionPage:
        """Messages of the session's file before byte `end` (None: its end), at least `min_messages`
        and starting at a user message: what the chat shows of a long session, page by page (an empty
        page when there is no file). Never parses the rest of the file."""
        with self.lock:
            self._migrate_legacy(self.path_for(key))
            for candidate in self.paths.read_candidates(key):
                try:
                    return read_page(candidate, end, min_messages)
                except FileNotFoundError:
                    continue
        return SessionPage([], 0, 0)

    def invalidate(self, key: str) -> None:
        with self.lock:
            self.cache.pop(key, None)
            self.changes.forget(key)

    # --- who changed a session -------------------------------------------------------------------------

    def notice_changes(self, paths: Iterable[Path] | None = None) -> list[str]:
        """Compare session files with what the store last wrote or loaded; publish one
        `SessionChanged(outside=True)` per file that differs, and return their keys.

        `paths` are files a watcher saw change (anything not a `sessions/*.jsonl` is ignored); None
        checks every session file and every file the store has written. The store's own writes are
        never found here: they were recorded when made.
        """
        events: list[Event] = []
        with self.lock:
            folder = self.sessions_dir.resolve()
            if paths is None:
                candidates = self.changes.paths() | set(self.sessions_dir.glob("*.jsonl"))
            else:
                candidates = {self.sessions_dir / Path(p).name for p in paths
                              if Path(p).suffix == ".jsonl" and Path(p).resolve().parent == folder}
            lost: list[Event] = []
            for path in sorted(candidates):
                event = self.changes.check(path)
                if event is not None:
                    events.append(event)
                    lost += self._erased(path, event.session_key)
        self.publish([*events, *lost])
        return [event.session_key for event in events if isinstance(event, SessionChanged)]

    def _erased(self, path: Path, key: str) -> list[Event]:
        """The event for lines this run appended that the outside change took away (none: []). A sync
        tool's conflict copy beside the file holds them: the merge puts them back, nothing is lost."""
        if session_conflict_copies(path.parent, path.name):
            return []
        missing = self.own.check(path, key)
        if not missing:
            return []
        by = self.suspect(key)
        log.warning("%d message(s) the app wrote to session %s were erased from %s%s; kept for putting back",
                    len(missing), key, path, f" (probably by {by})" if by else "")
        return [SessionLinesLost(key, count=len(missing), by=by)]

    def before_write(self, session: Session) -> list[Event]:
        """A change of the session's file that the store did not make is reported before it writes
        (with the app's lines it took away, if any)."""
        self.own_path(session)
        event = self.changes.check(session.path, session.key)
        return [event, *self._erased(session.path, session.key)] if event is not None else []

    def after_write(self, session: Session, reason: str, turn_id: str = "") -> SessionChanged:
        """Record the file as the store left it; returns the event that says so."""
        event = self.changes.wrote(session.path, session.key, reason, turn_id)
        session.size = event.size
        return event

    def _leads_out(self, path: Path) -> bool:
        """A session file that is a link out of its folder, or has another hard link, is not read (its
        history would go to the model, its appends to the other file); told once as a Notice."""
        target = leads_out(path)
        if target is None:
            return False
        if (path, target) not in self._told_links:
            self._told_links.add((path, target))
            log.warning("not reading session file %s: it leads out of its folder (%s)", path, target)
            if self.bus is not None:
                self.bus.publish(Notice("", topic=f"own-file:{path}", text=(
                    f"{path} was not read: it leads out of the session folder ({target}). The conversation starts "
                    "afresh in a new file there; replace the link with the file itself to keep it.")))
        return True

    def publish(self, events: Sequence[Event]) -> None:
        """Called outside the lock: subscribers may call back into the store."""
        if self.bus is not None:
            for event in events:
                self.bus.publish(event)

    def migrate_legacy_sessions(self) -> list[Path]:
        """Move every session of the old global `~/.nanobot/sessions/` into this workspace.

        The original moves a legacy file only when that session is next opened; doing it up front lets the
        session list show them. A file the workspace already has is left where it is.
        """
        moved: list[Path] = []
        if not self.paths.migrates_global_legacy or not self.legacy_dir.is_dir():
            return moved
        with self.lock:
            for legacy in sorted(self.legacy_dir.glob("*.jsonl")):
                target = self.sessions_dir / legacy.name
                if not target.exists():
                    self._migrate_legacy(target)
                    moved.append(target)
        return moved

    def _migrate_legacy(self, path: Path) -> None:
        """Move `~/.nanobot/sessions/<name>` into the workspace, as the original does, if only it exists."""
        if path.exists() or not self.paths.migrates_global_legacy:
            return
        legacy = self.legacy_dir / path.name
        if legacy.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(legacy), str(path))
            log.info("moved legacy session %s to %s", legacy, path)

    @staticmethod
    def _session_from_bytes(key: str, path: Path, data: bytes) -> Session:
        return SessionFiles._session_from_parsed(key, path, parse_session_bytes(data, path.name), len(data), 0)

    @staticmethod
    def _session_from_parsed(key: str, path: Path, parsed: ParsedSession, size: int, base: int) -> Session:
        """A Session of `parsed`, whose messages are numbered from `base` (the loaded tail's first)."""
        warnings = parsed.warnings
        header = parsed.header or {}
        fallback = mtime_iso(path)
        created = header.get("created_at")
        updated = header.get("updated_at")
        metadata = header.get("metadata", {})
        if not isinstance(metadata, dict):
            warnings.append(f"{path.name}: metadata is not an object; ignored")
            metadata = {}
        raw_offset = header.get("last_consolidated", 0)
        archived = header.get("last_archived")  # nanobot 0.3 reads this name first
        if isinstance(archived, int) and not isinstance(archived, bool):
            raw_offset = archived
        offset = valid_offset(raw_offset, base + len(parsed.messages))
        if offset != raw_offset:
            warnings.append(f"{path.name}: last_consolidated {raw_offset!r} is out of range for "
                            f"{base + len(parsed.messages)} messages; using {offset}")
        for warning in warnings:
            log.warning("%s", warning)
        return Session(
            key=key, messages=parsed.messages, size=size, base=base,
            created_at=created if isinstance(created, str) else fallback,
            updated_at=updated if isinstance(updated, str) else fallback,
            metadata=metadata, last_consolidated=offset, path=path, warnings=warnings,
            header_extra={k: v for k, v in header.items() if k not in HEADER_KEYS},
        )

    def own_path(self, session: Session) -> None:
        if session.path == Path():  # a Session built by hand, not by this store
            session.path = self.path_for(session.key)
