"""Who changed a file: the engine's one record of what it wrote and read, for every file it owns.

Sessions, MEMORY.md and its versions, the history log (HISTORY.md or history.jsonl), the cron store
and skills are written by the engine and by others (the nanobot CLI, a gateway, an editor, a sync
tool). A file watcher only sees *that* a file changed; this record says *who*: after each of its own
writes the engine records the file's signature (inode, size, mtime, ctime — an in-place rewrite keeps
the size, not the ctime; a replace-by-rename changes the inode), and a write the app is about to make
with known bytes (an editor's save) is announced with those bytes. A file whose signature differs
from the record, and does not hold announced bytes, was changed by someone else.

Thread-safe: memory is written from worker threads, sessions and cron from the event loop.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Literal

Signature = tuple[int, ...]
Verdict = Literal["unchanged", "announced", "outside"]


def signature_of(path: Path) -> Signature | None:
    """The file's signature now, or None when it does not exist (or cannot be stat'ed)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _digest(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


class ChangeTracker:
    """Each file as the engine last wrote, read or saw it, and the bytes the app said it would write."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[Path, Signature | None] = {}  # None: the engine left no file there
        self._expected: dict[Path, tuple[int, str]] = {}  # (size, sha256) of an announced write

    @staticmethod
    def _key(path: Path | str) -> Path:
        """One name per file: a watcher reports resolved paths, the engine writes through the workspace's."""
        return Path(os.path.realpath(path))

    def wrote(self, path: Path | str) -> Signature | None:
        """The engine just wrote (or removed) `path`: the file as it is now is its own."""
        key = self._key(path)
        signature = signature_of(key)
        with self._lock:
            self._known[key] = signature
            self._expected.pop(key, None)
        return signature

    def read(self, path: Path | str, signature: Signature | None) -> None:
        """The engine holds the file as it was when `signature` was taken (just before reading it), so
        a change made while it read shows up as a change later, never as missed."""
        with self._lock:
            self._known[self._key(path)] = signature

    def expect(self, path: Path | str, data: bytes | str) -> None:
        """The app is about to write exactly `data` to `path` (an editor's save, a new skill): while
        the file holds these bytes, a change seen on it is the app's own."""
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        with self._lock:
            self._expected[self._key(path)] = _digest(raw)

    def knows(self, path: Path | str) -> bool:
        """Whether the engine has a record of `path` (wrote, read or already saw it)."""
        with self._lock:
            return self._key(path) in self._known

    def paths(self) -> set[Path]:
        """Every file the tracker has a record of."""
        with self._lock:
            return set(self._known)

    def verdict(self, path: Path | str) -> Verdict:
        """Who made the change a watcher saw on `path`: "announced" while the file holds the bytes the
        app said it would write (every event of that write); "unchanged" when it is as the engine last
        wrote or read it (the engine's own write, or an outside change already reported); "outside"
        for anyone else's change, reported once (the record is brought up to date). A file the engine
        never wrote or read counts as changed from outside: nothing says the engine made what is there."""
        key = self._key(path)
        current = signature_of(key)
        with self._lock:
            expected = self._expected.get(key)
        if expected is not None and current is not None and self._holds(key, expected):
            with self._lock:
                self._known[key] = current
            return "announced"
        with self._lock:
            self._expected.pop(key, None)  # someone wrote after the app: from now on it is theirs
            if key in self._known and self._known[key] == current:
                return "unchanged"
            self._known[key] = current
        return "outside"

    def changed_outside(self, path: Path | str) -> bool:
        """Whether someone else changed `path` since the engine's record (see `verdict`)."""
        return self.verdict(path) == "outside"

    @staticmethod
    def _holds(path: Path, expected: tuple[int, str]) -> bool:
        try:
            return path.stat().st_size == expected[0] and _digest(path.read_bytes()) == expected
        except OSError:
            return False
