"""The SDK's streams, watched: what a connection needs to know that the SDK does not tell it.

- the read stream's end (a stdio server's process exited; an HTTP connection closed);
- the ids of the `tools/call` requests a call sent (to cancel them on the server after a timeout/Stop);
- an HTTP response that breaks off mid-call (the SDK only logs it, and the call would wait forever).

Also: importing the SDK off the event loop, and short reasons from the SDK's errors.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import sys
from collections.abc import Callable
from typing import Any

# The JSON-RPC ids of the `tools/call` requests a call task sent, so a timeout or Stop can tell the
# server to cancel them (`notifications/cancelled`). Set per call; tasks inherit it when created.
SENT_CALL_IDS: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("mcp_sent_call_ids", default=None)


class WatchedReceiveStream:
    """The transport's read stream, telling us when it ends (the server process exited or hung up)."""

    def __init__(self, stream: Any, on_end: Callable[[], None]) -> None:
        self._stream = stream
        self._on_end = on_end

    async def __aenter__(self) -> WatchedReceiveStream:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)

    def __aiter__(self) -> WatchedReceiveStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._stream.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()


class RecordingSendStream:
    """The transport's write stream, noting the id of each `tools/call` request a call task sends."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aenter__(self) -> Any:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)

    async def send(self, message: Any) -> None:
        sent = SENT_CALL_IDS.get()
        root: Any = getattr(getattr(message, "message", None), "root", None)
        if sent is not None and getattr(root, "method", None) == "tools/call":
            sent.append(root.id)
        await self._stream.send(message)

    async def aclose(self) -> None:
        await self._stream.aclose()


def watching_transport(on_broken: Callable[[], None]) -> Any:
    """An httpx transport that calls `on_broken` when a response stream breaks off or the server is gone."""
    import httpx

    class WatchedBody(httpx.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def __aiter__(self) -> Any:
            try:
                async for chunk in self._inner:
                    yield chunk
            except (httpx.ReadError, httpx.RemoteProtocolError):
                on_broken()
                raise

        async def aclose(self) -> None:
            await self._inner.aclose()

    class WatchingTransport(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            try:
                response = await self._inner.handle_async_request(request)
            except (httpx.ConnectError, httpx.RemoteProtocolError):
                on_broken()
                raise
            response.stream = WatchedBody(response.stream)
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    return WatchingTransport()


SDK_MODULES = ("mcp", "mcp.client.stdio", "mcp.client.sse", "mcp.client.streamable_http")


def _import_sdk() -> None:
    for name in SDK_MODULES:
        importlib.import_module(name)


async def load_sdk() -> None:
    """Import the SDK once, in a worker thread: it takes about a second, which must not freeze the window."""
    if not all(name in sys.modules for name in SDK_MODULES):
        await asyncio.to_thread(_import_sdk)


def describe_error(error: BaseException) -> str:
    """A short reason from whatever the SDK raised (exception groups unwrapped to their first cause)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, FileNotFoundError):
        return f"command not found: {error.filename or error}"
    if isinstance(error, PermissionError):
        return f"not allowed to run: {error.filename or error}"
    if isinstance(error, TimeoutError):
        return "no answer to the MCP handshake in time"
    code = getattr(getattr(error, "error", None), "code", None)
    if code == -32000 and "closed" in str(error).lower():  # the SDK's CONNECTION_CLOSED
        return "the server closed the connection (its process exited; see its stderr)"
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
