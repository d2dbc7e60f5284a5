"""Sessions: `sessions/<safe_key>.jsonl` in nanobot 0.1.4.post4's format, written append-only.

The original rewrites the whole file on every save, so a kill mid-save can lose the conversation and
a corrupt line makes it start over and overwrite the file. Here a turn only *appends* its lines
(one `append_text` call of whole lines), and loading never writes: a bad line is skipped with a
warning and stays on disk.

The metadata line (line 1: `updated_at`, `last_consolidated`, our `title`) still has to change. We
keep it padded with spaces to a fixed width (512 bytes, newline included) and overwrite exactly that
many bytes in place (pwrite + fsync). Why this and not "rewrite line 1 via temp file + rename":
  - the rename variant copies the whole file, so a turn in a 10,000-message session would cost
    O(file) bytes and an fsync of all of it; the in-place write costs 512 bytes whatever the length;
  - the original reader strips every line before `json.loads` (and JSON allows trailing
    whitespace), so the padding is invisible to it and to any JSON tool;
  - the worst a torn in-place write can do is spoil line 1, which loading then skips with a warning
    (the key comes from the file name); it can never touch a message line.
A file whose line 1 is not padded (saved by the nanobot CLI), has no metadata line, or whose metadata
outgrew the width is rewritten once, atomically, with a wider padded line 1 and every other byte kept.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.events import EventBus, SessionChanged
from nanobot_desktop.engine.layout import SessionPaths, post4_file_stem
from nanobot_desktop.engine.sessions.branches import BRANCH_FIELD, BranchRecord, read_branch_records, session_files
from nanobot_desktop.engine.sessions.changes import ChangeTracker, Signature, signature_of
from nanobot_desktop.engine.sessions.export import derive_title, render_json, render_markdown, shorten
from nanobot_desktop.engine.sessions.file import (
    HEADER_KEYS, ParsedSession, append_lines, create_file, create_file_if_missing, encode_line, file_name_problem,
    parse_header, parse_session_bytes, read_first_line, update_header,
)
from nanobot_desktop.engine.sessions.listing import (
    SessionInfo, file_signature, mtime_iso, search_file, sort_time, summarize,
)
from nanobot_desktop.engine.sessions.paging import SessionPage, read_page, read_tail
from nanobot_desktop.engine.sessions.session import INTERRUPTED_TOOL_RESULT, Session, now, valid_offset
from nanobot_desktop.engine.sessions.trash import (
    ARCHIVE_SEPARATOR, TRASH_SEPARATOR, SessionNotFoundError, TrashEntry, move_aside, restore_from_trash,
    trash_entries,
)

__all__ = ["INTERRUPTED_TOOL_RESULT", "Session", "SessionInfo", "SessionPage", "SessionNotFoundError", "SessionStore", "TrashEntry",
           "safe_key"]

log = logging.getLogger(__name__)

def safe_key(key: str) -> str:
    """The post4 file name rule: `telegram:12/3` → `telegram_12_3` (collisions are possible, as there)."""
    return post4_file_stem(key)


class SessionStore:
    """All sessions of one workspace: cached loading, append-only writes, list, trash, search, export.

    The store is the one authority on whether a session changed, and who changed it. After each of
    its own writes and each load into its cache it records the file's signature (inode, size, mtime,
    ctime); a file that differs from its record was changed by someone else. It says so with one event,
    `SessionChanged(outside=True)`, when it notices: before its own next write of that file, or when
    told that something under `sessions/` changed (`notice_changes`, which the app's file watcher
    calls; the watcher never decides anything itself). Its own writes publish `SessionChanged(outside=
    False)`, so they never come back as outside changes. A cached session that changed outside is
    re-read at its next `get_or_create`, i.e. when the next turn starts, never under a running turn.
    """

    def __init__(self, sessions_dir: Path | None = None, legacy_dir: Path | None = None,
                 paths: SessionPaths | None = None, bus: EventBus | None = None) -> None:
        """`paths` (from engine/layout.py) decides where files are and how they are named: post4's rule
        under `sessions_dir` by default, 0.3's base64url names and file lock for a 0.3 workspace."""
        if paths is None:
            if sessions_dir is None:
                raise ValueError("a SessionStore needs a sessions folder or a SessionPaths")
            paths = SessionPaths(Path(sessions_dir))
        self.paths = paths
        self.sessions_dir = paths.sessions_dir
        self._legacy_dir = Path(legacy_dir) if legacy_dir is not None else None
        self.bus = bus
        self._cache: dict[str, Session] = {}
        self._summaries: dict[Path, tuple[tuple[int, ...], SessionInfo]] = {}
        self._changes = ChangeTracker(paths.key_from_name)  # each file as the store last wrote or loaded it
        # Sessions may be written from the event loop and from executor threads.
        self._lock = threading.RLock()

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
    def _writing(self) -> Iterator[None]:
        """Held around every write: our thread lock, and the layout's file lock (`.session-files.lock`)."""
        with self._lock, self.paths.lock():
            yield

    # --- loading -----------------------------------------------------------------------------------

    def get_or_create(self, key: str) -> Session:
        """The cached session, else the one on disk, else a new empty one (no file until first write).

        A cached session whose file changed outside is read again here (the loop calls this when a turn
        starts, so a session is never swapped under a running turn).
        """
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and not self._changes.is_stale(key):
                return cached
            session, signature = self._read(key, tail=True)
            if session is None:
                session = Session(key=key, path=self.path_for(key), header_extra=dict(self.paths.header_defaults))
            self._cache[key] = session
            self._changes.loaded(session.path, key, signature)
            return session

    def cached(self, key: str) -> Session | None:
        """The session this store holds for `key` (None when it has not been read); never reads the file."""
        with self._lock:
            return self._cache.get(key)

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
        with self._lock:
            self._migrate_legacy(path)
            for candidate in self.paths.read_candidates(key):
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
        with self._lock:
            self._migrate_legacy(self.path_for(key))
            for candidate in self.paths.read_candidates(key):
                try:
                    return read_page(candidate, end, min_messages)
                except FileNotFoundError:
                    continue
        return SessionPage([], 0, 0)

    def invalidate(self, key: str) -> None:
        with self._lock:
            self._cache.pop(key, None)
            self._changes.forget(key)

    # --- who changed a session -------------------------------------------------------------------------

    def notice_changes(self, paths: Iterable[Path] | None = None) -> list[str]:
        """Compare session files with what the store last wrote or loaded; publish one
        `SessionChanged(outside=True)` per file that differs, and return their keys.

        `paths` are files a watcher saw change (anything not a `sessions/*.jsonl` is ignored); None
        checks every session file and every file the store has written. The store's own writes are
        never found here: they were recorded when made.
        """
        events: list[SessionChanged] = []
        with self._lock:
            folder = self.sessions_dir.resolve()
            if paths is None:
                candidates = self._changes.paths() | set(self.sessions_dir.glob("*.jsonl"))
            else:
                candidates = {self.sessions_dir / Path(p).name for p in paths
                              if Path(p).suffix == ".jsonl" and Path(p).resolve().parent == folder}
            for path in sorted(candidates):
                event = self._changes.check(path)
                if event is not None:
                    events.append(event)
        self._publish(events)
        return [event.session_key for event in events]

    def _before_write(self, session: Session) -> list[SessionChanged]:
        """A change of the session's file that the store did not make is reported before it writes."""
        self._own_path(session)
        event = self._changes.check(session.path, session.key)
        return [event] if event is not None else []

    def _after_write(self, session: Session, reason: str, turn_id: str = "") -> SessionChanged:
        """Record the file as the store left it; returns the event that says so."""
        event = self._changes.wrote(session.path, session.key, reason, turn_id)
        session.size = event.size
        return event

    def _publish(self, events: list[SessionChanged]) -> None:
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
        with self._lock:
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
        return SessionStore._session_from_parsed(key, path, parse_session_bytes(data, path.name), len(data), 0)

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

    # --- writing -----------------------------------------------------------------------------------

    def append(self, session: Session, messages: list[dict[str, Any]], turn_id: str = "") -> int:
        """Append `messages` as new lines (nothing else of the file is rewritten); returns their bytes.

        Publishes `SessionChanged(reason="appended", turn_id=turn_id)`.
        """
        entries: list[dict[str, Any]] = []
        lines: list[str] = []
        for message in messages:
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise ValueError(f"a session message must be a dict with a string 'role', got {message!r:.80}")
            entry = dict(message)
            entry.setdefault("timestamp", now())
            try:
                lines.append(encode_line(entry))
            except (TypeError, ValueError) as error:
                raise ValueError(f"a {entry['role']} message cannot be stored as JSON: {error}") from error
            entries.append(entry)
        if not entries:
            return 0
        with self._writing():
            # All or nothing (file.append_lines): on a StorageError the file and `session` are unchanged.
            events = self._before_write(session)
            self._own_path(session)
            self._rebase_if_missing(session)
            header = {**session.header(), "updated_at": now()}
            data = "".join(lines).encode("utf-8")
            if create_file_if_missing(session.path, header, session.messages + entries):
                written = len(data)
            else:
                written = append_lines(session.path, data, header)
            session.messages.extend(entries)
            session.updated_at = header["updated_at"]
            self._adopt(session)
            events.append(self._after_write(session, "appended", turn_id))
        self._publish(events)
        return written

    def set_last_consolidated(self, session: Session, n: int) -> None:
        """Record how many messages are summarised into memory, on disk at once."""
        if isinstance(n, bool) or not isinstance(n, int) or not session.base <= n <= session.count:
            raise ValueError(f"last_consolidated must be an int in {session.base}..{session.count}, got {n!r}")
        with self._writing():
            events = self._before_write(session)
            target = session
            cached = self._cache.get(session.key)
            if cached is not None and cached is not session and cached.base <= n <= cached.count:
                # The session was re-read (it changed outside) while this consolidation ran: the offset
                # still counts the same first messages, and the copy the next turn uses must keep it.
                target = cached
            previous = (session.last_consolidated, target.last_consolidated)
            session.last_consolidated = target.last_consolidated = n
            try:
                self._ensure_file(target)
                self._write_header(target)
            except OSError:  # the offset moves only when it is on disk
                session.last_consolidated, target.last_consolidated = previous
                raise
            events.append(self._after_write(target, "metadata"))
        self._publish(events)

    def update_metadata(self, session: Session, **metadata_fields: Any) -> None:
        """Set fields of the session's `metadata` (a value of None removes the field) and persist them."""
        try:
            json.dumps(metadata_fields, ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"session metadata must be JSON-serialisable: {error}") from error
        with self._writing():
            events = self._set_metadata(session, metadata_fields)
        self._publish(events)

    def note_metadata(self, session: Session, **metadata_fields: Any) -> bool:
        """Like `update_metadata`, but a session with no file yet only takes the fields in memory: its first
        written line carries them (no empty file is made). Returns whether the file's metadata line changed."""
        try:
            json.dumps(metadata_fields, ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"session metadata must be JSON-serialisable: {error}") from error
        with self._writing():
            self._own_path(session)
            if not session.path.exists():
                for name, value in metadata_fields.items():
                    if value is None:
                        session.metadata.pop(name, None)
                    else:
                        session.metadata[name] = value
                return False
            events = self._set_metadata(session, metadata_fields)
        self._publish(events)
        return True

    def _set_metadata(self, session: Session, metadata_fields: dict[str, Any]) -> list[SessionChanged]:
        events = self._before_write(session)
        cached = self._cache.get(session.key)
        targets = [session] if cached is None or cached is session else [session, cached]
        for target in targets:  # a separately loaded copy must not hide the change from the cached one
            for name, value in metadata_fields.items():
                if value is None:
                    target.metadata.pop(name, None)
                else:
                    target.metadata[name] = value
        self._ensure_file(session)
        self._write_header(session)
        events.append(self._after_write(session, "metadata"))
        return events

    def rename(self, key: str, title: str) -> Session:
        """Give a saved session a title (an empty title goes back to the derived one)."""
        with self._writing():
            session = self._cache.get(key) or self.load(key)
            if session is None or not session.path.exists():
                raise SessionNotFoundError(f"no session {key!r} to rename")
            events = self._set_metadata(session, {"title": shorten(title, 200) or None})
        self._publish(events)
        return session

    def clear(self, session: Session) -> Path | None:
        """`/new`: move the file to `.archive/` (never deleted) and start an empty file for the same key.

        Returns the archive path, or None when nothing had been written yet.
        """
        with self._writing():
            events = self._before_write(session)
            archived: Path | None = None
            if session.path.exists():
                archived = move_aside(session.path, self.archive_dir, ARCHIVE_SEPARATOR)
            session.messages = []
            session.base = 0
            session.head_title = ""
            session.last_consolidated = 0
            session.created_at = session.updated_at = now()
            session.metadata.pop("title", None)
            session.header_extra = dict(self.paths.header_defaults)
            session.warnings = []
            create_file(session.path, session.header(), [])
            self._adopt(session)
            events.append(self._after_write(session, "cleared"))
        self._publish(events)
        return archived

    def branch(self, origin_key: str, at: int, new_key: str) -> Session:
        """A new session `new_key`: the origin's messages [0:at] copied as they are, and a `branch_of`
        pointer in its metadata (sessions/branches.py). The origin's file is only read, never written."""
        origin = self.load(origin_key)
        if origin is None:
            raise SessionNotFoundError(f"no session {origin_key!r} to branch from")
        if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at <= len(origin.messages):
            raise ValueError(f"a branch of {origin_key!r} copies 0..{len(origin.messages)} messages, not {at!r}")
        metadata = {name: value for name, value in origin.metadata.items() if name != "title"}
        metadata[BRANCH_FIELD] = {"key": origin_key, "at": at}
        branch = Session(key=new_key, path=self.path_for(new_key), messages=[dict(m) for m in origin.messages[:at]],
                         metadata=metadata, last_consolidated=min(origin.last_consolidated, at),
                         header_extra=dict(origin.header_extra))
        with self._writing():
            if not create_file_if_missing(branch.path, branch.header(), branch.messages):
                raise ValueError(f"a session {new_key!r} already exists; a branch needs a new key")
            self._adopt(branch)
            events = [self._after_write(branch, "branched")]
        self._publish(events)
        return branch

    def branch_records(self) -> list[BranchRecord]:
        """Every session file of the workspace that is a branch (read from metadata lines only)."""
        files = session_files(self.sessions_dir)
        return read_branch_records((path, self.paths.key_from_name(path)) for path in files)

    def _ensure_file(self, session: Session) -> None:
        """Create the file on first write; if it vanished, write what we still hold, so nothing is lost."""
        self._own_path(session)
        if not session.path.exists():
            self._rebase_if_missing(session)
            create_file(session.path, session.header(), session.messages)

    @staticmethod
    def _rebase_if_missing(session: Session) -> None:
        """A tail-loaded session whose file vanished is written again from what is loaded: its
        numbering then starts at the first loaded message."""
        if session.base and not session.path.exists():
            log.warning("%s vanished; writing the %d loaded messages again", session.path, len(session.messages))
            session.last_consolidated = max(0, session.last_consolidated - session.base)
            session.base = 0

    def _own_path(self, session: Session) -> None:
        if session.path == Path():  # a Session built by hand, not by this store
            session.path = self.path_for(session.key)

    def _write_header(self, session: Session) -> None:
        if not update_header(session.path, session.header()):
            log.info("rewrote the metadata line of %s once, padded for in-place updates", session.path)
        self._summaries.pop(session.path, None)

    def _adopt(self, session: Session) -> None:
        """Keep the cache pointing at the object that was just written through."""
        self._summaries.pop(session.path, None)
        if self._cache.get(session.key) is not session:
            self._cache[session.key] = session

    # --- list, trash, search -------------------------------------------------------------------------

    def list_sessions(self) -> list[SessionInfo]:
        """Every session file, newest `updated_at` first (files without a metadata line included)."""
        infos: list[SessionInfo] = []
        if not self.sessions_dir.is_dir():
            return infos
        with os.scandir(self.sessions_dir) as entries:
            files = [e for e in entries if e.name.endswith(".jsonl") and e.is_file()]
        seen: set[Path] = set()
        for entry in files:
            path = Path(entry.path)
            try:
                signature = file_signature(os.stat(entry.path))
                cached = self._summaries.get(path)
                if cached is None or cached[0] != signature:
                    cached = (signature, summarize(path, self.paths.key_from_name(path)))
                    self._summaries[path] = cached
            except OSError as error:
                log.warning("cannot read session file %s: %s", path, error)
                continue
            seen.add(path)
            if self.paths.shadowed(path, cached[1].key):
                continue  # a legacy-named copy of a session that has its current file
            infos.append(cached[1])
        for stale in [path for path in list(self._summaries) if path not in seen]:
            self._summaries.pop(stale, None)
        infos.sort(key=lambda info: (sort_time(info.updated_at), info.key), reverse=True)
        return infos

    def delete(self, key: str) -> str:
        """Move the session's file into `.trash/`; returns the trash id `restore` takes."""
        with self._writing():
            path = next((p for p in self.paths.read_candidates(key) if p.exists()), self.path_for(key))
            if not path.exists():
                raise SessionNotFoundError(f"no session {key!r} to delete")
            outside = self._changes.check(path, key)
            target = move_aside(path, self.trash_dir, TRASH_SEPARATOR)
            self._cache.pop(key, None)
            self._changes.forget(key)
            self._summaries.pop(path, None)
            deleted = self._changes.wrote(path, key, "deleted")
        self._publish([outside, deleted] if outside is not None else [deleted])
        return target.name

    def list_trash(self) -> list[TrashEntry]:
        """Deleted sessions, most recently deleted first."""
        return trash_entries(self.trash_dir)

    def restore(self, trash_id: str) -> str:
        """Put a trashed session back; returns its key. Never overwrites a session file."""
        with self._writing():
            key = restore_from_trash(self.trash_dir, self.sessions_dir, trash_id)
            self._cache.pop(key, None)
            self._changes.forget(key)
            restored = self._changes.wrote(self.path_for(key), key, "restored")
        self._publish([restored])
        return key

    def search(self, text: str, limit: int = 200) -> list[tuple[str, str]]:
        """(key, snippet) for each custom title and message text containing `text`, any case, newest first."""
        needle = text.strip().lower()
        hits: list[tuple[str, str]] = []
        if not needle or limit <= 0:
            return hits
        for info in self.list_sessions():
            try:
                hits += search_file(info.path, info.key, needle, limit - len(hits))
            except OSError as error:
                log.warning("cannot search %s: %s", info.path, error)
            if len(hits) >= limit:
                break
        return hits[:limit]

    # --- export --------------------------------------------------------------------------------------

    def _load_existing(self, key: str) -> Session:
        session = self.load(key)
        if session is None:
            raise SessionNotFoundError(f"no session {key!r}")
        return session

    def export_markdown(self, key: str) -> str:
        """A readable transcript, tool calls and their results included."""
        session = self._load_existing(key)
        return render_markdown(session.title, session.key, session.created_at, session.updated_at,
                               session.messages)

    def export_json(self, key: str) -> str:
        """The metadata and all messages as one JSON document (indent 2)."""
        session = self._load_existing(key)
        return render_json(session.header(), session.messages)
