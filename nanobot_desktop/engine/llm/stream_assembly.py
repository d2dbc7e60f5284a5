"""Putting one streamed chat-completions reply together from its chunks.

The chunks arrive as the JSON objects the endpoint sent (plain dicts: the provider reads the stream
through the SDK's raw path, so no pydantic model is built per chunk). Servers differ in what they
leave out, so every field is read defensively: a missing or oddly typed field counts as absent,
never as a crash.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from nanobot_desktop.engine.llm.payload import parse_tool_arguments
from nanobot_desktop.engine.llm.types import LLMResponse, ProviderError, TextCallback, ToolCallRequest, Usage
from nanobot_desktop.engine.llm.usage_wire import usage_from_wire


@dataclass
class PartialCall:
    """A tool call whose name and arguments are still arriving in pieces."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class Assembly:
    """What one streamed response has produced so far."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    delivered: bool = False  # something reached a callback: a retry would repeat it
    chunks: int = 0  # stream chunks received
    chunks_with_choices: int = 0
    chars: int = 0  # characters of text, reasoning and tool arguments received
    first_token_at: float = 0.0  # time.monotonic() when the first text, reasoning or tool call arrived
    sent_at: float = 0.0  # time.monotonic() when the request went out (after the SDK's first import)
    token_chunks: int = 0  # chunks that brought text, reasoning or tool arguments (about one token each)

    def take_chunk(self, chunk: Any, on_text: TextCallback | None, on_reasoning: TextCallback | None) -> None:
        """Add one chunk (a decoded JSON value); its text goes to the callbacks as it comes."""
        if not isinstance(chunk, dict):
            raise ProviderError(
                f"The endpoint sent a stream chunk that is not a JSON object ({type(chunk).__name__}) after "
                f"{self.chars} characters of the reply, so the reply could not be read to the end.",
                kind="malformed")
        self.chunks += 1
        model = chunk.get("model")
        if model and isinstance(model, str):
            self.model = model
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = usage_from_wire(usage)
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return
        self.chunks_with_choices += 1
        chars_before = self.chars
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._take_delta(delta, on_text, on_reasoning)
            finish_reason = choice.get("finish_reason")
            if finish_reason and isinstance(finish_reason, str):
                self.finish_reason = finish_reason
        if self.chars > chars_before:
            self.token_chunks += 1
            if not self.first_token_at:
                self.first_token_at = time.monotonic()

    def _take_delta(self, delta: dict[str, Any], on_text: TextCallback | None,
                    on_reasoning: TextCallback | None) -> None:
        reasoning = reasoning_of(delta)
        if reasoning:
            self.reasoning.append(reasoning)
            self.chars += len(reasoning)
            if on_reasoning is not None:
                self.delivered = True
                on_reasoning(reasoning)
        content = delta.get("content")
        if content and isinstance(content, str):
            self.text.append(content)
            self.chars += len(content)
            if on_text is not None:
                self.delivered = True
                on_text(content)
        parts = delta.get("tool_calls")
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict):
                self.chars += self._add_tool_call_delta(part) + 1

    def _add_tool_call_delta(self, part: dict[str, Any]) -> int:
        """Add one piece of a tool call; returns how many characters of arguments it brought."""
        index = part.get("index")
        part_id = _text(part, "id")
        if not isinstance(index, int):  # some servers omit it: a new id starts a new call, else continue the last
            known = [i for i, c in self.calls.items() if part_id and c.id == part_id]
            index = known[0] if known else (len(self.calls) if part_id or not self.calls else max(self.calls))
        call = self.calls.setdefault(index, PartialCall())
        call.id = call.id or part_id
        function = part.get("function")
        if not isinstance(function, dict):
            return 0
        arguments = _text(function, "arguments")
        call.name += _text(function, "name")
        call.arguments.append(arguments)
        return len(arguments)

    def response(self, latency_s: float, started: float | None = None) -> LLMResponse:
        """The reply; `started` (time.monotonic() when the call began) gives its speed figures."""
        tool_calls = []
        for index in sorted(self.calls):
            call = self.calls[index]
            raw = "".join(call.arguments)
            arguments, error = parse_tool_arguments(raw)
            tool_calls.append(ToolCallRequest(id=call.id or f"call_{secrets.token_hex(6)}", name=call.name,
                                              arguments=arguments, raw_arguments=raw, parse_error=error))
        return LLMResponse(content="".join(self.text) or None, tool_calls=tool_calls,
                           finish_reason=self.finish_reason or "stop",
                           reasoning_content="".join(self.reasoning) or None,
                           usage=self.usage, model=self.model, latency_s=latency_s,
                           **self.speed(latency_s, started))

    def speed(self, latency_s: float, started: float | None) -> dict[str, float]:
        """Time to first token and output tokens per second after it, from the stream itself (the
        endpoint's completion token count, else the chunks that brought text — servers stream about a
        token per chunk, and llama-cpp-python sends no usage —, over the time they took to arrive)."""
        if started is None or not self.first_token_at:
            return {}
        first = max(0.0, self.first_token_at - (self.sent_at or started))
        generating = latency_s - (self.first_token_at - started)
        tokens = self.usage.completion_tokens or self.token_chunks
        rate = tokens / generating if tokens > 1 and generating > 0.001 else 0.0
        return {"first_token_s": first, "tokens_per_s": rate}


def reasoning_of(delta: dict[str, Any]) -> str:
    """DeepSeek/Kimi/vLLM send `reasoning_content`; OpenRouter and newer servers send `reasoning`."""
    value = delta.get("reasoning_content") or delta.get("reasoning")
    return value if isinstance(value, str) else ""


def _text(mapping: dict[str, Any], key: str) -> str:
    value = mapping.get(key)
    return value if isinstance(value, str) else ""
