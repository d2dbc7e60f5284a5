"""web_fetch and web_search against a loopback HTTP server (never the internet)."""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from nanobot_desktop.engine.events import ToolStatus
from nanobot_desktop.engine.tools.base import ToolContext, failed
from nanobot_desktop.engine.tools.web import WebFetchTool, WebSearchTool, html_to_text
from tests.fake_openai import stop_serving

ARTICLE = """<!DOCTYPE html>
<html><head><title>  The  Title </title><style>body{color:red}</style>
<script>var secret = "do not show";</script></head>
<body>
<nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<main>
<h1>Main heading</h1>
<p>First   paragraph with a <a href="/docs/intro">relative link</a> and &amp; entity.</p>
<h2>List</h2>
<ul><li>apple</li><li>banana</li></ul>
<ol><li>one</li><li>two</li></ol>
<pre>def f():
    return 1</pre>
<script>alert("nope")</script>
</main>
<footer>Copyright junk</footer>
</body></html>"""

BRAVE_ANSWER = {
    "web": {
        "results": [
            {"title": "First hit", "url": "https://a.example/1", "description": "About the first"},
            {"title": "Second hit", "url": "https://a.example/2"},
        ]
    }
}


class _Handler(BaseHTTPRequestHandler):
    search_requests: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        route = parsed.path
        if route == "/page.html":
            self._send(200, ARTICLE.encode(), "text/html; charset=utf-8")
        elif route == "/data.json":
            self._send(200, b'{"b":1,"a":[1,2],"name":"caf\\u00e9"}', "application/json")
        elif route == "/plain":
            self._send(200, "plain text ü".encode("latin-1"), "text/plain; charset=latin-1")
        elif route == "/long":
            self._send(200, b"z" * 1000, "text/plain")
        elif route == "/redirect":
            self._send(302, b"", "text/plain", {"Location": "/page.html"})
        elif route == "/loop":
            hop = int(urllib.parse.parse_qs(parsed.query).get("n", ["0"])[0])
            self._send(302, b"", "text/plain", {"Location": f"/loop?n={hop + 1}"})
        elif route.startswith("/to/"):  # /to/10.0.0.1 redirects there (never followed: refused before connect)
            self._send(302, b"", "text/plain", {"Location": f"http://{route[4:]}/latest/meta-data"})
        elif route == "/to-file":
            self._send(302, b"", "text/plain", {"Location": "file:///etc/passwd"})
        elif route == "/ua":
            self._send(200, self.headers.get("User-Agent", "").encode(), "text/plain")
        elif route == "/search":
            query = urllib.parse.parse_qs(parsed.query)
            _Handler.search_requests.append({"query": query, "token": self.headers.get("X-Subscription-Token")})
            if self.headers.get("X-Subscription-Token") != "good-key":
                self._send(401, b'{"error":"bad key"}', "application/json")
            elif query.get("q") == ["nothing"]:
                self._send(200, b'{"web":{"results":[]}}', "application/json")
            else:
                self._send(200, json.dumps(BRAVE_ANSWER).encode(), "application/json")
        else:
            self._send(404, b"not here", "text/plain")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    _Handler.search_requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        stop_serving(httpd)
        httpd.server_close()
        thread.join()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


LOOPBACK = ("127.0.0.1/32",)  # web_fetch refuses loopback unless allowed: these tests' server is there


async def _fetch(ctx: ToolContext, **kwargs: Any) -> dict[str, Any]:
    return json.loads(await WebFetchTool(allowed_networks=LOOPBACK).execute(ctx, **kwargs))


# ------------------------------------------------------------------------------------------- web_fetch

async def test_fetch_html_as_markdown(server: str, ctx: ToolContext) -> None:
    data = await _fetch(ctx, url=f"{server}/page.html")
    assert set(data) == {"url", "finalUrl", "status", "extractor", "truncated", "length", "text"}
    assert (data["status"], data["extractor"], data["truncated"]) == (200, "readability", False)
    text = data["text"]
    assert data["length"] == len(text)
    assert text.startswith("# The Title\n\n# Main heading\n\nFirst paragraph with a ")
    assert f"[relative link]({server}/docs/intro) and & entity." in text
    assert "## List" in text and "- apple\n- banana" in text and "1. one\n2. two" in text
    assert "```\ndef f():\n    return 1\n```" in text
    for dropped in ("secret", "alert", "color:red", "Home", "Copyright"):
        assert dropped not in text


