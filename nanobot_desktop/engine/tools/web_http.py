"""The blocking HTTP side of web_search and web_fetch: urllib with checked redirects.

Its own module because `urllib.request` (with `http.client`, `email` and friends, ~1.3 MB resident)
is only needed once a web tool runs: the engine and an empty window do not load it (issue 17).
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

MAX_REDIRECTS = 5

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class FetchRefused(Exception):
    """A redirect we do not follow (too many, or to a scheme other than http/https), or an address
    web_fetch may not reach."""


def parse_networks(texts: Sequence[str]) -> list[Network]:
    """The setting's networks ("127.0.0.1/32", "10.0.0.0/8", "::1"); raises ValueError naming a bad one."""
    networks: list[Network] = []
    for text in texts:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"'{text}' is not a network (write it like 192.168.1.0/24 or 127.0.0.1)") from None
    return networks


def check_address(address: str, allowed: Sequence[Network], host: str) -> None:
    """Refuse an address that is not public (loopback, private, link-local, cloud metadata, multicast…)
    unless one of the `allowed` networks holds it."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_global and not ip.is_multicast:
        return
    if any(ip in network for network in allowed if network.version == ip.version):
        return
    shown = host if host == address else f"{host} ({address})"
    raise FetchRefused(f"web_fetch does not reach {shown}: it is a loopback, private or link-local address. "
                       "The person can allow such networks in Settings → Tools (web_fetch may reach).")


def checked_addresses(host: str, port: int, allowed: Sequence[Network]) -> list[tuple[Any, ...]]:
    """getaddrinfo for `host`, every address checked before any is connected to."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    for info in infos:
        check_address(str(info[4][0]), allowed, host)
    return infos


def _guarded_connection(allowed: Sequence[Network]) -> Any:
    """socket.create_connection that resolves once, checks, and connects to the checked address (no
    second lookup a rebinding DNS server could answer differently)."""

    def connect(address: tuple[str, int], timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
                source_address: Any = None, **_: Any) -> socket.socket:
        host, port = address
        error: OSError | None = None
        for family, kind, proto, _name, sockaddr in checked_addresses(host, port, allowed):
            sock = socket.socket(family, kind, proto)
            try:
                if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:  # type: ignore[attr-defined]
                    sock.settimeout(timeout)
                if source_address:
                    sock.bind(source_address)
                sock.connect(sockaddr)
                return sock
            except OSError as exc:
                sock.close()
                error = exc
        raise error or OSError(f"could not connect to {host}")

    return connect


def _handlers(allowed: Sequence[Network]) -> list[Any]:
    connect = _guarded_connection(allowed)

    class GuardedHTTP(http.client.HTTPConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    class GuardedHTTPS(http.client.HTTPSConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    class HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(GuardedHTTP, req)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(GuardedHTTPS, req, context=self._context)  # type: ignore[attr-defined]

    return [HTTPHandler(), HTTPSHandler()]


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    def http_error_302(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                       headers: Any) -> Any:
        target = headers.get("location") or headers.get("uri")
        if target:
            newurl = urllib.parse.urljoin(req.full_url, target)
            if urllib.parse.urlsplit(newurl).scheme.lower() not in ("http", "https"):
                raise FetchRefused(f"Redirect to a non-http(s) URL refused: {newurl}")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        if urllib.parse.urlsplit(newurl).scheme.lower() not in ("http", "https"):
            raise FetchRefused(f"Redirect to a non-http(s) URL refused: {newurl}")
        hops = getattr(req, "redirect_hops", 0) + 1
        if hops > MAX_REDIRECTS:
            raise FetchRefused(f"Too many redirects (more than {MAX_REDIRECTS})")
        new_request = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new_request is not None:
            new_request.redirect_hops = hops  # type: ignore[attr-defined]
        return new_request


class _ProxiedTargets(urllib.request.BaseHandler):
    """Through a proxy the connection goes to the proxy: the target (and each redirect's) is checked
    by resolving it here first (the proxy may resolve it again; best effort)."""

    handler_order = 100  # before the proxy handler rewrites the request

    def __init__(self, allowed: Sequence[Network]) -> None:
        self.allowed = allowed

    def _check(self, req: urllib.request.Request) -> urllib.request.Request:
        parts = urllib.parse.urlsplit(req.full_url)
        if parts.hostname:
            checked_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), self.allowed)
        return req

    http_request = https_request = _check


def opener(proxy: str | None, allowed: Sequence[Network] | None = None) -> urllib.request.OpenerDirector:
    """urllib with checked redirects; with `allowed` given (web_fetch), every address it connects to
    (or, through a proxy, every target) must be public or in one of these networks."""
    handlers: list[Any] = [_CheckedRedirects()]
    if proxy:
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
        if allowed is not None:
            handlers.append(_ProxiedTargets(allowed))
    elif allowed is not None:
        handlers += _handlers(allowed)
    return urllib.request.build_opener(*handlers)


def request(url: str, headers: dict[str, str]) -> urllib.request.Request:
    return urllib.request.Request(url, headers=headers)
