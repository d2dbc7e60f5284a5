"""A scripted fake of the OpenAI chat-completions API on 127.0.0.1, for engine and GUI tests.

It runs a real HTTP/1.1 server in its own daemon thread, so it works the same under plain asyncio,
pytest-asyncio and a qasync loop: nothing here touches an event loop.

Each test scripts the answers it wants, in order:

    server.add_text("Hello world")
    server.add_tool_calls([("read_file", {"path": "a.txt"})])
    server.add_error(429, "Slow down", retry_after=1)

Every POST /v1/chat/completions takes the next scripted reply (FIFO). When the script is empty the
server answers 500 "fake server: no scripted response", so a test that forgot a reply fails loudly.
Endpoint faults: `add_drop` (cut mid-stream), `add_stall` (no byte at all), `add_html` (a 200 HTML
page), `add_empty_choices`, `add_invalid_chunk` (a `data:` line that is not JSON), `add_trickle`.
Local servers' other doors: `model_fields` adds fields to a model's entry in GET /v1/models (vLLM's
`max_model_len`), `routes` answers other paths with JSON ({("GET", "/props"): {...}}: llama.cpp's
/props, LM Studio's /api/v0/models/<id>, Ollama's POST /api/show); `add_empty_stream` is llama.cpp's
answer to a streamed request that does not fit (200, text/event-stream, no data).
`respond_with(fn)` lets a test decide from the request body instead (fn returns a reply, or None to
fall back to the script). `server.requests` holds every chat request body (a dict, with `.headers`).

The benchmarks use it too (bench/fake_server.py runs it in a process of its own):
`FakeOpenAIServer(one_write=True)` sends a stream with no delay in one write after its headers, on
TCP_NODELAY connections (no chunk held back by Nagle's algorithm waiting for a delayed ACK, tens of
milliseconds on loopback), for timing what happens around a zero-latency call.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import select
import socket
import socketserver
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

_call_ids = itertools.count(1)
_completion_ids = itertools.count(1)

NO_SCRIPT_MESSAGE = "fake server: no scripted response"


# --------------------------------------------------------------------------------------------------
# Scripted replies
# --------------------------------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer: either an HTTP error, or a stream of `choices[0].delta` dicts."""

    deltas: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = "stop"
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens); None = estimated
    # (cached read, cache write) tokens, sent as OpenAI's prompt_tokens_details.cached_tokens and
    # OpenRouter's .cache_write_tokens (None: no details, as before); send_usage=False: no usage at all
    cache: tuple[int, int | None] | None = None
    send_usage: bool = True
    delay_s: float = 0.0  # pause before each chunk (for GUI streaming tests)
    status: int = 200
    error: dict[str, Any] | None = None  # OpenAI's error object, sent as {"error": ...}
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # after the deltas, block until the client goes away or the server stops
    drop: bool = False  # after the deltas, cut the connection without finishing the stream
    # Malformed replies (endpoint faults): see the *_reply helpers below.
    stall: bool = False  # accept the request, then send nothing at all (not even headers)
    html: str | None = None  # answer 200 with this text/html page instead of a stream
    empty_choices: bool = False  # stream chunks whose `choices` is [] (and no usage), then [DONE]
    bad_chunk: str | None = None  # after the deltas, send this as a `data:` line (not JSON) and stop
    empty_stream: bool = False  # 200 text/event-stream with no data at all (llama.cpp's streamed overflow)


def _split_text(text: str, chunk_size: int | None) -> list[str]:
    if not text:
        return []
    if chunk_size is None:  # word by word, keeping the spaces, like most models stream
        return re.findall(r"\s*\S+\s*|\s+", text)
    return [text[i : i + chunk_size] for i in range(0, len(text), chunk_size)]


