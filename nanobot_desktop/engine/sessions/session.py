"""One conversation as stored: the messages, the metadata line's fields, and the history sent to the model.

A `Session` holds the dicts exactly as they are on disk; `SessionStore` (store.py) loads and writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sessions.export import derive_title
from nanobot_desktop.engine.sessions.file import METADATA_TYPE
from nanobot_desktop.engine.sessions.listing import channel_of

__all__ = ["INTERRUPTED_TOOL_RESULT", "Session", "now", "valid_offset"]

_HISTORY_FIELDS = ("tool_calls", "tool_call_id", "name")


def now() -> str:
    return datetime.now().isoformat()


def valid_offset(value: Any, length: int) -> int:
    """`last_consolidated` made safe to slice with: non-int or negative → 0, too large → length."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return min(value, length)


@dataclass
class Session:
    """One conversation. `messages` are the dicts exactly as stored; `warnings` come from loading.

    A big session is loaded from its unconsolidated tail only (sessions/paging.py): then `messages`
    holds the messages from number `base` on, the `base` before them stay in the file, and every
    index the model side uses (`last_consolidated`, `count`) still counts from the file's start.
    """

    key: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    created_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)
    metadata: dict[str, Any] = field(default_factory=dict)
    last_consolidated: int = 0
    path: Path = field(default_factory=Path)  # set by the store (`SessionStore.path_for(key)`)
    size: int = 0  # bytes of the file when this object last read or wrote it through the store
    warnings: list[str] = field(default_factory=list)
    # Metadata-line keys of later nanobot versions (e.g. `last_archived`), written back unchanged.
    header_extra: dict[str, Any] = field(default_factory=dict, repr=False)
    base: int = 0  # messages before `messages[0]` that are in the file but not loaded
    head_title: str = ""  # the derived title when the first messages are not loaded
    # The messages of the last get_history and their history entries, in the same order: every call of a
    # turn (and of the next turns) sends the same entries, so what keeps a call's request (the
    # inspector's context view) holds one entry per message, not one copy per call. Two lists cost 16
    # bytes a message; a dict of (message, entry) pairs had cost ~110 (bench/long_session_memory.py).
    _history_sources: list[dict[str, Any]] = field(default_factory=list, repr=False, compare=False)
    _history_entries: list[dict[str, Any]] = field(default_factory=list, repr=False, compare=False)

    @property
    def count(self) -> int:
        """How many messages the session has (loaded or not)."""
        return self.base + len(self.messages)

    def since(self, index: int) -> list[dict[str, Any]]:
        """The messages from number `index` (counted from the file's start) on, as loaded."""
        return self.messages[max(0, index - self.base):]

    @property
    def title(self) -> str:
        custom = self.metadata.get("title")
        if isinstance(custom, str) and custom.strip():
            return custom.strip()
        if self.base:
            return self.head_title or self.key
        return derive_title(self.messages) or self.key

    @property
    def channel(self) -> str:
        return channel_of(self.key)

    def header(self) -> dict[str, Any]:
        """The metadata line: post4's key set in post4's order, then any extra keys we were given."""
        line: dict[str, Any] = {
            "_type": METADATA_TYPE, "key": self.key, "created_at": self.created_at,
            "updated_at": self.updated_at, "metadata": self.metadata,
            "last_consolidated": self.last_consolidated,
        }
        for name, value in self.header_extra.items():
            line.setdefault(name, value)
        if "last_archived" in line:  # nanobot 0.3's name for the same offset: both kept equal
            line["last_archived"] = self.last_consolidated
        return line

    def get_history(self, max_messages: int = 500) -> list[dict[str, Any]]:
        """The unconsolidated tail for the LLM: starts at a user turn, no orphan tool results.

        Only `role`, `content` and (when present) `tool_calls`, `tool_call_id`, `name` are kept;
        timestamps and reasoning are not replayed. `max_messages <= 0` means no limit.
        """
        start = max(0, valid_offset(self.last_consolidated, self.count) - self.base)
        recent = self.messages[start:]
        if max_messages > 0:
            recent = recent[-max_messages:]
        for index, message in enumerate(recent):
            if message.get("role") == "user":
                recent = recent[index:]
                break
        call_ids: set[str] = set()
        cached_sources, cached_entries = self._history_sources, self._history_entries
        position = {id(message): at for at, message in enumerate(cached_sources)}
        sources: list[dict[str, Any]] = []
        entries: list[dict[str, Any]] = []
        for message in recent:
            if message.get("_command"):
                continue  # a slash command's own line (nanobot 0.3 marks them so; never replayed)
            role = message.get("role")
            if role == "assistant":
                for call in message.get("tool_calls") or []:
                    if isinstance(call, dict) and call.get("id"):
                        call_ids.add(call["id"])
            elif role == "tool" and message.get("tool_call_id") not in call_ids:
                continue
            cached_at = position.get(id(message))  # the same object as last time? (an id alone may be reused)
            sources.append(message)
            entries.append(cached_entries[cached_at] if cached_at is not None and cached_sources[cached_at] is message
                           else _history_entry(message))
        self._history_sources, self._history_entries = sources, entries  # only the window's messages: bounded by it
        return _answer_unanswered_tool_calls(entries)


def _history_entry(message: dict[str, Any]) -> dict[str, Any]:
    """What the model is sent of a stored message (callers never change it: it is shared by every call)."""
    entry: dict[str, Any] = {"role": message.get("role"), "content": message.get("content", "")}
    for name in _HISTORY_FIELDS:
        if name in message:
            entry[name] = message[name]
    return entry


INTERRUPTED_TOOL_RESULT = "(no result: the turn was interrupted before this tool call finished)"


def _answer_unanswered_tool_calls(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every assistant tool call a result, so endpoints accept the history.

    A process killed mid-tool leaves an assistant message whose calls have no `tool` line; OpenAI-style
    endpoints reject such a history with a 400. The stand-in result exists only in what is sent; the
    file is not changed.
    """
    repaired: list[dict[str, Any]] = []
    waiting: dict[str, str] = {}  # call id -> tool name, for the latest assistant message with calls

    def answer_waiting() -> None:
        for call_id, name in waiting.items():
            repaired.append({"role": "tool", "tool_call_id": call_id, "name": name,
                             "content": INTERRUPTED_TOOL_RESULT})
        waiting.clear()

    for message in history:
        if message.get("role") == "tool":
            waiting.pop(str(message.get("tool_call_id")), None)
        else:
            answer_waiting()
        repaired.append(message)
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict) and call.get("id"):
                    function = call.get("function") or {}
                    waiting[call["id"]] = function.get("name", "") if isinstance(function, dict) else ""
    answer_waiting()
    return repaired