async def test_fetch_html_as_text(server: str, ctx: ToolContext) -> None:
    text = (await _fetch(ctx, url=f"{server}/page.html", extractMode="text"))["text"]
    assert text.startswith("# The Title\n\nMain heading\n\nFirst paragraph with a relative link and & entity.")
    assert "](" not in text and "##" not in text and "```" not in text
    assert "def f():\n    return 1" in text


async def test_fetch_json_pretty_printed(server: str, ctx: ToolContext) -> None:
    data = await _fetch(ctx, url=f"{server}/data.json")
    assert data["extractor"] == "json"
    assert data["text"] == '{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ],\n  "name": "café"\n}'


async def test_fetch_plain_text_uses_charset(server: str, ctx: ToolContext) -> None:
    data = await _fetch(ctx, url=f"{server}/plain")
    assert (data["extractor"], data["text"]) == ("raw", "plain text ü")


async def test_fetch_truncates_to_max_chars(server: str, ctx: ToolContext) -> None:
    data = await _fetch(ctx, url=f"{server}/long", maxChars=100)
    assert (data["truncated"], data["length"], data["text"]) == (True, 100, "z" * 100)
    default_cap = json.loads(await WebFetchTool(max_chars=300, allowed_networks=LOOPBACK).execute(ctx, url=f"{server}/long"))
    assert default_cap["length"] == 300


async def test_fetch_follows_redirect(server: str, ctx: ToolContext) -> None:
    data = await _fetch(ctx, url=f"{server}/redirect")
    assert data["url"] == f"{server}/redirect" and data["finalUrl"] == f"{server}/page.html"


async def test_fetch_stops_after_five_redirects(server: str, ctx: ToolContext) -> None:
    assert await _fetch(ctx, url=f"{server}/loop") == {"error": "Too many redirects (more than 5)",
                                                       "url": f"{server}/loop"}


async def test_fetch_refuses_redirect_to_file(server: str, ctx: ToolContext) -> None:
    data = await _fetch(ctx, url=f"{server}/to-file")
    assert data["error"].startswith("Redirect to a non-http(s) URL refused")


async def test_fetch_sends_browser_user_agent(server: str, ctx: ToolContext) -> None:
    assert (await _fetch(ctx, url=f"{server}/ua"))["text"].startswith("Mozilla/5.0 (Macintosh;")


async def test_fetch_http_error(server: str, ctx: ToolContext) -> None:
    assert await _fetch(ctx, url=f"{server}/missing") == {"error": "HTTP 404 Not Found", "url": f"{server}/missing"}


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "javascript:alert(1)", "127.0.0.1/x"])
async def test_fetch_refuses_non_http_schemes(ctx: ToolContext, url: str) -> None:
    data = await _fetch(ctx, url=url)
    assert set(data) == {"error", "url"} and data["url"] == url
    assert data["error"].startswith("URL validation failed: only http and https URLs are allowed")


async def test_fetch_unreachable_host(ctx: ToolContext) -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = await _fetch(ctx, url=f"http://127.0.0.1:{port}/")
    assert set(data) == {"error", "url"} and data["error"]


def test_html_with_unclosed_head_keeps_body() -> None:
    title, text = html_to_text("<html><head><title>T</title><meta charset=utf-8><body><p>Body text</p>")
    assert (title, text) == ("T", "Body text")


def test_html_without_main_keeps_body_and_title_optional() -> None:
    title, text = html_to_text("<p>a<br>b</p><hr><h3>T</h3><a href='#x'>anchor</a>", base_url="http://h/")
    assert title == ""
    assert text == "a\nb\n\n---\n\n### T\n\nanchor"


# ------------------------------------------------------------------------------------------ web_search

async def test_search_formats_results(server: str, ctx: ToolContext) -> None:
    tool = WebSearchTool(api_key="good-key", endpoint=f"{server}/search")
    result = await tool.execute(ctx, query="nanobot desktop", count=3)
    assert result == ("Results for: nanobot desktop\n\n"
                      "1. First hit\n   https://a.example/1\n   About the first\n"
                      "2. Second hit\n   https://a.example/2")
    assert _Handler.search_requests == [{"query": {"q": ["nanobot desktop"], "count": ["3"]}, "token": "good-key"}]


