"""The Usage page's grouped sums on disk, so the first open after a start extends what the last run read.

A cache in the app's cache folder (`$XDG_CACHE_HOME/nanobot-desktop/usage-summary/`, one file per
config folder), never beside the usage files: it is derived from them, only ever trusted as far as
the marks kept with each grouping say (group_cache.py), and made anew when missing, unreadable or of
another schema. One SQLite file (WAL): a row per grouping (its period, its files' marks) and a row per
group, so saving the few groups the calls recorded since have changed writes those alone (all of a
grouping's 3,000 groups as one JSON text cost ~12 ms a save, bench/usage_page.py).
A failure here is never the page's: the grouping is read from the usage files instead.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Hashable
from pathlib import Path

from nanobot_desktop.engine.config.paths import keyed_cache_file
from nanobot_desktop.engine.usage.group_cache import Entry, FileMark

log = logging.getLogger(__name__)

SCHEMA_VERSION = 4  # 1: a grouping's groups as one JSON text; 2: no token; 3: eight sums, no pruning
MAX_KEYS = 3
MAX_SUMS = 10
MAX_GROUPINGS = 6
"""Groupings kept, the last saved (the page reads three; prices changed make the conversations' a new one)."""
_KEYS = ", ".join(f"k{n}" for n in range(MAX_KEYS))
_SUMS = ", ".join(f"s{n}" for n in range(MAX_SUMS))
_SCHEMA = f"""
CREATE TABLE groupings (key TEXT PRIMARY KEY, since_ms INTEGER NOT NULL, marks TEXT NOT NULL, width INTEGER NOT NULL,
                        sums INTEGER NOT NULL, token INTEGER NOT NULL, saved INTEGER NOT NULL);
CREATE TABLE groups (key TEXT NOT NULL, {_KEYS}, {_SUMS}, PRIMARY KEY (key, {_KEYS})) WITHOUT ROWID;
PRAGMA user_version = {SCHEMA_VERSION};
"""


def default_summary_path(folder: Path) -> Path:
    """Where the sums of the usage files in `folder` are kept: the app's cache folder, one file per folder."""
    return keyed_cache_file("usage-summary", "usage", folder.resolve(), ".sqlite3")


class SummaryFile:
    """Groupings by key (see the module docstring). Thread-safe; opened on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._broken = False  # could not be opened nor made: the readers go on without it
        self._on_disk: dict[str, tuple[Entry, int]] = {}
        """By key, the entry the file holds (last loaded or saved here) and the token written with it: a save
        writes only what differs from it, unless another process has saved the grouping since."""

    def load(self, key: Hashable) -> Entry | None:
        """The grouping kept under `key`, or None (never kept, or unreadable)."""
        name = _text(key)
        with self._lock:
            try:
                db = self._open()
                if db is None:
                    return None
                db.execute("BEGIN")  # the grouping's marks and its groups from one snapshot
                try:
                    head = db.execute("SELECT since_ms, marks, width, sums, token FROM groupings WHERE key = ?",
                                      (name,)).fetchone()
                    if head is None:
                        return None
                    since_ms, marks, width, count, token = head
                    rows = db.execute(f"SELECT {_KEYS}, {_SUMS} FROM groups WHERE key = ?", (name,)).fetchall()
                finally:
                    db.execute("COMMIT")
                entry = Entry(int(since_ms),
                              {part: FileMark(tuple(mark[0]), *mark[1:]) for part, mark in json.loads(marks).items()},
                              {row[:width]: list(row[MAX_KEYS:MAX_KEYS + count]) for row in rows})
            except (sqlite3.Error, OSError, ValueError, TypeError, IndexError) as error:
                log.debug("usage summary %s: %s is read again from the usage files (%s)", self.path, key, error)
                return None
            self._on_disk[name] = (entry, int(token))
            return entry

    def save(self, key: Hashable, entry: Entry) -> None:
        """Keep `entry` under `key`: in one transaction, the groups that differ from those the file holds
        (all of them when it is not known what it holds). A failure only means reading again next time."""
        name = _text(key)
        if len(next(iter(entry.groups), ())) > MAX_KEYS or len(next(iter(entry.groups.values()), [])) > MAX_SUMS:
            return
        marks = json.dumps({part: [list(mark.identity), mark.last_rowid, mark.last_started_ms, mark.period_rows]
                            for part, mark in entry.marks.items()})
        with self._lock:
            kept = self._on_disk.pop(name, None)
            token = int.from_bytes(os.urandom(7), "big")
            try:
                db = self._open()
                if db is None:
                    return
                db.execute("BEGIN IMMEDIATE")
                try:
                    self._write(db, name, entry, kept, marks, token)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            except (sqlite3.Error, OSError) as error:
                log.debug("usage summary %s not kept: %s", self.path, error)
                return
            self._on_disk[name] = (entry, token)

    @staticmethod
    def _write(db: sqlite3.Connection, name: str, entry: Entry, kept: tuple[Entry, int] | None, marks: str,
               token: int) -> None:
        width = len(next(iter(entry.groups), ()))
        count = len(next(iter(entry.groups.values()), []))
        (found,) = db.execute("SELECT COALESCE((SELECT token FROM groupings WHERE key = ?), -1)", (name,)).fetchone()
        db.execute("INSERT OR REPLACE INTO groupings (key, since_ms, marks, width, sums, token, saved) VALUES "
                   "(?, ?, ?, ?, ?, ?, (SELECT COALESCE(max(saved), 0) + 1 FROM groupings))",
                   (name, entry.since_ms, marks, width, count, token))
        for (old_key,) in db.execute("SELECT key FROM groupings ORDER BY saved DESC LIMIT -1 OFFSET ?", (MAX_GROUPINGS,)).fetchall():
            db.execute("DELETE FROM groups WHERE key = ?", (old_key,))
            db.execute("DELETE FROM groupings WHERE key = ?", (old_key,))
        padding = ("",) * (MAX_KEYS - width)  # the key columns a narrower grouping does not use
        if kept is None or kept[1] != found:  # not known what the file holds (or another process saved it)
            db.execute("DELETE FROM groups WHERE key = ?", (name,))
            changed = list(entry.groups.items())
        else:
            # GroupCache replaces the sums of a group it adds to: the same list is the same sums.
            old = kept[0].groups
            changed = [(group, sums) for group, sums in entry.groups.items() if old.get(group) is not sums]
            db.executemany(f"DELETE FROM groups WHERE key = ? AND ({_KEYS}) = (?{', ?' * (MAX_KEYS - 1)})",
                           [(name, *group, *("",) * (MAX_KEYS - len(group))) for group in old if group not in entry.groups])
        if changed:
            db.executemany(f"INSERT OR REPLACE INTO groups (key, {_KEYS}, {', '.join(f's{n}' for n in range(count))}) "
                           f"VALUES (?{', ?' * (MAX_KEYS + count)})", [(name, *group, *padding, *sums) for group, sums in changed])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _open(self) -> sqlite3.Connection | None:
        """The connection (under the lock): the file as it is when its schema is this one, else made anew."""
        if self._db is not None or self._broken:
            return self._db
        try:
            self._db = self._connect(self.path)
            if self._db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                raise sqlite3.DatabaseError("another schema")
        except (sqlite3.Error, OSError) as error:
            if self._db is not None:
                self._db.close()
                self._db = None
            try:
                self._db = self._make(error)
            except (sqlite3.Error, OSError) as again:
                log.warning("usage summary %s cannot be kept (%s): the Usage page reads the whole period", self.path, again)
                self._broken = True
        return self._db

    def _make(self, why: BaseException) -> sqlite3.Connection:
        """A new file, made beside and renamed into place: a reader never sees half a schema."""
        if self.path.exists():
            log.info("usage summary %s is made anew (%s)", self.path, why)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        temporary.unlink(missing_ok=True)
        made = sqlite3.connect(temporary, isolation_level=None)
        try:
            made.executescript(_SCHEMA)
        finally:
            made.close()
        for suffix in ("-wal", "-shm"):  # an old file's journal must not be applied to the new one
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        os.replace(temporary, self.path)
        return self._connect(self.path)

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        if not path.is_file():
            raise sqlite3.DatabaseError("no file")
        db = sqlite3.connect(path, timeout=0.25, isolation_level=None, check_same_thread=False)
        # A cache: WAL without a sync at each commit (a crash may lose the last save, never the file).
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        return db


def _text(key: Hashable) -> str:
    return json.dumps(key)
