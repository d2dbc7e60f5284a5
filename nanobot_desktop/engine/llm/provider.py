"""The one model provider: any OpenAI-compatible chat-completions endpoint, through `AsyncOpenAI`.

Why it looks like this:
- The `openai` SDK costs ~0.7 s to import, so it is imported on the first call, never at module level.
- An AsyncOpenAI client's connection pool belongs to the event loop that created it, so the client is
  made lazily per running loop and must be closed (`await close()`) inside that loop.
- We always stream: the GUI shows text as it arrives, and cancelling a task closes the HTTP stream.
- The SDK's own retries are off; we retry here, and only while nothing has reached the callbacks,
  so a person never sees the same text twice.
- Every failure leaves as a `ProviderError` with one line a person can act on (never the API key).
- A stalled endpoint is given up on: nothing within `first_byte_timeout_s`, or a stream that makes no
  real progress (fewer than 16 characters) for `idle_timeout_s`; while waiting, `on_wait` is told
  every second so the window can show it. Malformed replies (cut off, an HTML page, no choices, a
  chunk that is not JSON) each get their own message (stream_faults.py).
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from nanobot_desktop.engine.llm.payload import keeps_reasoning_content, parse_tool_arguments, sanitize_messages
from nanobot_desktop.engine.llm.stream_faults import StallWatch, empty_reply_error, malformed_chunk_error
from nanobot_desktop.engine.llm.types import (
    LLMResponse, ProviderError, RetryCallback, TextCallback, ToolCallRequest, Usage, WaitCallback,
)

__all__ = ["OpenAICompatProvider", "make_provider", "parse_tool_arguments", "sanitize_messages",
           "keeps_reasoning_content"]

log = logging.getLogger(__name__)

_MAX_RETRY_AFTER_S = 30.0
_DNS_FAILURES = ("name or service not known", "nodename nor servname", "getaddrinfo failed",
                 "temporary failure in name resolution")
_REFUSAL_WORDS = ("unsupported", "not supported", "does not support", "unrecognized", "unknown parameter")


# --------------------------------------------------------------------------------------------------
# Stream assembly
# --------------------------------------------------------------------------------------------------


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Assembly:
    """What one streamed response has produced so far."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    delivered: bool = False  # something reached a callback: a retry would repeat it
    chunks: int = 0  # stream chunks received
    chunks_with_choices: int = 0
    chars: int = 0  # characters of text, reasoning and tool arguments received

    def add_tool_call_delta(self, part: Any) -> None:
        index = getattr(part, "index", None)
        part_id = getattr(part, "id", None) or ""
        if index is None:  # some servers omit it: a new id starts a new call, else continue the last
            known = [i for i, c in self.calls.items() if part_id and c.id == part_id]
            index = known[0] if known else (len(self.calls) if part_id or not self.calls else max(self.calls))
        call = self.calls.setdefault(index, _PartialCall())
        call.id = call.id or part_id
        function = getattr(part, "function", None)
        if function is not None:
            call.name += getattr(function, "name", None) or ""
            call.arguments.append(getattr(function, "arguments", None) or "")

    def response(self, latency_s: float) -> LLMResponse:
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
                           usage=self.usage, model=self.model, latency_s=latency_s)


def _reasoning_of(delta: Any) -> str:
    """DeepSeek/Kimi/vLLM send `reasoning_content`; OpenRouter and newer servers send `reasoning`."""
    extra = getattr(delta, "model_extra", None) or {}
    # A declared field is in the model's __dict__; getattr of a missing one costs an exception per chunk.
    fields = getattr(delta, "__dict__", None) or {}
    value = fields.get("reasoning_content") or extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) else ""


# --------------------------------------------------------------------------------------------------
# The provider
# --------------------------------------------------------------------------------------------------


