"""`memory/history.jsonl`: the history log of a nanobot 0.3 workspace, read and written its way.

One JSON object per line, `{"cursor": int, "timestamp": "YYYY-MM-DD HH:MM", "content": str}` (0.3.5
may add `session_key`; any other key is kept). Cursors only grow; `memory/.cursor` holds the last one
written and `memory/.dream_cursor` how far Dream has read. So that Dream and the CLI keep agreeing:

- a new entry takes `max(.cursor, the largest cursor in the file) + 1`, is appended as one whole
  line, and only then is `.cursor` updated (as 0.3.5 does, in that order);
- editing an entry changes only its `content`: the file is rewritten atomically with every other
  line byte for byte as it was, and its cursor stays (Dream does not read it a second time);
- lines that are not entries (damaged, or of a later version) are skipped when reading and kept
  when rewriting. HISTORY.md is never created here.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.changes import ChangeTracker
from nanobot_desktop.engine.own_files import LinkedOut, OwnFiles
from nanobot_desktop.engine.workspace import (
    append_text,
    atomic_write_bytes,
    atomic_write_text,
)

log = logging.getLogger(__name__)

MAX_ENTRY_CHARS = 64_000  # 0.3.5 truncates longer entries the same way
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M"
_LEADING_STAMP = re.compile(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\]\s*")


# The session a consolidation summarises, for the entries it appends (0.3 records it as session_key).
_HISTORY_SESSION: ContextVar[str | None] = ContextVar("history_session", default=None)


@contextmanager
def history_session(session_key: str) -> Iterator[None]:
    """History entries appended inside this block (in this asyncio task) say they come from `session_key`."""
    token = _HISTORY_SESSION.set(session_key)
    try:
        yield
    finally:
        _HISTORY_SESSION.reset(token)


def current_history_session() -> str | None:
    return _HISTORY_SESSION.get()


@dataclass(frozen=True)
class HistoryEntry:
    """One entry of history.jsonl; `extra` holds the keys besides cursor, timestamp and content."""

    cursor: int
    timestamp: str
    content: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def session_key(self) -> str | None:
        value = self.extra.get("session_key")
        return value if isinstance(value, str) else None

    def as_text(self) -> str:
        """The entry as a HISTORY.md paragraph would read: `[timestamp] content`."""
        return f"[{self.timestamp}] {self.content}"


def _valid_cursor(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _entry_of(line: bytes) -> HistoryEntry | None:
    try:
        obj = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    cursor = _valid_cursor(obj.get("cursor"))
    timestamp, content = obj.get("timestamp"), obj.get("content")
    if cursor is None or not isinstance(timestamp, str) or not isinstance(content, str):
        return None
    extra = {k: v for k, v in obj.items() if k not in ("cursor", "timestamp", "content")}
    return HistoryEntry(cursor, timestamp, content, extra)


def _clean(content: str) -> str:
    text = content.rstrip()
    if len(text) > MAX_ENTRY_CHARS:
        text = text[:MAX_ENTRY_CHARS - 14].rstrip() + "\n[truncated]"
    return text


class HistoryJournal:
    """history.jsonl with its cursor files, in one workspace's `memory/` folder."""

    def __init__(self, memory_dir: Path, own: OwnFiles | None = None, changes: ChangeTracker | None = None) -> None:
        self.memory_dir = Path(memory_dir)
        self.own = own  # the workspace's reader: a history.jsonl linked out of the workspace is not read
        self.changes = changes if changes is not None else ChangeTracker()  # the engine's record of its writes
        self._lock = threading.RLock()  # cursor choice + append must not interleave within this process

    @property
    def file(self) -> Path:
        return self.memory_dir / "history.jsonl"

    @property
    def cursor_file(self) -> Path:
        return self.memory_dir / ".cursor"

    @property
    def dream_cursor_file(self) -> Path:
        return self.memory_dir / ".dream_cursor"

    # ---- reading ----------------------------------------------------------------------------

    def _lines(self) -> list[bytes]:
        try:
            data = self.own.read(self.file) if self.own is not None else self.file.read_bytes()
        except (FileNotFoundError, LinkedOut):
            return []
        return data.split(b"\n")

    def entries(self) -> list[HistoryEntry]:
        """Every well-formed entry in file order (oldest first, newest last)."""
        return [entry for line in self._lines() if line.strip() and (entry := _entry_of(line.strip()))]

    def search(self, text: str) -> list[HistoryEntry]:
        """Entries whose timestamp or content holds every word of `text` (any case)."""
        words = text.lower().split()
        return [e for e in self.entries() if all(w in e.as_text().lower() for w in words)]

    def render_text(self) -> str:
        """All entries as `[timestamp] content` paragraphs (for the model and for grep-like reading)."""
        return "\n\n".join(entry.as_text() for entry in self.entries())

    def _read_counter(self, path: Path) -> int | None:
        try:
            return _valid_cursor(int(path.read_text(encoding="utf-8").strip()))
        except (OSError, ValueError):
            return None

    def last_cursor(self) -> int:
        """The largest cursor used so far (0 for an empty journal)."""
        in_file = max((entry.cursor for entry in self.entries()), default=0)
        return max(in_file, self._read_counter(self.cursor_file) or 0)

    def dream_cursor(self) -> int:
        return self._read_counter(self.dream_cursor_file) or 0

    # ---- writing ----------------------------------------------------------------------------

    def append(self, content: str, *, session_key: str | None = None, when: datetime | None = None) -> HistoryEntry:
        """Add an entry at the end; a leading `[YYYY-MM-DD HH:MM]` in `content` becomes its timestamp."""
        text = _clean(content)
        stamp = (when or datetime.now()).strftime(TIMESTAMP_FORMAT)
        match = _LEADING_STAMP.match(text)
        if match and text[match.end():].strip():
            stamp, text = match.group(1), text[match.end():]
        if not text.strip():
            raise ValueError("a history entry needs some text")
        with self._lock:
            cursor = self.last_cursor() + 1
            record: dict[str, Any] = {"cursor": cursor, "timestamp": stamp, "content": text}
            if session_key:
                record["session_key"] = session_key
            line = json.dumps(record, ensure_ascii=False) + "\n"
            if self._needs_newline():
                line = "\n" + line  # a hand-edited file without a final newline keeps its last line whole
            before = self.snapshot()
            append_text(self.file, line)  # all or nothing
            try:
                atomic_write_text(self.cursor_file, str(cursor))
            except OSError:
                self.restore(before)  # the entry and its cursor land together, or neither
                raise
            finally:
                self._wrote()
        return HistoryEntry(cursor, stamp, text, {"session_key": session_key} if session_key else {})

    def snapshot(self) -> tuple[int | None, bytes | None]:
        """What `restore` needs to undo later appends: the journal's length and the cursor file's bytes."""
        try:
            length: int | None = self.file.stat().st_size
        except FileNotFoundError:
            length = None
        try:
            cursor = self.cursor_file.read_bytes()
        except FileNotFoundError:
            cursor = None
        return length, cursor

    def restore(self, snapshot: tuple[int | None, bytes | None]) -> None:
        """Undo appends made since `snapshot` (a failed consolidation leaves the journal as it was).

        Truncating and rewriting the small cursor file need no new space, so this works on a full disk.
        """
        length, cursor = snapshot
        with self._lock:
            try:
                if length is None:
                    self.file.unlink(missing_ok=True)
                else:
                    os.truncate(self.file, length)
                if cursor is None:
                    self.cursor_file.unlink(missing_ok=True)
                elif self.cursor_file.read_bytes() != cursor:
                    atomic_write_bytes(self.cursor_file, cursor)
            except OSError:
                log.exception("could not undo the history entry appended to %s", self.file)
            self._wrote()

    def _wrote(self) -> None:
        """history.jsonl and .cursor as this journal left them are the engine's own."""
        self.changes.wrote(self.file)
        self.changes.wrote(self.cursor_file)

    def _needs_newline(self) -> bool:
        try:
            with self.file.open("rb") as handle:
                handle.seek(0, 2)
                if handle.tell() == 0:
                    return False
                handle.seek(-1, 2)
                return handle.read(1) != b"\n"
        except FileNotFoundError:
            return False

    def edit(self, cursor: int, content: str) -> HistoryEntry:
        """Replace the text of the entry with `cursor`; nothing else in the file changes."""
        text = _clean(content)
        if not text.strip():
            raise ValueError("a history entry needs some text (to drop one, edit history.jsonl itself)")
        with self._lock:
            lines = self._lines()
            for index, raw in enumerate(lines):
                entry = _entry_of(raw.strip()) if raw.strip() else None
                if entry is None or entry.cursor != cursor:
                    continue
                record = json.loads(raw.decode("utf-8"))
                record["content"] = text
                lines[index] = json.dumps(record, ensure_ascii=False).encode("utf-8")
                atomic_write_bytes(self.file, b"\n".join(lines))
                self._wrote()
                return HistoryEntry(cursor, entry.timestamp, text, entry.extra)
        raise KeyError(f"history.jsonl has no entry with cursor {cursor}")
