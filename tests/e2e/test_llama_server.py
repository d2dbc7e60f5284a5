"""The engine against a real local model server (llama.cpp's, SmolLM2-135M on this CPU), as a new user
runs it: found on its port, a headless turn, Stop mid-stream, a consolidation, a context overflow, the
server killed mid-stream, a slow first token, and the bench row (a turn through the app against a
direct streamed request with the same body).

Run with `python3 dev.py e2e`; minutes in all (the app's ~3,000-token system prompt alone takes the
CPU ~20 s to read).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from typing import Any

import httpx
import pytest

from nanobot_desktop.engine.events import (
    ConsolidationFinished, LLMCallFinished, LLMCallStarted, TextDelta, TurnCancelled, TurnFailed, WaitingForModel,
)
from nanobot_desktop.engine.llm.context_window import BOOK
from nanobot_desktop.engine.llm.discovery import DEFAULT_CANDIDATES, discover_local_servers
from tests.local_server import LLAMA_CPP_PORT, MODEL_ALIAS, LlamaServer

pytestmark = [pytest.mark.heavy, pytest.mark.e2e, pytest.mark.timeout(900)]


def _events(engine: Any) -> list[object]:
    seen: list[object] = []
    engine.bus.subscribe(seen.append)
    return seen


async def _pieces_of_text(engine: Any, count: int, task: asyncio.Future[Any]) -> None:
    """Until `count` pieces of the reply have streamed in (or the turn ended first)."""
    arrived = asyncio.Event()
    pieces: list[object] = []

    def take(event: object) -> None:
        if isinstance(event, TextDelta):
            pieces.append(event)
            if len(pieces) >= count:
                arrived.set()

    engine.bus.subscribe(take)
    task.add_done_callback(lambda _task: arrived.set())
    await asyncio.wait_for(arrived.wait(), 240)


def _calls(seen: list[object]) -> list[LLMCallFinished]:
    return [e for e in seen if isinstance(e, LLMCallFinished)]


def _speed(call: LLMCallFinished) -> str:
    return (f"prompt {call.prompt_tokens} tokens, reply {call.completion_tokens} tokens, first token after "
            f"{call.first_token_s:.1f} s, {call.tokens_per_s:.1f} tokens/s")


async def test_onboarding_finds_the_server_on_its_port_and_lists_its_model(llama: LlamaServer, report) -> None:
    candidates = DEFAULT_CANDIDATES if llama.port == LLAMA_CPP_PORT else \
        (("llama.cpp", f"http://localhost:{llama.port}/v1"),)
    found = await discover_local_servers(candidates, timeout_s=2.0)
    server = next(s for s in found if s.name == "llama.cpp")
    assert server.models == [MODEL_ALIAS]
    report(f"onboarding: found llama.cpp at {server.base_url} with models {server.models}")


async def test_a_headless_turn_answers_with_speed_figures(llama: LlamaServer, real_engine, report) -> None:
    engine = real_engine(llama.base_url)
    seen = _events(engine)
    started = time.monotonic()
    try:
        result = await engine.loop.process("cli:direct", "What is the capital of France? Answer in one sentence.")
    finally:
        await engine.shutdown()
    took = time.monotonic() - started
    assert result.status == "ok" and result.reply, result.error
    call = _calls(seen)[-1]
    assert call.first_token_s > 0 and call.tokens_per_s > 0
    report(f"headless turn: {took:.1f} s; {_speed(call)}; the model said: {result.reply[:120]!r}")


async def test_stop_mid_stream_ends_the_turn_and_the_server_goes_on(llama: LlamaServer, real_engine, report) -> None:
    engine = real_engine(llama.base_url, maxTokens=400)
    seen = _events(engine)
    try:
        task = asyncio.ensure_future(engine.loop.process("cli:stop", "Count from 1 to 300, one number per line."))
        await _pieces_of_text(engine, 5, task)
        assert not task.done(), "the reply ended before it could be stopped"
        stopped_at = time.monotonic()
        await engine.loop.stop("cli:stop")
        result = await task
        stop_s = time.monotonic() - stopped_at
    finally:
        await engine.shutdown()
    assert result.status == "cancelled"
    assert any(isinstance(e, TurnCancelled) for e in seen)
    assert llama.models() == [MODEL_ALIAS]  # the server is fine after the client went away
    report(f"stop mid-stream: the turn ended {stop_s * 1000:.0f} ms after Stop, after "
           f"{sum(isinstance(e, TextDelta) for e in seen)} pieces of text")


async def test_a_consolidation_behaves_well_whatever_the_tiny_model_does(llama: LlamaServer, real_engine,
                                                                        report) -> None:
    engine = real_engine(llama.base_url, memoryWindow=4, maxTokens=200)
    seen = _events(engine)
    memory = engine.workspace.root / "memory" / "MEMORY.md"
    before = memory.read_bytes() if memory.exists() else b""
    session = engine.sessions.get_or_create("cli:memory")
    engine.sessions.append(session, [
        {"role": "user", "content": "My name is Ada and I live in Lyon."}, {"role": "assistant", "content": "Noted, Ada."},
        {"role": "user", "content": "I like green tea."}, {"role": "assistant", "content": "Green tea it is."},
        {"role": "user", "content": "My cat is called Pixel."}, {"role": "assistant", "content": "Hello Pixel."},
    ])
    try:
        result = await engine.loop.process("cli:memory", "Thanks.")  # 6 unconsolidated >= memoryWindow 4: it starts
        await asyncio.wait_for(engine.loop.wait_for_consolidation("cli:memory"), 300)
    finally:
        await engine.shutdown()
    finished = [e for e in seen if isinstance(e, ConsolidationFinished)]
    assert result.status == "ok" and finished
    after = memory.read_bytes() if memory.exists() else b""
    done = finished[-1]
    if after != before:  # the model called save_memory: what it wrote is whole, readable text
        after.decode("utf-8")
        did = f"called save_memory; MEMORY.md is now {len(after)} bytes"
    else:
        did = "did not call save_memory; MEMORY.md was left as it was"
    report(f"consolidation: the tiny model {did} (event: {done!r:.160})")


async def test_a_context_overflow_is_diagnosed_then_refused_before_sending(llama_small: LlamaServer, real_engine,
                                                                          report) -> None:
    engine = real_engine(llama_small.base_url)
    seen = _events(engine)
    try:
        first = await engine.loop.process("cli:small", "Hello there")
        second = await engine.loop.process("cli:small", "Hello again")
    finally:
        await engine.shutdown()
    assert first.status == "failed" and first.kind == "context_overflow", first.error
    assert "1,024 fit" in (first.error or "") and "base URL" not in (first.error or "")
    known = BOOK.known(llama_small.base_url, MODEL_ALIAS)
    assert known is not None and known.tokens == 1024
    assert second.status == "failed" and second.kind == "context_overflow"
    assert "was not sent" in (second.error or "")
    assert sum(isinstance(e, LLMCallStarted) for e in seen) == 1  # the second was never sent
    report(f"context overflow (--n_ctx 1024): first turn: {first.error}")
    report(f"context overflow, next turn (window learned): {second.error}")


async def test_a_server_killed_mid_stream_is_said_so(real_engine, tmp_path, report) -> None:
    server = LlamaServer(n_ctx=8192, log_path=tmp_path / "doomed.log").start()
    engine = real_engine(server.base_url, maxTokens=400)
    seen = _events(engine)
    try:
        task = asyncio.ensure_future(engine.loop.process("cli:doomed", "Count from 1 to 300, one number per line."))
        await _pieces_of_text(engine, 3, task)
        assert not task.done()
        await asyncio.to_thread(server.kill)
        result = await asyncio.wait_for(task, 60)
    finally:
        server.stop()
        await engine.shutdown()
    assert result.status == "failed" and result.kind == "server_gone", result.error
    failed = next(e for e in seen if isinstance(e, TurnFailed))
    assert failed.partial_text  # what came before the crash stays shown
    report(f"server killed mid-stream: {result.error}")


async def test_a_slow_first_token_is_waited_for_past_the_give_up(llama: LlamaServer, real_engine, report) -> None:
    engine = real_engine(llama.base_url)
    engine.app_settings.model_first_byte_timeout = 3.0  # far less than reading the system prompt takes here
    seen = _events(engine)
    try:
        # A new system prompt (a note in MEMORY.md) so the server's prompt cache cannot skip the reading.
        (engine.workspace.root / "memory").mkdir(parents=True, exist_ok=True)
        (engine.workspace.root / "memory" / "MEMORY.md").write_text(f"- run {time.time()}\n" * 40)
        result = await engine.loop.process("cli:slow", "Say hello.")
    finally:
        await engine.shutdown()
    assert result.status == "ok", result.error
    waits = [e for e in seen if isinstance(e, WaitingForModel) and e.phase == "prompt"]
    call = _calls(seen)[-1]
    assert call.first_token_s > 3.0 and waits and all(w.limit_s == 0 for w in waits)
    report(f"slow first token: {call.first_token_s:.1f} s to the first token with a 3 s give-up set, "
           f"{len(waits)} 'reading the prompt' updates, then answered; {_speed(call)}")


async def test_bench_a_turn_through_the_app_against_a_direct_request(llama: LlamaServer, real_engine, report) -> None:
    """The same body, the same server, side by side: the app may add at most 5 %."""
    engine = real_engine(llama.base_url, maxTokens=48, temperature=0.0)
    seen = _events(engine)
    app_times: list[float] = []
    direct_times: list[float] = []
    body: dict[str, Any] = {}
    try:
        for round_number in range(6):  # the first is a warm-up (the server's prompt cache); then each goes first in turn
            if body and round_number % 2 == 0:
                direct_first = await _direct_stream(llama.base_url, body)
            started = time.monotonic()
            result = await engine.loop.process("cli:bench", "Name three colours.")
            took = time.monotonic() - started
            assert result.status == "ok", result.error
            engine.sessions.delete("cli:bench")  # so the next turn's prompt is this one's again (the server's cache)
            call = [e for e in seen if isinstance(e, LLMCallStarted)][-1]
            body = {"model": MODEL_ALIAS, "messages": list(call.messages), "tools": list(call.tools),
                    "tool_choice": "auto", "temperature": 0.0, "max_tokens": 48, "stream": True,
                    "stream_options": {"include_usage": True}}
            direct = direct_first if round_number and round_number % 2 == 0 else await _direct_stream(llama.base_url, body)
            if round_number:
                app_times.append(took)
                direct_times.append(direct)
            print(f"bench round {round_number}: app {took:.2f} s, direct {direct:.2f} s")
    finally:
        await engine.shutdown()
    app, direct = statistics.median(app_times), statistics.median(direct_times)
    report(f"bench: turn through the app {app:.2f} s vs direct streamed request {direct:.2f} s "
           f"(median of 5 each, same body): {app / direct:.3f}x")
    assert app / direct <= 1.05


async def _direct_stream(base_url: str, body: dict[str, Any]) -> float:
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream("POST", base_url + "/chat/completions", json=body) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])
    return time.monotonic() - started
