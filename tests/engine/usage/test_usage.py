"""The usage record (engine/usage): one row per model call of every kind, with the endpoint's own token
counts, in the app's file and in nanobot 0.3.5's llm_usage.sqlite3 when it is there; a locked or damaged
file never fails a turn; the budget holds background work and never a chat turn.

Against the loopback fake endpoint (tests/fake_openai.py), with the real files checked row by row.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.background.cron_types import CronSchedule
from nanobot_desktop.engine.events import BudgetCrossed, ToolStatus, UsageRecorded
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.engine.tools.base import ToolResult
from nanobot_desktop.engine.usage.store import APP_FILE, CLI_COLUMNS, CLI_FILE
from tests.reference_cli import V035, reference_cli

COLUMNS = ("kind", "session_key", "provider", "model", "source", "input_tokens", "output_tokens", "total_tokens",
           "cache_read_tokens", "cache_write_tokens", "reported_tokens", "estimated_tokens", "finish_reason", "cli_id")


def app_rows(engine: Engine) -> list[dict[str, Any]]:
    with sqlite3.connect(engine.config_path.parent / APP_FILE) as connection:
        return [dict(zip(COLUMNS, row, strict=True)) for row in connection.execute(f"SELECT {', '.join(COLUMNS)} FROM calls ORDER BY id")]


def cli_rows(folder: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(folder / CLI_FILE) as connection:
        names = CLI_COLUMNS
        return [dict(zip(names, row, strict=True)) for row in connection.execute(f"SELECT {', '.join(names)} FROM llm_calls ORDER BY id")]


async def turn(engine: Engine, key: str, text: str) -> str | None:
    result = await engine.loop.process(key, text)
    assert result.status == "ok", result.error
    return result.reply


async def test_a_chat_turn_writes_one_row_with_the_endpoints_tokens_and_cache_counts(make_engine, fake_openai):
    engine = make_engine()
    fake_openai.add_text("hello", usage=(1200, 30), cache=(1024, 64))
    await turn(engine, "desktop:a", "hi")
    await engine.usage.flush()
    assert app_rows(engine) == [{
        "kind": "chat", "session_key": "desktop:a", "provider": "custom", "model": "fake-model", "source": "user",
        "input_tokens": 1200, "output_tokens": 30, "total_tokens": 1230, "cache_read_tokens": 1024,
        "cache_write_tokens": 64, "reported_tokens": 1230, "estimated_tokens": 0, "finish_reason": "stop",
        "cli_id": None}]
    assert not (engine.config_path.parent / CLI_FILE).exists()  # the CLI's file is never created by the app


async def test_calls_close_together_share_one_write_that_comes_without_being_asked(make_engine, fake_openai):
    """A write per call cost each turn an SQLite commit on the recorder's thread (bench/engine_overhead.py):
    rows wait BATCH_DELAY_S for the calls that follow, then go in one commit on their own."""
    engine = make_engine()
    written: list[UsageRecorded] = []
    arrived = asyncio.Event()

    def on_event(event: object) -> None:
        if isinstance(event, UsageRecorded):
            written.append(event)
            arrived.set()

    engine.bus.subscribe(on_event)
    for number in range(3):
        fake_openai.add_text(f"reply {number}", usage=(10 + number, 1))
        await turn(engine, "desktop:a", f"question {number}")
    assert written == [] and engine.usage.pending == 3  # nothing written while the calls came
    await asyncio.wait_for(arrived.wait(), 5)  # no flush: the batch's own timer writes it
    assert [(e.written, e.pending, e.problem) for e in written] == [(3, 0, "")]
    assert [r["input_tokens"] for r in app_rows(engine)] == [10, 11, 12]


async def test_a_call_stopped_midway_is_recorded_as_cancelled_with_estimates(make_engine, fake_openai):
    """/stop (the Stop button sends the same) ends the call before the stream's last chunk, the only one
    that carries usage: the row says "cancelled" as nanobot 0.3.5 does, with the prompt and the text
    streamed so far as estimates, marked as estimates."""
    from nanobot_desktop.engine.events import TextDelta

    engine = make_engine()
    streamed: list[str] = []
    some_came = asyncio.Event()

    def on_event(event: object) -> None:
        if isinstance(event, TextDelta):
            streamed.append(event.text)
            if len(streamed) >= 3:
                some_came.set()

    engine.bus.subscribe(on_event)
    fake_openai.add_text("one two three four five six seven eight nine ten " * 20, chunk_size=8, delay_s=0.05,
                         usage=(999, 999))
    task = engine.loop.submit("desktop:a", "count slowly")
    await asyncio.wait_for(some_came.wait(), 10)  # a few deltas in (each 50 ms apart), most still to come
    await asyncio.wait_for(engine.loop.submit("desktop:a", "/stop"), 10)
    assert task.cancelled()
    await engine.usage.flush()
    [row] = app_rows(engine)
    assert row["kind"] == "chat" and row["session_key"] == "desktop:a" and row["finish_reason"] == "cancelled"
    assert row["reported_tokens"] == 0 and row["estimated_tokens"] == row["total_tokens"]  # marked as estimates
    assert row["input_tokens"] > 0 and row["input_tokens"] != 999
    chars = len("".join(streamed))
    assert chars // 4 <= row["output_tokens"] <= len("one two three four five six seven eight nine ten " * 20) // 4
    with sqlite3.connect(engine.config_path.parent / APP_FILE) as connection:
        assert connection.execute("SELECT error_kind FROM calls").fetchone() == ("cancelled",)  # 0.3.5's word


async def test_an_endpoint_without_usage_gets_an_estimate_marked_as_one(make_engine, fake_openai):
    from tests.fake_openai import text_reply

    engine = make_engine()
    reply = text_reply("a reply of some forty characters or so!!")
    reply.send_usage = False
    fake_openai.add(reply)
    await turn(engine, "desktop:a", "hi")
    await engine.usage.flush()
    [row] = app_rows(engine)
    assert row["reported_tokens"] == 0 and row["estimated_tokens"] == row["total_tokens"] > 0
    assert row["output_tokens"] == 10  # 40 characters, four a token
    assert row["cache_read_tokens"] is None  # not said: not zero


async def test_every_kind_of_call_writes_exactly_one_row_with_its_source_and_session(make_engine, fake_openai):
    engine = make_engine()
    ws = engine.workspace
    # A chat turn with a tool call: two calls.
    fake_openai.add_tool_calls([("list_dir", {"path": "."})], usage=(100, 10))
    fake_openai.add_text("listed", usage=(110, 5))
    await turn(engine, "desktop:a", "what is here?")
    # A subagent of that chat (as its spawn tool starts one): its own call, then the turn that reads
    # its result out in the chat.
    fake_openai.add_text("one two three", usage=(50, 3), cache=(0, None))
    fake_openai.add_text("reported back", usage=(60, 4))
    engine.subagents.spawn("count to three", origin_session_key="desktop:a", origin_channel="desktop",
                           origin_chat_id="a")
    await asyncio.gather(*engine.subagents._tasks.values())
    await engine.usage.flush()
    # Consolidation: /new archives the session through one save_memory call.
    fake_openai.add_tool_calls([("save_memory", {"history_entry": "[2026-11-28 10:00] talked",
                                                 "memory_update": "# Memory\n"})], usage=(300, 20))
    await engine.loop.process("desktop:a", "/new")
    # The heartbeat: the decision (phase 1), then the tasks run as a turn (phase 2).
    ws.heartbeat_file.write_text("- water the plants\n", encoding="utf-8")
    fake_openai.add_tool_calls([("heartbeat", {"action": "run", "tasks": "water the plants"})], usage=(70, 7))
    fake_openai.add_text("watered", usage=(80, 8))
    tick = await engine.heartbeat.trigger_now()
    assert tick.decision == "run" and tick.error is None
    # A scheduled job.
    job = engine.cron.add_job("daily", CronSchedule(kind="every", every_ms=3_600_000), "report")
    fake_openai.add_text("reported", usage=(90, 9))
    assert await engine.cron.run_job(job.id)
    await engine.usage.flush()

    rows = [(r["kind"], r["session_key"], r["input_tokens"], r["output_tokens"], r["source"]) for r in app_rows(engine)]
    cron_key = next(r[1] for r in rows if r[0] == "cron")
    assert sorted(rows) == sorted([
        ("chat", "desktop:a", 100, 10, "user"), ("chat", "desktop:a", 110, 5, "user"),
        # the subagent's call, and the turn that reads its result out in the chat: both the subagent's doing
        ("subagent", "desktop:a", 50, 3, "system"), ("subagent", "desktop:a", 60, 4, "system"),
        ("consolidation", "desktop:a", 300, 20, "dream"),
        ("heartbeat", "heartbeat", 70, 7, "cron"), ("heartbeat", "heartbeat", 80, 8, "cron"),
        ("cron", cron_key, 90, 9, "cron")])
    assert len(fake_openai.requests) == len(rows)  # exactly one row per request the endpoint saw


async def test_a_failed_call_is_recorded_with_its_outcome(make_engine, fake_openai):
    from tests.fake_openai import error_reply

    engine = make_engine()
    fake_openai.add(error_reply(401, "bad key"))
    result = await engine.loop.process("desktop:a", "hi")
    assert result.status == "failed"
    await engine.usage.flush()
    with sqlite3.connect(engine.config_path.parent / APP_FILE) as connection:
        assert connection.execute("SELECT finish_reason, error_status_code, error_kind, input_tokens FROM calls"
                                  ).fetchall() == [("error", 401, "authentication", 0)]


CLI_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from nanobot.llm_usage import LLMUsageStore, LLMCallRecord
    from nanobot.providers.base import LLMUsage
    store = LLMUsageStore(Path(sys.argv[1]))
    for n in range(3):
        store.record(LLMCallRecord(started_at_ms=int(sys.argv[2]) + n, duration_ms=900, provider="openai",
                                   model="gpt-4o-mini", source="user", stream=True, finish_reason="stop",
                                   usage=LLMUsage(input_tokens=1000, output_tokens=100, total_tokens=1100,
                                                  cache_read_tokens=500, reported_tokens=1100)))
    store.close()
""")


