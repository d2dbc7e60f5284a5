"""A minimal, fast OpenAI-compatible streaming endpoint for timing the engine (not for tests).

    python bench/fast_endpoint.py "reply text"

tests/fake_openai.py writes each SSE chunk separately; on loopback that meets Nagle's algorithm and
delayed ACKs, and a zero-latency call then takes tens of milliseconds with jitter larger than the
overhead being measured. Here the whole streamed answer (role chunk, one chunk per word, finish
chunk, usage chunk, [DONE]) is precomputed and sent in one write on a TCP_NODELAY socket, over
keep-alive HTTP/1.1. Prints its base URL, serves until stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys


def sse_body(text: str, model: str = "fake-model") -> bytes:
    def event(delta: dict | None, finish: str | None = None, usage: dict | None = None) -> bytes:
        payload = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": model,
                   "system_fingerprint": None,
                   "choices": [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None,
                                                         "finish_reason": finish}]}
        if usage is not None:
            payload["usage"] = usage
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    parts = [event({"role": "assistant", "content": ""})]
    parts += [event({"content": word}) for word in re.findall(r"\s*\S+\s*", text)]
    parts.append(event({}, "stop"))
    parts.append(event(None, usage={"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def http_response(body: bytes) -> bytes:
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {len(body)}\r\n"
            "Connection: keep-alive\r\n\r\n").encode()
    return head + body


async def _serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, response: bytes) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            match = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
            if match:
                await reader.readexactly(int(match.group(1)))
            writer.write(response)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(text: str) -> None:
    response = http_response(sse_body(text))
    server = await asyncio.start_server(lambda r, w: _serve_connection(r, w, response), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    server.close()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1] if len(sys.argv) > 1 else "Hello."))
