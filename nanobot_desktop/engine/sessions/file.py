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
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sessions.lock import session_files_lock
from nanobot_desktop.engine.workspace import (
    append_to_fd, atomic_write_bytes, storage_error,
    truncate_back,
)

log = logging.getLogger(__name__)

METADATA_TYPE = "metadata"
# The post4 metadata line: exactly these keys, in this order. Anything else a newer nanobot wrote
# (e.g. 0.3.5's `last_archived`) is kept after them.
HEADER_KEYS = ("_type", "key", "created_at", "updated_at", "metadata", "last_consolidated")
MIN_HEADER_WIDTH = 512
HEADER_WIDTH_STEP = 512
HEADER_GROWTH_ROOM = 128
_FIRST_LINE_LIMIT = 1 << 20
_FIRST_LINE_CHUNK = 4096  # a padded metadata line is 512 bytes, or a few times that


@dataclass
class ParsedSession:
    """What a session file holds: its metadata line (None when missing or unreadable) and messages."""

    header: dict[str, Any] | None
    messages: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


MAX_FILE_NAME_BYTES = 255 - len(".jsonl")  # what most file systems allow for one name


def file_name_problem(name: str, key: str) -> str | None:
    """Why the session key `key` (file name `name`) cannot name a session file, or None."""
    if not name:
        return f"The session key {key!r} is empty (or only spaces and punctuation): use one like cli:direct."
    size = len(name.encode("utf-8"))
    if size > MAX_FILE_NAME_BYTES:
        return (f"The session key is too long ({len(key)} characters, {size} bytes as a file name; at most "
                f"{MAX_FILE_NAME_BYTES} bytes): use a shorter one.")
    return None


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
        problem = message_problem(obj)
        if problem:
            warnings.append(f"{source}: line {number} {problem}; skipped")
            continue
        messages.append(obj)
    return ParsedSession(header, messages, warnings)


_ROLES = ("system", "user", "assistant", "tool")
HIDDEN_HISTORY = "_hidden_history"


def is_hidden_message(message: dict[str, Any]) -> bool:
    """A message nanobot 0.3.5 keeps in the history for the model but never shows as a chat turn
    (`"_hidden_history": true` or an object: a summary's continuation, a subagent's inner step)."""
    marker = message.get(HIDDEN_HISTORY)
    return marker is True or isinstance(marker, dict)


def message_problem(obj: dict[str, Any]) -> str | None:
    """Why a message line cannot be replayed to a model (None when it can).

    A line the agent (via exec) or another program wrote in a wrong shape must not make every later
    turn of the session fail at the endpoint, so loading skips it like an unreadable line.
    """
    role = obj.get("role")
    if not isinstance(role, str):
        return "has no \"role\"" if role is None else f"has a \"role\" that is not a string ({_kind(role)})"
    if role not in _ROLES:
        return f"has an unknown role {role[:40]!r}"
    content = obj.get("content")
    if content is not None and not isinstance(content, (str, list)):
        return f"has \"content\" that is neither text nor a list of parts ({_kind(content)})"
    if isinstance(content, list) and not all(isinstance(part, dict) for part in content):
        return "has a \"content\" list with an entry that is not an object"
    calls = obj.get("tool_calls")
    if calls is not None:
        if role != "assistant":
            return f"has \"tool_calls\" on a {role} message"
        if not isinstance(calls, list):
            return f"has \"tool_calls\" that is not a list ({_kind(calls)})"
        for position, call in enumerate(calls, start=1):
            problem = _tool_call_problem(call)
            if problem:
                return f"has a malformed tool call #{position} ({problem})"
    for name in ("tool_call_id", "name"):
        if name in obj and not isinstance(obj[name], str):
            return f"has a \"{name}\" that is not a string ({_kind(obj[name])})"
    if role == "tool" and not isinstance(obj.get("tool_call_id"), str):
        return "is a tool result without a \"tool_call_id\""
    return None


def _tool_call_problem(call: Any) -> str | None:
    if not isinstance(call, dict):
        return f"{_kind(call)} instead of an object"
    if not isinstance(call.get("id"), str) or not call["id"]:
        return "no \"id\""
    function = call.get("function")
    if not isinstance(function, dict):
        return f"\"function\" is {_kind(function)}, not an object"
    if not isinstance(function.get("name"), str) or not function["name"]:
        return "no function name"
    arguments = function.get("arguments", "")
    if not isinstance(arguments, (str, dict)):
        return f"arguments are {_kind(arguments)}"
    return None