def write_with_the_real_cli(path: Path, started_ms: int) -> None:
    """Three rows written by nanobot 0.3.5's own store (its installed package, its own Python)."""
    python = reference_cli(V035).parent / "python"
    subprocess.run([str(python), "-c", CLI_WRITER, str(path), str(started_ms)], check=True, timeout=120)


@pytest.mark.slow
async def test_the_real_cli_database_gets_the_apps_rows_and_both_add_up_once(make_engine, fake_openai):
    import time

    engine = make_engine()
    folder = engine.config_path.parent
    write_with_the_real_cli(folder / CLI_FILE, int(time.time() * 1000) - 60_000)
    fake_openai.add_text("hello", usage=(2000, 40), cache=(1500, None))
    await turn(engine, "desktop:a", "hi")
    await engine.usage.flush()
    cli = cli_rows(folder)
    assert len(cli) == 4
    mine = cli[-1]
    assert (mine["source"], mine["provider"], mine["model"], mine["input_tokens"], mine["output_tokens"],
            mine["total_tokens"], mine["cache_read_tokens"], mine["cache_write_tokens"], mine["reported_tokens"],
            mine["estimated_tokens"], mine["stream"], mine["finish_reason"]) == (
        "user", "custom", "fake-model", 2000, 40, 2040, 1500, None, 2040, 0, 1, "stop")
    [row] = app_rows(engine)
    assert row["cli_id"] == mine["id"]
    with sqlite3.connect(folder / CLI_FILE) as connection:  # still 0.3.5's file: version and WAL untouched
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)

    summary = engine.usage.reader.summary(engine.usage_prices())
    assert summary.day.calls == 4  # three of the CLI's and the app's one, not five
    assert summary.day.input_tokens == 3 * 1000 + 2000 and summary.day.cache_read_tokens == 3 * 500 + 1500
    assert dict(summary.days[summary.today]).keys() == {"chat", "cli:user"}
    assert [key for key, _ in summary.by_session] == ["desktop:a"]
    # Prices: gpt-4o-mini has a default; fake-model none, so the total is the CLI's calls' cost only.
    assert summary.day.unpriced_calls == 1
    assert summary.day.cost == pytest.approx(3 * (500 * 0.15 + 500 * 0.075 + 100 * 0.60) / 1e6)


