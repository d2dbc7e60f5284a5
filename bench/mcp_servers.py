"""MCP servers: engine start to a stdio server ready, and the per-call overhead of an MCP tool call
(issue 12; target for the overhead: ≤ 5 ms over a direct SDK call).

    python bench/mcp_servers.py

The server is the tests' MCP server written on the official SDK (tests/mcp_servers/sdk_server.py), run
over stdio by the same Python, so the figures do not depend on anything downloaded.

Start to ready: a fresh `Engine` is built on a config naming that one server, `start_mcp()` is called
and the clock stops when the server's state is "ready" (process started, MCP handshake, tools listed
and registered). For comparison, the same server is started with the bare SDK (`stdio_client`,
`ClientSession.initialize`, `list_tools`): the difference is what the engine adds. Medians of 5 each,
alternated so machine load hits both alike.

Per-call overhead: two connections to two processes of the same server: the engine's, and a bare SDK
`ClientSession`. Calls of the `echo` tool alternate between `ToolRunner.run` (the full path a model's
tool call takes: policy, events, argument checks, the manager's restart/timeout handling and result
conversion; the server's policy set to allow so nobody is asked) and `session.call_tool` directly.
The overhead is the median of the pairwise differences (after warm-up calls).

Event-loop stall while servers start: an engine is built, then its first `start_mcp()` (the SDK not yet
imported: about a second of imports, done in a worker thread) runs until the server is ready while a
ticker task sleeps 5 ms at a time and records the longest gap between its wake-ups beyond those 5 ms:
the longest the window would not repaint. Reported, not judged: most of it is the SDK's own import
(pydantic building the schemas of `mcp.types` holds the GIL for tens of milliseconds at a time, even in
a worker thread); imported on the event loop instead, the same start stalled the loop ~1.5 s. The
start-up's panel builds block for up to ~0.2 s each in comparison (gui/window/docks.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BENCH_DIR, BenchResult, bench_main, log, median, verdict

SERVER = BENCH_DIR.parent / "tests" / "mcp_servers" / "sdk_server.py"
STARTS = 5
WARMUP_CALLS = 20
CALL_PAIRS = 300
TARGET_MS = 5.0


async def _with_ticker(work: Any) -> tuple[Any, float]:
    """Run `work` while a 5 ms ticker measures the longest event-loop gap (ms)."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.ensure_future(tick())
    try:
        result = await work
    finally:
        done.set()
        await ticker
    return result, max(gaps) * 1000 - 5.0


def _write_config(tmp: Path, pid_dir: Path) -> Path:
    from tests.fake_openai import write_fake_config

    path = write_fake_config(tmp / "home" / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", tmp / "ws")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tools"]["mcpServers"] = {"bench": {"command": sys.executable, "args": [str(SERVER), "stdio", str(pid_dir)]}}
    path.write_text(json.dumps(data), encoding="utf-8")
    from nanobot_desktop.engine.config import app_settings_path

    app_settings_path(path).write_text(json.dumps({"toolApproval": {"mcp_bench_*": "allow"}}), encoding="utf-8")
    return path


async def _engine_start_ms(config: Path) -> float:
    from nanobot_desktop.engine.runtime import Engine

    started = time.perf_counter()
    engine = Engine.open(config)
    engine.start_mcp()
    await engine.mcp.wait_ready(60)
    elapsed = (time.perf_counter() - started) * 1000
    if engine.mcp.status("bench").state != "ready":
        raise RuntimeError(f"the server did not come up: {engine.mcp.status('bench').error}")
    await engine.shutdown()
    return elapsed


async def _first_start(config: Path) -> tuple[float, float]:
    """The cold start (SDK not imported yet) of an engine built beforehand, with the loop watched."""
    from nanobot_desktop.engine.runtime import Engine

    engine = Engine.open(config)
    manager = engine.mcp  # the manager's own modules; the SDK is imported when the server starts

    async def start() -> float:
        started = time.perf_counter()
        engine.start_mcp()
        await manager.wait_ready(60)
        return (time.perf_counter() - started) * 1000

    try:
        return await _with_ticker(start())
    finally:
        await engine.shutdown()


async def _open_direct(stack: AsyncExitStack, pid_dir: Path) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio", str(pid_dir)])
    sink = stack.enter_context(open(os.devnull, "w"))  # noqa: ASYNC230, SIM115 - the null device opens at once
    read, write = await stack.enter_async_context(stdio_client(params, errlog=sink))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    await session.list_tools()
    return session


async def _direct_start_ms(pid_dir: Path) -> float:
    started = time.perf_counter()
    async with AsyncExitStack() as stack:
        await _open_direct(stack, pid_dir)
        elapsed = (time.perf_counter() - started) * 1000
    return elapsed


