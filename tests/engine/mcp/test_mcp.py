"""MCP servers through the real agent loop: a server written here on the official SDK (stdio and
streamable HTTP on 127.0.0.1) and the loopback fake endpoint. Every test ends with no server process left."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nanobot_desktop.engine import events as ev
from nanobot_desktop.engine.mcp import MAX_RESTARTS, McpServersChanged
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.engine.tools.policy import ApprovalAnswer, ApprovalRequest
from tests.fake_openai import write_fake_config
from tests.mcp_servers.support import (
    add_servers,
    left_processes,
    server_pids,
    start_http_server,
    stdio_entry,
)


@pytest.fixture
def pid_dir(tmp_path: Path) -> Path:
    return tmp_path / "pids"


@pytest.fixture
async def mcp_engine(fake_openai, tmp_path, pid_dir):
    """Start an engine whose config has the given MCP servers; asks are answered "allow once" and recorded."""
    engines: list[Engine] = []

    async def factory(servers: dict, *, wait: bool = True) -> Engine:
        config_path = write_fake_config(tmp_path / "home" / ".nanobot" / "config.json", fake_openai.base_url,
                                        tmp_path / "ws")
        add_servers(config_path, servers)
        engine = Engine.open(config_path)
        engine.asked = []  # type: ignore[attr-defined]

        async def approve(request: ApprovalRequest) -> ApprovalAnswer:
            engine.asked.append(request)  # type: ignore[attr-defined]
            return ApprovalAnswer.ALLOW_ONCE

        engine.approvals.respond_with(approve)
        engines.append(engine)
        engine.start_mcp()
        if wait:
            await engine.mcp.wait_ready(60)
        return engine

    yield factory
    for engine in engines:
        await engine.shutdown()
    assert left_processes(pid_dir) == []


def tool_results(request) -> list[str]:
    return [m["content"] for m in request["messages"] if m.get("role") == "tool"]


async def test_stdio_server_tools_are_called_through_the_loop(mcp_engine, fake_openai, pid_dir):
    engine = await mcp_engine({"t": stdio_entry(pid_dir)})
    status = engine.mcp.status("t")
    assert status.state == "ready" and status.summary == "ready (7 tools)"
    assert {"mcp_t_echo", "mcp_t_slow", "mcp_t_image"} <= set(engine.tools.names())
    definition = next(d for d in engine.tools.get_definitions() if d["function"]["name"] == "mcp_t_echo")
    assert definition["function"]["description"] == "Return the text unchanged."
    assert definition["function"]["parameters"]["required"] == ["text"]
    seen: list[ev.Event] = []
    engine.bus.subscribe(seen.append)
    fake_openai.add_tool_calls([("mcp_t_echo", {"text": "hello"})])
    fake_openai.add_text("done")
    result = await engine.loop.process("desktop:a", "say hello")
    assert result.reply == "done"
    assert tool_results(fake_openai.requests[1]) == ["echo: hello"]
    # asked first (MCP tools default to ask), naming the server, the tool and the arguments
    [request] = engine.asked
    assert (request.tool, request.origin, request.arguments) == ("mcp_t_echo", "MCP server 't'", {"text": "hello"})
    finished = [e for e in seen if isinstance(e, ev.ToolCallFinished)]
    assert finished[0].origin == "MCP server 't'" and finished[0].status == "ok"
    assert len(server_pids(pid_dir)) == 1


async def test_a_call_past_its_timeout_fails_and_the_next_turn_works(mcp_engine, fake_openai, pid_dir, tmp_path):
    engine = await mcp_engine({"t": stdio_entry(pid_dir, toolTimeout=1)})
    marker = tmp_path / "cancelled-on-the-server"
    fake_openai.add_tool_calls([("mcp_t_slow", {"seconds": 30, "marker": str(marker)})])
    fake_openai.add_text("gave up")
    assert (await engine.loop.process("desktop:a", "wait")).reply == "gave up"
    [slow_result] = tool_results(fake_openai.requests[1])
    assert slow_result.startswith("Error: MCP tool 'slow' of server 't' timed out after 1s")
    while not marker.exists():  # noqa: ASYNC110 - the server writes it when notifications/cancelled arrives
        await asyncio.sleep(0.05)
    fake_openai.add_tool_calls([("mcp_t_echo", {"text": "still here"})])
    fake_openai.add_text("ok")
    assert (await engine.loop.process("desktop:a", "again")).reply == "ok"
    assert tool_results(fake_openai.requests[3])[-1] == "echo: still here"


async def test_a_crashed_server_is_reported_and_restarted_on_the_next_call(mcp_engine, fake_openai, pid_dir):
    engine = await mcp_engine({"t": stdio_entry(pid_dir)})
    fake_openai.add_tool_calls([("mcp_t_crash", {})])
    fake_openai.add_text("it crashed")
    assert (await engine.loop.process("desktop:a", "crash it")).reply == "it crashed"
    [crash_result] = tool_results(fake_openai.requests[1])
    assert "stopped while running 'crash'" in crash_result and "about to crash on purpose" in crash_result
    assert engine.mcp.status("t").state == "failed"
    assert "mcp_t_echo" in engine.tools.names()  # kept, so the next call can restart the server
    first_pid = server_pids(pid_dir)
    fake_openai.add_tool_calls([("mcp_t_echo", {"text": "back"})])
    fake_openai.add_text("fine")
    assert (await engine.loop.process("desktop:a", "again")).reply == "fine"
    assert tool_results(fake_openai.requests[3])[-1] == "echo: back"
    assert engine.mcp.status("t").state == "ready"
    assert len(server_pids(pid_dir)) == 2 and left_processes(pid_dir) != first_pid


async def test_restarts_are_bounded(mcp_engine, fake_openai, pid_dir, tmp_path):
    flag = tmp_path / "die"
    script = tmp_path / "flaky.py"
    # a server that starts fine once, then exits at once on every later start
    script.write_text(
        "import os, runpy, sys, pathlib\n"
        f"flag = pathlib.Path({str(flag)!r})\n"
        "if flag.exists():\n    print('refusing to start', file=sys.stderr); sys.exit(2)\n"
        "flag.write_text('x')\n"
        f"sys.argv = ['sdk_server.py', 'stdio', {str(pid_dir)!r}]\n"
        f"runpy.run_path({str(Path(__file__).parents[2] / 'mcp_servers' / 'sdk_server.py')!r}, run_name='__main__')\n")
    import sys

    engine = await mcp_engine({"f": {"command": sys.executable, "args": [str(script)]}})
    assert engine.mcp.status("f").state == "ready"
    for _ in range(MAX_RESTARTS + 2):
        fake_openai.add_tool_calls([("mcp_f_crash" if _ == 0 else "mcp_f_echo", {"text": "x"} if _ else {})])
        fake_openai.add_text("next")
        await engine.loop.process("desktop:a", "go")
    results = [tool_results(r)[-1] for r in fake_openai.requests if r["messages"][-1].get("role") == "tool"]
    assert "stopped while running 'crash'" in results[0]
    assert all("restarting it failed" in r and "refusing to start" in r for r in results[1:MAX_RESTARTS + 1])
    assert f"restarted {MAX_RESTARTS} times without success" in results[-1]


async def test_an_image_result_is_kept_and_sent_to_the_model_as_an_image(mcp_engine, fake_openai, pid_dir):
    engine = await mcp_engine({"t": stdio_entry(pid_dir)})
    seen: list[ev.Event] = []
    engine.bus.subscribe(seen.append)
    fake_openai.add_tool_calls([("mcp_t_image", {})])
    fake_openai.add_text("a red square")
    assert (await engine.loop.process("desktop:a", "draw")).reply == "a red square"
    [text] = tool_results(fake_openai.requests[1])
    finished = next(e for e in seen if isinstance(e, ev.ToolCallFinished))
    [image_path] = finished.media
    assert text == f"[image: {image_path}]"
    assert Path(image_path).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert Path(image_path).is_relative_to(engine.workspace.root / "uploads" / "mcp")
    last = fake_openai.requests[1]["messages"][-1]
    assert last["role"] == "user" and last["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    # the image message is for this turn only: the session keeps the tool's text
    saved = engine.sessions.path_for("desktop:a").read_text(encoding="utf-8")
    assert "data:image/png" not in saved and f"[image: {image_path}]" in saved


async def test_images_are_dropped_when_the_endpoint_refuses_them(mcp_engine, fake_openai, pid_dir):
    engine = await mcp_engine({"t": stdio_entry(pid_dir)})
    fake_openai.add_tool_calls([("mcp_t_image", {})])
    fake_openai.add_error(400, "image input is not supported by this model")
    fake_openai.add_text("no eyes, but fine")
    assert (await engine.loop.process("desktop:a", "draw")).reply == "no eyes, but fine"
    assert isinstance(fake_openai.requests[1]["messages"][-1]["content"], list)
    assert fake_openai.requests[2]["messages"][-1]["role"] == "tool"


async def test_a_tool_error_says_so(mcp_engine, fake_openai, pid_dir):
    engine = await mcp_engine({"t": stdio_entry(pid_dir)})
    seen: list[ev.Event] = []
    engine.bus.subscribe(seen.append)
    fake_openai.add_tool_calls([("mcp_t_fail", {"reason": "disk on fire"})])
    fake_openai.add_text("sorry")
    await engine.loop.process("desktop:a", "fail")
    [text] = tool_results(fake_openai.requests[1])
    assert text.startswith("Error: MCP tool 'fail' of server 't' reported an error:") and "disk on fire" in text
    assert next(e for e in seen if isinstance(e, ev.ToolCallFinished)).status == "error"
    fake_openai.add_tool_calls([("mcp_t_echo", {"text": "ok"})])
    fake_openai.add_text("fine")
    assert (await engine.loop.process("desktop:a", "again")).reply == "fine"


async def test_a_missing_command_fails_that_server_only(mcp_engine, fake_openai, pid_dir):
    engine = await mcp_engine({"gone": {"command": "nanobot-no-such-mcp-server"}, "t": stdio_entry(pid_dir)})
    gone = engine.mcp.status("gone")
    assert gone.state == "failed" and gone.error == "command not found: nanobot-no-such-mcp-server"
    assert engine.mcp.status("t").state == "ready"
    assert not [n for n in engine.tools.names() if n.startswith("mcp_gone_")]
    fake_openai.add_text("hi")
    assert (await engine.loop.process("desktop:a", "hello")).reply == "hi"


async def test_stop_cancels_a_running_mcp_call(mcp_engine, fake_openai, pid_dir):
    engine = await mcp_engine({"t": stdio_entry(pid_dir, toolTimeout=120)})
    started = asyncio.Event()
    engine.bus.subscribe(lambda e: started.set() if isinstance(e, ev.ToolCallStarted) else None)
    fake_openai.add_tool_calls([("mcp_t_slow", {"seconds": 60})])
    turn = engine.loop.submit("desktop:a", "wait long")
    await started.wait()
    await asyncio.sleep(0)  # let the call reach the server
    assert await engine.loop.stop("desktop:a") == 1
    assert turn.cancelled() or (turn.done() and turn.result().status == "cancelled")
    fake_openai.add_tool_calls([("mcp_t_echo", {"text": "after stop"})])
    fake_openai.add_text("fine")
    assert (await engine.loop.process("desktop:a", "again")).reply == "fine"
    assert tool_results(fake_openai.requests[-1])[-1] == "echo: after stop"


async def test_streamable_http_server(mcp_engine, fake_openai, pid_dir):
    process, url = start_http_server(pid_dir)
    try:
        engine = await mcp_engine({"web": {"url": url, "toolTimeout": 1, "headers": {"X-Test": "1"}}})
        status = engine.mcp.status("web")
        assert (status.transport, status.state) == ("streamableHttp", "ready")
        fake_openai.add_tool_calls([("mcp_web_echo", {"text": "over http"}), ("mcp_web_image", {}),
                                    ("mcp_web_fail", {}), ("mcp_web_slow", {"seconds": 5})])
        fake_openai.add_text("done")
        assert (await engine.loop.process("desktop:a", "go")).reply == "done"
        echo, image, fail, slow = tool_results(fake_openai.requests[1])
        assert echo == "echo: over http" and image.startswith("[image: ")
        assert fail.startswith("Error: MCP tool 'fail' of server 'web' reported an error")
        assert slow.startswith("Error: MCP tool 'slow' of server 'web' timed out after 1s")
        fake_openai.add_tool_calls([("mcp_web_echo", {"text": "again"})])
        fake_openai.add_text("ok")
        assert (await engine.loop.process("desktop:a", "again")).reply == "ok"
        assert tool_results(fake_openai.requests[3])[-1] == "echo: again"
    finally:
        process.terminate()
        process.wait(10)


async def test_states_are_published_and_config_changes_apply_live(mcp_engine, fake_openai, pid_dir):
    from nanobot_desktop.engine.mcp import settings

    engine = await mcp_engine({}, wait=False)
    states: list[tuple[str, str]] = []
    engine.bus.subscribe(lambda e: states.extend((s.name, s.state) for s in e.servers)
                         if isinstance(e, McpServersChanged) else None)
    settings.save_server(engine, "t", stdio_entry(pid_dir))
    await engine.mcp.wait_ready(60)
    assert ("t", "connecting") in states and ("t", "ready") in states
    assert "mcp_t_echo" in engine.tools.names()
    saved = json.loads(engine.config_path.read_text(encoding="utf-8"))
    assert saved["tools"]["mcpServers"]["t"]["command"] == stdio_entry(pid_dir)["command"]
    settings.set_server_enabled(engine, "t", False)
    assert "mcp_t_echo" not in engine.tools.names() and engine.mcp.status("t").enabled is False
    await asyncio.gather(*engine.mcp._pending)
    assert left_processes(pid_dir) == []
    settings.set_server_enabled(engine, "t", True)
    await engine.mcp.wait_ready(60)
    assert engine.mcp.status("t").state == "ready"
    settings.remove_server(engine, "t")
    assert "t" not in json.loads(engine.config_path.read_text(encoding="utf-8"))["tools"]["mcpServers"]
    assert not [n for n in engine.tools.names() if n.startswith("mcp_")]


async def test_test_connection_lists_tools_without_keeping_the_server(mcp_engine, pid_dir):
    engine = await mcp_engine({}, wait=False)
    status = await engine.mcp.test("probe", stdio_entry(pid_dir))
    assert status.state == "ready" and "echo" in [t.name for t in status.tools]
    assert left_processes(pid_dir) == [] and not [n for n in engine.tools.names() if n.startswith("mcp_")]
    failed = await engine.mcp.test("probe", {"command": "nanobot-no-such-mcp-server"})
    assert failed.state == "failed" and "command not found" in failed.error


async def test_an_http_server_that_crashes_mid_call(mcp_engine, fake_openai, pid_dir):
    process, url = start_http_server(pid_dir)
    try:
        engine = await mcp_engine({"web": {"url": url, "toolTimeout": 20}})
        fake_openai.add_tool_calls([("mcp_web_crash", {})])
        fake_openai.add_text("it went away")
        assert (await engine.loop.process("desktop:a", "crash it")).reply == "it went away"
        [crash_result] = tool_results(fake_openai.requests[1])
        assert crash_result.startswith("Error: MCP ") and "web" in crash_result
        assert "timed out" not in crash_result  # the failure is reported at once, not after toolTimeout
        process.wait(10)
        fake_openai.add_tool_calls([("mcp_web_echo", {"text": "anyone?"})])
        fake_openai.add_text("nobody there")
        assert (await engine.loop.process("desktop:a", "again")).reply == "nobody there"
        [next_result] = tool_results(fake_openai.requests[3])[-1:]
        assert "restarting it failed" in next_result or "not available" in next_result
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)


async def test_sse_server_inferred_from_its_url(mcp_engine, fake_openai, pid_dir):
    process, url = start_http_server(pid_dir, mode="sse")
    try:
        engine = await mcp_engine({"events": {"url": url, "toolTimeout": 1}})
        status = engine.mcp.status("events")
        assert (status.transport, status.state) == ("sse", "ready")
        fake_openai.add_tool_calls([("mcp_events_echo", {"text": "over sse"}), ("mcp_events_slow", {"seconds": 5})])
        fake_openai.add_text("done")
        assert (await engine.loop.process("desktop:a", "go")).reply == "done"
        echo, slow = tool_results(fake_openai.requests[1])
        assert echo == "echo: over sse" and "timed out after 1s" in slow
    finally:
        process.terminate()
        process.wait(10)


async def test_a_changed_tool_list_is_picked_up_and_server_logs_are_kept(mcp_engine, fake_openai, pid_dir):
    engine = await mcp_engine({"t": stdio_entry(pid_dir)})
    seen_extra = asyncio.Event()
    engine.bus.subscribe(lambda e: seen_extra.set() if isinstance(e, McpServersChanged)
                         and any(t.name == "extra" for t in e.servers[0].tools) else None)
    fake_openai.add_tool_calls([("mcp_t_grow", {})])
    fake_openai.add_text("grown")
    assert (await engine.loop.process("desktop:a", "grow")).reply == "grown"
    await asyncio.wait_for(seen_extra.wait(), 30)
    assert engine.mcp.status("t").summary == "ready (8 tools)"
    fake_openai.add_tool_calls([("mcp_t_extra", {})])
    fake_openai.add_text("used it")
    assert (await engine.loop.process("desktop:a", "use the new tool")).reply == "used it"
    offered = [tool["function"]["name"] for tool in fake_openai.requests[2]["tools"]]
    assert "mcp_t_extra" in offered
    assert tool_results(fake_openai.requests[3])[-1] == "extra works"
    log_text = engine.mcp.log_path("t").read_text(encoding="utf-8")
    assert "[info] grew a tool" in log_text


async def test_quitting_while_a_server_is_still_starting_leaves_no_process(mcp_engine, pid_dir, tmp_path):
    import sys

    script = tmp_path / "silent.py"  # starts, never answers the MCP handshake, ignores SIGTERM
    script.write_text("import os, pathlib, signal, sys, time\n"
                      f"pathlib.Path({str(pid_dir)!r}).mkdir(exist_ok=True)\n"
                      f"pathlib.Path({str(pid_dir)!r}, str(os.getpid())).write_text('silent')\n"
                      "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                      "while True: time.sleep(1)\n")
    engine = await mcp_engine({"silent": {"command": sys.executable, "args": [str(script)]}}, wait=False)
    while not server_pids(pid_dir):  # noqa: ASYNC110 - the file is written by another process
        await asyncio.sleep(0.05)
    assert engine.mcp.status("silent").state == "connecting"
    await engine.shutdown()
    assert left_processes(pid_dir) == []