async def test_a_cli_database_of_another_schema_is_read_and_never_written(make_engine, fake_openai):
    import time

    engine = make_engine()
    path = engine.config_path.parent / CLI_FILE
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE llm_calls (id INTEGER PRIMARY KEY, started_at_ms INTEGER, duration_ms INTEGER,"
                           " provider TEXT, model TEXT, source TEXT, finish_reason TEXT, input_tokens INTEGER,"
                           " output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER,"
                           " estimated_tokens INTEGER, tenant TEXT)")
        connection.execute("INSERT INTO llm_calls VALUES (1, ?, 5, 'openai', 'gpt-4o', 'api', 'stop', 10, 2, NULL, NULL,"
                           " 0, 'x')", (int(time.time() * 1000),))
        connection.execute("PRAGMA user_version = 2")
    before = path.read_bytes()
    fake_openai.add_text("hello", usage=(20, 4))
    await turn(engine, "desktop:a", "hi")
    await engine.usage.flush()
    assert path.read_bytes() == before
    assert "not written" in engine.usage.problem and "schema version is 2" in engine.usage.problem
    assert len(app_rows(engine)) == 1
    summary = engine.usage.reader.summary(engine.usage_prices())
    assert summary.day.calls == 2 and summary.day.input_tokens == 30