def text_reply(
    text: str,
    chunk_size: int | None = None,
    delay_s: float = 0.0,
    finish_reason: str = "stop",
    usage: tuple[int, int] | None = None,
    cache: tuple[int, int | None] | None = None,
) -> Reply:
    """A plain streamed answer; `chunk_size=None` streams word by word."""
    deltas: list[dict[str, Any]] = [{"content": piece} for piece in _split_text(text, chunk_size)]
    return Reply(deltas=deltas, finish_reason=finish_reason, usage=usage, delay_s=delay_s, cache=cache)


def _tool_call_deltas(index: int, call_id: str, name: str, arguments: str, split: bool) -> list[dict]:
    """Like OpenAI: id, type and name come in the first delta, then argument fragments by index."""
    first = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    if not split:
        first["function"]["arguments"] = arguments
        return [{"tool_calls": [first]}]
    pieces = [arguments[i : i + 7] for i in range(0, len(arguments), 7)]
    deltas = [{"tool_calls": [first]}]
    deltas += [{"tool_calls": [{"index": index, "function": {"arguments": p}}]} for p in pieces]
    return deltas


def tool_calls_reply(
    calls: Iterable[tuple[Any, ...]],
    content: str | None = None,
    split_arguments: bool = True,
    usage: tuple[int, int] | None = None,
    cache: tuple[int, int | None] | None = None,
) -> Reply:
    """One or more (parallel) tool calls: items are (name, args_dict) or (name, args_dict, call_id)."""
    deltas: list[dict[str, Any]] = [{"content": p} for p in _split_text(content or "", None)]
    for index, call in enumerate(calls):
        name, arguments = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"call_{next(_call_ids):05d}"
        raw = json.dumps(arguments, ensure_ascii=False)
        deltas += _tool_call_deltas(index, call_id, name, raw, split_arguments)
    return Reply(deltas=deltas, finish_reason="tool_calls", usage=usage, cache=cache)


def raw_tool_call_reply(name: str, raw_arguments: str, call_id: str | None = None) -> Reply:
    """A tool call whose argument string is sent verbatim (for malformed JSON)."""
    call_id = call_id or f"call_{next(_call_ids):05d}"
    return Reply(deltas=_tool_call_deltas(0, call_id, name, raw_arguments, True), finish_reason="tool_calls")


def reasoning_reply(reasoning: str, then_text: str = "", chunk_size: int | None = None) -> Reply:
    """`reasoning_content` deltas (DeepSeek/Kimi/vLLM style), then the visible answer."""
    deltas = [{"reasoning_content": p} for p in _split_text(reasoning, chunk_size)]
    deltas += [{"content": p} for p in _split_text(then_text, chunk_size)]
    return Reply(deltas=deltas)


_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "permission_error",
                404: "invalid_request_error", 429: "requests"}


def error_reply(
    status: int,
    message: str,
    code: str | None = None,
    *,
    type: str | None = None,  # noqa: A002 - OpenAI's field name
    param: str | None = None,
    retry_after: float | None = None,
) -> Reply:
    """An HTTP error with OpenAI's body shape {"error": {message, type, param, code}}."""
    error = {
        "message": message,
        "type": type or _ERROR_TYPES.get(status, "server_error"),
        "param": param,
        "code": code,
    }
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return Reply(status=status, error=error, headers=headers, finish_reason=None)


def hang_reply(text: str = "") -> Reply:
    """Start streaming (optionally some text), then block until the client disconnects."""
    return Reply(deltas=[{"content": p} for p in _split_text(text, None)], hang=True, finish_reason=None)


def drop_reply(text: str = "") -> Reply:
    """Stream some text, then cut the connection mid-stream (no finish chunk, no [DONE])."""
    return Reply(deltas=[{"content": p} for p in _split_text(text, None)], drop=True, finish_reason=None)


def stall_reply() -> Reply:
    """Accept the request and send nothing, not even the response headers (a wedged server)."""
    return Reply(stall=True, finish_reason=None)


def html_reply(page: str = "<!DOCTYPE html><html><head><title>Welcome</title></head>"
                           "<body><h1>It works!</h1></body></html>") -> Reply:
    """A 200 answer that is an HTML page (a web server or login portal at the URL, not an API)."""
    return Reply(html=page, finish_reason=None)


