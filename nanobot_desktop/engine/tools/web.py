"""web_search (Brave Search API) and web_fetch (one page, as readable text or simple markdown).

Both use the standard library's urllib in a worker thread, so there is no extra dependency and a slow
site never blocks the event loop. HTML is reduced by a small `html.parser` extractor: good enough for
the model to read an article, and it cannot execute anything.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from nanobot_desktop.engine.tools.base import Tool, ToolContext

if TYPE_CHECKING:
    from nanobot_desktop.engine.config import AppSettings, ToolsConfig

BRAVE_ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
SEARCH_TIMEOUT_S = 10.0
FETCH_TIMEOUT_S = 30.0
MAX_REDIRECTS = 5
MAX_BODY_BYTES = 10_000_000
USER_AGENT = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 "
              "(KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36")


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


def _opener(proxy: str | None) -> urllib.request.OpenerDirector:
    handlers: list[Any] = [_CheckedRedirects()]
    if proxy:
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
    return urllib.request.build_opener(*handlers)


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

    async def execute(self, ctx: ToolContext, query: str, count: int | None = None, **_: Any) -> str:
        key = self.api_key or os.environ.get("BRAVE_API_KEY", "")
        if not key:
            return ("Error: Brave Search API key not configured. Set tools.web.search.apiKey in the config "
                    "(or the BRAVE_API_KEY environment variable).")
        wanted = min(max(count or self.max_results, 1), 10)
        url = self.endpoint + "?" + urllib.parse.urlencode({"q": query, "count": wanted})
        request = urllib.request.Request(url, headers={"Accept": "application/json", "X-Subscription-Token": key})
        try:
            data = await asyncio.to_thread(self._get_json, request)
        except urllib.error.HTTPError as exc:
            return f"Error: web search failed: HTTP {exc.code} {exc.reason}"
        except (urllib.error.URLError, OSError) as exc:
            return f"Error: web search failed: {getattr(exc, 'reason', exc)}"
        except ValueError as exc:
            return f"Error: web search returned an unreadable answer: {exc}"
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
        with _opener(self.proxy).open(request, timeout=SEARCH_TIMEOUT_S) as response:
            return json.loads(response.read(MAX_BODY_BYTES).decode("utf-8", errors="replace"))


# ------------------------------------------------------------------------------------------- web_fetch

_SKIPPED_TAGS = frozenset({"script", "style", "nav", "noscript", "svg", "template", "iframe", "aside",
                           "footer", "button", "select"})
_BLOCK_TAGS = frozenset({"p", "div", "section", "article", "main", "header", "table", "tr", "blockquote",
                         "figure", "figcaption", "ul", "ol", "dl", "dt", "dd", "address", "details", "summary"})
_VOID_TAGS = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source",
                        "track", "wbr", "param"})
_PRE_OPEN, _PRE_CLOSE = "\x00pre", "\x00/pre"


class _ReadableText(HTMLParser):
    """Collects a page's title and its readable text, preferring <main>/<article> when the page has one."""

    def __init__(self, markdown: bool, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown = markdown
        self.base_url = base_url
        self.out: list[str] = []
        self.title_parts: list[str] = []
        self.in_title = False
        self.in_head = False  # tracked apart from skip_depth: HTML may omit </head>, never <body>'s content
        self.skip_depth = 0
        self.pre_depth = 0
        self.focus_depth = 0
        self.focus_start = 0
        self.focus_ranges: list[tuple[int, int]] = []
        self.links: list[tuple[int, str | None]] = []
        self.lists: list[list[Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
            return
        if tag in ("head", "body"):
            self.in_head = tag == "head"
            return
        if tag in _SKIPPED_TAGS:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag in ("main", "article"):
            if self.focus_depth == 0:
                self.focus_start = len(self.out)
            self.focus_depth += 1
        if tag in _BLOCK_TAGS:
            self.out.append("\n\n")
        if tag in ("ul", "ol"):
            self.lists.append([tag, 0])
        elif tag == "li":
            bullet = "- "
            if self.lists and self.lists[-1][0] == "ol":
                self.lists[-1][1] += 1
                bullet = f"{self.lists[-1][1]}. "
            self.out.append("\n" + bullet)
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n" + ("#" * int(tag[1]) + " " if self.markdown else ""))
        elif tag == "br":
            self.out.append("\n")
        elif tag == "hr":
            self.out.append("\n\n---\n\n" if self.markdown else "\n\n")
        elif tag == "pre":
            self.pre_depth += 1
            self.out.append(f"\n\n{_PRE_OPEN}\n")
        elif tag == "a":
            href = dict(attrs).get("href")
            usable = href and not href.startswith(("#", "javascript:"))
            self.links.append((len(self.out), urllib.parse.urljoin(self.base_url, href) if usable else None))
            self.out.append("")  # placeholder for "[" once we know the link has text

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if tag == "head":
            self.in_head = False
            return
        if tag in _SKIPPED_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag == "a" and self.links:
            start, href = self.links.pop()
            if self.markdown and href and "".join(self.out[start + 1:]).strip():
                self.out[start] = "["
                self.out.append(f"]({href})")
        elif tag in ("ul", "ol") and self.lists:
            self.lists.pop()
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n")
        elif tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
            self.out.append(f"\n{_PRE_CLOSE}\n\n")
        elif tag in ("td", "th"):
            self.out.append(" ")
        if tag in _BLOCK_TAGS:
            self.out.append("\n\n")
        if tag in ("main", "article") and self.focus_depth:
            self.focus_depth -= 1
            if self.focus_depth == 0:
                self.focus_ranges.append((self.focus_start, len(self.out)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID_TAGS:
            self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
        elif not self.skip_depth and not self.in_head:
            self.out.append(data if self.pre_depth else re.sub(r"\s+", " ", data))

    def title(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.title_parts)).strip()

    def text(self) -> str:
        if self.focus_depth:
            self.focus_ranges.append((self.focus_start, len(self.out)))
        focused = "\n\n".join("".join(self.out[a:b]) for a, b in self.focus_ranges)
        raw = focused if focused.strip() else "".join(self.out)
        return _tidy(raw, self.markdown)


def _tidy(raw: str, markdown: bool) -> str:
    """Strip stray blanks and blank-line runs outside preformatted blocks; keep those blocks verbatim."""
    lines: list[str] = []
    in_pre = False
    for line in raw.split("\n"):
        if line.strip() in (_PRE_OPEN, _PRE_CLOSE):
            in_pre = line.strip() == _PRE_OPEN
            if markdown:
                lines.append("```")
            continue
        if in_pre:
            lines.append(line)
            continue
        line = line.strip()
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip()


def html_to_text(html: str, markdown: bool = True, base_url: str = "") -> tuple[str, str]:
    """(title, readable text) of an HTML document; markdown keeps headings, links and lists marked up."""
    parser = _ReadableText(markdown, base_url)
    parser.feed(html)
    parser.close()
    return parser.title(), parser.text()


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

    def __init__(self, proxy: str | None = None, max_chars: int = 50_000) -> None:
        self.proxy = proxy
        self.max_chars = max_chars

    def configure(self, settings: ToolsConfig, app: AppSettings | None = None) -> None:
        self.proxy = settings.web.proxy

    async def execute(self, ctx: ToolContext, url: str, extractMode: str = "markdown",  # noqa: N803 (schema name)
                      maxChars: int | None = None, **_: Any) -> str:  # noqa: N803
        parts = urllib.parse.urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            problem = f"only http and https URLs are allowed (got '{parts.scheme or 'none'}')" \
                if parts.scheme.lower() not in ("http", "https") else "the URL has no host"
            return json.dumps({"error": f"URL validation failed: {problem}", "url": url}, ensure_ascii=False)
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
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        with _opener(self.proxy).open(request, timeout=FETCH_TIMEOUT_S) as response:
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
