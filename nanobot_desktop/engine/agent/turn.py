"""What the agent loop and the objects it owns share: its settings, a turn's result and state, the model
call announced with events, and what the loop needs of the subagents (`Subagents`).

The loop (loop.py) is one object that owns three others, each given only what it needs: a saver
(saver.py: each step saved, and what a failed write could not save), the tool steps (tool_steps.py: a
turn's tool calls) and the session commands (session_commands.py: /new and memory consolidation).
This module imports none of them, and none of them imports the loop: the package has no import circle.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Protocol

from nanobot_desktop.engine.events import (
    EventBus,
    LLMCallFinished,
    LLMCallStarted,
    RetryScheduled,
    TurnFinished,
    WaitingForModel,
)
from nanobot_desktop.engine.llm.types import ChatProvider, LLMResponse, ProviderError
from nanobot_desktop.engine.agent.prompt_fit import tokens_of, tokens_of_tools
from nanobot_desktop.engine.sessions.store import Session
from nanobot_desktop.engine.tools.base import ToolResult
from nanobot_desktop.engine.usage.estimate import CHARS_PER_TOKEN, estimate_tokens, usage_fields
from nanobot_desktop.engine.usage.source import current_source

# Session channels the app itself makes: a turn typed into one of these is the desktop user's.
APP_CHANNELS = frozenset({"desktop", "heartbeat", "cron", "subagent", "system"})


def new_session_key(channel: str = "desktop") -> str:
    """A fresh key in `channel`, named by the time it was made ("desktop:20261124-195728-170")."""
    return f"{channel}:{datetime.now().strftime('%Y%m%d-%H%M%S-%f')[:-3]}"


_THINK_RE = re.compile(r"<think>[\s\S]*?</think>")


def strip_think(text: str | None) -> str:
    return _THINK_RE.sub("", text or "").strip()


async def chat_with_events(bus: EventBus, provider: ChatProvider, session_key: str, turn_id: str,
                           messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: "AgentSettings", *,
                           sections: tuple[tuple[str, int], ...] = (), on_text: Callable[[str], None] | None = None,
                           on_reasoning: Callable[[str], None] | None = None, window_tokens: int = 0) -> LLMResponse:
    """One model call, announced with LLMCallStarted/LLMCallFinished so the inspector sees exactly what was
    sent and what it cost — for the main agent's turns and for subagents alike."""
    call_id = uuid.uuid4().hex[:12]
    model = settings.model or provider.default_model
    estimate = tokens_of(messages) + tokens_of_tools(tools) if window_tokens else 0
    bus.publish(LLMCallStarted(session_key, turn_id=turn_id, call_id=call_id, model=model,
                               messages=tuple(messages), tools=tuple(tools), system_sections=sections,
                               window_tokens=window_tokens, estimated_tokens=estimate))
    started = time.perf_counter()
    received = [0]  # characters streamed so far: a call stopped midway is recorded with what it spent

    def text(piece: str) -> None:
        received[0] += len(piece)
        if on_text is not None:
            on_text(piece)

    def reasoning(piece: str) -> None:
        received[0] += len(piece)
        if on_reasoning is not None:
            on_reasoning(piece)

    try:
        response = await provider.chat(
            messages, tools, model=model, temperature=settings.temperature, max_tokens=settings.max_tokens,
            reasoning_effort=settings.reasoning_effort, on_text_delta=text, on_reasoning_delta=reasoning,
            on_wait=lambda phase, waited, limit: bus.publish(WaitingForModel(
                session_key, turn_id=turn_id, phase=phase, waited_s=waited, limit_s=limit)),
            on_retry=lambda attempt, attempts, delay, reason: bus.publish(RetryScheduled(
                session_key, turn_id=turn_id, attempt=attempt, max_attempts=attempts, delay_s=delay, reason=reason)),
        )
    except ProviderError as error:
        publish_call_failed(bus, session_key, turn_id, call_id, model, error, time.perf_counter() - started,
                            window_tokens=window_tokens)
        raise
    except asyncio.CancelledError:  # /stop or the Stop button: the endpoint was sent the prompt all the same
        publish_call_cancelled(bus, session_key, turn_id, call_id, model, messages, tools, received[0],
                               time.perf_counter() - started, window_tokens=window_tokens)
        raise
    publish_call_finished(bus, session_key, turn_id, call_id, model, response, messages, tools, window_tokens=window_tokens)
    return response


