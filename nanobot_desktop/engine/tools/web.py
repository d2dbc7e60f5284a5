"""web_search (Brave Search API) and web_fetch (one page, as readable text or simple markdown).

Both use the standard library's urllib (web_http.py, loaded when a web tool first runs) in a worker
thread, so there is no extra dependency and a slow site never blocks the event loop. HTML is reduced
by a small `html.parser` extractor: good enough for the model to read an article, and it cannot
execute anything.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nanobot_desktop.engine.tools.base import Tool, ToolContext, ToolResult, failed

if TYPE_CHECKING:
    import urllib.request

    from nanobot_desktop.engine.config import AppSettings, ToolsConfig

BRAVE_ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
SEARCH_TIMEOUT_S = 10.0
FETCH_TIMEOUT_S = 30.0
MAX_BODY_BYTES = 10_000_000
USER_AGENT = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 "
              "(KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36")


# ------------------------------------------------------------------------------------------ web_search

class WebSearchTool(Tool):
    name = "web_search"
    description = "Search the web. Returns titles, URLs and snippets."
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query"},
            "count": {"type": "integer", "description": "Results (1-10)", "minimum": 1, "maximum": 10},
        },
        "required": ["query"],
    }

    def __init__(self, api_key: str = "", max_results: int = 5, proxy: str | None = None,
                 endpoint: str = BRAVE_ENDPOINT) -> None:
        self.api_key = api_key
        self.max_results = max_results
        self.proxy = proxy
        self.endpoint = endpoint

    def configure(self, settings: ToolsConfig, app: AppSettings | None = None) -> None:
        self.api_key = settings.web.search.api_key.get_secret_value()
        self.max_results = settings.web.search.max_results
        self.proxy = settings.web.proxy

    async def execute(self, ctx: ToolContext, query: str, count: int | None = None, **_: Any) -> str | ToolResult:
        key = self.api_key or os.environ.get("BRAVE_API_KEY", "")
        if not key:
            return failed("Error: Brave Search API key not configured. Set tools.web.search.apiKey in the config "
                          "(or the BRAVE_API_KEY environment variable).")
        wanted = min(max(count or self.max_results, 1), 10)
        url = self.endpoint + "?" + urllib.parse.urlencode({"q": query, "count": wanted})
        from nanobot_desktop.engine.tools.web_http import request as make_request

        request = make_request(url, {"Accept": "application/json", "X-Subscription-Token": key})
        try:
            data = await asyncio.to_thread(self._get_json, request)
        except urllib.error.HTTPError as exc:
            return failed(f"Error: web search failed: HTTP {exc.code} {exc.reason}")
        except (urllib.error.URLError, OSError) as exc:
            return failed(f"Error: web search failed: {getattr(exc, 'reason', exc)}")
        except ValueError as exc:
            return failed(f"Error: web search returned an unreadable answer: {exc}")
        web = data.get("web") if isinstance(data, dict) else None
        results = [item for item in (web.get("results") or []) if isinstance(item, dict)] \
            if isinstance(web, dict) else []
        if not results:
            return f"No results for: {query}"
        lines = [f"Results for: {query}\n"]
        for number, item in enumerate(results[:wanted], 1):
            lines.append(f"{number}. {item.get('title', '')}\n   {item.get('url', '')}")
            if item.get("description"):
                lines.append(f"   {item['description']}")
        return "\n".join(lines)

    def _get_json(self, request: urllib.request.Request) -> Any:
        from nanobot_desktop.engine.tools.web_http import opener

        with opener(self.proxy).open(request, timeout=SEARCH_TIMEOUT_S) as response:
            return json.loads(response.read(MAX_BODY_BYTES).decode("utf-8", errors="replace"))


# ------------------------------------------------------------------------------------------- web_fetch

def html_to_text(html: str, markdown: bool = True, base_url: str = "") -> tuple[str, str]:
    """(title, readable text) of an HTML document; markdown keeps headings, links and lists marked up."""
    from nanobot_desktop.engine.tools.web_text import html_to_text as read_html

    return read_html(html, markdown, base_url)


def _looks_like_html(content_type: str, body: str) -> bool:
    if content_type in ("text/html", "application/xhtml+xml"):
        return True
    head = body[:256].lstrip().lower()
    return head.startswith(("<!doctype html", "<html"))


class WebFetchTool(Tool):
    name = "web_fetch"
    description = "Fetch a URL and extract its readable content (HTML as markdown or text; JSON pretty-printed)."
    parameters = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "URL to fetch"},
            "extractMode": {"type": "string", "enum": ["markdown", "text"], "default": "markdown"},
            "maxChars": {"type": "integer", "minimum": 100},
        },
        "required": ["url"],
    }

    def __init__(self, proxy: str | None = None, max_chars: int = 50_000, allowed_networks: Sequence[str] = ()) -> None:
        self.proxy = proxy
        self.max_chars = max_chars
        # Loopback, private and link-local addresses are refused unless one of these holds them
        # (desktop.json webFetchAllowedNetworks): a page must not steer the agent into the LAN or 169.254.169.254.
        self.allowed_networks = list(allowed_networks)

    def configure(self, settings: ToolsConfig, app: AppSettings | None = None) -> None:
        self.proxy = settings.web.proxy
        if app is not None:
            self.allowed_networks = list(app.web_fetch_allowed_networks)

    async def execute(self, ctx: ToolContext, url: str, extractMode: str = "markdown",  # noqa: N803 (schema name)
                      maxChars: int | None = None, **_: Any) -> str:  # noqa: N803
        parts = urllib.parse.urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            problem = f"only http and https URLs are allowed (got '{parts.scheme or 'none'}')" \
                if parts.scheme.lower() not in ("http", "https") else "the URL has no host"
            return json.dumps({"error": f"URL validation failed: {problem}", "url": url}, ensure_ascii=False)
        from nanobot_desktop.engine.tools.web_http import FetchRefused

        try:
            result = await asyncio.to_thread(self._fetch, url, extractMode, maxChars or self.max_chars)
        except urllib.error.HTTPError as exc:
            result = {"error": f"HTTP {exc.code} {exc.reason}", "url": url}
        except FetchRefused as exc:
            result = {"error": str(exc), "url": url}
        except urllib.error.URLError as exc:
            result = {"error": str(exc.reason), "url": url}
        except (OSError, ValueError) as exc:
            result = {"error": str(exc) or type(exc).__name__, "url": url}
        return json.dumps(result, ensure_ascii=False)

    def _fetch(self, url: str, mode: str, max_chars: int) -> dict[str, Any]:
        from nanobot_desktop.engine.tools.web_http import opener, parse_networks, request as make_request

        guarded = opener(self.proxy, parse_networks(self.allowed_networks))
        with guarded.open(make_request(url, {"User-Agent": USER_AGENT}), timeout=FETCH_TIMEOUT_S) as response:
            body = response.read(MAX_BODY_BYTES)
            final_url = response.geturl()
            status = response.status
            content_type = response.headers.get_content_type()
            charset = response.headers.get_content_charset() or "utf-8"
        try:
            text = body.decode(charset, errors="replace")
        except LookupError:
            text = body.decode("utf-8", errors="replace")
        extractor = "raw"
        if content_type == "application/json" or content_type.endswith("+json"):
            try:
                text, extractor = json.dumps(json.loads(text), indent=2, ensure_ascii=False), "json"
            except ValueError:
                pass
        elif _looks_like_html(content_type, text):
            title, content = html_to_text(text, markdown=(mode != "text"), base_url=final_url)
            # "readability" is the extractor name the original reports for HTML; kept for format compatibility.
            text, extractor = (f"# {title}\n\n{content}" if title else content), "readability"
        truncated = len(text) > max_chars
        text = text[:max_chars]
        return {"url": url, "finalUrl": final_url, "status": status, "extractor": extractor,
                "truncated": truncated, "length": len(text), "text": text}
