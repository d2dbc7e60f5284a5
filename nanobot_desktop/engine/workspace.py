"""The workspace folder: its paths, template sync, and the one way this project writes files.

Every rewrite goes through `atomic_write_text`/`atomic_write_bytes` (temp file in the same folder,
fsync, rename), and every log-like file grows through `append_text`, which writes whole lines in one
call. A kill at any moment therefore leaves either the old file or the new one, never half of each.

A write that fails (disk full, file size limit, read-only file system, no permission, I/O error)
leaves the file exactly as it was — a short append is truncated back, a failed rewrite never reaches
the rename — and is raised as a `StorageError`: an OSError whose text is one sentence naming the file
and what to do, as the CLI and the window show it.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from nanobot_desktop.data import templates_dir
from nanobot_desktop.engine.own_files import OwnFiles

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
HEARTBEAT_FILE = "HEARTBEAT.md"


class StorageError(OSError):
    """A write that did not happen, told as one sentence a person can act on.

    It is an OSError (same errno and file name), so code that already catches OSError keeps working;
    `str()` is the plain sentence, and `sentence(consequence)` adds what the failure means for the
    person ("your message was not saved").
    """

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause), str(path))
        self.path = Path(path)
        self.cause = cause
        self.problem, self.advice = _describe(self.path, cause)

    def sentence(self, consequence: str = "") -> str:
        """`The disk holding /x is full: free some space; your message was not saved.`"""
        tail = f"; {consequence}" if consequence else ""
        return f"{self.problem}: {self.advice}{tail}."

    def __str__(self) -> str:
        return self.sentence()


def _describe(path: Path, cause: OSError) -> tuple[str, str]:
    """(what happened, what to do) for the errors a full, read-only or failing disk produces."""
    number = cause.errno
    folder = path.parent
    if number == errno.ENOSPC:
        return f"The disk holding {folder} is full", "free some space"
    if number == getattr(errno, "EDQUOT", -1):
        return f"Your disk quota for {folder} is used up", "free some space"
    if number == errno.EFBIG:
        return (f"{path} cannot grow any larger (the file size limit was reached)",
                "raise the limit or move the file away")
    if number == errno.EROFS:
        return f"{folder} is on a read-only file system", "make it writable or use another folder"
    if number in (errno.EACCES, errno.EPERM):
        return f"You have no permission to write {path}", "fix the permissions of the file and its folder"
    if number == errno.EIO:
        return f"The disk holding {path} reported an I/O error", "check the disk"
    reason = cause.strerror or type(cause).__name__
    return f"{path} could not be written ({reason})", "check the disk and the folder"


def storage_error(path: Path, cause: OSError) -> StorageError:
    """`cause` as a StorageError for `path` (an existing StorageError is passed through)."""
    return cause if isinstance(cause, StorageError) else StorageError(path, cause)


def atomic_write_bytes(path: Path, data: bytes, *, sync_folder: bool = True) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new content.

    A failure (disk full, read-only folder, …) leaves the old file untouched and no temp file behind,
    and is raised as a StorageError naming `path`. `sync_folder=False` leaves the fsync of the folder
    (which makes the rename itself durable) to the caller, who writes several files into one folder
    and syncs it once after the last (`sync_folders`).
    """
    path = Path(path)
    tmp_name: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            shutil.copymode(path, tmp_name)
        os.replace(tmp_name, path)
        tmp_name = None
    except OSError as error:
        raise storage_error(path, error) from error
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
    if sync_folder:
        _fsync_dir(path.parent)


def sync_folders(folders: set[Path]) -> None:
    """fsync each folder: the renames of `atomic_write_bytes(..., sync_folder=False)` into it are durable."""
    for folder in sorted(folders):
        _fsync_dir(folder)


