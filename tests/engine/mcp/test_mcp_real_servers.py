"""MCP servers this project did not write, installed by `python3 dev.py test`: `mcp-server-time` from the
package index (stdio) and, where npm is available, `@modelcontextprotocol/server-everything`. Also the
headless CLI with MCP servers, and nanobot 0.1.4.post4 running on a config the app wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nanobot_desktop.engine.mcp import settings
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.engine.tools.policy import ApprovalAnswer
from tests.fake_openai import write_fake_config
from tests.mcp_servers.support import (
    add_servers,
    left_processes,
    real_server,
    server_pids,
    stdio_entry,
)
from tests.reference_cli import POST4, V035, run_reference_cli


def time_entry() -> dict:
    home = real_server("time")
    return {"command": str(home / ("Scripts/mcp-server-time.exe" if os.name == "nt" else "bin/mcp-server-time")),
            "args": ["--local-timezone", "UTC"]}


def tool_messages(request) -> list[dict]:
    return [m for m in request["messages"] if m.get("role") == "tool"]


async def allow(_request):
    return ApprovalAnswer.ALLOW_ONCE


@pytest.fixture
async def engine_with(fake_openai, tmp_path):
    engines: list[Engine] = []

    async def factory(servers: dict) -> Engine:
        config_path = write_fake_config(tmp_path / "home" / ".nanobot" / "config.json", fake_openai.base_url,
                                        tmp_path / "ws")
        add_servers(config_path, servers)
        engine = Engine.open(config_path)
        engine.approvals.respond_with(allow)
        engines.append(engine)
        engine.start_mcp()
        assert await engine.mcp.wait_ready(120) == []
        return engine

    yield factory
    for engine in engines:
        await engine.shutdown()


@pytest.mark.slow
async def test_mcp_server_time_result_reaches_the_model(engine_with, fake_openai):
    engine = await engine_with({"time": time_entry()})
    assert {"mcp_time_get_current_time", "mcp_time_convert_time"} <= set(engine.tools.names())
    fake_openai.add_tool_calls([("mcp_time_get_current_time", {"timezone": "Asia/Tokyo"})])
    fake_openai.add_text("It is evening in Tokyo.")
    result = await engine.loop.process("desktop:time", "what time is it in Tokyo?")
    assert result.reply == "It is evening in Tokyo."
    [message] = tool_messages(fake_openai.requests[1])
    assert message["name"] == "mcp_time_get_current_time"
    answer = json.loads(message["content"])
    assert answer["timezone"] == "Asia/Tokyo" and answer["datetime"].endswith("+09:00")


@pytest.mark.slow
async def test_server_everything_from_npm(engine_with, fake_openai):
    home = real_server("everything")
    engine = await engine_with({"everything": {"command": str(home / "node_modules" / ".bin" / "mcp-server-everything")}})
    names = set(engine.tools.names())
    assert {"mcp_everything_echo", "mcp_everything_get-sum", "mcp_everything_get-tiny-image"} <= names
    fake_openai.add_tool_calls([("mcp_everything_echo", {"message": "hi there"}),
                                ("mcp_everything_get-sum", {"a": 2, "b": 40}),
                                ("mcp_everything_get-tiny-image", {})])
    fake_openai.add_text("done")
    assert (await engine.loop.process("desktop:e", "try them")).reply == "done"
    echo, total, image = (m["content"] for m in tool_messages(fake_openai.requests[1]))
    assert echo == "Echo: hi there" and "42" in total
    saved = [line.removeprefix("[image: ").removesuffix("]") for line in image.splitlines() if line.startswith("[image: ")]
    assert len(saved) == 1 and Path(saved[0]).read_bytes().startswith(b"\x89PNG")


def run_app_cli(args: list[str], home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NANOBOT_")}
    env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "nanobot_desktop", *args], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_headless_agent_waits_for_servers_names_failures_and_leaves_no_process(fake_openai, tmp_path):
    pid_dir = tmp_path / "pids"
    config = write_fake_config(tmp_path / "home" / ".nanobot" / "config.json", fake_openai.base_url, tmp_path / "ws")
    add_servers(config, {"t": stdio_entry(pid_dir), "gone": {"command": "nanobot-no-such-mcp-server"}})
    fake_openai.add_tool_calls([("mcp_t_echo", {"text": "from the cli"})])
    fake_openai.add_text("The server said hello.")
    done = run_app_cli(["agent", "-m", "use the echo tool", "--yes"], tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The server said hello."
    assert "MCP server 'gone' is not available: command not found: nanobot-no-such-mcp-server" in done.stderr
    assert [m["content"] for m in tool_messages(fake_openai.requests[1])] == ["echo: from the cli"]
    assert len(server_pids(pid_dir)) == 1 and left_processes(pid_dir) == []


@pytest.mark.slow
@pytest.mark.parametrize("version", [pytest.param(POST4, marks=pytest.mark.heavy), V035])  # heavy: 0.3.5 runs by default
async def test_a_config_with_mcp_servers_written_by_the_app_runs_in_the_cli(make_engine, fake_openai, version):
    engine = make_engine()
    settings.save_server(engine, "time", time_entry())
    settings.set_decision(engine, settings.server_key("time"), "allow")
    await engine.shutdown()
    written = json.loads(engine.config_path.read_text(encoding="utf-8"))
    assert written["tools"]["mcpServers"]["time"]["command"] == time_entry()["command"]
    assert "desktop" not in written and "approval" not in written["tools"]  # app-only choices: desktop.json
    fake_openai.add_tool_calls([("mcp_time_get_current_time", {"timezone": "Europe/Paris"})])
    fake_openai.add_text("Paris time noted.")
    done = run_reference_cli(version, ["agent", "-m", "what time is it in Paris?", "--no-markdown"],
                             home=engine.config_path.parent.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Paris time noted." in done.stdout
    [message] = tool_messages(fake_openai.requests[1])
    assert json.loads(message["content"])["timezone"] == "Europe/Paris"