async def measure(tmp: Path) -> dict[str, Any]:
    from nanobot_desktop.engine.llm.types import ToolCallRequest
    from nanobot_desktop.engine.runtime import Engine
    from nanobot_desktop.engine.tools.base import ToolContext

    pid_dir = tmp / "pids"
    config = _write_config(tmp, pid_dir)
    if "mcp" in sys.modules:
        raise RuntimeError("the MCP SDK is already imported: the first start would not be a cold one")
    first_start, stall_ms = await _first_start(config)
    log(f"first (cold) start {first_start:.0f} ms, longest event-loop stall {stall_ms:.1f} ms")
    engine_starts, direct_starts = [], []
    for _ in range(STARTS):
        engine_starts.append(await _engine_start_ms(config))
        direct_starts.append(await _direct_start_ms(pid_dir))
    log(f"start to ready: engine {median(engine_starts):.0f} ms, bare SDK {median(direct_starts):.0f} ms")

    engine = Engine.open(config)
    engine.start_mcp()
    await engine.mcp.wait_ready(60)
    ctx = ToolContext(workspace=engine.workspace.root, session_key="bench:mcp")
    through_engine, direct = [], []
    try:
        async with AsyncExitStack() as stack:
            session = await _open_direct(stack, pid_dir)
            for index in range(WARMUP_CALLS + CALL_PAIRS):
                call = ToolCallRequest(id=f"call_{index}", name="mcp_bench_echo", arguments={"text": "ping"})
                started = time.perf_counter()
                outcome = await engine.runner.run(call, ctx, "bench-turn")
                engine_ms = (time.perf_counter() - started) * 1000
                started = time.perf_counter()
                result = await session.call_tool("echo", {"text": "ping"})
                direct_ms = (time.perf_counter() - started) * 1000
                if outcome.result != "echo: ping" or result.content[0].text != "echo: ping":
                    raise RuntimeError(f"unexpected results: {outcome.result!r}, {result.content!r}")
                if index >= WARMUP_CALLS:
                    through_engine.append(engine_ms)
                    direct.append(direct_ms)
    finally:
        await engine.shutdown()
    differences = [e - d for e, d in zip(through_engine, direct, strict=True)]
    return {
        "engine_start_ms": median(engine_starts), "direct_start_ms": median(direct_starts),
        "engine_starts_ms": engine_starts, "direct_starts_ms": direct_starts,
        "call_overhead_ms": median(differences), "engine_call_ms": median(through_engine),
        "direct_call_ms": median(direct), "overhead_p90_ms": statistics.quantiles(differences, n=10)[-1],
        "pairs": len(differences), "stall_ms": stall_ms, "first_start_ms": first_start,
    }


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-mcp-") as tmp:
        numbers = asyncio.run(measure(Path(tmp)))
    start = BenchResult(
        "MCP: engine start to stdio server ready",
        f"{numbers['engine_start_ms']:.0f} ms (bare SDK spawn + handshake + list: {numbers['direct_start_ms']:.0f} ms)",
        "report only", "info",
        note=f"medians of {STARTS}; engine runs {', '.join(f'{v:.0f}' for v in numbers['engine_starts_ms'])} ms",
        numbers={k: numbers[k] for k in ("engine_start_ms", "direct_start_ms")})
    overhead = numbers["call_overhead_ms"]
    call = BenchResult(
        "MCP: per-call overhead over the bare SDK",
        f"{overhead:.2f} ms/call (through the engine {numbers['engine_call_ms']:.2f} ms − direct "
        f"{numbers['direct_call_ms']:.2f} ms)",
        f"≤ {TARGET_MS:g} ms", verdict(overhead <= TARGET_MS),
        note=f"median of {numbers['pairs']} alternated pairs; p90 of the difference {numbers['overhead_p90_ms']:.2f} ms",
        numbers={k: numbers[k] for k in ("call_overhead_ms", "engine_call_ms", "direct_call_ms", "overhead_p90_ms")})
    stall = BenchResult(
        "MCP: event-loop stall while servers start",
        f"max {numbers['stall_ms']:.1f} ms (first start, SDK imported in a worker thread; "
        f"ready after {numbers['first_start_ms']:.0f} ms)",
        "report only", "info",
        note="SDK imported in a worker thread; on the event loop the same start stalled it ~1.5 s",
        numbers={k: numbers[k] for k in ("stall_ms", "first_start_ms")})
    return [start, stall, call]


if __name__ == "__main__":
    sys.exit(bench_main(run))