def _kind(value: Any) -> str:
    names = {str: "a string", list: "a list", dict: "an object", bool: "a boolean", int: "a number",
             float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def read_first_line(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.readline(_FIRST_LINE_LIMIT)


def create_file(path: Path, header: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    """Write a new session file in one atomic step (padded metadata line, then the messages)."""
    body = "".join(encode_line(message) for message in messages).encode("utf-8")
    with session_files_lock(path.parent):
        atomic_write_bytes(path, header_line(header) + body)


def leads_out(path: Path) -> str | None:
    """Where a session file leads when it is a link out of its folder or has another hard link (the
    store neither reads nor appends to such a file: its history would go to the model, its appends to
    the other file); None for an ordinary file or none at all."""
    try:
        if path.is_symlink():
            real = Path(os.path.realpath(path))
            return None if real.is_relative_to(Path(os.path.realpath(path.parent))) else str(real)
        status = path.stat()
    except OSError:
        return None
    if stat.S_ISREG(status.st_mode) and status.st_nlink > 1:
        return f"a file with {status.st_nlink} hard links, another name of it may be elsewhere"
    return None


def create_file_if_missing(path: Path, header: dict[str, Any], messages: list[dict[str, Any]]) -> bool:
    """`create_file` unless another writer created the file first; True when this call created it.
    A file that leads out (`leads_out`) counts as missing: the new file replaces the link itself."""
    with session_files_lock(path.parent):
        if path.exists() and leads_out(path) is None:
            return False
        create_file(path, header, messages)
        return True


def append_lines(path: Path, data: bytes, header: dict[str, Any]) -> int:
    """Append whole lines and put `header` on line 1, under the lock, all or nothing.

    Durable when it returns: the metadata update's fsync flushes the whole file (fsync is per file,
    not per descriptor), so the appended lines need no fsync of their own.
    A torn last line (a crash mid-write) gets its newline in the same write as the new lines. If the
    append or the metadata update fails, the file is truncated back to its length before the call
    (truncating needs no free space), so the file is exactly as it was, and a StorageError is raised.
    """
    with session_files_lock(path.parent):
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | getattr(os, "O_BINARY", 0))
        except OSError as error:
            raise storage_error(path, error) from error
        try:
            before = os.fstat(fd).st_size
            # No fsync of its own: update_header's fsync (in place) or atomic rewrite flushes the file,
            # new lines included, before this returns; one fsync per append instead of two.
            if append_to_fd(fd, path, data, repair_tail=True, sync=False) > len(data):
                log.warning("%s ended mid-line (an interrupted write); new lines start after it", path)
            try:
                update_header(path, header, fd)
            except OSError as error:
                truncate_back(fd, before)
                raise storage_error(path, error) from error
        finally:
            os.close(fd)
    return len(data)


def update_header(path: Path, header: dict[str, Any], fd: int | None = None) -> bool:
    """Put `header` on line 1 of `path`; returns True when it was done in place. `fd`: a readable
    descriptor of the file the caller holds open already (line 1 is read through it).

    In place: when line 1 is already a padded metadata line and the new one fits in its width, exactly
    that many bytes are overwritten at offset 0 (pwrite + fsync). Nothing after line 1 moves, so an
    append-only file stays append-only. Otherwise (a line written unpadded by the nanobot CLI, a
    header that outgrew its width, a file with no metadata line) the file is rewritten once,
    atomically, with a larger padded line 1 and every other byte kept verbatim. Both happen under
    the session-files lock, so a concurrent append can never land in a file that is being replaced.
    """
    with session_files_lock(path.parent):
        first = _first_line_of(fd) if fd is not None else b""
        if not first.endswith(b"\n"):  # no descriptor, or a line 1 longer than one read
            first = read_first_line(path)
        body = json.dumps(header, ensure_ascii=False).encode("utf-8")
        padded = first.endswith(b" \n") and parse_header(first) is not None
        if padded and len(body) + 2 <= len(first):
            line = body + b" " * (len(first) - len(body) - 1) + b"\n"
            _overwrite_at_start(path, line, first)
            return True
        _rewrite_header(path, header)
        return False


def _first_line_of(fd: int) -> bytes:
    """Line 1 as far as one read of 4 KiB finds it (no newline in it: the caller reads the line
    the long way). One pread on a descriptor already open, instead of opening the file again."""
    if not hasattr(os, "pread"):  # Windows
        return b""
    head = os.pread(fd, _FIRST_LINE_CHUNK, 0)
    end = head.find(b"\n")
    return head[: end + 1] if end >= 0 else b""


def _overwrite_at_start(path: Path, data: bytes, previous: bytes) -> None:
    # No O_APPEND here: on Linux, pwrite on an O_APPEND descriptor writes at the end.
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_BINARY", 0))
    except OSError as error:
        raise storage_error(path, error) from error
    try:
        try:
            _write_at(fd, data, 0)
            os.fsync(fd)
        except OSError as error:
            try:  # the same bytes in the same place: needs no new space
                _write_at(fd, previous, 0)
            except OSError:
                pass
            raise storage_error(path, error) from error
    finally:
        os.close(fd)


def _write_at(fd: int, data: bytes, start: int) -> None:
    offset = 0
    while offset < len(data):
        if hasattr(os, "pwrite"):
            written = os.pwrite(fd, data[offset:], start + offset)
        else:  # Windows
            os.lseek(fd, start + offset, os.SEEK_SET)
            written = os.write(fd, data[offset:])
        offset += written


def _rewrite_header(path: Path, header: dict[str, Any]) -> None:
    data = path.read_bytes()
    end = data.find(b"\n")
    first = data if end < 0 else data[: end + 1]
    if parse_header(first) is not None or _looks_like_damaged_header(first):
        rest = data[len(first):]  # replace the old metadata line
    else:
        rest = data  # no metadata line: every existing line is kept below the new one
    atomic_write_bytes(path, header_line(header) + rest)
