"""Cheap summaries of session files for lists and search, without loading every message.

Listing 2,000 sessions must stay well under half a second, so a summary reads each file once as
bytes, parses only the metadata line, counts lines with `bytes.count`, and JSON-decodes just the
few lines near the start (for a title) and the end (for the preview).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from nanobot_desktop.engine.sessions.branches import branch_of
from nanobot_desktop.engine.sessions.export import derive_title, message_text, preview_text, shorten, snippet
from nanobot_desktop.engine.sessions.export import TITLE_MAX_CHARS
from nanobot_desktop.engine.sessions.file import is_hidden_message, parse_header, parse_session_bytes
from nanobot_desktop.engine.sessions.key import SessionKey

_SCAN_LINES = 200
# Files up to this size are read whole; longer ones by their ends and in chunks (_read_ends).
WHOLE_FILE_BYTES = 1 << 20
END_BYTES = 256 << 10
COUNT_CHUNK_BYTES = 1 << 20


class _PathField:
    """SessionInfo.path: a Path that may be given as text (`indexed_info`), made a Path when first read.

    Why: the session index makes one SessionInfo per file for every listing's first use (20,000 of them),
    and on Python 3.11 each Path costs microseconds to parse; the list reads a row's path only when
    someone hovers, reveals or exports that row."""

    _slot = "_path"

    def __get__(self, instance: object, owner: type | None = None) -> Path:
        if instance is None:
            raise AttributeError(self._slot)  # no class-level default: the field stays a required one
        value = instance.__dict__[self._slot]
        if not isinstance(value, Path):
            value = instance.__dict__[self._slot] = Path(value)
        return value

    def __set__(self, instance: object, value: Path | str) -> None:
        instance.__dict__[self._slot] = value


@dataclass
class SessionInfo:
    """One row of the session list."""

    key: str
    path: Path
    title: str
    channel: str
    created_at: str
    updated_at: str
    message_count: int
    preview: str
    branch_of: str = ""
    """The key of the session this one branched from ("" for none): `metadata.branch_of.key`."""
    branch_at: int = 0
    """How many of the origin's messages the branch copied (`metadata.branch_of.at`)."""
    archived: str = ""
    """For a conversation `/new` archived: its file name in `sessions/.archive/` (see archived.py)."""


SessionInfo.path = _PathField()  # type: ignore[assignment]  # after @dataclass: it stays a required field


def indexed_info(key: str, path: str, *fields: Any) -> SessionInfo:
    """A SessionInfo whose path is given as text (the session index's rows: see _PathField)."""
    return SessionInfo(key, path, *fields)  # type: ignore[arg-type]  # the field takes text too


NEW_CHAT_TITLE = "New chat"
"""The title of a session without a title and without messages yet (its key means nothing to a person)."""


def key_from_stem(stem: str) -> str:
    """The original's guess at a key from a file name (`telegram_123` → `telegram:123`)."""
    return stem.replace("_", ":", 1)


def channel_of(key: str) -> str:
    return SessionKey.found(key).channel


def mtime_iso(path: Path) -> str:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime).isoformat()
    except OSError:
        return datetime.now().isoformat()


