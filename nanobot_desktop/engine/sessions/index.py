"""A persistent index of the session files: one summary per file for the list, and the text of the
user's and the assistant's messages for search (SQLite, FTS5 with the trigram tokenizer).

Why: reading 20,000 session files to list them takes seconds, and searching their text means reading
all of them. The files stay the truth: every summary row carries the signature (inode, size, mtime,
ctime) of the file it was made from, and any file whose signature differs is read again — at the
first listing after the app starts (a file changed while the app was closed), at every listing, and
for each session the store reports changed (`SessionChanged`, its own appends and the outside changes
it notices) before a search. An append-only file is indexed incrementally: only the bytes after the
ones already indexed are read. The index is a cache in the app's cache folder
(`$XDG_CACHE_HOME/nanobot-desktop/session-index/`, never in the workspace); a missing, unreadable or
older-schema index is rebuilt from the files into a temporary file and renamed into place, later
updates are SQLite transactions.

Search: a query of three or more characters uses the trigram index (substring match, any case); a
shorter one (e.g. the two-character 记忆: SQLite 3.40's trigram LIKE misses two-character CJK queries)
scans the indexed text, newest session first, and stops at the number of results asked for (such a
query matches most sessions). Tool output is not indexed: it is the files the agent read, not the talk.

(About 400 lines: opening, listing, text indexing and search share the one connection and row table.)
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nanobot_desktop.engine.config.paths import keyed_cache_file
from nanobot_desktop.engine.events import Event, EventBus, SessionChanged
from nanobot_desktop.engine.sessions.branches import BranchRecord, read_branch_records, session_files
from nanobot_desktop.engine.sessions.export import TITLE_MAX_CHARS, message_text, shorten, snippet
from nanobot_desktop.engine.sessions.file import parse_header
from nanobot_desktop.engine.sessions.listing import SessionInfo, file_signature, indexed_info, sort_time, summarize
from nanobot_desktop.engine.sync.names import parse_conflict_name

if TYPE_CHECKING:
    import sqlite3

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3  # 2: a scheduled job's session is titled by the job's name (export.derive_title)
# 3: titles, previews and search text without the runtime block (runtime_block.py), previews as plain text
_SEQ_BITS = 24  # a message's FTS rowid is (file id << 24) | its number in the file
_TEXT_BATCH = 200  # files indexed per hold of the lock, so a listing never waits for a whole rebuild
_MAX_MESSAGE_CHARS = 20_000
_INSERT_BATCH = 1_000  # message texts handed to SQLite at once while a file is indexed

_SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, sig TEXT NOT NULL, sort_ts REAL NOT NULL,
                    key TEXT NOT NULL, title TEXT NOT NULL, channel TEXT NOT NULL, created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL, message_count INTEGER NOT NULL, preview TEXT NOT NULL,
                    branch_of TEXT NOT NULL, branch_at INTEGER NOT NULL,
                    text_sig TEXT NOT NULL DEFAULT '', text_size INTEGER NOT NULL DEFAULT 0,
                    text_seq INTEGER NOT NULL DEFAULT 0);
CREATE VIRTUAL TABLE msg USING fts5(text, tokenize='trigram');
"""
_NEWEST_INDEX = "CREATE INDEX IF NOT EXISTS files_newest ON files (channel, sort_ts DESC, key DESC)"
"""For `newest`: each channel's newest rows without reading the others (made on first use in an index
of an earlier version: the schema is the same, the index is an addition)."""


def default_index_path(sessions_dir: Path) -> Path:
    """Where the index of `sessions_dir` lives: the app's cache folder, one file per sessions folder."""
    return keyed_cache_file("session-index", "sessions", sessions_dir.resolve(), ".sqlite3")


_INFO_COLUMNS = "key, title, channel, created_at, updated_at, message_count, preview, branch_of, branch_at"


@dataclass
class _Row:
    file_id: int
    sig: str
    info: SessionInfo
    sort_ts: float
    text_sig: str = ""
    text_size: int = 0
    text_seq: int = 0


def _sig_text(stat: os.stat_result) -> str:
    inode, size, mtime, ctime = file_signature(stat)
    return f"{inode},{size},{mtime},{ctime}"


def _info_values(info: SessionInfo) -> tuple[Any, ...]:
    return (info.key, info.title, info.channel, info.created_at, info.updated_at, info.message_count, info.preview,
            info.branch_of, info.branch_at)


