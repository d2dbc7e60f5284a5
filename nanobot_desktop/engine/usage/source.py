"""What made a model call: the one piece of context the usage record needs that a call cannot see.

The background services set it around their work (`call_source("heartbeat")`), and every model call
made inside reads it. A context variable rather than a parameter, because the call sits several
layers below (heartbeat → agent loop → provider) and asyncio copies it into the tasks started there,
as nanobot 0.3.5 tags its own calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import Context, ContextVar, copy_context
from typing import Literal

Source = Literal["chat", "consolidation", "heartbeat", "cron", "subagent"]
SOURCES: tuple[Source, ...] = ("chat", "consolidation", "heartbeat", "cron", "subagent")
BACKGROUND: frozenset[str] = frozenset({"heartbeat", "cron", "subagent"})
"""The sources a spent budget pauses; chat turns (and their memory consolidation) never wait."""

# nanobot 0.3.5's `source` vocabulary (llm_usage/context.py): its Dream is our consolidation, and it
# counts the heartbeat as cron; a subagent's calls are "system" there (not a person's turn).
CLI_SOURCE: dict[str, str] = {"chat": "user", "consolidation": "dream", "heartbeat": "cron", "cron": "cron",
                              "subagent": "system"}

_current: ContextVar[Source] = ContextVar("nanobot_desktop_call_source", default="chat")
_session: ContextVar[str] = ContextVar("nanobot_desktop_call_session", default="")


def current_source() -> Source:
    return _current.get()


def current_session() -> str:
    """The session a call without a turn of its own works for (consolidation, the heartbeat's decision)."""
    return _session.get()


@contextmanager
def call_source(source: Source, session_key: str | None = None) -> Iterator[None]:
    """Tag the model calls made inside (and in the tasks started inside) with `source` (and the session
    they work for, when the calls themselves do not know it)."""
    token = _current.set(source)
    session_token = _session.set(session_key) if session_key is not None else None
    try:
        yield
    finally:
        _current.reset(token)
        if session_token is not None:
            _session.reset(session_token)


def source_context(source: Source, session_key: str | None = None) -> Context:
    """A copy of the current context tagged with `source`, for `create_task(..., context=...)`: the
    task's model calls (and those of the tasks it starts) count as `source`."""
    context = copy_context()
    context.run(_current.set, source)
    if session_key is not None:
        context.run(_session.set, session_key)
    return context
