"""The session store's write path: appends, the metadata line, clearing and branching.

A turn only *appends* its lines (one write of whole lines, sessions/file.py `append_lines`), all or
nothing: when the disk refuses, the file and the Session are as they were.

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
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.events import Event, SessionChanged, SyncCopyMerged
from nanobot_desktop.engine.runtime_block import public_message
from nanobot_desktop.engine.sessions.branches import BRANCH_FIELD
from nanobot_desktop.engine.sessions.export import shorten
from nanobot_desktop.engine.sessions.file import (
    append_lines, create_file, create_file_if_missing, encode_line, leads_out, parse_session_bytes, update_header,
)
from nanobot_desktop.engine.sessions.session import Session, now
from nanobot_desktop.engine.sessions.files import SessionFiles
from nanobot_desktop.engine.sessions.trash import ARCHIVE_SEPARATOR, TRASH_SEPARATOR, SessionNotFoundError, move_aside
from nanobot_desktop.engine.sync.merge import (
    MAX_COPY_BYTES, MERGED, TOO_LARGE, UNREADABLE, CopyMerge, missing_messages, session_conflict_copies,
)

log = logging.getLogger(__name__)


class SessionWriter:
    """Every write of a session file; each records the file as written and publishes `SessionChanged`."""

    def __init__(self, files: SessionFiles) -> None:
        self.files = files

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
        merges: list[CopyMerge] = []
        with self.files.writing():
            # All or nothing (file.append_lines): on a StorageError the file and `session` are unchanged.
            events = self.files.before_write(session)
            if events:  # changed outside: a sync tool may have swapped the file during the turn
                merges = self.merge_copies(session)[0]
            self.files.own_path(session)
            self._rebase_if_missing(session)
            header = {**session.header(), "updated_at": now()}
            data = "".join(lines).encode("utf-8")
            if create_file_if_missing(session.path, header, session.messages + entries):
                written = len(data)
            else:
                written = append_lines(session.path, data, header)
            session.messages.extend(entries)
            self.files.own.appended(session.path, entries)
            session.updated_at = header["updated_at"]
            self._adopt(session)
            events.append(self.files.after_write(session, "appended", turn_id))
        self.files.publish(events)
        self.publish_merges(merges)
        return written

    # --- a sync tool's conflict copies (engine/sync/merge.py) ---------------------------------------------

    def merge_copies(self, session: Session) -> tuple[list[CopyMerge], SessionChanged | None]:
        """Append to the session's file what its conflict copies have and it lacks, then move the copies
        to the trash; before anything else is written to it, so the turn's own question stays before
        its reply. Returns what became of each copy and, when lines were added, the store's record of
        that write; the caller publishes both (`publish_merges`)."""
        merges: list[CopyMerge] = []
        written: SessionChanged | None = None
        with self.files.writing():
            self.files.own_path(session)
            copies = session_conflict_copies(session.path.parent, session.path.name)
            if not copies or not session.path.exists():
                return merges, None
            ours = parse_session_bytes(session.path.read_bytes(), session.path.name).messages
            missing: list[dict[str, Any]] = []
            merged: list[tuple[Path, CopyMerge]] = []
            for copy, conflict in copies:
                outside = leads_out(copy)
                if outside is not None:  # made by exec, not by a sync tool: never read into the conversation
                    merges.append(CopyMerge(copy, conflict, session.key, UNREADABLE,
                                            detail=f"it leads out of the session folder: {outside}"))
                    continue
                try:
                    size = copy.stat().st_size
                    parsed = parse_session_bytes(copy.read_bytes(), copy.name) if size <= MAX_COPY_BYTES else None
                except OSError as error:
                    merges.append(CopyMerge(copy, conflict, session.key, UNREADABLE, detail=error.strerror or str(error)))
                    continue
                if parsed is None:
                    merges.append(CopyMerge(copy, conflict, session.key, TOO_LARGE,
                                            detail=f"{size / 1e6:.0f} MB; the limit is {MAX_COPY_BYTES / 1e6:.0f} MB"))
                    continue
                if parsed.header is None and not parsed.messages:
                    merges.append(CopyMerge(copy, conflict, session.key, UNREADABLE, detail="no session line in it",
                                            skipped_lines=len(parsed.warnings)))
                    continue
                new = missing_messages(ours + missing, parsed.messages)
                missing += new
                merged.append((copy, CopyMerge(copy, conflict, session.key, MERGED, added=len(new),
                                               skipped_lines=len(parsed.warnings))))
            if missing:
                data = "".join(encode_line(message) for message in missing).encode("utf-8")
                header = {**session.header(), "updated_at": now()}
                append_lines(session.path, data, header)  # a StorageError leaves the file and the copies as they were
                session.messages.extend(missing)
                session.updated_at = header["updated_at"]
                self._adopt(session)
                written = self.files.after_write(session, "appended", "sync-merge")
            for copy, result in merged:
                move_aside(copy, self.files.trash_dir, TRASH_SEPARATOR)
                merges.append(result)
        for result in merges:
            (log.info if result.outcome == MERGED else log.warning)("%s (%s)", result.sentence(), result.copy.name)
        return merges, written

    def publish_merges(self, merges: list[CopyMerge]) -> None:
        self.files.publish([SyncCopyMerged(m.session_key, outcome=m.outcome, device=m.conflict.device_name or m.conflict.device,
                                             tool=m.conflict.tool, added=m.added, copy_name=m.copy.name,
                                             sentence=m.sentence()) for m in merges])

    def set_last_consolidated(self, session: Session, n: int) -> None:
        """Record how many messages are summarised into memory, on disk at once."""
        if isinstance(n, bool) or not isinstance(n, int) or not session.base <= n <= session.count:
            raise ValueError(f"last_consolidated must be an int in {session.base}..{session.count}, got {n!r}")
        with self.files.writing():
            events = self.files.before_write(session)
            target = session
            cached = self.files.cache.get(session.key)
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
            events.append(self.files.after_write(target, "metadata"))
        self.files.publish(events)

    def update_metadata(self, session: Session, **metadata_fields: Any) -> None:
        """Set fields of the session's `metadata` (a value of None removes the field) and persist them."""
        try:
            json.dumps(metadata_fields, ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"session metadata must be JSON-serialisable: {error}") from error
        with self.files.writing():
            events = self._set_metadata(session, metadata_fields)
        self.files.publish(events)

    def note_metadata(self, session: Session, **metadata_fields: Any) -> bool:
        """Like `update_metadata`, but a session with no file yet only takes the fields in memory: its first
        written line carries them (no empty file is made). Returns whether the file's metadata line changed."""
        try:
            json.dumps(metadata_fields, ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"session metadata must be JSON-serialisable: {error}") from error
        with self.files.writing():
            self.files.own_path(session)
            if not session.path.exists():
                for name, value in metadata_fields.items():
                    if value is None:
                        session.metadata.pop(name, None)
                    else:
                        session.metadata[name] = value
                return False
            events = self._set_metadata(session, metadata_fields)
        self.files.publish(events)
        return True

    def _set_metadata(self, session: Session, metadata_fields: dict[str, Any]) -> list[Event]:
        events = self.files.before_write(session)
        cached = self.files.cache.get(session.key)
        targets = [session] if cached is None or cached is session else [session, cached]
        for target in targets:  # a separately loaded copy must not hide the change from the cached one
            for name, value in metadata_fields.items():
                if value is None:
                    target.metadata.pop(name, None)
                else:
                    target.metadata[name] = value
        self._ensure_file(session)
        self._write_header(session)
        events.append(self.files.after_write(session, "metadata"))
        return events

    def rename(self, key: str, title: str) -> Session:
        """Give a saved session a title (an empty title goes back to the derived one)."""
        with self.files.writing():
            session = self.files.cache.get(key) or self.files.load(key)
            if session is None or not session.path.exists():
                raise SessionNotFoundError(f"no session {key!r} to rename")
            events = self._set_metadata(session, {"title": shorten(title, 200) or None})
        self.files.publish(events)
        return session

    def clear(self, session: Session) -> Path | None:
        """`/new`: move the file to `.archive/` (never deleted) and start an empty file for the same key.

        Returns the archive path, or None when nothing had been written yet.
        """
        with self.files.writing():
            events = self.files.before_write(session)
            archived: Path | None = None
            if session.path.exists():
                archived = move_aside(session.path, self.files.archive_dir, ARCHIVE_SEPARATOR)
            self.files.own.forget(session.path)
            session.messages = []
            session.base = 0
            session.head_title = ""
            session.last_consolidated = 0
            session.created_at = session.updated_at = now()
            session.metadata.pop("title", None)
            session.header_extra = dict(self.files.paths.header_defaults)
            session.warnings = []
            create_file(session.path, session.header(), [])
            self._adopt(session)
            events.append(self.files.after_write(session, "cleared"))
        self.files.publish(events)
        return archived

    def lost_messages(self, key: str) -> list[dict[str, Any]]:
        """The app's messages another program erased from `key`'s file (SessionLinesLost), oldest first."""
        return [dict(m) for m in self.files.own.lost.get(key, [])]

    def put_back_lost(self, key: str, new_key: str) -> Session | None:
        """Put the messages erased from `key` into the new session `new_key` (None: nothing was lost)."""
        lost = self.lost_messages(key)
        if not lost:
            return None
        session = self.files.get_or_create(new_key)
        if session.messages:
            raise ValueError(f"a session {new_key!r} already exists; erased messages go into a new one")
        session.metadata["title"] = f"Put back from {key}"
        self.append(session, lost)
        self.files.own.lost.pop(key, None)
        return session

    def branch(self, origin_key: str, at: int, new_key: str) -> Session:
        """A new session `new_key`: the origin's messages [0:at] copied as they are (save that a user
        message loses a runtime block nanobot 0.3 saved in it, see runtime_block.py), and a `branch_of`
        pointer in its metadata (sessions/branches.py). The origin's file is only read, never written."""
        origin = self.files.load(origin_key)
        if origin is None:
            raise SessionNotFoundError(f"no session {origin_key!r} to branch from")
        if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at <= len(origin.messages):
            raise ValueError(f"a branch of {origin_key!r} copies 0..{len(origin.messages)} messages, not {at!r}")
        metadata = {name: value for name, value in origin.metadata.items() if name != "title"}
        metadata[BRANCH_FIELD] = {"key": origin_key, "at": at}
        branch = Session(key=new_key, path=self.files.path_for(new_key), messages=[public_message(dict(m)) for m in origin.messages[:at]],
                         metadata=metadata, last_consolidated=min(origin.last_consolidated, at),
                         header_extra=dict(origin.header_extra))
        with self.files.writing():
            if not create_file_if_missing(branch.path, branch.header(), branch.messages):
                raise ValueError(f"a session {new_key!r} already exists; a branch needs a new key")
            self._adopt(branch)
            events = [self.files.after_write(branch, "branched")]
        self.files.publish(events)
        return branch

    def _ensure_file(self, session: Session) -> None:
        """Create the file on first write; if it vanished, write what we still hold, so nothing is lost."""
        self.files.own_path(session)
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

    def _write_header(self, session: Session) -> None:
        if not update_header(session.path, session.header()):
            log.info("rewrote the metadata line of %s once, padded for in-place updates", session.path)
        self.files.summaries.pop(session.path, None)

    def _adopt(self, session: Session) -> None:
        """Keep the cache pointing at the object that was just written through."""
        self.files.summaries.pop(session.path, None)
        if self.files.cache.get(session.key) is not session:
            self.files.cache[session.key] = session
