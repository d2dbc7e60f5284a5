"""nanobot 0.3.5's interrupted turns: `<session file stem>.checkpoint.json` beside a session file.

While a turn runs, 0.3.5 keeps its in-flight state (the assistant message with its tool calls, the
results it has, the calls still running) in that side file; a turn that was killed leaves it behind,
and 0.3.5 offers *Continue* or *Dismiss*. Both first put the saved state into the conversation, as
0.3.5 does (`session/recovery.py`): the assistant message, the results it had, and for each call whose
outcome is unknown a tool result saying it was interrupted — such a call is never run again. *Dismiss*
stops there (closing a turn that has no answer at all); *Continue* then asks the model to go on, with
0.3.5's continuation prompt kept as a hidden history message. Either way the side file is removed.

A checkpoint counts only as 0.3.5 counts it: version 1, for this session key, made on the session
file as it is now (same message count and `updated_at`, and not older than the file). It is never a
session: listings only ever see `*.jsonl`.
"""

from __future__ import annotations

import json
import logging
import stat
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sessions.file import parse_header, parse_session_bytes

log = logging.getLogger(__name__)

SUFFIX = ".checkpoint.json"
VERSION = 1
PENDING_USER_TURN = "pending_user_turn"
CONTINUE_PROMPT = ("Continue the interrupted request from the saved conversation context. "
                   "Do not repeat completed work or mention the restart unless it affects the answer.")
INTERRUPTED_TOOL = "Error: Task interrupted before this tool finished."
INTERRUPTED_TURN = "Error: Task interrupted before a response was generated."


@dataclass(frozen=True)
class InterruptedTurn:
    """A turn 0.3.5 saved mid-way: what goes into the conversation, and which calls' outcome is unknown."""

    key: str
    path: Path
    phase: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    unknown_tools: tuple[str, ...] = ()  # names of the calls that were running when it stopped
    can_continue: bool = True  # 0.3.5 offers Continue only for the shapes it knows to be whole


def checkpoint_path(session_path: Path) -> Path:
    return session_path.with_name(session_path.stem + SUFFIX)


def _ids(rows: Any, *, results: bool = False) -> list[str] | None:
    if rows is None:
        return []
    if not isinstance(rows, list):
        return None
    found: list[str] = []
    for row in rows:
        if not isinstance(row, dict):
            return None
        value = row.get("tool_call_id" if results else "id")
        if not isinstance(value, str) or not value:
            return None
        found.append(value)
    return found


def _well_formed(checkpoint: dict[str, Any]) -> bool:
    """0.3.5's rule for offering Continue: the three shapes whose history is known to be whole."""
    assistant = checkpoint.get("assistant_message")
    if not isinstance(assistant, dict) or assistant.get("role") != "assistant":
        return False
    done, pending = _ids(checkpoint.get("completed_tool_results"), results=True), _ids(checkpoint.get("pending_tool_calls"))
    calls = _ids(assistant.get("tool_calls"))
    if done is None or pending is None or calls is None:
        return False
    phase = checkpoint.get("phase")
    if phase == "final_response":
        content = assistant.get("content")
        return isinstance(content, str) and bool(content.strip()) and not (calls or done or pending)
    if phase == "awaiting_tools":
        return bool(calls) and not done and sorted(calls) == sorted(pending)
    if phase == "tools_completed":
        return bool(calls) and not pending and sorted(calls) == sorted(done)
    return False


def _materialize(checkpoint: dict[str, Any]) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    stamp = datetime.now().isoformat()
    rows: list[dict[str, Any]] = []
    assistant = checkpoint.get("assistant_message")
    if isinstance(assistant, dict) and assistant.get("role") == "assistant":
        rows.append({**assistant, "timestamp": assistant.get("timestamp", stamp)})
    for result in checkpoint.get("completed_tool_results") or []:
        if isinstance(result, dict) and result.get("role") == "tool":
            rows.append({**result, "timestamp": result.get("timestamp", stamp)})
    unknown: list[str] = []
    for call in checkpoint.get("pending_tool_calls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            continue
        function = call.get("function")
        named = function.get("name") if isinstance(function, dict) else None
        name = named if isinstance(named, str) and named else "tool"
        unknown.append(name)
        rows.append({"role": "tool", "tool_call_id": call["id"], "name": name, "content": INTERRUPTED_TOOL,
                     "timestamp": stamp, "_recovery_interrupted": True})
    return rows, tuple(unknown)


def read_interrupted(session_path: Path, key: str) -> InterruptedTurn | None:
    """The interrupted turn saved beside `session_path`, or None (none, stale, or not for this file)."""
    side = checkpoint_path(session_path)
    try:
        side_stat = side.lstat()
        if not stat.S_ISREG(side_stat.st_mode):
            return None
        if session_path.stat().st_mtime_ns > side_stat.st_mtime_ns:
            return None  # the session was saved after it: superseded
        raw = json.loads(side.read_text(encoding="utf-8"))
        data = session_path.read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("version") != VERSION or raw.get("session_key") != key:
        return None
    checkpoint = raw.get("checkpoint")
    header = parse_header(data.split(b"\n", 1)[0]) or {}
    parsed = parse_session_bytes(data, str(session_path))
    if (not isinstance(checkpoint, dict) or raw.get("base_message_count") != len(parsed.messages)
            or raw.get("base_updated_at") != header.get("updated_at")):
        return None
    messages, unknown = _materialize(checkpoint)
    return InterruptedTurn(key, side, str(checkpoint.get("phase") or ""), messages, unknown, _well_formed(checkpoint))


__all__ = ["CONTINUE_PROMPT", "INTERRUPTED_TURN", "InterruptedTurn", "checkpoint_path", "read_interrupted"]
