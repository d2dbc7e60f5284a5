"""Find OpenAI-compatible model servers running on this machine, for first-run setup.

Probes GET {base_url}/models on the usual local ports, all at once, each with a short timeout.
It uses a tiny HTTP/1.1 client on asyncio streams rather than the openai SDK or httpx, because
onboarding should not pay their import cost to learn that nothing listens on a port.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit

DEFAULT_CANDIDATES: tuple[tuple[str, str], ...] = (
    ("Ollama", "http://localhost:11434/v1"),
    ("LM Studio", "http://localhost:1234/v1"),
    ("llama.cpp", "http://localhost:8080/v1"),
    ("vLLM", "http://localhost:8000/v1"),
)
_MAX_BODY = 4 * 1024 * 1024  # a model list is small; anything bigger is not one


@dataclass
class LocalServer:
    name: str
    base_url: str
    models: list[str] = field(default_factory=list)


async def discover_local_servers(
    candidates: tuple[tuple[str, str], ...] | list[tuple[str, str]] = DEFAULT_CANDIDATES,
    timeout_s: float = 0.5,
) -> list[LocalServer]:
    """The candidates (name, base_url) that answered with an OpenAI-style model list, in candidate
    order. A server with no models yet (e.g. Ollama before `ollama pull`) is still listed."""
    results = await asyncio.gather(*(_probe(name, url, timeout_s) for name, url in candidates))
    return [server for server in results if server is not None]


async def _probe(name: str, base_url: str, timeout_s: float) -> LocalServer | None:
    try:
        status, body = await asyncio.wait_for(_http_get(base_url.rstrip("/") + "/models"), timeout_s)
    except (TimeoutError, OSError, ValueError, asyncio.IncompleteReadError):
        return None
    if status != 200:
        return None
    models = parse_model_list(body)
    return None if models is None else LocalServer(name=name, base_url=base_url.rstrip("/"), models=models)


def parse_model_list(body: bytes) -> list[str] | None:
    """Model ids from {"object": "list", "data": [{"id": ...}]}; None when the body is not that."""
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return [item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)]


async def _http_get(url: str) -> tuple[int, bytes]:
    """GET over plain HTTP/1.1 with Connection: close; handles Content-Length and chunked bodies."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"only http:// URLs can be probed: {url}")
    port = parts.port or 80
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    reader, writer = await asyncio.open_connection(parts.hostname, port)
    try:
        host = parts.hostname if port == 80 else f"{parts.hostname}:{port}"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\n"
                     f"Connection: close\r\n\r\n".encode("ascii"))
        await writer.drain()
        status_line = await reader.readline()
        fields = status_line.decode("latin-1").split()
        if len(fields) < 2 or not fields[0].startswith("HTTP/") or not fields[1].isdigit():
            raise ValueError("not an HTTP response")
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        elif "content-length" in headers:
            length = int(headers["content-length"])
            if length > _MAX_BODY:
                raise ValueError("body too large")
            body = await reader.readexactly(length)
        else:
            body = await reader.read(_MAX_BODY)
        return int(fields[1]), body
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readline()
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readline()  # the CRLF after each chunk
        if len(body) > _MAX_BODY:
            raise ValueError("body too large")