def atomic_write_text(path: Path, text: str) -> None:
    """UTF-8 text version of `atomic_write_bytes` (no newline translation, so bytes are predictable)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def append_text(path: Path, text: str, *, repair_tail: bool = False) -> int:
    """Append `text` (whole lines, ending in a newline); return the bytes written.

    All or nothing: a failed or short write (disk full, file size limit, I/O error) is undone by
    truncating the file back to its length before the call, and raised as a StorageError. With
    `repair_tail`, a last line left unterminated by a crash gets its newline in the *same* write, so
    a repair that cannot be completed is undone together with the lines.
    """
    if text and not text.endswith("\n"):
        raise ValueError("append_text only appends whole lines (text must end with a newline)")
    data = text.encode("utf-8")
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
    except OSError as error:
        raise storage_error(path, error) from error
    try:
        return append_to_fd(fd, path, data, repair_tail=repair_tail)
    finally:
        os.close(fd)


def append_to_fd(fd: int, path: Path, data: bytes, *, repair_tail: bool = False, sync: bool = True) -> int:
    """The all-or-nothing append of `append_text` on an open (O_APPEND, readable) descriptor.

    `sync=False` leaves the fsync to the caller, who must fsync the same file before reporting the
    append as done (session appends: one fsync covers the new lines and the metadata line)."""
    before = os.fstat(fd).st_size
    if repair_tail and before and _byte_at(fd, before - 1) != b"\n":
        data = b"\n" + data
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.EIO, "the write made no progress")
            view = view[written:]
        if sync:
            os.fsync(fd)
    except OSError as error:
        truncate_back(fd, before)
        raise storage_error(path, error) from error
    return len(data)


def _byte_at(fd: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 1, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # Windows: the append still goes to the end (O_APPEND)
    return os.read(fd, 1)


def truncate_back(fd: int, length: int) -> None:
    """Undo a partial append. Truncating never needs free space, so this works on a full disk."""
    try:
        os.ftruncate(fd, length)
        os.fsync(fd)
    except OSError:
        pass  # nothing more can be done; the caller reports the original failure


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


class WorkspaceError(Exception):
    """The workspace path cannot be used as a workspace (e.g. it is a file); the text says what to do."""


@dataclass(frozen=True)
class Workspace:
    """Paths inside one nanobot workspace (layout of nanobot 0.1.4.post4).

    `own` is the one door for the app's own reads of workspace files (engine/own_files.py): opened
    beneath the root, never following a link out of it.
    """

    root: Path
    own: OwnFiles = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "own", OwnFiles(self.root))

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

    def check_usable(self) -> None:
        """Raise WorkspaceError when the path (or a folder on the way to it) is a file."""
        for path in (self.root, *self.root.parents):
            if path.exists() and not path.is_dir():
                where = "is" if path == self.root else f"is inside {path}, which is"
                raise WorkspaceError(f"The workspace {self.root} {where} a file, not a folder: choose a folder "
                                     "(--workspace, or agents.defaults.workspace in the config).")
            if path.exists():
                return

    def sync_templates(self, *, v03: bool = False) -> list[Path]:
        """Create whatever of the template file set is missing; never overwrite. Returns what was created.

        `v03`: the set of a nanobot 0.3 workspace (engine/layout.py): `memory/history.jsonl` instead of
        HISTORY.md, and no TOOLS.md (0.3 neither creates nor reads it).
        """
        created: list[Path] = []
        source = templates_dir()
        self.check_usable()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise storage_error(self.root, error) from error

        def create(target: Path, data: bytes) -> None:  # each file durable; each folder synced once, at the end
            atomic_write_bytes(target, data, sync_folder=False)
            created.append(target)

        try:
            for template in sorted(source.glob("*.md")):
                if v03 and template.name == "TOOLS.md":
                    continue
                target = self.root / template.name
                if not target.exists():
                    create(target, template.read_bytes())
            if not self.memory_file.exists():
                create(self.memory_file, (source / "memory" / "MEMORY.md").read_bytes())
            history = self.memory_dir / "history.jsonl" if v03 else self.history_file
            if not history.exists():
                create(history, b"")
        finally:
            sync_folders({path.parent for path in created})
        if not self.skills_dir.exists():
            self.skills_dir.mkdir(parents=True)
            created.append(self.skills_dir)
        return created