def publish_call_finished(bus: EventBus, session_key: str, turn_id: str, call_id: str, model: str,
                          response: LLMResponse, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                          window_tokens: int = 0) -> None:
    """The LLMCallFinished of a call that answered: what the inspector shows (with the window's fill and
    the stream's speed) and the usage record keeps (engine/usage), tagged with what made the call."""
    bus.publish(LLMCallFinished(session_key, turn_id=turn_id, call_id=call_id, model=response.model or model,
                                latency_s=response.latency_s, finish_reason=response.finish_reason,
                                source=current_source(), window_tokens=window_tokens,
                                first_token_s=response.first_token_s, tokens_per_s=response.tokens_per_s,
                                **usage_fields(response, messages, tools)))


def publish_call_cancelled(bus: EventBus, session_key: str, turn_id: str, call_id: str, model: str,
                           messages: list[dict[str, Any]], tools: list[dict[str, Any]], streamed_chars: int,
                           latency_s: float, *, window_tokens: int = 0) -> None:
    """The LLMCallFinished of a call stopped before it answered, as nanobot 0.3.5 records one (finish
    reason and error kind "cancelled"). The endpoint reports usage only in a stream's last chunk, so
    both counts are estimates, marked as such: the prompt as sent, the characters streamed so far."""
    bus.publish(LLMCallFinished(session_key, turn_id=turn_id, call_id=call_id, model=model,
                                prompt_tokens=estimate_tokens([messages, tools] if tools else messages),
                                completion_tokens=(streamed_chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN,
                                latency_s=latency_s, finish_reason="cancelled", estimated=True,
                                source=current_source(), error_kind="cancelled", window_tokens=window_tokens))


def publish_call_failed(bus: EventBus, session_key: str, turn_id: str, call_id: str, model: str,
                        error: ProviderError, latency_s: float, *, window_tokens: int = 0) -> None:
    bus.publish(LLMCallFinished(session_key, turn_id=turn_id, call_id=call_id, model=model, prompt_tokens=0,
                                completion_tokens=0, latency_s=latency_s, finish_reason="error", error=error.message,
                                facts=tuple(sorted(error.facts.items())), source=current_source(),
                                error_kind=error.kind, error_status=error.status, window_tokens=window_tokens))


@dataclass
class AgentSettings:
    model: str
    temperature: float = 0.1
    max_tokens: int = 8192
    max_iterations: int = 40
    memory_window: int = 100
    reasoning_effort: str | None = None
    # > 0 in a nanobot 0.3 workspace: the history window is measured in tokens (engine/agent/token_window.py)
    context_window_tokens: int = 0
    # nanobot 0.3.x's agents.defaults.maxConcurrentSubagents: more spawned subagents wait for a free slot
    max_concurrent_subagents: int = 4
    # > 0: the model's context window as set in Settings, over what the server says (engine/agent/prompt_fit.py)
    context_window_override: int = 0


@dataclass
class TurnResult:
    turn_id: str
    status: str  # "ok" | "failed" | "cancelled" | "command"
    reply: str | None
    error: str | None = None
    kind: str = ""  # the failure's kind (see TurnFailed), "" when it did not fail


@dataclass
class TurnState:
    turn_id: str
    session: Session
    streamed: list[str] = field(default_factory=list)
    pending_tool_ids: list[tuple[str, str]] = field(default_factory=list)  # (call id, name) not yet answered
    reply: str | None = None  # the final reply, once there is one (kept when saving it fails)
    provider: Callable[[], ChatProvider] | None = None  # the session's own model's endpoint; None: the config's
    window: int = 0  # the model's context window in tokens, when known


class Subagents(Protocol):
    """What the loop asks of the subagents (agent/subagents.py's SubagentManager): the `spawn` tool
    starts one, `/stop` cancels a session's."""

    def spawn(self, task: str, *, label: str | None = None, origin_session_key: str = "cli:direct",
              origin_channel: str = "cli", origin_chat_id: str = "direct") -> str | ToolResult: ...

    async def cancel_by_session(self, session_key: str) -> int: ...


def finish_turn(bus: EventBus, session_key: str, turn_id: str, reply: str | None, status: str = "ok") -> TurnResult:
    """The end of a turn that did not fail: said with TurnFinished, and its result."""
    bus.publish(TurnFinished(session_key, turn_id=turn_id, reply=reply))
    return TurnResult(turn_id, status, reply)
