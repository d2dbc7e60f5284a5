"""The workspace folder: its paths, template sync, and the one way this project writes files.

Every rewrite goes through `atomic_write_text`/`atomic_write_bytes` (temp file in the same folder,
fsync, rename), and every log-like file grows through `append_text`, which writes whole lines in one
call. A kill at any moment therefore leaves either the old file or the new one, never half of each.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nanobot_desktop.data import templates_dir

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
HEARTBEAT_FILE = "HEARTBEAT.md"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new content."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            shutil.copymode(path, tmp_name)
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    """UTF-8 text version of `atomic_write_bytes` (no newline translation, so bytes are predictable)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def append_text(path: Path, text: str) -> int:
    """Append `text` (whole lines, ending in a newline) with a single write; return the bytes written."""
    if text and not text.endswith("\n"):
        raise ValueError("append_text only appends whole lines (text must end with a newline)")
    data = text.encode("utf-8")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(data)


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Workspace:
    """Paths inside one nanobot workspace (layout of nanobot 0.1.4.post4)."""

    root: Path

    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> "Workspace":
        return cls(Path(path).expanduser().resolve())

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def memory_file(self) -> Path:
        return self.memory_dir / "MEMORY.md"

    @property
    def history_file(self) -> Path:
        return self.memory_dir / "HISTORY.md"

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def heartbeat_file(self) -> Path:
        return self.root / HEARTBEAT_FILE

    def bootstrap_path(self, name: str) -> Path:
        return self.root / name

    def looks_like_nanobot_workspace(self) -> bool:
        """True for a folder the nanobot CLI (or this app) has already set up."""
        return ((self.root / "AGENTS.md").is_file() or self.memory_file.is_file() or self.sessions_dir.is_dir()
                or (self.memory_dir / "history.jsonl").is_file())  # nanobot 0.3 (engine/layout.py)

    def sync_templates(self, *, v03: bool = False) -> list[Path]:
        """Create whatever of the template file set is missing; never overwrite. Returns what was created.

        `v03`: the set of a nanobot 0.3 workspace (engine/layout.py): `memory/history.jsonl` instead of
        HISTORY.md, and no TOOLS.md (0.3 neither creates nor reads it).
        """
        created: list[Path] = []
        source = templates_dir()
        self.root.mkdir(parents=True, exist_ok=True)
        for template in sorted(source.glob("*.md")):
            if v03 and template.name == "TOOLS.md":
                continue
            target = self.root / template.name
            if not target.exists():
                atomic_write_bytes(target, template.read_bytes())
                created.append(target)
        memory_template = source / "memory" / "MEMORY.md"
        if not self.memory_file.exists():
            atomic_write_bytes(self.memory_file, memory_template.read_bytes())
            created.append(self.memory_file)
        history = self.memory_dir / "history.jsonl" if v03 else self.history_file
        if not history.exists():
            atomic_write_bytes(history, b"")
            created.append(history)
        if not self.skills_dir.exists():
            self.skills_dir.mkdir(parents=True)
            created.append(self.skills_dir)
        return created