class SessionIndex:
    """Summaries and searchable text of every session file of one store, kept fresh from the files.

    Thread-safe: the panel lists and searches in executor threads; one lock guards the connection.
    """

    def __init__(self, sessions_dir: Path, index_path: Path | None = None,
                 key_from_name: Callable[[Path], str | None] | None = None,
                 shadowed: Callable[[Path, str], bool] | None = None,
                 path_for: Callable[[str], Path] | None = None) -> None:
        """Nothing is read here (the engine builds this at start-up); the index opens on first use."""
        self.sessions_dir = Path(sessions_dir)
        self.index_path = index_path or default_index_path(self.sessions_dir)
        self._key_from_name = key_from_name or (lambda _path: None)
        self._shadowed = shadowed  # None: no file is ever hidden behind another (post4's layout)
        self._path_for = path_for or (lambda key: self.sessions_dir / f"{key.replace(':', '_', 1)}.jsonl")
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._rows: dict[str, _Row] = {}  # by file name (str keys: hashing 20,000 Paths costs 0.1 s)
        self._ordered: list[_Row] | None = None  # the list's order (listings, searches), until a row changes
        self._scanned = False  # every file compared with its row since the index was opened
        self._pending: set[str] = set()  # keys the store reported changed since the last look
        self.rebuilt = False  # the last open built the index anew (missing, unreadable or old)

    @classmethod
    def for_store(cls, store: Any, bus: EventBus | None = None, index_path: Path | None = None) -> "SessionIndex":
        """The index of a SessionStore's folder, following its layout's file naming and its events."""
        index = cls(store.sessions_dir, index_path, store.paths.key_from_name,
                    store.paths.shadowed if store.paths.shadows_files else None, store.path_for)
        if bus is not None:
            bus.subscribe(index.on_event)
        return index

    def on_event(self, event: Event) -> None:
        """A session file changed (the store wrote it or noticed someone else did): look at it again
        before the next search. Cheap on purpose: this runs on the thread that wrote."""
        if isinstance(event, SessionChanged):
            self._pending.add(event.session_key)

    def _hidden(self, info: SessionInfo) -> bool:
        """A file the list does not show: its key has its proper file beside it (the layout says)."""
        return self._shadowed is not None and self._shadowed(info.path, info.key)

    # --- opening -------------------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        import sqlite3  # here, not at the top: the engine builds the index at start-up, and never waits for it
        try:
            self._db = self._open_existing()
        except (sqlite3.DatabaseError, ValueError, OSError) as error:
            if self.index_path.exists():
                log.info("rebuilding the session index %s: %s", self.index_path, error)
            self._db = self._build_new()
        return self._db

    def _open_existing(self) -> sqlite3.Connection:
        import sqlite3

        if not self.index_path.is_file():
            raise ValueError("there is no index yet")
        db = sqlite3.connect(self.index_path, check_same_thread=False)
        try:
            self._check_meta(db)
            rows: dict[str, _Row] = {}
            folder = str(self.sessions_dir) + os.sep  # paths as text: made Paths when read (listing._PathField)
            for file_id, name, sig, sort_ts, text_sig, text_size, text_seq, key, *info in db.execute(
                    f"SELECT id, name, sig, sort_ts, text_sig, text_size, text_seq, {_INFO_COLUMNS} FROM files "
                    "ORDER BY sort_ts DESC, key DESC"):  # the list's order (BINARY text order is Python's)
                rows[name] = _Row(file_id, sig, indexed_info(key, folder + name, *info), sort_ts, text_sig, text_size,
                                  text_seq)
        except BaseException:
            db.close()
            raise
        self._rows = rows
        self._ordered = list(rows.values())
        self.rebuilt = False
        return db

    def _check_meta(self, db: sqlite3.Connection) -> None:
        meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
        if meta.get("schema") != str(SCHEMA_VERSION) or meta.get("folder") != str(self.sessions_dir.resolve()):
            raise ValueError("the index was made for another schema or folder")

    def _build_new(self) -> sqlite3.Connection:
        """An empty index written to a temporary file and renamed into place (never half a file)."""
        import sqlite3

        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.index_path.with_name(self.index_path.name + f".{os.getpid()}.tmp")
        temporary.unlink(missing_ok=True)
        db = sqlite3.connect(temporary)
        db.executescript(_SCHEMA)
        db.execute(_NEWEST_INDEX)
        db.executemany("INSERT INTO meta VALUES (?, ?)",
                       [("schema", str(SCHEMA_VERSION)), ("folder", str(self.sessions_dir.resolve()))])
        db.commit()
        db.close()
        for stale in (self.index_path, self.index_path.with_name(self.index_path.name + "-journal")):
            stale.unlink(missing_ok=True)
        os.replace(temporary, self.index_path)
        self._rows = {}
        self._ordered = None
        self.rebuilt = True
        return sqlite3.connect(self.index_path, check_same_thread=False)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._scanned = False

    # --- the list ------------------------------------------------------------------------------------

    def list_sessions(self, check: bool = True) -> list[SessionInfo]:
        """Every session file, newest `updated_at` first: each file stat'ed, only changed ones read.

        `check=False` answers from the index as it is when it has been filled before (the app's first
        listing at start: 20,000 stat calls cost more than the rest); the caller then lists again with
        the check, which corrects whatever changed while the app was closed."""
        with self._lock:
            db = self._connection()
            if check or not self._rows:
                self._scan(db)
            ordered = [row.info for row in self._newest_first()]
        return list(ordered) if self._shadowed is None else [info for info in ordered if not self._hidden(info)]

    def newest(self, per_channel: int) -> list[SessionInfo] | None:
        """The newest `per_channel` sessions of each channel as the index holds them, newest first,
        without reading its other rows; None when there is no usable index yet, or it is open already
        (`list_sessions` then answers as fast).

        Why: the app's first listing. Reading all 20,000 rows and making their SessionInfos takes
        ~0.2-0.35 s before the list could show anything, while a channel group shows its newest few
        hundred first (gui/sessions/model.py); `list_sessions` reads the rest right after."""
        import sqlite3

        with self._lock:
            if self._db is not None or not self.index_path.is_file():
                return None
            try:
                db = sqlite3.connect(self.index_path)
                try:
                    self._check_meta(db)
                    db.execute(_NEWEST_INDEX)
                    db.commit()
                    rows: list[Any] = []
                    for (channel,) in db.execute("SELECT DISTINCT channel FROM files").fetchall():
                        rows += db.execute(f"SELECT sort_ts, name, {_INFO_COLUMNS} FROM files WHERE channel = ? "
                                           "ORDER BY sort_ts DESC, key DESC LIMIT ?", (channel, per_channel)).fetchall()
                finally:
                    db.close()
            except (sqlite3.Error, ValueError) as error:
                log.info("the session index %s cannot list the newest sessions: %s", self.index_path, error)
                return None
        rows.sort(key=lambda row: (row[0], row[2]), reverse=True)  # the order of list_sessions
        folder = str(self.sessions_dir) + os.sep
        infos = [indexed_info(key, folder + name, *info) for _sort_ts, name, key, *info in rows]
        return infos if self._shadowed is None else [info for info in infos if not self._hidden(info)]

    def _newest_first(self) -> list[_Row]:
        """The rows in the list's order (the index hands them over in it: _open_existing)."""
        if self._ordered is None:
            self._ordered = sorted(self._rows.values(), key=lambda row: (row.sort_ts, row.info.key), reverse=True)
        return self._ordered

    def _scan(self, db: sqlite3.Connection) -> None:
        seen: set[str] = set()
        try:
            with os.scandir(self.sessions_dir) as entries:
                files = [entry for entry in entries if entry.name.endswith(".jsonl") and entry.is_file()]
        except FileNotFoundError:
            files = []
        names = {entry.name for entry in files}
        files = [entry for entry in files if parse_conflict_name(entry.name, names) is None]  # merged, not listed
        for entry in files:
            seen.add(entry.name)
            try:
                self._refresh_file(db, entry.name, _sig_text(entry.stat()))
            except OSError as error:
                log.warning("cannot read session file %s: %s", entry.path, error)
                seen.discard(entry.name)
        for gone in [name for name in self._rows if name not in seen]:
            self._forget(db, gone)
        db.commit()
        self._scanned = True
        self._pending.clear()

    def _refresh_file(self, db: sqlite3.Connection, name: str, sig: str) -> None:
        row = self._rows.get(name)
        if row is not None and row.sig == sig:
            return
        path = self.sessions_dir / name
        info = summarize(path, self._key_from_name(path))
        sort_ts = sort_time(info.updated_at)
        if row is None:
            cursor = db.execute(f"INSERT INTO files (name, sig, sort_ts, {_INFO_COLUMNS}) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (name, sig, sort_ts, *_info_values(info)))
            assert cursor.lastrowid is not None
            self._rows[name] = _Row(cursor.lastrowid, sig, info, sort_ts)
            self._ordered = None
        else:
            db.execute("UPDATE files SET sig = ?, sort_ts = ?, key = ?, title = ?, channel = ?, created_at = ?, "
                       "updated_at = ?, message_count = ?, preview = ?, branch_of = ?, branch_at = ? WHERE id = ?",
                       (sig, sort_ts, *_info_values(info), row.file_id))
            row.sig, row.info, row.sort_ts = sig, info, sort_ts
            self._ordered = None

    def _forget(self, db: sqlite3.Connection, name: str) -> None:
        row = self._rows.pop(name)
        self._ordered = None
        db.execute("DELETE FROM files WHERE id = ?", (row.file_id,))
        self._drop_text(db, row)

    @staticmethod
    def _drop_text(db: sqlite3.Connection, row: _Row) -> None:
        db.execute("DELETE FROM msg WHERE rowid BETWEEN ? AND ?",
                   (row.file_id << _SEQ_BITS, ((row.file_id + 1) << _SEQ_BITS) - 1))

    def _refresh_pending(self, db: sqlite3.Connection) -> None:
        """The sessions the store reported changed: only their files are looked at."""
        while self._pending:
            key = self._pending.pop()
            try:
                path = self._path_for(key)
            except ValueError:
                continue
            if path.parent != self.sessions_dir:
                continue
            try:
                self._refresh_file(db, path.name, _sig_text(os.stat(path)))
            except FileNotFoundError:
                if path.name in self._rows:
                    self._forget(db, path.name)
            except OSError as error:
                log.warning("cannot read session file %s: %s", path, error)
        db.commit()

    # --- branches ------------------------------------------------------------------------------------

    def branch_records(self) -> list[BranchRecord]:
        """Every session file that is a branch (the chat's fork switchers), from the index: the files
        the store reported changed are read first, every file is compared with the index at its first
        use. When the index cannot be used, the metadata line of every file is read instead."""
        import sqlite3

        try:
            with self._lock:
                db = self._connection()
                if not self._scanned:
                    self._scan(db)
                self._refresh_pending(db)
                infos = [row.info for row in self._rows.values() if row.info.branch_of]
        except (sqlite3.Error, OSError) as error:
            log.warning("the session index cannot list the branches (%s); reading the session files", error)
            return read_branch_records((path, self._key_from_name(path)) for path in session_files(self.sessions_dir))
        return [BranchRecord(info.key, info.branch_of, info.branch_at, info.created_at) for info in infos]

    # --- the text ------------------------------------------------------------------------------------

    def update_text(self) -> int:
        """Index the text of every file whose text is behind its summary; returns how many files.

        Works in batches, letting go of the lock between them, so a listing is never stuck behind a
        rebuild of 20,000 files."""
        done = 0
        while True:
            with self._lock:
                db = self._connection()
                if not self._scanned:
                    self._scan(db)
                self._refresh_pending(db)
                behind = [row for row in self._rows.values() if row.text_sig != row.sig][:_TEXT_BATCH]
                for row in behind:
                    try:
                        self._index_text(db, row.info.path, row)
                    except OSError as error:
                        log.warning("cannot index session file %s: %s", row.info.path, error)
                        row.text_sig = row.sig  # retried when the file changes again
                db.commit()
            done += len(behind)
            if len(behind) < _TEXT_BATCH:
                return done

    def _index_text(self, db: sqlite3.Connection, path: Path, row: _Row) -> None:
        """Read line by line and insert in batches: a 100,000-message file read whole (its bytes, the
        split lines and every text at once) held ~40 MB for the seconds the first indexing took."""
        inode = row.sig.split(",", 1)[0]
        with open(path, "rb") as handle:
            if row.text_size and row.text_sig.split(",", 1)[0] == inode and os.fstat(handle.fileno()).st_size >= row.text_size:
                start = row.text_size  # appended to: only the new lines
                handle.seek(start)
            else:
                self._drop_text(db, row)
                start, row.text_seq = 0, 0
            end, first = start, start == 0
            values: list[tuple[int, str]] = []
            for line in handle:
                if not line.endswith(b"\n"):
                    break  # a line still being written is read next time
                end += len(line)
                if first:
                    first = False
                    if parse_header(line[:-1]) is not None:
                        continue
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except (UnicodeDecodeError, json.JSONDecodeError):
                    continue
                if not isinstance(message, dict):
                    continue
                row.text_seq += 1
                if message.get("role") in ("user", "assistant") and row.text_seq < (1 << _SEQ_BITS):
                    text = message_text(message.get("content"))[:_MAX_MESSAGE_CHARS]
                    if text.strip():
                        values.append(((row.file_id << _SEQ_BITS) | row.text_seq, text))
                if len(values) >= _INSERT_BATCH:
                    db.executemany("INSERT INTO msg (rowid, text) VALUES (?, ?)", values)
                    values.clear()
        db.executemany("INSERT INTO msg (rowid, text) VALUES (?, ?)", values)
        row.text_size = end
        row.text_sig = row.sig
        db.execute("UPDATE files SET text_sig = ?, text_size = ?, text_seq = ? WHERE id = ?",
                   (row.text_sig, row.text_size, row.text_seq, row.file_id))

    # --- search --------------------------------------------------------------------------------------

    def search(self, text: str, limit: int = 200) -> list[tuple[str, str]]:
        """(key, snippet) for the sessions whose title or message text contains `text` (any case),
        newest first, one hit per session: the title when it matches, else the first message."""
        needle = text.strip()
        if not needle or limit <= 0:
            return []
        self.update_text()
        folded = needle.casefold()
        with self._lock:
            db = self._connection()
            if len(needle) >= 3:  # rowids only: the text is read for the hits shown, not for every match
                chosen = self._chosen_indexed(db, needle, folded, limit)
            else:  # the trigram index cannot answer fewer than three characters: scan, newest first
                chosen = self._chosen_scanned(db, needle.lower(), folded, limit)
            chosen.sort(reverse=True)
            chosen = chosen[:limit]
            wanted = [found_at for _when, _key, found_at in chosen if isinstance(found_at, int)]
            texts: dict[int, str] = {}
            for start in range(0, len(wanted), 500):
                part = wanted[start:start + 500]
                texts.update(db.execute(f"SELECT rowid, text FROM msg WHERE rowid IN ({','.join('?' * len(part))})",
                                        part).fetchall())
        hits: list[tuple[str, str]] = []
        for _when, key, found_at in chosen:
            if isinstance(found_at, str):
                hits.append((key, found_at))
            else:
                message = texts.get(found_at, "")
                hits.append((key, snippet(message, max(0, message.casefold().find(folded)), len(needle))))
        return hits

    def _chosen_indexed(self, db: sqlite3.Connection, needle: str, folded: str,
                        limit: int) -> list[tuple[float, str, str | int]]:
        """`_newest_matches` with each file's first matching message from the trigram index."""
        # Each file's first matching message, grouped in SQLite: a common word matches ~100,000
        # messages, which Python would otherwise walk one by one (~60 ms) for ~15,000 files; the
        # (file id, rowid) pairs go into the dict without a Python step each (a comprehension: ~50 ms).
        firsts: dict[int, int] = dict(db.execute(
            f"SELECT rowid >> {_SEQ_BITS}, min(rowid) FROM msg WHERE msg MATCH ? GROUP BY 1",
            ('"' + needle.replace('"', '""') + '"',)))
        return self._newest_matches(folded, limit, lambda row: firsts.get(row.file_id))

    def _chosen_scanned(self, db: sqlite3.Connection, lowered: str, folded: str,
                        limit: int) -> list[tuple[float, str, str | int]]:
        """The same for a query too short for the trigram index: each file's messages scanned until
        its first match. A one- or two-letter query matches most sessions, so stopping at `limit`
        reads a few hundred files' text instead of all 20,000."""
        def first_match(row: _Row) -> int | None:
            found = db.execute("SELECT rowid FROM msg WHERE rowid BETWEEN ? AND ? AND instr(lower(text), ?) > 0 "
                               "ORDER BY rowid LIMIT 1", (row.file_id << _SEQ_BITS,
                                                         ((row.file_id + 1) << _SEQ_BITS) - 1, lowered)).fetchone()
            return None if found is None else int(found[0])

        return self._newest_matches(folded, limit, first_match)

    def _newest_matches(self, folded: str, limit: int,
                        first_match: Callable[[_Row], int | None]) -> list[tuple[float, str, str | int]]:
        """(sort time, key, title or the rowid of the first matching message) of the newest `limit`
        sessions whose title contains `folded` or that have a matching message (`first_match`).
        Sessions are visited newest first, so a word found in most of 20,000 stops after a few hundred."""
        chosen: list[tuple[float, str, str | int]] = []
        for row in self._newest_first():
            info = row.info
            if self._hidden(info):
                continue
            if folded in info.title.casefold():
                chosen.append((row.sort_ts, info.key, shorten(info.title, TITLE_MAX_CHARS)))
            else:
                first = first_match(row)
                if first is None:
                    continue
                chosen.append((row.sort_ts, info.key, first))
            if len(chosen) >= limit:
                break
        return chosen
