"""The blocking HTTP side of web_search and web_fetch: urllib with checked redirects.

Its own module because `urllib.request` (with `http.client`, `email` and friends, ~1.3 MB resident)
is only needed once a web tool runs: the engine and an empty window do not load it (issue 17).
"""

from __future__ import annotations

import urllib.parse
import urllib.request
from typing import Any

MAX_REDIRECTS = 5


class FetchRefused(Exception):
    """A redirect we do not follow (too many, or to a scheme other than http/https)."""


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


def opener(proxy: str | None) -> urllib.request.OpenerDirector:
    handlers: list[Any] = [_CheckedRedirects()]
    if proxy:
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
    return urllib.request.build_opener(*handlers)


def request(url: str, headers: dict[str, str]) -> urllib.request.Request:
    return urllib.request.Request(url, headers=headers)
