"""Realistic session contents for the benchmarks, written with the engine's own SessionStore.

A conversation repeats a 10-message pattern: a question, an assistant message with a tool call,
the tool's result, a Markdown answer with a code block, and so on, so sessions read like the
agent's real ones (post4 shapes: `tool_calls`, `tool_call_id`, `name`, `timestamp`).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable

ANSWER = (
    "Here is what I found in **notes.md**:\n\n"
    "1. The first section lists the open tasks.\n"
    "2. The second one keeps the meeting notes, with `2025-05-01` as the last date.\n\n"
    "```python\nfor task in tasks:\n    print(task.title)\n```\n\n"
    "Tell me if you want me to change anything."
)


def conversation(count: int, start: datetime | None = None, topic: str = "notes.md") -> list[dict[str, Any]]:
    """`count` messages in the shapes the engine stores, with increasing timestamps."""
    start = start or datetime(2025, 5, 1, 9, 0, 0)
    messages: list[dict[str, Any]] = []
    number = 0
    while len(messages) < count:
        call_id = f"call_{number:06d}"
        stamp = (start + timedelta(seconds=10 * number)).isoformat()
        pattern: list[dict[str, Any]] = [
            {"role": "user", "content": f"Question {number}: what is in {topic}? Please summarise it."},
            {"role": "assistant", "content": "", "tool_calls": [{
                "id": call_id, "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": topic})}}]},
            {"role": "tool", "tool_call_id": call_id, "name": "read_file",
             "content": "# Notes\n\n- buy milk\n- call Anna about the trip\n- finish the report\n" * 3},
            {"role": "assistant", "content": ANSWER},
            {"role": "user", "content": "Thanks! And how many tasks are still open?"},
            {"role": "assistant", "content": f"There are **{number % 7 + 1}** open tasks."},
            {"role": "user", "content": "Add one: water the plants on Friday."},
            {"role": "assistant", "content": "Done: I added *water the plants on Friday* to the list."},
            {"role": "user", "content": "Great, that's all for now."},
            {"role": "assistant", "content": "You're welcome. Have a good day!"},
        ]
        for message in pattern:
            message["timestamp"] = stamp
        messages.extend(pattern)
        number += 1
    return messages[:count]


def write_session(sessions_dir: Path, key: str, count: int, unconsolidated: int | None = None,
                  **kwargs: Any) -> Path:
    """A session file of `count` messages, written by the engine's SessionStore in one append.

    With `unconsolidated`, `last_consolidated` is set so that only that many newest messages are
    still unsummarised (as a long-lived session is: post4 consolidates every `memoryWindow` messages).
    """
    from nanobot_desktop.engine.sessions.store import SessionStore

    store = SessionStore(sessions_dir)
    session = store.get_or_create(key)
    store.append(session, conversation(count, **kwargs))
    if unconsolidated is not None:
        cut = max(0, count - unconsolidated)
        while cut > 0 and session.messages[cut].get("role") != "user":
            cut -= 1  # consolidation keeps whole turns
        store.set_last_consolidated(session, cut)
    return store.path_for(key)


def write_many_sessions(sessions_dir: Path, count: int, messages_each: int | Callable[[int], int] = 20) -> None:
    """`count` session files in the engine's exact on-disk format, without an fsync each.

    `messages_each` is a number, or a function of the session's number (sessions of varying sizes).

    The bytes come from the engine's own encoder (`create_file`'s header line + message lines);
    only the durability step is skipped, since thousands of fsyncs would make the setup, not the
    listing, the slow part.
    """
    from nanobot_desktop.engine.sessions.file import encode_line, header_line
    from nanobot_desktop.engine.sessions.store import Session, SessionStore

    sessions_dir.mkdir(parents=True, exist_ok=True)
    channels = ("desktop", "cli", "telegram", "heartbeat", "cron")
    base = datetime(2025, 1, 1, 8, 0, 0)
    for number in range(count):
        key = f"{channels[number % len(channels)]}:{number:05d}"
        start = base + timedelta(minutes=37 * number)
        size = messages_each(number) if callable(messages_each) else messages_each
        messages = conversation(size, start=start, topic=f"project-{number}.md")
        session = Session(key=key, messages=messages, created_at=start.isoformat(),
                          updated_at=(start + timedelta(minutes=5)).isoformat())
        data = header_line(session.header()) + "".join(encode_line(m) for m in messages).encode("utf-8")
        path = SessionStore(sessions_dir).path_for(key)
        with open(path, "wb") as handle:
            handle.write(data)
        stamp = start.timestamp()
        os.utime(path, (stamp, stamp))
