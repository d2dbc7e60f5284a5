"""The session file on disk: parsing it leniently and updating its metadata line without touching messages.

Format (nanobot 0.1.4.post4): line 1 is `{"_type": "metadata", "key", "created_at", "updated_at",
"metadata", "last_consolidated"}`, then one message object per line, all `json.dumps(...,
ensure_ascii=False)`. The original reader strips each line before `json.loads`, so trailing spaces on
a line are invisible to it; that is what lets us keep line 1 at a fixed, padded width (see
`update_header`).

Reading never writes. A line that is not UTF-8, not JSON, or cut short by a kill is skipped and
reported in `ParsedSession.warnings`; the bytes stay in the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.workspace import append_text, atomic_write_bytes

METADATA_TYPE = "metadata"
# The post4 metadata line: exactly these keys, in this order. Anything else a newer nanobot wrote
# (e.g. 0.3.5's `last_archived`) is kept after them.
HEADER_KEYS = ("_type", "key", "created_at", "updated_at", "metadata", "last_consolidated")
MIN_HEADER_WIDTH = 512
HEADER_WIDTH_STEP = 512
HEADER_GROWTH_ROOM = 128
_FIRST_LINE_LIMIT = 1 << 20


@dataclass
class ParsedSession:
    """What a session file holds: its metadata line (None when missing or unreadable) and messages."""

    header: dict[str, Any] | None
    messages: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


def encode_line(obj: dict[str, Any]) -> str:
    """One JSONL line as the original writes it (non-ASCII kept as is)."""
    return json.dumps(obj, ensure_ascii=False) + "\n"


def padded_width(body_length: int) -> int:
    """Width for a metadata line of `body_length` bytes: a multiple of 512 with room to grow."""
    needed = body_length + 1 + HEADER_GROWTH_ROOM
    return max(MIN_HEADER_WIDTH, -(-needed // HEADER_WIDTH_STEP) * HEADER_WIDTH_STEP)


def header_line(header: dict[str, Any], width: int | None = None) -> bytes:
    """The metadata line padded with spaces to `width` bytes (newline included), or to a fresh width."""
    body = json.dumps(header, ensure_ascii=False).encode("utf-8")
    if width is None or len(body) + 2 > width:  # at least one space: a padded line is recognisable
        width = padded_width(len(body))
    return body + b" " * (width - len(body) - 1) + b"\n"


def parse_header(line: bytes) -> dict[str, Any] | None:
    """The metadata object on `line`, or None when the line is something else or unreadable."""
    try:
        obj = json.loads(line.strip().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if isinstance(obj, dict) and obj.get("_type") == METADATA_TYPE:
        return obj
    return None


def _looks_like_damaged_header(line: bytes) -> bool:
    """A first line that was meant to be our metadata but is not valid JSON (e.g. a torn write)."""
    start = line.lstrip()[:40].replace(b" ", b"")
    return start.startswith(b'{"_type":"metadata"') and parse_header(line) is None


def parse_session_bytes(data: bytes, source: str = "session") -> ParsedSession:
    """Split a session file into metadata and messages, skipping (and reporting) every bad line."""
    header: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = []
    warnings: list[str] = []
    lines = data.split(b"\n")
    last_number = len(lines)
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        try:
            text = stripped.decode("utf-8")
        except UnicodeDecodeError as error:
            warnings.append(f"{source}: line {number} is not valid UTF-8 (byte {error.start + 1}); skipped")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as error:
            if number == last_number:
                warnings.append(f"{source}: line {number} is incomplete (the file ends mid-line, "
                                "probably an interrupted write); skipped")
            else:
                warnings.append(f"{source}: line {number} is not valid JSON ({error.msg} at column "
                                f"{error.colno}); skipped")
            continue
        if not isinstance(obj, dict):
            warnings.append(f"{source}: line {number} is not a JSON object; skipped")
            continue
        record_type = obj.get("_type")
        if record_type == METADATA_TYPE:
            if header is None:
                header = obj
            else:
                warnings.append(f"{source}: line {number} is a second metadata line; ignored")
            continue
        if record_type is not None:
            continue  # other record kinds of later nanobot versions (e.g. provider_state) are not messages
        if not isinstance(obj.get("role"), str):
            warnings.append(f"{source}: line {number} has no \"role\"; skipped")
            continue
        messages.append(obj)
    return ParsedSession(header, messages, warnings)


def read_first_line(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.readline(_FIRST_LINE_LIMIT)


def ensure_trailing_newline(path: Path) -> bool:
    """Terminate a half-written last line so the next append starts on a line of its own."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return False
        handle.seek(size - 1)
        last = handle.read(1)
    if last == b"\n":
        return False
    append_text(path, "\n")
    return True


def create_file(path: Path, header: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    """Write a new session file in one atomic step (padded metadata line, then the messages)."""
    body = "".join(encode_line(message) for message in messages).encode("utf-8")
    atomic_write_bytes(path, header_line(header) + body)


def update_header(path: Path, header: dict[str, Any]) -> bool:
    """Put `header` on line 1 of `path`; returns True when it was done in place.

    In place: when line 1 is already a padded metadata line and the new one fits in its width, exactly
    that many bytes are overwritten at offset 0 (pwrite + fsync). Nothing after line 1 moves, so an
    append-only file stays append-only. Otherwise (a line written unpadded by the nanobot CLI, a
    header that outgrew its width, a file with no metadata line) the file is rewritten once,
    atomically, with a larger padded line 1 and every other byte kept verbatim.
    """
    first = read_first_line(path)
    body = json.dumps(header, ensure_ascii=False).encode("utf-8")
    padded = first.endswith(b" \n") and parse_header(first) is not None
    if padded and len(body) + 2 <= len(first):
        line = body + b" " * (len(first) - len(body) - 1) + b"\n"
        _overwrite_at_start(path, line)
        return True
    _rewrite_header(path, header)
    return False


def _overwrite_at_start(path: Path, data: bytes) -> None:
    # No O_APPEND here: on Linux, pwrite on an O_APPEND descriptor writes at the end.
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_BINARY", 0))
    try:
        offset = 0
        while offset < len(data):
            if hasattr(os, "pwrite"):
                written = os.pwrite(fd, data[offset:], offset)
            else:  # Windows
                os.lseek(fd, offset, os.SEEK_SET)
                written = os.write(fd, data[offset:])
            offset += written
        os.fsync(fd)
    finally:
        os.close(fd)


def _rewrite_header(path: Path, header: dict[str, Any]) -> None:
    data = path.read_bytes()
    end = data.find(b"\n")
    first = data if end < 0 else data[: end + 1]
    if parse_header(first) is not None or _looks_like_damaged_header(first):
        rest = data[len(first):]  # replace the old metadata line
    else:
        rest = data  # no metadata line: every existing line is kept below the new one
    atomic_write_bytes(path, header_line(header) + rest)
