"""Reading part of a big session file: the newest pages for the chat, the unconsolidated tail for a turn.

A session with 100,000 messages is tens of megabytes; parsing all of it costs about a second and a
few hundred megabytes of dicts. Neither the chat (it shows a screenful) nor a turn (it sends the
messages after `last_consolidated`) needs that, so:

- `read_page` reads whole lines *backwards* from a byte offset until it has enough messages and the
  oldest one starts a turn (a user message), so a tool call and its result are never split between
  two pages. Pages are addressed by byte offsets, which stay valid because the file is append-only.
- `read_tail` finds where message number `last_consolidated` starts without parsing the lines before
  it: on a file written by nanobot or this app every message line starts with `{"role": "` and ends
  with `}`, which bytes.count checks at memory speed. Any other line before the tail (a torn write, a
  line another program wrote in another shape, 0.3's `provider_state`) makes it return None, and the
  caller parses the whole file as before, so the message numbering always matches the full parser's.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sessions.file import (
    ParsedSession, message_problem, parse_header, parse_session_bytes,
)

__all__ = ["SessionPage", "TailRead", "read_page", "read_tail"]

_FIRST_CHUNK = 16 * 1024  # about one page of ordinary messages; doubled while more is needed
_MAX_CHUNK = 1 << 20
_MESSAGE_START = b'\n{"role": "'
_MESSAGE_BOUNDARY = b"}" + _MESSAGE_START  # one message line's end and the next one's start
_HEAD_FOR_TITLE = 64 * 1024
# Below this a full parse costs a few tens of milliseconds at most: small sessions stay whole in memory
# (simpler to reason about), long ones are loaded from their tail.
TAIL_LOAD_MIN_BYTES = 1 << 20


@dataclass
class SessionPage:
    """Messages read from the byte range [start, end) of a session file, oldest first."""

    messages: list[dict[str, Any]]
    start: int
    end: int
    warnings: list[str] = field(default_factory=list)

    @property
    def at_file_start(self) -> bool:
        """True when nothing older is left to read."""
        return self.start == 0


def _message_of(raw: bytes) -> dict[str, Any] | None:
    """The message on one line, or None for a blank, unreadable, metadata or non-message line."""
    stripped = raw.strip()
    if not stripped:
        return None
    try:
        obj = json.loads(stripped.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(obj, dict) or obj.get("_type") is not None or message_problem(obj):
        return None
    return obj


def read_page(path: Path, end: int | None = None, min_messages: int = 100) -> SessionPage:
    """At least `min_messages` messages (fewer at the start of the file) from whole lines before byte
    `end` (None: the end of the file), beginning at a user message or at the start of the file.

    Unreadable lines are skipped, as the full reader skips them. Cost: the bytes of the page itself.
    """
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        end = size if end is None or end > size else end
        collected: list[dict[str, Any]] = []  # newest first
        boundary = end  # every line from `boundary` to `end` has been looked at
        buffer = b""
        position = end
        chunk = _FIRST_CHUNK
        while boundary > 0:
            read_from = max(0, position - chunk)
            chunk = min(chunk * 2, _MAX_CHUNK)
            handle.seek(read_from)
            buffer = handle.read(position - read_from) + buffer
            position = read_from
            # Whole lines lie after the first newline of the buffer (or from the file start).
            first_whole = 0 if position == 0 else buffer.find(b"\n") + 1
            if position > 0 and first_whole == 0:
                continue  # one line longer than the buffer: read more
            lines = buffer[first_whole: boundary - position].split(b"\n")
            line_end = boundary
            for raw in reversed(lines):
                line_start = line_end - len(raw)
                message = _message_of(raw)
                if message is not None:
                    collected.append(message)
                    if len(collected) >= min_messages and message.get("role") == "user":
                        if position == 0 and not any(map(_message_of, buffer[:line_start].split(b"\n"))):
                            line_start = 0  # only the metadata line is left: nothing older
                        return SessionPage(collected[::-1], line_start, end)
                line_end = line_start - 1  # the newline before this line
            boundary = position + first_whole
            buffer = buffer[:first_whole]
        return SessionPage(collected[::-1], 0, end)


@dataclass
class TailRead:
    """The messages from number `base` on, and what the metadata line and the file's start said."""

    header: dict[str, Any] | None
    base: int
    parsed: ParsedSession
    size: int
    head_messages: list[dict[str, Any]]  # the first messages of the file (for the derived title)


def read_tail(path: Path, data: bytes) -> TailRead | None:
    """The messages after the metadata line's offset, parsing only them; None when the fast count
    cannot be trusted (the caller then parses everything) or the file is small enough to parse whole."""
    if len(data) < TAIL_LOAD_MIN_BYTES:
        return None
    first_end = data.find(b"\n")
    if first_end < 0:
        return None
    header = parse_header(data[: first_end + 1])
    if header is None:
        return None
    offset = header.get("last_archived", header.get("last_consolidated", 0))
    if isinstance(offset, bool) or not isinstance(offset, int) or offset <= 0:
        return None
    body_end = len(data) if data.endswith(b"\n") else data.rfind(b"\n") + 1  # a torn last line is not counted
    lines = data.count(b"\n", first_end + 1, body_end)
    # Every line a plain message line: the first starts as one, the last ends as one, and each of the
    # lines - 1 newlines between them is such an end followed by such a start. Two passes over the
    # file, not three: counting is most of what a turn in a 100,000-message session adds.
    plain = (lines > 0 and data.startswith(_MESSAGE_START, first_end) and data.endswith(b"}\n", 0, body_end)
             and data.count(_MESSAGE_BOUNDARY, first_end + 1, body_end) == lines - 1)
    if not plain or offset > lines:
        return None  # some line is not a plain message line: number the messages the slow, sure way
    tail_count = lines - offset
    cut = body_end - 1  # the newline ending the last whole line
    for _ in range(tail_count):
        cut = data.rfind(_MESSAGE_START, first_end, cut)
    tail_start = cut + 1
    parsed = parse_session_bytes(data[tail_start:], path.name)
    if len(parsed.messages) != tail_count:
        return None  # a message line in the tail did not parse: the full reader numbers differently
    head = parse_session_bytes(data[first_end + 1: min(tail_start, first_end + 1 + _HEAD_FOR_TITLE)])
    parsed.header = header
    return TailRead(header, offset, parsed, len(data), head.messages)
