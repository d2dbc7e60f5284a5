"""Helpers for the MCP tests: engines whose config names MCP servers, the test server's command lines,
the real servers `dev.py test` installs, and checks that no server process is left."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

SDK_SERVER = Path(__file__).with_name("sdk_server.py")


def stdio_entry(pid_dir: Path, **extra: Any) -> dict[str, Any]:
    """Config entry of the test server over stdio (no `type`: inferred from `command`, as the CLI does)."""
    return {"command": sys.executable, "args": [str(SDK_SERVER), "stdio", str(pid_dir)], **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_http_server(pid_dir: Path, mode: str = "http") -> tuple[subprocess.Popen[bytes], str]:
    """The test server over streamable HTTP (or SSE) on 127.0.0.1, run by the test; returns (process, url)
    once it answers."""
    port = free_port()
    process = subprocess.Popen([sys.executable, str(SDK_SERVER), mode, str(port), str(pid_dir)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process, f"http://127.0.0.1:{port}/{'sse' if mode == 'sse' else 'mcp'}"
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("the HTTP test server exited at start") from None
            time.sleep(0.05)  # polling a port for readiness, not a timed assertion
    process.kill()
    raise RuntimeError("the HTTP test server did not start listening")


def alive(pid: int) -> bool:
    """Running (a zombie that nobody reaped counts as left behind too)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:" in status


def server_pids(pid_dir: Path) -> list[int]:
    return sorted(int(p.name) for p in pid_dir.iterdir()) if pid_dir.exists() else []


def left_processes(pid_dir: Path) -> list[int]:
    return [pid for pid in server_pids(pid_dir) if alive(pid)]


def add_servers(config_path: Path, servers: dict[str, Any]) -> None:
    data = json.loads(config_path.read_text(encoding="utf-8"))
    data.setdefault("tools", {})["mcpServers"] = servers
    config_path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def real_server(name: str) -> Path:
    """Folder of a real MCP server installed by `python3 dev.py test`, or skip saying why it is missing."""
    root = os.environ.get("NANOBOT_DESKTOP_MCP_SERVERS")
    if not root:
        pytest.skip("the real MCP servers are installed by `python3 dev.py test` (run the suite that way)")
    home = Path(root) / name
    if not (home / ".installed").exists():
        reason = "npm is not available" if name == "everything" and not _which("npm") else "its install failed"
        pytest.skip(f"MCP server '{name}' is not installed in {home} ({reason}; see the start of the test output)")
    return home


def _which(command: str) -> str | None:
    import shutil

    return shutil.which(command)
