"""Memory consolidation: older messages of a session summarised into HISTORY.md and MEMORY.md by the model.

The model is asked to call one tool, `save_memory`, with a history entry and the whole new long-term
memory; the store (memory/store.py) writes both, keeping the replaced MEMORY.md as a version. A failed
consolidation writes nothing, and the same request is not resent on every turn (only after
`memory_window` more messages, or at /new); the new offset counts the messages actually summarised.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.llm.types import ChatWithTools, LLMResponse
from nanobot_desktop.engine.memory.store import MemoryStore
from nanobot_desktop.engine.workspace import storage_error

log = logging.getLogger(__name__)

SAVE_MEMORY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "save_memory",
        "description": "Store the result of memory consolidation: a history log entry and the updated long-term memory.",
        "parameters": {
            "type": "object",
            "properties": {
                "history_entry": {
                    "type": "string",
                    "description": (
                        "One paragraph of 2-5 sentences recording the main events, decisions and topics of "
                        "the conversation. Begin with [YYYY-MM-DD HH:MM] and keep concrete names, numbers "
                        "and terms so the log can be searched with grep later."
                    ),
                },
                "memory_update": {
                    "type": "string",
                    "description": (
                        "The complete new long-term memory as Markdown: every fact already in it plus any "
                        "new lasting facts. If nothing new was learned, return the current memory as it is."
                    ),
                },
            },
            "required": ["history_entry", "memory_update"],
        },
    },
}

_CONSOLIDATION_SYSTEM = "You consolidate an agent's memory. Reply only by calling the save_memory tool."
_CONSOLIDATION_INSTRUCTION = (
    "Summarise the conversation below into a history entry and fold any lasting facts into the "
    "long-term memory, then call save_memory with both."
)


@dataclass
class ConsolidationResult:
    """What one consolidation did; `offset` is None when it failed (and then nothing was written)."""

    offset: int | None
    error: str | None = None
    summarised: int = 0
    history_entry: str | None = None
    memory_changed: bool = False

    @property
    def ok(self) -> bool:
        return self.offset is not None


def _render_content(content: Any) -> str:
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "image_url":
                parts.append("[image]")
            else:
                parts.append(str(block))
        return " ".join(parts)
    return str(content)


def format_conversation(messages: list[dict[str, Any]]) -> list[str]:
    """One line per message with content: `[timestamp[:16]] ROLE [tools: a, b]: content`."""
    lines = []
    for message in messages:
        content = message.get("content")
        if not content:
            continue
        tools_used = message.get("tools_used")
        tools = f" [tools: {', '.join(map(str, tools_used))}]" if tools_used else ""
        stamp = str(message.get("timestamp") or "?")[:16]
        role = str(message.get("role", "?")).upper()
        lines.append(f"[{stamp}] {role}{tools}: {_render_content(content)}")
    return lines


def build_consolidation_messages(current_memory: str, lines: list[str]) -> list[dict[str, Any]]:
    user = (
        f"{_CONSOLIDATION_INSTRUCTION}\n\n"
        f"## Current Long-term Memory\n{current_memory or '(empty)'}\n\n"
        f"## Conversation to Process\n" + "\n".join(lines)
    )
    return [{"role": "system", "content": _CONSOLIDATION_SYSTEM}, {"role": "user", "content": user}]


def _save_memory_arguments(response: LLMResponse) -> tuple[dict[str, Any] | None, str | None]:
    """The save_memory arguments as a dict, or (None, reason) when the model did not give usable ones."""
    call = next((c for c in response.tool_calls if c.name == "save_memory"), None)
    if call is None:
        return None, "the model did not call save_memory"
    if call.parse_error:
        return None, f"save_memory arguments were malformed: {call.parse_error}"
    args: Any = call.arguments
    if not args and call.raw_arguments:
        args = call.raw_arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            return None, f"save_memory arguments are not valid JSON: {exc}"
    if isinstance(args, list):
        if not args or not isinstance(args[0], dict):
            return None, "save_memory arguments are a list without an object in first place"
        args = args[0]
    if not isinstance(args, dict):
        return None, f"save_memory arguments must be an object, got {type(args).__name__}"
    if not args.get("history_entry") and not args.get("memory_update"):
        return None, "save_memory was called without history_entry or memory_update"
    return args, None


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _gate_key(messages: list[dict[str, Any]], start: int) -> str:
    """Which conversation (and from where) a consolidation summarises: its first message to summarise."""
    first = messages[start] if start < len(messages) else {}
    return f"{start}:{first.get('role')}:{first.get('timestamp')}:{str(first.get('content'))[:200]}"


def _failed(memory: MemoryStore, key: str, total: int, retry_after: int, error: str,
            archive_all: bool = False) -> ConsolidationResult:
    """A failed attempt: remembered, so the same request is not resent on every turn (/new, which the
    person asked for, always tries again, so its error says only what went wrong)."""
    memory.failed_consolidations[key] = (total, error)
    if archive_all:
        return ConsolidationResult(offset=None, error=error)
    return ConsolidationResult(offset=None, error=f"{error}; not retried until the conversation has "
                                                  f"{retry_after} more messages (or at /new)")


def on_hold(messages: list[dict[str, Any]], last_consolidated: int, memory: MemoryStore, memory_window: int) -> bool:
    """Whether the same consolidation failed lately and is not due again yet: the loop then does not
    start it at all, so one failure is reported once, not again after every turn (/new always tries)."""
    failed = memory.failed_consolidations.get(_gate_key(messages, last_consolidated))
    return failed is not None and len(messages) < failed[0] + max(memory_window, 1)


async def consolidate_detailed(
    messages: list[dict[str, Any]],
    last_consolidated: int,
    memory: MemoryStore,
    chat: ChatWithTools,
    *,
    archive_all: bool = False,
    memory_window: int = 100,
) -> ConsolidationResult:
    """`consolidate`, but also saying why it failed and what it wrote (for events and the GUI)."""
    total = len(messages)  # snapshot: messages appended while the model thinks are not summarised
    if archive_all:
        old = messages[last_consolidated:total]
        new_offset = 0
    else:
        keep_count = max(memory_window, 0) // 2
        if total <= keep_count or total - last_consolidated <= 0:
            return ConsolidationResult(offset=last_consolidated)
        new_offset = total - keep_count
        old = messages[last_consolidated:new_offset]
        if not old:
            return ConsolidationResult(offset=last_consolidated)

    lines = format_conversation(old)
    if not lines:
        return ConsolidationResult(offset=new_offset, summarised=len(old))

    gate_key = _gate_key(messages, last_consolidated)
    failed = memory.failed_consolidations.get(gate_key)
    retry_after = max(memory_window, 1)
    if failed is not None and not archive_all and total < failed[0] + retry_after:
        # The same (possibly huge) request failed before: do not resend it on every turn.
        return ConsolidationResult(offset=None, error=(
            f"not retried: the last attempt failed ({failed[1]}); it is tried again once the conversation "
            f"has {failed[0] + retry_after - total} more messages, or at /new"))

    current_memory = memory.read_long_term()
    try:
        response = await chat(build_consolidation_messages(current_memory, lines), [SAVE_MEMORY_TOOL])
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - ProviderError or anything a chat function may raise
        log.warning("memory consolidation failed: %s", exc)
        return _failed(memory, gate_key, total, retry_after, f"the model call failed: {exc}", archive_all)

    args, reason = _save_memory_arguments(response)
    if args is None:
        log.warning("memory consolidation failed: %s", reason)
        return _failed(memory, gate_key, total, retry_after, reason or "the model did not save memory",
                       archive_all)
    memory.failed_consolidations.pop(gate_key, None)

    entry = _as_text(args["history_entry"]) if args.get("history_entry") else None
    update = _as_text(args["memory_update"]) if args.get("memory_update") else None
    changed = update is not None and update != current_memory
    try:
        memory.commit_consolidation(entry, update if changed else None)
    except OSError as exc:
        log.warning("memory consolidation could not write: %s", exc)
        failure = storage_error(Path(getattr(exc, "filename", None) or memory.memory_file), exc)
        return ConsolidationResult(offset=None, error=failure.sentence("memory was left as it was"))
    return ConsolidationResult(
        offset=new_offset, summarised=len(old), history_entry=entry, memory_changed=changed
    )


async def consolidate(
    messages: list[dict[str, Any]],
    last_consolidated: int,
    memory: MemoryStore,
    chat: ChatWithTools,
    *,
    archive_all: bool = False,
    memory_window: int = 100,
) -> int | None:
    """Summarise old messages into HISTORY.md/MEMORY.md; return the new offset, or None on failure.

    Normal mode keeps the newest `memory_window // 2` messages and summarises the rest since
    `last_consolidated`; `archive_all` (used by /new) summarises everything since the offset and
    returns 0 because the caller then clears the session. On failure nothing is written.
    """
    result = await consolidate_detailed(
        messages, last_consolidated, memory, chat, archive_all=archive_all, memory_window=memory_window
    )
    return result.offset
