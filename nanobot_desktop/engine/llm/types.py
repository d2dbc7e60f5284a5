"""Provider-neutral types for talking to a chat-completions model.

Kept apart from `provider.py` so that memory consolidation, heartbeat and tests can speak "chat with
tools" without importing the `openai` SDK (which costs ~0.7 s to import).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

TextCallback = Callable[[str], None]
# on_wait(phase, waited_s, limit_s): the endpoint has been silent for `waited_s` ("first_byte" or "idle");
# "prompt": a local server still reading the prompt, which is never given up on (`limit_s` is 0).
WaitCallback = Callable[[str, float, float], None]
# on_retry(attempt, max_attempts, delay_s, reason): a failed call is tried again as `attempt` (2 = the
# first retry) of `max_attempts` after `delay_s` seconds; `reason` is short ("server error 503").
RetryCallback = Callable[[int, int, float, str], None]


@dataclass
class ToolCallRequest:
    """One tool call the model asked for.

    `arguments` is the parsed JSON object; when the model sent JSON that could not be parsed (or
    repaired unambiguously), `arguments` is empty and `parse_error` says what was wrong, so the loop
    can hand the error back to the model as the tool's result instead of crashing.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    parse_error: str | None = None

    def to_message_dict(self) -> dict[str, Any]:
        """The call as an assistant message's `tool_calls` entry (the shape sessions store and endpoints take).

        Arguments are re-serialised from the parsed object; unreadable ones are kept as the model sent them.
        """
        arguments = self.raw_arguments if self.parse_error else json.dumps(self.arguments, ensure_ascii=False)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": arguments}}


@dataclass
class Usage:
    """Token counts of one call. `prompt_tokens` includes the cached ones (as OpenAI counts them);
    a cache count of None means the endpoint did not say, 0 that it said none; `reported` is False
    when the endpoint sent no usage at all (the usage record then estimates)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reported: bool = False


@dataclass
class LLMResponse:
    """The assembled result of one (streamed) chat-completions call."""

    content: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str = "stop"
    reasoning_content: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    latency_s: float = 0.0
    first_token_s: float = 0.0  # from sending to the first streamed token (0: none came)
    tokens_per_s: float = 0.0  # output tokens per second after the first one (0: not known)

    @property
    def has_tool_calls(self) -> bool:
        return bool(self.tool_calls)


class ProviderError(Exception):
    """A failed LLM call, with a one-line message a person can act on.

    `kind` is one of: "auth", "model_not_found", "unreachable", "timeout", "rate_limit", "server",
    "bad_request", "cancelled", "other", and for malformed or stalled replies: "cut" (stream cut off),
    "stalled" (no progress mid-stream), "malformed" (a chunk that is not JSON), "not_an_api" (e.g. an
    HTML page), "empty" (no choices); and what a local server's own error says (server_diagnosis.py):
    "context_overflow", "model_not_loaded", "out_of_memory", "tools_unsupported", "server_gone" (it
    stopped answering mid-reply and no longer takes connections).
    """

    def __init__(self, message: str, kind: str = "other", status: int | None = None,
                 facts: dict[str, Any] | None = None) -> None:
        from nanobot_desktop.engine.url_secrets import hide_url_secrets

        message = hide_url_secrets(message)  # an apiBase with credentials in it is never shown
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status
        self.facts: dict[str, Any] = {k: hide_url_secrets(v) if isinstance(v, str) else v
                                      for k, v in (facts or {}).items()}
        """The sentence `message` is ("sentence") and its values (provider_errors.describe_failure), when known."""

    def __str__(self) -> str:
        return self.message


class ChatProvider(Protocol):
    """What the engine needs from a model endpoint."""

    default_model: str

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        reasoning_effort: str | None = None,
        tool_choice: Any = None,
        on_text_delta: TextCallback | None = None,
        on_reasoning_delta: TextCallback | None = None,
        on_wait: WaitCallback | None = None,
        on_retry: RetryCallback | None = None,
    ) -> LLMResponse:
        """Stream one completion; raise ProviderError on failure (never a raw SDK exception)."""
        ...


# The narrow form that consolidation and the heartbeat decision use: messages + tools in, response out.
ChatWithTools = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[LLMResponse]]
