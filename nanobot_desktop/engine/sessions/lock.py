"""The session-files lock: one OS file lock per sessions folder, held around every write to a session.

Why: the metadata line is sometimes rewritten by replacing the whole file (when the nanobot CLI left
it unpadded). Without a lock, a second process appending at that moment writes into the file that
is being replaced, and its line is lost. nanobot 0.3.5 guards its session folder the same way: a
`.session-files.lock` file locked with the `filelock` package, which on POSIX is `flock` on that
file, so a writer using either program waits for the other.

Inside one process the lock is re-entrant (a thread may take it again while holding it); between
threads of a process a mutex does the work, because flock is per open file, not per thread.
If the lock file cannot be created (a read-only folder, a full disk of inodes), the write goes ahead
unlocked — it is about to fail anyway, and must fail with *its* file's name and reason.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = ".session-files.lock"

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


class _Holder:
    """The state of one lock file in this process."""

    def __init__(self) -> None:
        self.mutex = threading.RLock()
        self.depth = 0
        self.fd: int | None = None


_holders: dict[str, _Holder] = {}
_holders_guard = threading.Lock()
# An absolute folder as given -> its lock file and holder: every session write takes the lock a few
# times (re-entrant), and building the path each time cost more than the lock itself.
_by_folder: dict[str, tuple[Path, _Holder]] = {}


def _holder(path: Path) -> _Holder:
    key = os.path.abspath(path)
    with _holders_guard:
        return _holders.setdefault(key, _Holder())


def _lock_of(folder: Path) -> tuple[Path, _Holder]:
    """The lock file of `folder` and its holder (a relative folder is resolved again each time)."""
    raw = os.fspath(folder)
    known = _by_folder.get(raw)
    if known is None:
        path = Path(folder) / LOCK_NAME
        known = (path, _holder(path))
        if os.path.isabs(raw):
            with _holders_guard:
                _by_folder[raw] = known
    return known


def _acquire(path: Path) -> int | None:
    fd: int | None = None
    # Read-only once it exists: flock works on any descriptor, and closing a read-only one is not a
    # "file written" event for the workspace watcher (one per append would reload the session list).
    for flags in (os.O_RDONLY, os.O_RDWR | os.O_CREAT):
        try:
            if flags & os.O_CREAT:  # the folder is made only when the lock file is missing
                path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
            break
        except OSError:
            continue
    if fd is None:
        return None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:  # pragma: no cover - Windows
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
    except OSError:
        os.close(fd)
        return None
    return fd


def _release(fd: int) -> None:
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def session_files_lock(folder: Path) -> Iterator[None]:
    """Hold `<folder>/.session-files.lock` (exclusive, blocking) for the duration of the block."""
    path, holder = _lock_of(folder)
    with holder.mutex:
        if holder.depth == 0:
            holder.fd = _acquire(path)
        holder.depth += 1
        try:
            yield
        finally:
            holder.depth -= 1
            if holder.depth == 0 and holder.fd is not None:
                fd, holder.fd = holder.fd, None
                _release(fd)
