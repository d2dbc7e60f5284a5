"""Sessions: `sessions/<safe_key>.jsonl` in nanobot 0.1.4.post4's format, written append-only.

The original rewrites the whole file on every save, so a kill mid-save can lose the conversation and
a corrupt line makes it start over and overwrite the file. Here a turn only *appends* its lines, and
loading never writes: a bad line is skipped with a warning and stays on disk.

`SessionStore` (this module: listing, trash, search, export) owns two objects: its file layer,
sessions/files.py (paths, locks, loading, who changed a file), and its writer, sessions/writing.py
(the write path and why the metadata line is fixed-width). Neither is a base class.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.changes import ChangeTracker
from nanobot_desktop.engine.events import EventBus, SessionChanged
from nanobot_desktop.engine.layout import SessionPaths, post4_file_stem
from nanobot_desktop.engine.sessions.export import render_json, render_markdown
from nanobot_desktop.engine.sessions.file import parse_header, read_first_line
from nanobot_desktop.engine.sessions.files import SessionFiles
from nanobot_desktop.engine.sessions.listing import (
    SessionInfo, file_signature, key_from_stem, search_file, sort_time, summarize,
)
from nanobot_desktop.engine.sessions.paging import SessionPage
from nanobot_desktop.engine.sessions.session import INTERRUPTED_TOOL_RESULT, Session
from nanobot_desktop.engine.sessions.trash import (
    TRASH_SEPARATOR, SessionNotFoundError, TrashEntry, move_aside, restore_from_trash, trash_entries,
)
from nanobot_desktop.engine.sessions.writing import SessionWriter
from nanobot_desktop.engine.sync.merge import ORPHANED, UNREADABLE, CopyMerge, session_conflict_copies
from nanobot_desktop.engine.sync.names import parse_conflict_name

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

    It is composed of two objects it owns: `files` (sessions/files.py: paths, locks, loading, the
    change records) and `writer` (sessions/writing.py: appends, the metadata line, clear, branch).
    """

    def __init__(self, sessions_dir: Path | None = None, legacy_dir: Path | None = None,
                 paths: SessionPaths | None = None, bus: EventBus | None = None,
                 changes: ChangeTracker | None = None) -> None:
        """`paths` (from engine/layout.py) decides where files are and how they are named: post4's rule
        under `sessions_dir` by default, 0.3's base64url names and file lock for a 0.3 workspace.
        `changes` is the engine's one change tracker (engine/changes.py; a store of its own when None)."""
        self.files = SessionFiles(sessions_dir, legacy_dir, paths, bus, changes)
        self.writer = SessionWriter(self.files)

    # --- the file layer's facts ----------------------------------------------------------------------

    @property
    def paths(self) -> SessionPaths:
        return self.files.paths

    @property
    def sessions_dir(self) -> Path:
        return self.files.sessions_dir

    @property
    def bus(self) -> EventBus | None:
        return self.files.bus

    @property
    def legacy_dir(self) -> Path:
        return self.files.legacy_dir

    @property
    def trash_dir(self) -> Path:
        return self.files.trash_dir

    @property
    def archive_dir(self) -> Path:
        return self.files.archive_dir

    @property
    def suspect(self) -> Callable[[str], str]:
        """Who may have erased lines of a session (set by the Engine; "" when nobody is known to)."""
        return self.files.suspect

    @suspect.setter
    def suspect(self, value: Callable[[str], str]) -> None:
        self.files.suspect = value

    def path_for(self, key: str) -> Path:
        return self.files.path_for(key)

    # --- reading (sessions/files.py) -------------------------------------------------------------------

    def get_or_create(self, key: str) -> Session:
        return self.files.get_or_create(key)

    def cached(self, key: str) -> Session | None:
        return self.files.cached(key)

    def load(self, key: str) -> Session | None:
        return self.files.load(key)

    def read_metadata(self, key: str) -> dict[str, Any]:
        return self.files.read_metadata(key)

    def read_page(self, key: str, end: int | None = None, min_messages: int = 100) -> SessionPage:
        return self.files.read_page(key, end, min_messages)

    def invalidate(self, key: str) -> None:
        self.files.invalidate(key)

    def notice_changes(self, paths: Iterable[Path] | None = None) -> list[str]:
        return self.files.notice_changes(paths)

    def migrate_legacy_sessions(self) -> list[Path]:
        return self.files.migrate_legacy_sessions()

    # --- writing (sessions/writing.py) -----------------------------------------------------------------

    def append(self, session: Session, messages: list[dict[str, Any]], turn_id: str = "") -> int:
        return self.writer.append(session, messages, turn_id)

    def merge_copies(self, session: Session) -> tuple[list[CopyMerge], SessionChanged | None]:
        return self.writer.merge_copies(session)

    def set_last_consolidated(self, session: Session, n: int) -> None:
        self.writer.set_last_consolidated(session, n)

    def update_metadata(self, session: Session, **metadata_fields: Any) -> None:
        self.writer.update_metadata(session, **metadata_fields)

    def note_metadata(self, session: Session, **metadata_fields: Any) -> bool:
        return self.writer.note_metadata(session, **metadata_fields)

    def rename(self, key: str, title: str) -> Session:
        return self.writer.rename(key, title)

    def clear(self, session: Session) -> Path | None:
        return self.writer.clear(session)

    def lost_messages(self, key: str) -> list[dict[str, Any]]:
        return self.writer.lost_messages(key)

    def put_back_lost(self, key: str, new_key: str) -> Session | None:
        return self.writer.put_back_lost(key, new_key)

    def branch(self, origin_key: str, at: int, new_key: str) -> Session:
        return self.writer.branch(origin_key, at, new_key)

    # --- list, trash, search -------------------------------------------------------------------------

    def list_sessions(self) -> list[SessionInfo]:
        """Every session file, newest `updated_at` first (files without a metadata line included)."""
        infos: list[SessionInfo] = []
        if not self.sessions_dir.is_dir():
            return infos
        with os.scandir(self.sessions_dir) as entries:
            files = [e for e in entries if e.name.endswith(".jsonl") and e.is_file()]
        names = {entry.name for entry in files}
        files = [entry for entry in files if parse_conflict_name(entry.name, names) is None]  # merged, not listed
        seen: set[Path] = set()
        for entry in files:
            path = Path(entry.path)
            try:
                signature = file_signature(os.stat(entry.path))
                cached = self.files.summaries.get(path)
                if cached is None or cached[0] != signature:
                    cached = (signature, summarize(path, self.paths.key_from_name(path)))
                    self.files.summaries[path] = cached
            except OSError as error:
                log.warning("cannot read session file %s: %s", path, error)
                continue
            seen.add(path)
            if self.paths.shadowed(path, cached[1].key):
                continue  # a legacy-named copy of a session that has its current file
            infos.append(cached[1])
        for stale in [path for path in list(self.files.summaries) if path not in seen]:
            self.files.summaries.pop(stale, None)
        infos.sort(key=lambda info: (sort_time(info.updated_at), info.key), reverse=True)
        return infos

    # --- a sync tool's conflict copy (engine/sync/sessions.py) ------------------------------------------

    def key_for_file(self, path: Path) -> str:
        """The key of the session stored in `path`: its metadata line's, else what its name says."""
        try:
            header = parse_header(read_first_line(path))
        except OSError:
            header = None
        key = header.get("key") if header else None
        if isinstance(key, str) and key:
            return key
        return self.paths.key_from_name(path) or key_from_stem(path.stem)

    def merge_conflict_copies(self) -> list[CopyMerge]:
        """Merge every sync-conflict copy in the sessions folder into its session (`merge_copies`); a copy
        whose session is gone goes to the trash under the session's name (restorable). Publishes
        `SyncCopyMerged` for each copy and returns what became of them, oldest copy first."""
        results: list[CopyMerge] = []
        done: set[str] = set()
        for copy, conflict in session_conflict_copies(self.sessions_dir):
            original = copy.with_name(conflict.original_name)
            if original.name in done:
                continue
            key = self.key_for_file(original)
            if original.exists():
                done.add(original.name)
                with self.files.writing():
                    session = self.get_or_create(key)
                    outside = self.files.before_write(session)
                    merged, written = self.merge_copies(session)
                self.files.publish(outside + ([written] if written is not None else []))
                results += merged
                continue
            try:
                trashed = move_aside(copy, self.trash_dir, TRASH_SEPARATOR, stem=original.stem)
            except OSError as error:
                results.append(CopyMerge(copy, conflict, key, UNREADABLE, detail=error.strerror or str(error)))
                continue
            results.append(CopyMerge(trashed, conflict, key, ORPHANED))
            log.info("%s", results[-1].sentence())
        self.writer.publish_merges(results)
        return results

    def delete(self, key: str) -> str:
        """Move the session's file into `.trash/`; returns the trash id `restore` takes."""
        with self.files.writing():
            path = next((p for p in self.paths.read_candidates(key) if p.exists()), self.path_for(key))
            if not path.exists():
                raise SessionNotFoundError(f"no session {key!r} to delete")
            outside = self.files.changes.check(path, key)
            target = move_aside(path, self.trash_dir, TRASH_SEPARATOR)
            self.files.own.forget(path)
            self.files.cache.pop(key, None)
            self.files.changes.forget(key)
            self.files.summaries.pop(path, None)
            deleted = self.files.changes.wrote(path, key, "deleted")
        self.files.publish([outside, deleted] if outside is not None else [deleted])
        return target.name

    def list_trash(self) -> list[TrashEntry]:
        """Deleted sessions, most recently deleted first."""
        return trash_entries(self.trash_dir)

    def restore(self, trash_id: str) -> str:
        """Put a trashed session back; returns its key. Never overwrites a session file."""
        with self.files.writing():
            key = restore_from_trash(self.trash_dir, self.sessions_dir, trash_id)
            self.files.cache.pop(key, None)
            self.files.changes.forget(key)
            restored = self.files.changes.wrote(self.path_for(key), key, "restored")
        self.files.publish([restored])
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
