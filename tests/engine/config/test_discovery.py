"""Local server discovery, against fakes on free loopback ports."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from nanobot_desktop.engine.llm.discovery import (
    DEFAULT_CANDIDATES,
    LocalServer,
    discover_local_servers,
    parse_model_list,
)
from tests.fake_openai import FakeOpenAIServer


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _serve(respond):
    """An asyncio TCP server whose handler gets (reader, writer); returns (server, base_url)."""
    server = await asyncio.start_server(respond, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/v1"


def test_default_candidates_are_the_usual_local_ports() -> None:
    assert [(name, url) for name, url in DEFAULT_CANDIDATES] == [
        ("Ollama", "http://localhost:11434/v1"),
        ("LM Studio", "http://localhost:1234/v1"),
        ("llama.cpp", "http://localhost:8080/v1"),
        ("vLLM", "http://localhost:8000/v1"),
    ]


async def test_finds_a_running_server_and_skips_closed_ports(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.models = ["llama3.1:8b", "qwen2.5:7b"]
    candidates = [
        ("Nothing here", f"http://127.0.0.1:{_closed_port()}/v1"),
        ("Ollama", fake_openai.base_url + "/"),
    ]

    found = await discover_local_servers(candidates, timeout_s=2)

    assert found == [LocalServer("Ollama", fake_openai.base_url, ["llama3.1:8b", "qwen2.5:7b"])]
    assert fake_openai.model_list_requests == 1


async def test_a_server_without_models_is_still_listed(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.models = []
    assert await discover_local_servers([("Ollama", fake_openai.base_url)], timeout_s=2) == [
        LocalServer("Ollama", fake_openai.base_url, [])
    ]


async def test_servers_that_are_not_model_endpoints_are_skipped(fake_openai: FakeOpenAIServer) -> None:
    async def html_page(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\n\r\n<html></html>")
        await writer.drain()
        writer.close()

    server, html_url = await _serve(html_page)
    async with server:
        found = await discover_local_servers(
            [("Web dev server", html_url), ("Wrong path", fake_openai.base_url.removesuffix("/v1"))], timeout_s=2)
    assert found == []


async def test_a_chunked_answer_is_read(fake_openai: FakeOpenAIServer) -> None:
    payload = json.dumps({"object": "list", "data": [{"id": "qwen"}, {"id": "phi"}]}).encode()
    first, second = payload[:10], payload[10:]

    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for part in (first, second):
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    server, url = await _serve(chunked)
    async with server:
        found = await discover_local_servers([("llama.cpp", url)], timeout_s=2)
    assert found == [LocalServer("llama.cpp", url, ["qwen", "phi"])]


async def test_a_silent_server_is_given_up_on_after_the_timeout(fake_openai: FakeOpenAIServer) -> None:
    release = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await release.wait()
        writer.close()

    server, silent_url = await _serve(silent)
    async with server:
        found = await discover_local_servers([("Silent", silent_url), ("vLLM", fake_openai.base_url)], timeout_s=0.3)
        release.set()
    assert [s.name for s in found] == ["vLLM"]


@pytest.mark.parametrize("body, expected", [
    (b'{"object": "list", "data": [{"id": "a"}, {"id": "b"}]}', ["a", "b"]),
    (b'{"data": []}', []),
    (b'{"data": [{"id": "a"}, {"name": "no id"}, "junk"]}', ["a"]),
    (b'{"models": [{"name": "a"}]}', None),  # Ollama's native /api/tags shape, not OpenAI's
    (b"[]", None),
    (b"<html></html>", None),
])
def test_parse_model_list(body: bytes, expected: list[str] | None) -> None:
    assert parse_model_list(body) == expected