async def test_search_default_count_and_env_key(server: str, ctx: ToolContext,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    tool = WebSearchTool(max_results=4, endpoint=f"{server}/search")
    monkeypatch.setenv("BRAVE_API_KEY", "good-key")  # read at call time, after the tool was built
    assert (await tool.execute(ctx, query="q")).startswith("Results for: q")
    assert _Handler.search_requests[-1]["query"]["count"] == ["4"]


async def test_search_no_results(server: str, ctx: ToolContext) -> None:
    tool = WebSearchTool(api_key="good-key", endpoint=f"{server}/search")
    assert await tool.execute(ctx, query="nothing") == "No results for: nothing"


async def test_search_bad_key(server: str, ctx: ToolContext) -> None:
    tool = WebSearchTool(api_key="wrong", endpoint=f"{server}/search")
    assert await tool.execute(ctx, query="q") == failed("Error: web search failed: HTTP 401 Unauthorized")


async def test_search_without_key_names_the_setting(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    result = await WebSearchTool(endpoint="http://127.0.0.1:9/never-called").execute(ctx, query="q")
    assert result.status is ToolStatus.ERROR and result.text.startswith("Error: Brave Search API key not configured")
    assert "tools.web.search.apiKey" in result.text and "BRAVE_API_KEY" in result.text


# ------------------------------------------------------------- web_fetch: no loopback, LAN or metadata

@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every address a socket is asked to connect to; anything but loopback fails the test before a
    packet leaves (this workplace flags traffic to private addresses)."""
    import socket

    seen: list[Any] = []
    real = socket.socket.connect

    def recording(sock: socket.socket, address: Any) -> Any:
        seen.append(address)
        assert isinstance(address, tuple) and address[0] in ("127.0.0.1", "::1"), f"connect to {address}"
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", recording)
    return seen


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/", "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data",
                                 "http://[::1]:9/", "http://[::ffff:10.0.0.1]/", "http://192.168.1.1/",
                                 "http://100.64.0.1/", "http://0.0.0.0/", "http://localhost:9/"])
async def test_web_fetch_refuses_non_public_addresses_before_connecting(ctx: ToolContext, connects: list[Any],
                                                                        url: str) -> None:
    result = json.loads(await WebFetchTool().execute(ctx, url=url))
    assert "does not reach" in result["error"] and "Settings" in result["error"]
    assert connects == []


@pytest.mark.parametrize("target", ["10.0.0.1", "169.254.169.254", "127.0.0.1:9"])
async def test_a_redirect_to_a_non_public_address_is_refused(server: str, ctx: ToolContext, connects: list[Any],
                                                             target: str) -> None:
    port = int(server.rsplit(":", 1)[1])
    tool = WebFetchTool(allowed_networks=["127.0.0.1/32"] if target != "127.0.0.1:9" else [])
    if target == "127.0.0.1:9":  # the first hop itself is refused: nothing is connected at all
        result = json.loads(await tool.execute(ctx, url=f"{server}/to/{target}"))
        assert "does not reach 127.0.0.1" in result["error"] and connects == []
        return
    result = json.loads(await tool.execute(ctx, url=f"{server}/to/{target}"))
    assert f"does not reach {target}" in result["error"]
    assert connects == [("127.0.0.1", port)]  # the first hop only


async def test_an_allowed_network_is_reached_and_a_bad_one_is_named(server: str, ctx: ToolContext) -> None:
    ok = json.loads(await WebFetchTool(allowed_networks=["127.0.0.0/8"]).execute(ctx, url=f"{server}/plain"))
    assert ok["status"] == 200
    bad = json.loads(await WebFetchTool(allowed_networks=["lan"]).execute(ctx, url=f"{server}/plain"))
    assert "'lan' is not a network" in bad["error"]


async def test_a_rebinding_name_is_checked_on_the_address_connected_to(ctx: ToolContext, connects: list[Any],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A name that resolves to a public address first and to 10.0.0.1 next cannot slip through: the
    addresses are looked up once and the checked one is connected to."""
    import socket

    answers = iter([[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.1", 80))]])
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: next(answers))
    result = json.loads(await WebFetchTool().execute(ctx, url="http://rebind.example/"))
    assert "does not reach rebind.example (10.0.0.1)" in result["error"]
    assert connects == []
