"""The one model provider: any OpenAI-compatible chat-completions endpoint, through `AsyncOpenAI`.

Why it looks like this:
- The `openai` SDK costs ~0.7 s to import, so it is imported on the first call, never at module level.
- An AsyncOpenAI client's connection pool belongs to the event loop that created it, so the client is
  made lazily per running loop and must be closed (`await close()`) inside that loop.
- We always stream: the GUI shows text as it arrives, and cancelling a task closes the HTTP stream.
- The SDK's own retries are off; we retry here, and only while nothing has reached the callbacks,
  so a person never sees the same text twice.
- Every failure leaves as a `ProviderError` with one line a person can act on (never the API key);
  what each SDK error means is decided in provider_errors.py.
- The stream is read through the SDK's raw request path (`client.post(..., stream=True)` with
  `cast_to=object`): the same request, retries, error classes and SSE decoding as
  `client.chat.completions.create`, but each chunk stays the dict `json` made of it
  (stream_assembly.py) instead of becoming a pydantic model, and the chat resource and its types are
  never imported (~20 ms of a headless turn, plus the per-chunk model construction).
- A stalled endpoint is given up on: nothing within `first_byte_timeout_s` (except a local server,
  which may read a long prompt for minutes: it is waited for, with Stop), or a stream that makes no
  real progress (fewer than 16 characters) for `idle_timeout_s`; while waiting, `on_wait` is told
  every second so the window can show it. Malformed replies (cut off, an HTML page, no choices, a
  chunk that is not JSON or not a JSON object) each get their own message (stream_faults.py,
  stream_assembly.py).
- An empty or cut stream is explained by its real cause: the same request is sent once more without
  streaming (and with `max_tokens` 1, so it costs no reply) to read the server's own error, since
  llama.cpp answers a streamed request that does not fit with HTTP 200 and no data and says why only
  to a plain request; a server that no longer takes connections has stopped (crashed, killed, out of
  memory). A context overflow teaches the window (context_window.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import ipaddress
import logging
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from nanobot_desktop import start_up_collector
from nanobot_desktop.engine.llm import provider_errors as errors
from nanobot_desktop.engine.llm.context_window import BOOK, ContextWindow
from nanobot_desktop.engine.llm.http_client import sdk_http_client
from nanobot_desktop.engine.llm.payload import keeps_reasoning_content, parse_tool_arguments, sanitize_messages
from nanobot_desktop.engine.llm.stream_assembly import Assembly
from nanobot_desktop.engine.llm.stream_faults import StallWatch, empty_reply_error, malformed_chunk_error
from nanobot_desktop.engine.llm.types import (
    LLMResponse, ProviderError, RetryCallback, TextCallback, WaitCallback,
)

__all__ = ["OpenAICompatProvider", "make_provider", "parse_tool_arguments", "sanitize_messages",
           "keeps_reasoning_content", "is_local_endpoint"]

log = logging.getLogger(__name__)

_PROBE_TIMEOUT_S = 30.0


def is_local_endpoint(api_base: str) -> bool:
    """A server on this machine or the local network (Ollama, LM Studio, llama.cpp, vLLM at home):
    its silence while reading a prompt is work, not a stall."""
    host = (urlsplit(api_base).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


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
        wait_for_local: bool = True,
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
        self.local = wait_for_local and is_local_endpoint(api_base)  # waited for while it reads the prompt
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._stream_class: Any = None  # openai.AsyncStream[object], set with the client
        # Parameters a model refused with a 400 ("unsupported parameter"), adapted on later calls.
        self._adapted: dict[str, set[str]] = {}
        self._sleep = asyncio.sleep  # tests replace it to observe back-off delays without waiting

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatProvider(api_base={self.api_base!r}, default_model={self.default_model!r})"

    # ---- client per event loop -------------------------------------------------------------------

    async def _ready_client(self) -> Any:
        """The client for the running loop, made in a worker thread: in the app the loop is the GUI's,
        and the SDK's first import (~0.7 s), its HTTP stack's (anyio, h11, httpcore: ~66 ms) and, for
        https, each client's SSL context with the CA bundle (~0.1 s) would freeze the window at the
        first message. A client binds to no loop until its first request."""
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is loop:
            return self._client
        first_import = "openai" not in sys.modules
        client, stream_class = await asyncio.to_thread(self._new_client)
        if first_import:
            start_up_collector.settle()  # the SDK's modules and models live as long as the process
        if self._client is not None and self._client_loop is loop:  # another caller's was ready first
            await client.close()
            return self._client
        if self._client is not None:
            self._discard_client()
        self._client, self._client_loop, self._stream_class = client, loop, stream_class
        return client

    def _new_client(self) -> tuple[Any, Any]:
        """A new SDK client and the stream class it reads chunks with (any thread)."""
        import openai  # lazily: costs ~0.7 s

        # What the client's first request would import on the loop: anyio's asyncio backend (~27 ms).
        with contextlib.suppress(ImportError):
            importlib.import_module("anyio._backends._asyncio")

        client = openai.AsyncOpenAI(
            api_key=self.api_key or "no-key",
            base_url=self.api_base,
            default_headers=self.extra_headers or None,
            max_retries=0,
            # a local server may read a prompt for minutes before its first byte: no read timeout there
            timeout=openai.Timeout(None if self.local else self.timeout_s, connect=min(self.timeout_s, 15.0)),
            http_client=sdk_http_client(openai, self.api_base),  # plain http: no CA bundle read (http_client.py)
        )
        return client, openai.AsyncStream[object]  # yields each chunk as the dict json made of it

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
            assembly = Assembly(model=model)
            try:
                await self._stream_once(request, assembly, on_text_delta, on_reasoning_delta, on_wait)
                return assembly.response(time.monotonic() - started, started)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # every SDK failure is translated below
                if not errors.is_openai_error(exc):
                    raise
                if not assembly.delivered and self._adapt_to_refused_parameter(exc, model, request):
                    continue
                delay = self._retry_delay(exc, attempt)
                cut = assembly.chunks > 0 and errors.is_connection_error(exc) and not errors.is_timeout(exc)
                if cut and (delay is None or assembly.delivered):
                    raise await self._probed(request, self._cut_off_error(assembly)) from None
                if delay is None or assembly.delivered:
                    raise self._provider_error(exc, model, attempt + 1) from None
                attempt += 1
                log.info("LLM call failed (%s); retry %d/%d in %.1f s", type(exc).__name__, attempt,
                         self.max_retries, delay)
                if on_retry is not None:
                    on_retry(attempt + 1, self.max_retries + 1, delay, errors.retry_reason(exc))
                await self._sleep(delay)

    async def _stream_once(self, request: dict[str, Any], assembly: Assembly, on_text: TextCallback | None,
                           on_reasoning: TextCallback | None, on_wait: WaitCallback | None) -> None:
        client = await self._ready_client()  # first: importing the SDK must not eat into the endpoint's time
        watch = StallWatch(None if self.local else self.first_byte_timeout_s, self.idle_timeout_s, on_wait)
        try:
            async with asyncio.timeout_at(watch.deadline()) as scope:
                watch.start(scope)
                assembly.sent_at = time.monotonic()
                stream = await client.post("/chat/completions", body=request, cast_to=object, stream=True,
                                           stream_cls=self._stream_class)
                content_type = stream.response.headers.get("content-type", "")
                async with stream:  # closes the HTTP response on cancel or error
                    async for chunk in stream:
                        assembly.take_chunk(chunk, on_text, on_reasoning)
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
            error = ProviderError(self._one_line(message), kind=kind)
            raise (await self._probed(request, error) if kind == "not_an_api" and "html" not in content_type
                   else error)

    async def _probed(self, request: dict[str, Any], error: ProviderError) -> ProviderError:
        """The real cause of an empty or cut stream, or `error` when none is found. An empty stream: the
        same request once more, not streamed and for one token, read for the server's own error. A cut
        one: whether the server still answers at all (its model list), since asking for the reply again
        would cost a whole reply."""
        try:
            client = await self._ready_client()
            async with asyncio.timeout(_PROBE_TIMEOUT_S):
                if error.kind == "cut":
                    await client.get("/models", cast_to=object)
                else:
                    probe = {name: value for name, value in request.items() if name not in ("stream", "stream_options")}
                    probe["max_completion_tokens" if "max_completion_tokens" in probe else "max_tokens"] = 1
                    try:
                        await client.post("/chat/completions", body=probe, cast_to=object)
                    except Exception as exc:  # read again below, on a fresh connection
                        if not (errors.is_openai_error(exc) and errors.is_connection_error(exc)):
                            raise
                        # llama.cpp closes the connection after its empty stream: the pooled one is dead
                        await client.post("/chat/completions", body=probe, cast_to=object)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            return error
        except Exception as exc:  # the SDK's error classes, read in provider_errors
            if not errors.is_openai_error(exc):
                raise
            if errors.is_connection_error(exc) and not errors.is_timeout(exc):
                if error.kind != "cut":
                    return error
                why = errors.describe_failure(exc, api_base=self.api_base, model=None, attempts=1,
                                              timeout_s=self.timeout_s)[3].get("why", "connection failed")
                return ProviderError(self._one_line(
                    f"{error.message} The server at {self.api_base} no longer answers ({why}): it stopped or "
                    "crashed (for example out of memory). Start it again, then send the message again."),
                    kind="server_gone")
            if getattr(exc, "status_code", None) is not None and error.kind != "cut":
                found = self._provider_error(exc, request.get("model"), 1)
                log.info("an empty stream explained by a plain request: %s", found.message)
                return found
        return error

    def _cut_off_error(self, assembly: Assembly) -> ProviderError:
        shown = sum(len(piece) for piece in assembly.text)
        text = (f"The endpoint closed the connection mid-reply after {shown} characters "
                "(the stream was cut off before it finished).")
        return ProviderError(self._one_line(text), kind="cut")

    # ---- models ----------------------------------------------------------------------------------

    async def context_window(self, model: str | None = None) -> ContextWindow | None:
        """The model's context window as the server says it (asked once per model), or None."""
        await self._ready_client()  # the SDK (and its httpx) imported off the GUI thread
        return await BOOK.window(self.api_base, self.api_key, model or self.default_model, self.extra_headers)

    async def list_models(self) -> list[str]:
        """The endpoint's model ids (GET /models), in the endpoint's order."""
        attempt = 0
        while True:
            try:
                page = await (await self._ready_client()).models.list()
                return [item.id for item in page.data]
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not errors.is_openai_error(exc):
                    raise
                delay = self._retry_delay(exc, attempt)
                if delay is None:
                    raise self._provider_error(exc, None, attempt + 1) from None
                attempt += 1
                await self._sleep(delay)

    # ---- retries and parameter adaptation --------------------------------------------------------

    def _retry_delay(self, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when this error is final."""
        return errors.retry_delay(exc, attempt, self.max_retries, self.retry_base_delay_s)

    def _apply_adaptations(self, request: dict[str, Any]) -> None:
        refused = self._adapted.get(request["model"], set())
        if "max_tokens" in refused and "max_tokens" in request:
            request["max_completion_tokens"] = request.pop("max_tokens")
        for name in ("temperature", "reasoning_effort", "stream_options"):
            if name in refused:
                request.pop(name, None)

    def _adapt_to_refused_parameter(self, exc: Exception, model: str, request: dict[str, Any]) -> bool:
        """A 400 naming a parameter this model does not support: remember it and retry once without it.
        True if adapted."""
        refused = self._adapted.setdefault(model, set())
        name = errors.refused_parameter(exc, request, refused)
        if name is None:
            return False
        refused.add(name)
        log.info("model %s refused parameter %s; retrying without it", model, name)
        return True

    # ---- errors ----------------------------------------------------------------------------------

    def _provider_error(self, exc: Exception, model: str | None, attempts: int) -> ProviderError:
        """The SDK's exception as one line a person can act on (provider_errors.describe_failure)."""
        kind, text, status, facts = errors.describe_failure(exc, api_base=self.api_base, model=model,
                                                            attempts=attempts, timeout_s=self.timeout_s)
        message = self._one_line(text)
        if kind == "context_overflow" and model and facts.get("window"):
            BOOK.learn(self.api_base, model, int(facts["window"]), "the server's error")
        if message.endswith("…"):
            facts = {}  # cut to one line's length: no other wording could say the same
        facts = {name: self._redacted(value) if isinstance(value, str) else value for name, value in facts.items()}
        return ProviderError(message, kind=kind, status=status, facts=facts)

    def _one_line(self, text: str) -> str:
        text = self._redacted(" ".join(text.split()))
        return text if len(text) <= 400 else text[:399] + "…"

    def _redacted(self, text: str) -> str:
        """`text` without the API key (a server may echo it back)."""
        return text.replace(self.api_key, "***") if self.api_key and len(self.api_key) >= 4 else text


def make_provider(name: str, api_key: str, api_base: str, model: str,
                  extra_headers: dict[str, str] | None = None, *, first_byte_timeout_s: float = 45.0,
                  idle_timeout_s: float = 30.0, wait_for_local: bool = True) -> OpenAICompatProvider:
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
                                idle_timeout_s=idle_timeout_s, wait_for_local=wait_for_local)
