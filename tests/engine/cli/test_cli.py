"""The headless command line, run as a real subprocess against the loopback fake endpoint."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nanobot_desktop.engine import events as ev
from tests.conftest import write_test_config


def run_cli(*args: str, home: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NANOBOT_")}
    env.update(HOME=str(home), USERPROFILE=str(home))
    return subprocess.run([sys.executable, "-m", "nanobot_desktop", *args], capture_output=True, text=True,
                          env=env, timeout=60, input=stdin)


@pytest.mark.slow
def test_agent_message_prints_reply_and_appends_the_turn(fake_openai, tmp_path):
    config = write_test_config(tmp_path / "cfg" / "config.json", fake_openai.base_url, tmp_path / "ws")
    fake_openai.add_text("hello back")
    done = run_cli("agent", "-m", "hello", "--config", str(config), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello back\n"
    lines = (tmp_path / "ws" / "sessions" / "cli_direct.jsonl").read_text(encoding="utf-8").splitlines()
    meta = json.loads(lines[0])
    assert list(meta)[:6] == ["_type", "key", "created_at", "updated_at", "metadata", "last_consolidated"]
    assert meta["key"] == "cli:direct" and meta["last_consolidated"] == 0
    user, assistant = json.loads(lines[1]), json.loads(lines[2])
    assert set(user) == {"role", "content", "timestamp"} and user["content"] == "hello"
    assert set(assistant) == {"role", "content", "timestamp"} and assistant["content"] == "hello back"


@pytest.mark.slow
def test_agent_exit_code_and_one_line_error_when_endpoint_fails(fake_openai, tmp_path):
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    fake_openai.add_error(401, "Incorrect API key provided")
    done = run_cli("agent", "-m", "hello", "--config", str(config), home=tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and "API key" in last and "Traceback" not in done.stderr


@pytest.mark.slow
def test_agent_prints_each_retry_and_the_reply_after_it(fake_openai, tmp_path):
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    fake_openai.add_error(503, "Overloaded")
    fake_openai.add_text("made it")
    done = run_cli("agent", "-m", "hello", "--config", str(config), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "  ↳ retrying (2/4) in 0.5 s…" in done.stderr.splitlines()  # the back-off starts at half a second
    assert done.stdout == "made it\n"


@pytest.mark.slow
def test_agent_without_terminal_denies_asked_tools_and_yes_allows(fake_openai, tmp_path):
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    fake_openai.add_tool_calls([("write_file", {"path": "out.txt", "content": "x"})])
    fake_openai.add_text("could not")
    denied = run_cli("agent", "-m", "write", "--config", str(config), home=tmp_path, stdin="")
    assert denied.returncode == 0 and "denied write_file" in denied.stderr
    assert not (tmp_path / "ws" / "out.txt").exists()
    fake_openai.add_tool_calls([("write_file", {"path": "out.txt", "content": "x"})])
    fake_openai.add_text("written")
    allowed = run_cli("agent", "-m", "write", "--yes", "--config", str(config), home=tmp_path, stdin="")
    assert allowed.returncode == 0 and allowed.stdout == "written\n"
    assert (tmp_path / "ws" / "out.txt").read_text() == "x"


@pytest.mark.slow
def test_bad_config_is_a_one_line_error_and_untouched(tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"agents": {"defaults": {"model": "x",}}}', encoding="utf-8")
    before = config.read_bytes()
    done = run_cli("agent", "-m", "hi", "--config", str(config), home=tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "line 1" in done.stderr
    assert config.read_bytes() == before


@pytest.mark.slow
def test_onboard_creates_config_and_workspace_never_overwriting(tmp_path):
    config = tmp_path / "nb" / "config.json"
    ws = tmp_path / "my-ws"
    first = run_cli("onboard", "--config", str(config), "--workspace", str(ws), home=tmp_path)
    assert first.returncode == 0, first.stderr
    saved = json.loads(config.read_text())
    assert saved["agents"]["defaults"]["workspace"] == str(ws)
    assert (ws / "AGENTS.md").is_file() and (ws / "memory" / "HISTORY.md").read_bytes() == b""
    (ws / "SOUL.md").write_text("mine", encoding="utf-8")
    before = config.read_bytes()
    second = run_cli("onboard", "--config", str(config), "--workspace", str(ws), home=tmp_path)
    assert second.returncode == 0 and "existing nanobot workspace" in second.stdout
    assert config.read_bytes() == before and (ws / "SOUL.md").read_text() == "mine"


@pytest.mark.slow
def test_heartbeat_once_with_no_tasks_makes_no_request(fake_openai, tmp_path):
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    done = run_cli("heartbeat", "--once", "--config", str(config), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "decision: skipped" in done.stdout
    assert fake_openai.requests == []


@pytest.mark.slow
def test_help_lists_the_commands(tmp_path):
    done = run_cli("--help", home=tmp_path)
    assert done.returncode == 0
    for word in ("onboard", "agent", "heartbeat", "--toggle", "--workspace", "--config"):
        assert word in done.stdout


async def test_heartbeat_run_goes_through_the_agent_into_the_heartbeat_session(make_engine, fake_openai):
    engine = make_engine()
    engine.workspace.heartbeat_file.write_text("## Active Tasks\n- check the weather\n", encoding="utf-8")

    def route(body):
        from tests.fake_openai import text_reply, tool_calls_reply

        if any(t["function"]["name"] == "heartbeat" for t in body.get("tools") or []):
            return tool_calls_reply([("heartbeat", {"action": "run", "tasks": "check the weather"})])
        return text_reply("It is sunny.")

    fake_openai.respond_with(route)
    tick = await engine.heartbeat.trigger_now()
    assert (tick.decision, tick.result) == ("run", "It is sunny.")
    lines = engine.sessions.path_for("heartbeat").read_text().splitlines()
    assert json.loads(lines[1])["content"] == "check the weather"
    assert json.loads(lines[2])["content"] == "It is sunny."


async def test_cron_every_job_fires_through_the_agent(make_engine, fake_openai):
    """Every run gets the same scripted answer, so however often the 50 ms job fires before the
    engine stops (a loaded machine may fire it again), each run is a success: the test waits on the
    first run's event and its state saved, not on the job firing exactly once in a window."""
    from nanobot_desktop.engine.background.cron import CronSchedule
    from tests.fake_openai import text_reply

    engine = make_engine()
    runs: list[ev.CronJobRan] = []
    ran = asyncio.Event()

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.CronJobRan):
            runs.append(event)
            ran.set()

    engine.bus.subscribe(on_event)
    fake_openai.add(text_reply("Time to stretch!"), times=None)
    job = engine.cron.add_job("stretch", CronSchedule(kind="every", every_ms=50), "remind me to stretch")
    await engine.cron.start()
    try:
        await asyncio.wait_for(ran.wait(), 10)
    finally:
        await engine.shutdown()
    assert [run.status for run in runs] == ["ok"] * len(runs), [run.error for run in runs]
    lines = engine.sessions.path_for(f"cron:{job.id}").read_text().splitlines()
    assert "[Scheduled Task]" in json.loads(lines[1])["content"]
    assert json.loads(lines[2])["content"] == "Time to stretch!"
    stored = json.loads(Path(engine.cron.status()["store_path"]).read_text())
    assert stored["jobs"][0]["state"]["lastStatus"] == "ok"