def sort_time(stamp: str) -> float:
    """A comparable time for an isoformat string of any flavour (naive, aware, with or without µs)."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return 0.0
    try:
        return moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return 0.0


def custom_title(header: dict[str, Any] | None) -> str:
    """The title a person gave the session (kept in the metadata line's `metadata`)."""
    metadata = header.get("metadata") if header else None
    title = metadata.get("title") if isinstance(metadata, dict) else None
    return shorten(title, 200) if isinstance(title, str) and title.strip() else ""


def branch_origin(header: dict[str, Any] | None) -> tuple[str, int]:
    """(origin key, messages copied) from the metadata line's `branch_of` (sessions/branches.py's rule);
    ("", 0) when the session is not a branch."""
    pointer = branch_of(header.get("metadata")) if header else None
    return pointer if pointer is not None else ("", 0)


def _forward_lines(data: bytes, start: int) -> Iterator[bytes]:
    position = start
    for _ in range(_SCAN_LINES):
        if position >= len(data):
            return
        end = data.find(b"\n", position)
        end = len(data) if end < 0 else end
        yield data[position:end]
        position = end + 1


def _backward_lines(data: bytes, stop: int) -> Iterator[bytes]:
    end = len(data)
    if end > stop and data[end - 1:end] == b"\n":
        end -= 1
    for _ in range(_SCAN_LINES):
        if end <= stop:
            return
        newline = data.rfind(b"\n", stop, end)
        yield data[(stop if newline < 0 else newline + 1):end]
        end = stop if newline < 0 else newline


def _decode(line: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(line.strip().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    # neither 0.3's record lines (`provider_state`) nor its hidden history messages title or preview a session
    return obj if isinstance(obj, dict) and "_type" not in obj and not is_hidden_message(obj) else None


def _count_lines(data: bytes) -> int:
    count = data.count(b"\n")
    if data and not data.endswith(b"\n"):
        count += 1
    return count - data.count(b"\n\n")


def _read_ends(path: Path) -> tuple[bytes, bytes | None, int]:
    """(the file, None, 0) for a file up to WHOLE_FILE_BYTES; for a longer one (its first complete
    lines, its last complete lines, its line count), reading it in chunks: a long session summarized
    at every append must not cost its whole size in memory each time."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= WHOLE_FILE_BYTES:
            return handle.read(), None, 0
        head = handle.read(END_BYTES)
        head = head[:head.rfind(b"\n") + 1] or head
        handle.seek(0)
        lines = empty = 0
        previous = b""
        while chunk := handle.read(COUNT_CHUNK_BYTES):
            lines += chunk.count(b"\n")
            empty += chunk.count(b"\n\n") + (1 if previous == b"\n" and chunk[:1] == b"\n" else 0)
            previous = chunk[-1:]
        if previous != b"\n":
            lines += 1
        handle.seek(max(0, size - END_BYTES))
        tail = handle.read()
        tail = tail[tail.find(b"\n") + 1:]
    return head, tail, lines - empty


def summarize(path: Path, fallback_key: str | None = None) -> SessionInfo:
    """Summarize one session file for the list (unreadable lines are simply not used).

    Without a key in the metadata line, the key is `fallback_key` or guessed from the file name.
    """
    data, tail, total_lines = _read_ends(path)
    first_end = data.find(b"\n")
    first_end = len(data) if first_end < 0 else first_end
    header = parse_header(data[:first_end])
    body_start = first_end + 1 if header is not None else 0
    key = header.get("key") if header else None
    if not isinstance(key, str):
        key = fallback_key or key_from_stem(path.stem)
    title = custom_title(header)
    if not title:
        for line in _forward_lines(data, body_start):
            if b'"user"' in line:
                message = _decode(line)
                if message is not None and message.get("role") == "user":
                    title = derive_title([message])
                    if title:
                        break
    preview = ""
    for line in (_backward_lines(data, body_start) if tail is None else _backward_lines(tail, 0)):
        if b'"user"' in line or b'"assistant"' in line:
            message = _decode(line)
            if message is not None and (preview := preview_text(message)):
                break
    created = header.get("created_at") if header else None
    updated = header.get("updated_at") if header else None
    if not isinstance(created, str) or not isinstance(updated, str):
        fallback = mtime_iso(path)
        created = created if isinstance(created, str) else fallback
        updated = updated if isinstance(updated, str) else fallback
    count = max(0, (total_lines if tail is not None else _count_lines(data)) - (1 if header is not None else 0))
    origin, at = branch_origin(header)
    return SessionInfo(key=key, path=path, title=title or (key if count else NEW_CHAT_TITLE), channel=channel_of(key),
                       created_at=created, updated_at=updated, message_count=count, preview=preview,
                       branch_of=origin if origin != key else "", branch_at=at)


def file_signature(stat: os.stat_result) -> tuple[int, ...]:
    """Changes whenever the file does (an in-place metadata update keeps the size, not the ctime)."""
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def search_file(path: Path, key: str, needle: str, limit: int) -> list[tuple[str, str]]:
    """Matches of `needle` (lower-case) in the session's own title and its messages' text."""
    data = path.read_bytes()
    lowered = data.decode("utf-8", "replace").lower()
    escaped = json.dumps(needle, ensure_ascii=False)[1:-1]
    if needle not in lowered and escaped not in lowered:
        return []
    parsed = parse_session_bytes(data, path.name)
    hits: list[tuple[str, str]] = []
    title = custom_title(parsed.header)
    if needle in title.lower():
        hits.append((key, shorten(title, TITLE_MAX_CHARS)))
    for message in parsed.messages:
        if len(hits) >= limit:
            break
        text = message_text(message.get("content"))
        index = text.lower().find(needle)
        if index >= 0:
            hits.append((key, snippet(text, index, len(needle))))
    return hits