def empty_choices_reply(chunks: int = 3) -> Reply:
    """A well-formed stream whose chunks all have `choices: []` — an answer with nothing in it."""
    return Reply(deltas=[{}] * chunks, empty_choices=True, finish_reason=None)


def invalid_chunk_reply(text: str = "", chunk: str = '{"choices": [{"delta": {"content": "x"') -> Reply:
    """Stream `text`, then a `data:` line that is not JSON, then end the stream."""
    return Reply(deltas=[{"content": p} for p in _split_text(text, None)], bad_chunk=chunk, finish_reason=None)


def trickle_reply(text: str, every_s: float) -> Reply:
    """One character every `every_s` seconds (a throttled or dying stream)."""
    return text_reply(text, chunk_size=1, delay_s=every_s)


class RecordedRequest(dict):
    """A received JSON body (use it as a dict) plus `.headers` (lower-case keys), `.path`, `.method`."""

    def __init__(self, body: dict[str, Any], headers: dict[str, str], path: str, method: str) -> None:
        super().__init__(body)
        self.headers = headers
        self.path = path
        self.method = method


# --------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------


class _ClientGone(Exception):
    """The client closed the connection while we were writing to it."""


def stop_serving(httpd: socketserver.BaseServer) -> None:
    """`httpd.shutdown()` without waiting for serve_forever's next look (every 0.05 s here, 0.5 s by
    default; ~27 ms a stop on average, in about a thousand tests): a connection of our own wakes it at
    once. It sends nothing, so the handler it gets sees the end of the stream and serves no request."""
    stopper = threading.Thread(target=httpd.shutdown, name="stop-serving", daemon=True)
    stopper.start()
    host, port = httpd.server_address[:2]  # an IPv4 server: (host, port)
    while stopper.is_alive():
        with contextlib.suppress(OSError), socket.create_connection((str(host), int(port)), timeout=1):
            pass
        stopper.join(0.01)