class OpenAICompatProvider:
    """Streams chat completions from an OpenAI-compatible endpoint (implements `ChatProvider`)."""

    def __init__(
        self,
        api_key: str,
        api_base: str,
        default_model: str,
        extra_headers: dict[str, str] | None = None,
        max_retries: int = 3,
        timeout_s: float = 120.0,
        retry_base_delay_s: float = 0.5,
        keep_reasoning: bool | None = None,
        first_byte_timeout_s: float = 45.0,
        idle_timeout_s: float = 30.0,
    ) -> None:
        self.api_key = api_key
        self.api_base = api_base.rstrip("/")
        self.default_model = default_model
        self.extra_headers = dict(extra_headers or {})
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.retry_base_delay_s = retry_base_delay_s
        self.first_byte_timeout_s = first_byte_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.keep_reasoning = keeps_reasoning_content(api_base) if keep_reasoning is None else keep_reasoning
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        # Parameters a model refused with a 400 ("unsupported parameter"), adapted on later calls.
        self._adapted: dict[str, set[str]] = {}
        self._sleep = asyncio.sleep  # tests replace it to observe back-off delays without waiting

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatProvider(api_base={self.api_base!r}, default_model={self.default_model!r})"

    # ---- client per event loop -------------------------------------------------------------------

    def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is loop:
            return self._client
        if self._client is not None:
            self._discard_client()
        import openai  # lazily: costs ~0.7 s

        self._client = openai.AsyncOpenAI(
            api_key=self.api_key or "no-key",
            base_url=self.api_base,
            default_headers=self.extra_headers or None,
            max_retries=0,
            timeout=openai.Timeout(self.timeout_s, connect=min(self.timeout_s, 15.0)),
        )
        self._client_loop = loop
        return self._client

    def release(self) -> None:
        """This provider is being replaced (settings changed): let its connection go without awaiting."""
        self._discard_client()

    def _discard_client(self) -> None:
        """The loop changed: close the old client on its own loop if that loop still runs."""
        client, loop = self._client, self._client_loop
        self._client = self._client_loop = None
        if loop is not None and not loop.is_closed() and loop.is_running():
            loop.call_soon_threadsafe(lambda: loop.create_task(client.close()))

    async def close(self) -> None:
        """Close the HTTP client; call it inside the loop that used the provider."""
        client, loop = self._client, self._client_loop
        if client is None:
            return
        if loop is asyncio.get_running_loop():
            self._client = self._client_loop = None
            await client.close()
        else:
            self._discard_client()

    # ---- chat ------------------------------------------------------------------------------------

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
        model = model or self.default_model
        request: dict[str, Any] = {
            "model": model,
            "messages": sanitize_messages(messages, self.keep_reasoning),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            request["tools"] = tools
            request["tool_choice"] = tool_choice if tool_choice is not None else "auto"
        if temperature is not None:
            request["temperature"] = temperature
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if reasoning_effort:
            request["reasoning_effort"] = reasoning_effort
        started = time.monotonic()
        attempt = 0
        while True:
            self._apply_adaptations(request)
            assembly = _Assembly(model=model)
            try:
                await self._stream_once(request, assembly, on_text_delta, on_reasoning_delta, on_wait)
                return assembly.response(time.monotonic() - started)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # every SDK failure is translated below
                if not _is_openai_error(exc):
                    raise
                if not assembly.delivered and self._adapt_to_refused_parameter(exc, model, request):
                    continue
                delay = self._retry_delay(exc, attempt)
                cut = assembly.chunks > 0 and _is_connection_error(exc) and not _is_timeout(exc)
                if cut and (delay is None or assembly.delivered):
                    raise self._cut_off_error(assembly) from None
                if delay is None or assembly.delivered:
                    raise self._provider_error(exc, model, attempt + 1) from None
                attempt += 1
                log.info("LLM call failed (%s); retry %d/%d in %.1f s", type(exc).__name__, attempt,
                         self.max_retries, delay)
                if on_retry is not None:
                    on_retry(attempt + 1, self.max_retries + 1, delay, _retry_reason(exc))
                await self._sleep(delay)

    async def _stream_once(self, request: dict[str, Any], assembly: _Assembly, on_text: TextCallback | None,
                           on_reasoning: TextCallback | None, on_wait: WaitCallback | None) -> None:
        client = self._get_client()  # first: importing the SDK must not eat into the endpoint's time
        watch = StallWatch(self.first_byte_timeout_s, self.idle_timeout_s, on_wait)
        try:
            async with asyncio.timeout_at(watch.deadline()) as scope:
                watch.start(scope)
                stream = await client.chat.completions.create(**request)
                content_type = stream.response.headers.get("content-type", "")
                async with stream:  # closes the HTTP response on cancel or error
                    async for chunk in stream:
                        self._take_chunk(chunk, assembly, on_text, on_reasoning)
                        watch.progress(assembly.chars)
        except TimeoutError:
            raise ProviderError(self._one_line(watch.message(self.api_base, assembly.chars)),
                                kind=watch.kind()) from None
        except ValueError as exc:  # json.JSONDecodeError from the SDK's stream decoder
            raise ProviderError(self._one_line(malformed_chunk_error(exc, assembly.chars)), kind="malformed") from None
        finally:
            watch.stop()
        if not assembly.chunks_with_choices and not assembly.text and not assembly.calls:
            message, kind = empty_reply_error(self.api_base, content_type, assembly.chunks)
            raise ProviderError(self._one_line(message), kind=kind)

    @staticmethod
    def _take_chunk(chunk: Any, assembly: _Assembly, on_text: TextCallback | None,
                    on_reasoning: TextCallback | None) -> None:
        assembly.chunks += 1
        assembly.model = getattr(chunk, "model", None) or assembly.model
        if getattr(chunk, "usage", None) is not None:
            prompt, completion = chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0
            assembly.usage = Usage(prompt, completion, chunk.usage.total_tokens or prompt + completion)
        if chunk.choices:
            assembly.chunks_with_choices += 1
        for choice in chunk.choices or ():
            delta = choice.delta
            if delta is not None:
                reasoning = _reasoning_of(delta)
                if reasoning:
                    assembly.reasoning.append(reasoning)
                    assembly.chars += len(reasoning)
                    if on_reasoning is not None:
                        assembly.delivered = True
                        on_reasoning(reasoning)
                if delta.content:
                    assembly.text.append(delta.content)
                    assembly.chars += len(delta.content)
                    if on_text is not None:
                        assembly.delivered = True
                        on_text(delta.content)
                for part in delta.tool_calls or ():
                    assembly.add_tool_call_delta(part)
                    function = getattr(part, "function", None)
                    assembly.chars += len(getattr(function, "arguments", None) or "") + 1
            if choice.finish_reason:
                assembly.finish_reason = choice.finish_reason

    def _cut_off_error(self, assembly: _Assembly) -> ProviderError:
        shown = sum(len(piece) for piece in assembly.text)
        text = (f"The endpoint closed the connection mid-reply after {shown} characters "
                "(the stream was cut off before it finished).")
        return ProviderError(self._one_line(text), kind="cut")

    # ---- models ----------------------------------------------------------------------------------

    async def list_models(self) -> list[str]:
        """The endpoint's model ids (GET /models), in the endpoint's order."""
        attempt = 0
        while True:
            try:
                page = await self._get_client().models.list()
                return [item.id for item in page.data]
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not _is_openai_error(exc):
                    raise
                delay = self._retry_delay(exc, attempt)
                if delay is None:
                    raise self._provider_error(exc, None, attempt + 1) from None
                attempt += 1
                await self._sleep(delay)

    # ---- retries and parameter adaptation --------------------------------------------------------

    def _retry_delay(self, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when this error is final."""
        if attempt >= self.max_retries:
            return None
        status = getattr(exc, "status_code", None)
        if status is None:
            if not _is_connection_error(exc):
                return None  # e.g. an error event inside the stream
        elif not (status in (408, 409, 429) or status >= 500):
            return None
        elif status == 429 and _error_code(exc) == "insufficient_quota":
            return None  # waiting will not add credit
        delay = self.retry_base_delay_s * 2.0**attempt
        retry_after = _retry_after_s(exc)
        if retry_after is not None:
            delay = max(delay, min(retry_after, _MAX_RETRY_AFTER_S))
        return delay

    def _apply_adaptations(self, request: dict[str, Any]) -> None:
        refused = self._adapted.get(request["model"], set())
        if "max_tokens" in refused and "max_tokens" in request:
            request["max_completion_tokens"] = request.pop("max_tokens")
        for name in ("temperature", "reasoning_effort", "stream_options"):
            if name in refused:
                request.pop(name, None)

    def _adapt_to_refused_parameter(self, exc: Exception, model: str, request: dict[str, Any]) -> bool:
        """A 400 naming a parameter this model does not support (e.g. gpt-5 and `max_tokens` or a
        non-default `temperature`): remember it and retry once without it. True if adapted."""
        if getattr(exc, "status_code", None) != 400:
            return False
        body = getattr(exc, "body", None)
        param = body.get("param") if isinstance(body, dict) else None
        text = _server_message(exc).lower()
        refusal = any(word in text for word in _REFUSAL_WORDS)
        refused = self._adapted.setdefault(model, set())
        for name in ("max_tokens", "temperature", "reasoning_effort", "stream_options"):
            named = refusal and (param == name or name in text)  # not e.g. "max_tokens is too large"
            if named and name in request and name not in refused:
                refused.add(name)
                log.info("model %s refused parameter %s; retrying without it", model, name)
                return True
        return False

    # ---- errors ----------------------------------------------------------------------------------

    def _provider_error(self, exc: Exception, model: str | None, attempts: int) -> ProviderError:
        """One sentence of what happened (the server's own words quoted as such), one of what to do."""
        status = getattr(exc, "status_code", None)
        said = _quoted(_server_message(exc))
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        if status in (401, 403):
            kind, text = "auth", f"The endpoint rejected the API key ({status}). Check the API key in Settings."
        elif status == 404 and model and (_error_code(exc) == "model_not_found" or "model" in said.lower()):
            kind, text = "model_not_found", (f"The endpoint does not know the model '{model}' (404){said}. "
                                             "Pick a model from the endpoint's list in Settings.")
        elif status == 404:
            kind, text = "other", (f"{self.api_base} answered 404 Not Found{said}. "
                                   "Check the base URL in Settings (it usually ends in /v1).")
        elif status == 429:
            quota = _error_code(exc) == "insufficient_quota"
            kind, text = "rate_limit", (f"The endpoint is rate-limiting requests (429){tries}{said}. "
                                        + ("Check the account's quota or billing." if quota
                                           else "Wait a moment, then send again."))
        elif status is not None and status >= 500:
            kind, text = "server", (f"The endpoint had a server error ({status}){tries}{said}. "
                                    "Try again in a moment.")
        elif status is not None:
            kind, text = "bad_request", (f"The endpoint rejected the request ({status}){said}. "
                                         "Check the model and the endpoint in Settings.")
        elif _is_timeout(exc):
            kind, text = "timeout", (f"{self.api_base} did not answer within {self.timeout_s:g} s{tries}. "
                                     "Try again, or check the endpoint and its timeouts in Settings.")
        elif _is_connection_error(exc):
            why = _connection_failure(exc)
            kind, text = "unreachable", (f"Could not connect to {self.api_base} ({why}){tries}. "
                                         "Check that the server is running and that its URL in Settings is right.")
        else:
            kind, text = "server", (f"The endpoint reported an error{said or ' (' + type(exc).__name__ + ')'}. "
                                    "Try again in a moment.")
        return ProviderError(self._one_line(text), kind=kind, status=status)

    def _one_line(self, text: str) -> str:
        text = " ".join(text.split())
        if self.api_key and len(self.api_key) >= 4:
            text = text.replace(self.api_key, "***")
        return text if len(text) <= 400 else text[:399] + "…"


def _quoted(server: str) -> str:
    """The endpoint's own message as a quotation to append to our sentence ("" when it said nothing)."""
    server = " ".join(server.split()).rstrip(".")
    return f"; it said: “{server}”" if server else ""


def _retry_reason(exc: Exception) -> str:
    """A few words on why a call is retried, for "Retrying (2/4) in 3 s…"."""
    status = getattr(exc, "status_code", None)
    if status == 429:
        return "rate limited (429)"
    if status is not None:
        return f"server error {status}"
    return "timed out" if _is_timeout(exc) else "connection failed"


def _is_openai_error(exc: Exception) -> bool:
    import openai

    return isinstance(exc, openai.OpenAIError)


def _is_connection_error(exc: Exception) -> bool:
    import openai

    return isinstance(exc, openai.APIConnectionError)


def _is_timeout(exc: Exception) -> bool:
    import openai

    return isinstance(exc, openai.APITimeoutError)


def _error_code(exc: Exception) -> str | None:
    code = getattr(exc, "code", None)
    return str(code) if code else None


def _server_message(exc: Exception) -> str:
    """The endpoint's own words: OpenAI's {"error": {"message"}}, or FastAPI/Ollama variants."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        for key in ("message", "detail", "error", "msg"):
            text = body.get(key)
            if isinstance(text, str) and text.strip():
                return text.strip()
    if isinstance(body, str) and body.strip() and not body.lstrip().startswith("<"):  # not an HTML page
        return body.strip()[:300]
    response = getattr(exc, "response", None)
    if response is not None:
        return getattr(response, "reason_phrase", "") or ""
    return str(getattr(exc, "message", "") or "")


def _retry_after_s(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value: str | None = response.headers.get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _connection_failure(exc: BaseException) -> str:
    """Walk the cause chain for the socket-level reason."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return "connection refused"
        if isinstance(seen, socket.gaierror) or any(s in str(seen).lower() for s in _DNS_FAILURES):
            return "host not found"
        seen = seen.__cause__ or seen.__context__
    return "connection failed"


def make_provider(name: str, api_key: str, api_base: str, model: str,
                  extra_headers: dict[str, str] | None = None, *, first_byte_timeout_s: float = 45.0,
                  idle_timeout_s: float = 30.0) -> OpenAICompatProvider:
    """The provider for a resolved config entry (config.resolve_provider gives these values:
    the base URL already defaulted, the model already stripped of its routing prefix)."""
    if not api_base:
        raise ProviderError(f"Provider '{name}' has no base URL: set its apiBase in Settings.", kind="bad_request")
    headers = dict(extra_headers or {})
    if name == "azure_openai" and api_key:
        headers.setdefault("api-key", api_key)  # Azure's v1 endpoint authenticates with this header
    keep_reasoning = True if name in ("deepseek", "moonshot") else None  # else: judged from the URL
    return OpenAICompatProvider(api_key=api_key, api_base=api_base, default_model=model, extra_headers=headers,
                                keep_reasoning=keep_reasoning, first_byte_timeout_s=first_byte_timeout_s,
                                idle_timeout_s=idle_timeout_s)