async def test_a_locked_database_keeps_the_row_in_memory_and_the_turn_working(make_engine, fake_openai):
    engine = make_engine()
    fake_openai.add_text("first", usage=(10, 1))
    await turn(engine, "desktop:a", "hi")
    await engine.usage.flush()
    notices: list[UsageRecorded] = []
    engine.bus.subscribe(lambda e: notices.append(e) if isinstance(e, UsageRecorded) else None)
    locker = sqlite3.connect(engine.config_path.parent / APP_FILE, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        fake_openai.add_text("second", usage=(20, 2))
        assert await turn(engine, "desktop:a", "again") == "second"
        await engine.usage.flush()
        assert notices[-1].problem and "locked" in notices[-1].problem and notices[-1].pending == 1
        assert engine.usage.pending == 1
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    fake_openai.add_text("third", usage=(30, 3))
    await turn(engine, "desktop:a", "and again")  # the next call writes what waited, in order
    await engine.usage.flush()
    assert [r["input_tokens"] for r in app_rows(engine)] == [10, 20, 30]
    assert engine.usage.pending == 0 and engine.usage.problem == ""


async def test_a_damaged_database_is_left_as_it_is_and_turns_go_on(make_engine, fake_openai):
    engine = make_engine()
    path = engine.config_path.parent / APP_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    garbage = b"this is not a database at all " * 200
    path.write_bytes(garbage)
    fake_openai.add_text("still here", usage=(10, 1))
    assert await turn(engine, "desktop:a", "hi") == "still here"
    await engine.usage.flush()
    assert path.read_bytes() == garbage
    assert "damaged" in engine.usage.problem or "not a database" in engine.usage.problem
    assert engine.usage.pending == 1
    fake_openai.add_text("and again", usage=(10, 1))
    assert await turn(engine, "desktop:a", "hi") == "and again"
    path.unlink()  # once the person moved the damaged file away, the waiting rows are written
    await engine.usage.close()
    assert len(app_rows(engine)) == 2


async def test_a_spent_budget_pauses_a_heartbeat_tick_but_never_a_chat_turn(make_engine, fake_openai):
    engine = make_engine()
    engine.update_config({"app.usagePrices.fake-model": {"input": 1000.0, "output": 1000.0},
                          "app.usageBudget.daily": 1.0})
    crossed: list[BudgetCrossed] = []
    engine.bus.subscribe(lambda e: crossed.append(e) if isinstance(e, BudgetCrossed) else None)
    fake_openai.add_text("cheap", usage=(500, 300))  # 800 tokens at $1000/M: $0.80, the 80 % warning
    await turn(engine, "desktop:a", "hi")
    await engine.usage.flush()
    assert [(c.period, c.level) for c in crossed] == [("day", 0.8)]
    assert engine.usage.budget_hold() is None
    fake_openai.add_text("dear", usage=(500, 300))  # $1.60: spent
    await turn(engine, "desktop:a", "hi")
    await engine.usage.flush()
    assert [(c.period, c.level) for c in crossed] == [("day", 0.8), ("day", 1.0)]

    engine.workspace.heartbeat_file.write_text("- water the plants\n", encoding="utf-8")
    requests = len(fake_openai.requests)
    tick = await engine.heartbeat._shared_tick("timer")
    assert (tick.decision, tick.skip_reason) == ("skipped", "budget")
    assert "usage budget" in tick.explanation and len(fake_openai.requests) == requests
    refused = engine.subagents.spawn("more work")
    assert isinstance(refused, ToolResult) and refused.status is ToolStatus.ERROR
    assert "no subagent started" in refused.text
    fake_openai.add_text("chat goes on", usage=(5, 5))
    assert await turn(engine, "desktop:a", "still?") == "chat goes on"  # a chat turn is never held

    engine.usage.resume_background()  # the person says go on
    fake_openai.add_tool_calls([("heartbeat", {"action": "skip"})], usage=(5, 1))
    tick = await engine.heartbeat._shared_tick("timer")
    assert tick.decision == "skip"
    await engine.usage.flush()
    assert engine.usage.budget_hold() is None  # resumed for today, even as calls go on


async def test_a_budget_spent_before_a_restart_still_holds(make_engine, fake_openai):
    engine = make_engine()
    engine.update_config({"app.usagePrices.fake-model": {"input": 1000.0, "output": 1000.0},
                          "app.usageBudget.monthly": 0.5})
    fake_openai.add_text("dear", usage=(500, 300))
    await turn(engine, "desktop:a", "hi")
    await engine.usage.close()
    restarted = make_engine()
    assert restarted.usage.budget_hold() is None
    await restarted.usage.check_budget()
    assert "monthly usage budget of $0.50 is spent ($0.80)" in (restarted.usage.budget_hold() or "")
    await restarted.usage.close()


async def test_the_usage_sums_are_kept_in_the_apps_cache_folder_and_a_restart_adds_to_them(make_engine, fake_openai):
    """The page's groupings outlive the engine (engine/usage/summary_file.py): in $XDG_CACHE_HOME (never beside
    the usage files), and the engine started again adds the calls recorded since to them."""
    import os

    from nanobot_desktop.engine.usage.summary_file import default_summary_path

    engine = make_engine()
    folder = engine.config_path.parent
    prices = engine.usage_prices()
    fake_openai.add_text("one", usage=(1000, 10))
    await turn(engine, "desktop:a", "hi")
    await engine.usage.flush()
    assert engine.usage.reader.summary(prices).month.calls == 1
    await engine.usage.close()
    kept = default_summary_path(folder)
    assert kept.is_file() and kept.is_relative_to(os.environ["XDG_CACHE_HOME"]) and not kept.is_relative_to(folder)
    assert sorted(path.name for path in folder.glob("*.sqlite3")) == [APP_FILE]

    restarted = make_engine()
    fake_openai.add_text("two", usage=(2000, 20))
    await turn(restarted, "desktop:a", "again")
    await restarted.usage.flush()
    month = restarted.usage.reader.summary(prices).month
    assert (month.calls, month.input_tokens, month.output_tokens) == (2, 3000, 30)
    await restarted.usage.close()


A_CALL_ON_THE_LOOP = textwrap.dedent("""
    import asyncio, sys, tempfile, threading
    from pathlib import Path
    from nanobot_desktop.engine.events import EventBus, LLMCallFinished
    from nanobot_desktop.engine.usage.recorder import Budget, UsageRecorder

    on_loop = set()

    class Watch:
        def find_spec(self, name, path=None, target=None):
            if threading.current_thread() is threading.main_thread() and (
                    name == "sqlite3" or name.startswith("nanobot_desktop.engine.usage.")):
                on_loop.add(name)
            return None

    async def main(folder):
        bus = EventBus()
        recorder = UsageRecorder(folder, bus, provider_name=lambda: "custom", prices=dict, budget=Budget)
        sys.meta_path.insert(0, Watch())
        bus.publish(LLMCallFinished("desktop:a", turn_id="t", call_id="c", model="m", prompt_tokens=7,
                                    completion_tokens=3, latency_s=0.2, finish_reason="stop"))
        sys.meta_path.pop(0)
        await recorder.flush()
        await recorder.close()
        print("ON-LOOP", sorted(on_loop), "WRITTEN", sorted(p.name for p in folder.iterdir()))

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(Path(folder)))
""")


def test_a_call_is_noted_on_the_loop_and_its_row_made_and_written_by_the_recorders_thread(tmp_path: Path) -> None:
    """LLMCallFinished is published on the GUI's loop, at the end of a reply. The store's import (sqlite3
    and its schema code, ~5 ms the first time) and the row belong to the recorder's writer thread."""
    env = {**os.environ, "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", A_CALL_ON_THE_LOOP], cwd=Path(__file__).resolve().parents[3], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "ON-LOOP [] WRITTEN ['desktop-usage.sqlite3']", done.stdout