class FakeOpenAIServer:
    """The fake endpoint. Use as a context manager, or start()/stop()."""

    def __init__(self, models: Iterable[str] = ("fake-model",), *, one_write: bool = False) -> None:
        self.models: list[str] = list(models)
        self.one_write = one_write  # a stream without delays goes out in one write (the benchmarks)
        self.known_models: set[str] | None = None  # when set, other models get 404 model_not_found
        self.require_api_key: str | None = None  # when set, other Bearer tokens get 401
        self.model_fields: dict[str, dict[str, Any]] = {}  # model id -> extra fields of its /v1/models entry
        self.routes: dict[tuple[str, str], Any] = {}  # (method, path) -> JSON answered with 200
        self.route_requests: list[tuple[str, str]] = []  # (method, path) of every request to `routes`' doors
        self._lock = threading.Lock()
        self._script: list[tuple[Reply, bool]] = []  # (reply, forever)
        self._responder: Callable[[dict[str, Any]], Reply | None] | None = None
        self._requests: list[RecordedRequest] = []
        self._model_list_requests = 0
        self._stopping = threading.Event()
        self._disconnected = threading.Event()
        self._disconnects = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------------------

    def start(self) -> "FakeOpenAIServer":
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging streams are released and open connections are closed."""
        if self._httpd is None:
            return
        self._stopping.set()
        stop_serving(self._httpd)
        self._httpd.close_all_connections()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ---- scripting -------------------------------------------------------------------------------

    def add(self, reply: Reply, times: int | None = 1) -> None:
        """Queue a reply `times` times; `times=None` repeats it forever (it never leaves the queue)."""
        with self._lock:
            if times is None:
                self._script.append((reply, True))
            else:
                self._script.extend((reply, False) for _ in range(times))

    def add_text(self, text: str, chunk_size: int | None = None, delay_s: float = 0.0,
                 finish_reason: str = "stop", usage: tuple[int, int] | None = None,
                 cache: tuple[int, int | None] | None = None) -> None:
        self.add(text_reply(text, chunk_size, delay_s, finish_reason, usage, cache))

    def add_tool_calls(self, calls: Iterable[tuple[Any, ...]], content: str | None = None,
                       split_arguments: bool = True, usage: tuple[int, int] | None = None,
                       cache: tuple[int, int | None] | None = None) -> None:
        self.add(tool_calls_reply(calls, content, split_arguments, usage, cache))

    def add_raw_tool_call(self, name: str, raw_arguments: str, call_id: str | None = None) -> None:
        self.add(raw_tool_call_reply(name, raw_arguments, call_id))

    def add_reasoning(self, reasoning: str, then_text: str = "", chunk_size: int | None = None) -> None:
        self.add(reasoning_reply(reasoning, then_text, chunk_size))

    def add_error(self, status: int, message: str, code: str | None = None, times: int | None = 1, *,
                  type: str | None = None, param: str | None = None,  # noqa: A002
                  retry_after: float | None = None) -> None:
        self.add(error_reply(status, message, code, type=type, param=param, retry_after=retry_after), times)

    def add_hang(self, text: str = "") -> None:
        self.add(hang_reply(text))

    def add_drop(self, text: str = "") -> None:
        self.add(drop_reply(text))

    def add_stall(self) -> None:
        self.add(stall_reply())

    def add_html(self, page: str | None = None) -> None:
        self.add(html_reply() if page is None else html_reply(page))

    def add_empty_choices(self) -> None:
        self.add(empty_choices_reply())

    def add_invalid_chunk(self, text: str = "") -> None:
        self.add(invalid_chunk_reply(text))

    def add_empty_stream(self) -> None:
        self.add(Reply(empty_stream=True))

    def add_trickle(self, text: str, every_s: float) -> None:
        self.add(trickle_reply(text, every_s))

    def respond_with(self, fn: Callable[[dict[str, Any]], Reply | None] | None) -> None:
        """Decide replies from the request body; fn returning None falls back to the FIFO script."""
        with self._lock:
            self._responder = fn

    @property
    def pending(self) -> int:
        """How many scripted replies have not been used (a forever reply counts once)."""
        with self._lock:
            return len(self._script)

    # ---- what was received -----------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every chat-completions request body received so far."""
        with self._lock:
            return list(self._requests)

    @property
    def model_list_requests(self) -> int:
        with self._lock:
            return self._model_list_requests

    @property
    def disconnects(self) -> int:
        """How many streams ended because the client went away."""
        with self._lock:
            return self._disconnects

    def wait_for_disconnect(self, timeout: float = 5.0) -> bool:
        """Block (in a thread; use asyncio.to_thread from async code) until a client dropped a stream."""
        return self._disconnected.wait(timeout)

    # ---- used by the handler ---------------------------------------------------------------------

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            responder = self._responder
        if responder is not None:
            chosen = responder(body)
            if chosen is not None:
                return chosen
        with self._lock:
            if not self._script:
                return error_reply(500, NO_SCRIPT_MESSAGE, "fake_unscripted")
            reply, forever = self._script[0]
            if not forever:
                self._script.pop(0)
            return reply

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _count_model_list(self) -> None:
        with self._lock:
            self._model_list_requests += 1

    def _note_disconnect(self) -> None:
        with self._lock:
            self._disconnects += 1
        self._disconnected.set()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type, fake: FakeOpenAIServer) -> None:
        self.fake = fake
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_all_connections(self) -> None:
        """Wake handler threads blocked on idle keep-alive connections so stop() never wedges."""
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client vanishing mid-response is normal in tests; do not print tracebacks


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    _held: list[bytes] | None = None  # the chunks of a one-write stream, until it ends

    def setup(self) -> None:
        # TCP_NODELAY for the benchmarks' one-write server only: the tests keep the timing they were
        # written against (with it, tests/gui/settings/test_providers.py's two-provider test times out).
        self.disable_nagle_algorithm = self.server.fake.one_write
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    @property
    def fake(self) -> FakeOpenAIServer:
        return self.server.fake

    # ---- routing ---------------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self._authorized():
            return
        if self.path.rstrip("/") == "/v1/models":
            self.fake._count_model_list()
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake", **self.fake.model_fields.get(m, {})}
                    for m in self.fake.models]
            self._send_json(200, {"object": "list", "data": data})
        elif self._routed("GET"):
            return
        else:
            self._send_json(404, _error_body(f"fake server: unknown path {self.path}", "unknown_url"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != "/v1/chat/completions":
            if self._routed("POST"):
                return
            self._send_json(404, _error_body(f"fake server: unknown path {self.path}", "unknown_url"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, _error_body("We could not parse the JSON body of your request.", None))
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fake._record(RecordedRequest(body, headers, self.path, "POST"))
        if not self._authorized():
            return
        model = body.get("model", "")
        known = self.fake.known_models
        if known is not None and model not in known:
            message = f"The model `{model}` does not exist or you do not have access to it."
            self._send_json(404, _error_body(message, "model_not_found"))
            return
        reply = self.fake._next_reply(body)
        if reply.stall:
            self._fail_without_answer(Reply(hang=True))
        elif reply.html is not None:
            self._send_html(reply.html)
        elif reply.status != 200:
            self._send_json(reply.status, {"error": reply.error}, reply.headers)
        elif body.get("stream"):
            self._stream(body, reply)
        elif reply.hang or reply.drop:
            self._fail_without_answer(reply)
        else:
            self._send_json(200, _completion(body, reply))

    def _routed(self, method: str) -> bool:
        """Answer a path the test gave in `routes`; False when it gave none for this path."""
        with self.fake._lock:
            self.fake.route_requests.append((method, self.path))
        key = (method, self.path.rstrip("/"))
        if key not in self.fake.routes:
            return False
        self._send_json(200, self.fake.routes[key])
        return True

    def _authorized(self) -> bool:
        wanted = self.fake.require_api_key
        if wanted is None:
            return True
        given = self.headers.get("Authorization", "")
        if given == f"Bearer {wanted}":
            return True
        token = given.removeprefix("Bearer ")
        masked = (token[:3] + "*" * 4 + token[-4:]) if len(token) > 8 else "****"
        message = (f"Incorrect API key provided: {masked}. "
                   "You can find your API key at https://platform.openai.com/account/api-keys.")
        self._send_json(401, _error_body(message, "invalid_api_key"))
        return False

    # ---- responses -------------------------------------------------------------------------------

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_html(self, page: str) -> None:
        data = page.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        completion_id = f"chatcmpl-fake-{next(_completion_ids)}"
        model = body.get("model", "")
        # one write: a stream that ends by itself without pauses (not a drop, hang or cut-off)
        whole = not (reply.delay_s or reply.drop or reply.hang or reply.empty_stream)
        self._held = [] if self.fake.one_write and whole else None
        try:
            try:
                if reply.empty_stream:  # and the connection closed after it, as llama.cpp's server does
                    self._write_chunk(b"")
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if reply.empty_choices:
                    for _ in reply.deltas:
                        self._event(_chunk(completion_id, model, None))
                    self._write_chunk(b"data: [DONE]\n\n")
                    self._write_chunk(b"")
                    return
                self._event(_chunk(completion_id, model, {"role": "assistant", "content": ""}))
                for delta in reply.deltas:
                    if reply.delay_s and self.fake._stopping.wait(reply.delay_s):
                        return
                    self._event(_chunk(completion_id, model, delta))
                if reply.bad_chunk is not None:
                    self._write_chunk(b"data: " + reply.bad_chunk.encode() + b"\n\n")
                    self._write_chunk(b"")
                    return
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if reply.hang:
                    self._hang()
                    return
                self._event(_chunk(completion_id, model, {}, reply.finish_reason))
                if (body.get("stream_options") or {}).get("include_usage") and reply.send_usage:
                    usage_chunk = _chunk(completion_id, model, None)
                    usage_chunk["usage"] = _usage(body, reply)
                    self._event(usage_chunk)
                self._write_chunk(b"data: [DONE]\n\n")
                self._write_chunk(b"")  # end of the chunked body
            finally:
                self._release()  # what a one-write stream held back (nothing when sent already)
        except _ClientGone:
            self.close_connection = True
            self.fake._note_disconnect()

    def _fail_without_answer(self, reply: Reply) -> None:
        """The non-streamed form of hang/drop: send nothing, then wait or cut the connection."""
        self.close_connection = True
        try:
            if reply.hang:
                self._hang()
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
        except _ClientGone:
            self.fake._note_disconnect()

    def _hang(self) -> None:
        """Hold the stream open; return when the client disconnects (noted) or the server stops."""
        sock = self.connection
        while not self.fake._stopping.is_set():
            readable, _, _ = select.select([sock], [], [], 0.05)
            if not readable:
                continue
            try:
                gone = sock.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                gone = True
            if gone:
                raise _ClientGone()
            self.fake._stopping.wait(0.05)  # unexpected bytes mid-response: keep waiting, do not spin
        self.close_connection = True

    def _event(self, payload: dict[str, Any]) -> None:
        self._write_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        framed = b"%x\r\n%s\r\n" % (len(data), data)
        if self._held is not None:
            self._held.append(framed)
            return
        self._send(framed)

    def _release(self) -> None:
        """Send what a one-write stream held back, in one write."""
        held, self._held = self._held, None
        if held:
            self._send(b"".join(held))

    def _send(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone() from exc


def _error_body(message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}


def _chunk(completion_id: str, model: str, delta: dict[str, Any] | None,
           finish_reason: str | None = None) -> dict[str, Any]:
    choices = [] if delta is None else [
        {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    ]
    return {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "system_fingerprint": None, "choices": choices}


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    if reply.usage is not None:
        prompt, completion = reply.usage
    else:  # a rough, deterministic estimate (4 characters per token)
        prompt = len(json.dumps(body.get("messages", []))) // 4 + 1
        completion = len(json.dumps(reply.deltas)) // 4 + 1
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if reply.cache is not None:
        read, write = reply.cache
        usage["prompt_tokens_details"] = {"cached_tokens": read, **({} if write is None else {"cache_write_tokens": write})}
    return usage


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The non-streamed form of a reply: all deltas merged into one message."""
    content = "".join(d.get("content", "") for d in reply.deltas) or None
    reasoning = "".join(d.get("reasoning_content", "") for d in reply.deltas) or None
    calls: dict[int, dict[str, Any]] = {}
    for delta in reply.deltas:
        for part in delta.get("tool_calls", []):
            entry = calls.setdefault(part["index"], {"id": "", "type": "function",
                                                     "function": {"name": "", "arguments": ""}})
            entry["id"] = part.get("id", entry["id"])
            fn = part.get("function", {})
            entry["function"]["name"] += fn.get("name", "")
            entry["function"]["arguments"] += fn.get("arguments", "")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    if reasoning:
        message["reasoning_content"] = reasoning
    return {"id": f"chatcmpl-fake-{next(_completion_ids)}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason or "stop"}],
            "usage": _usage(body, reply)}


def write_fake_config(path: Any, base_url: str, workspace: Any, *, api_key: str = "sk-test",
                      restrict_to_workspace: bool = False, **agent_defaults: Any) -> Any:
    """A camelCase config.json whose `custom` provider points at a fake endpoint (heartbeat off).

    Shared by the tests and the benchmarks, so both exercise the same kind of config.
    """
    defaults = {"workspace": str(workspace), "model": "fake-model", "provider": "custom",
                "memoryWindow": 100, "maxToolIterations": 40}
    defaults.update(agent_defaults)
    config = {
        "agents": {"defaults": defaults},
        "providers": {"custom": {"apiKey": api_key, "apiBase": base_url}},
        "gateway": {"heartbeat": {"enabled": False, "intervalS": 1800}},
        "tools": {"exec": {"timeout": 60}, "restrictToWorkspace": restrict_to_workspace},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path

