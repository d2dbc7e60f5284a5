"""The HTTP client handed to `AsyncOpenAI`: for a plain-http endpoint, TLS trust is loaded only if used.

The SDK's default client builds its TLS context at once, which reads the system's CA bundle (~20 ms,
a tenth of a headless turn beyond `import openai`). Local servers (Ollama, LM Studio, llama.cpp,
vLLM) are plain `http://`, where that context is normally never used. So for an `http://` base URL
the client is the SDK's own `DefaultAsyncHttpxClient` (same limits, timeouts and redirects) with a
`DeferredTrust` context: it builds the HTTP library's default context (`create_ssl_context()`, the
very one the SDK would have used) the first time a TLS connection is made — a redirect to https, an
https proxy — and hands that connection to it. `https://` endpoints keep the SDK's default client.
"""

from __future__ import annotations

import importlib
import ssl
from types import ModuleType
from typing import Any, Callable


class DeferredTrust(ssl.SSLContext):
    """A TLS context that builds the real one (`build()`) on first use and delegates to it.

    httpcore only sets the ALPN protocols and wraps connections (`wrap_bio`), so those are the calls
    passed on; the ALPN list is remembered until the real context exists.
    """

    def __new__(cls, build: Callable[[], ssl.SSLContext]) -> DeferredTrust:
        return super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)

    def __init__(self, build: Callable[[], ssl.SSLContext]) -> None:
        self._build = build
        self._real: ssl.SSLContext | None = None
        self._alpn: list[str] | None = None

    @property
    def built(self) -> bool:
        """Whether a TLS connection has needed the real context (and its CA bundle) yet."""
        return self._real is not None

    def _context(self) -> ssl.SSLContext:
        if self._real is None:
            self._real = self._build()
            if self._alpn is not None:
                self._real.set_alpn_protocols(self._alpn)
        return self._real

    def set_alpn_protocols(self, alpn_protocols: Any) -> None:
        self._alpn = list(alpn_protocols)
        if self._real is not None:
            self._real.set_alpn_protocols(self._alpn)

    def wrap_bio(self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
                 server_hostname: str | bytes | None = None, session: ssl.SSLSession | None = None) -> ssl.SSLObject:
        return self._context().wrap_bio(incoming, outgoing, server_side=server_side,
                                        server_hostname=server_hostname, session=session)

    def wrap_socket(self, sock: Any, server_side: bool = False, do_handshake_on_connect: bool = True,
                    suppress_ragged_eofs: bool = True, server_hostname: str | bytes | None = None,
                    session: ssl.SSLSession | None = None) -> ssl.SSLSocket:
        return self._context().wrap_socket(sock, server_side=server_side,
                                           do_handshake_on_connect=do_handshake_on_connect,
                                           suppress_ragged_eofs=suppress_ragged_eofs,
                                           server_hostname=server_hostname, session=session)


def sdk_http_client(openai: ModuleType, base_url: str, **options: Any) -> Any | None:
    """The `http_client` for `AsyncOpenAI(base_url=...)`: None (the SDK's default) unless the URL is
    plain http and the SDK's HTTP library can be named; then its default client with `DeferredTrust`.
    `options` go to the client (timeout, headers)."""
    if not base_url.lower().startswith("http://"):
        return None
    library = _http_library(openai)
    create = getattr(library, "create_ssl_context", None) if library is not None else None
    if create is None:
        return None
    return openai.DefaultAsyncHttpxClient(verify=DeferredTrust(create), **options)


def plain_client(base_url: str, **options: Any) -> Any:
    """An HTTP client of the SDK's own library for asking a server outside the SDK (its context
    window): no second HTTP library imported, and no CA bundle loaded for a plain-http server."""
    import openai  # imported already by the time a model is called

    return sdk_http_client(openai, base_url, **options) or openai.DefaultAsyncHttpxClient(**options)


def _http_library(openai: ModuleType) -> ModuleType | None:
    """httpx or httpx2: the package the SDK's default client class comes from."""
    for cls in openai.DefaultAsyncHttpxClient.__mro__:
        root = cls.__module__.partition(".")[0]
        if root.startswith("httpx"):
            return importlib.import_module(root)
    return None
