"""The app beside the real nanobot 0.3.5 (issue 29's acceptance): its scheduled jobs and its gateway.

Each test runs `nanobot onboard` of 0.3.5 in the test's HOME, points the config at the loopback fake
endpoint (websocket channel off, so a gateway has no chat channel and binds no fixed port), and then
runs the CLI's `agent` and `gateway` as a person would, beside an Engine on the same config.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nanobot_desktop.engine.background.cron_types import CronSchedule
from nanobot_desktop.engine.events import BackgroundOwnerChanged
from nanobot_desktop.engine.runtime import Engine
from tests.fake_openai import text_reply
from tests.reference_cli import V035, onboard, reference_cli, run_reference_cli

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc (Linux)")]


def _home() -> Path:
    return Path(os.environ["HOME"])


def _onboard(home: Path, base_url: str) -> Path:
    """0.3.5's `nanobot onboard` in `home`, then its config pointed at the fake; returns the config path."""
    home.mkdir(parents=True, exist_ok=True)
    result = onboard(V035, home)
    assert result.returncode == 0, result.stdout + result.stderr
    config_path = home / ".nanobot" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["agents"]["defaults"].update({"model": "fake-model", "provider": "custom"})
    config["providers"]["custom"].update({"apiKey": "sk-test", "apiBase": base_url})
    config["channels"]["websocket"] = {"enabled": False}
    config["gateway"]["heartbeat"]["intervalS"] = 2  # its timer wakes (and reads the job store) every 2 s
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return config_path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_gateway(home: Path) -> subprocess.Popen[bytes]:
    """`nanobot gateway` of 0.3.5 with HOME=home, until its runtime record says it runs."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(HOME=str(home), NO_COLOR="1", TERM="dumb", PYTHONIOENCODING="utf-8")
    log = open(home / "gateway-test.log", "wb")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen([str(reference_cli(V035)), "gateway", "--port", str(_free_port())], env=env,
                               stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    record = home / ".nanobot" / "run" / "gateway.json"
    deadline = time.monotonic() + 60
    while not (record.exists() and json.loads(record.read_text(encoding="utf-8") or "{}").get("pid") == process.pid):
        assert process.poll() is None, (home / "gateway-test.log").read_text(errors="replace")
        assert time.monotonic() < deadline, "the gateway did not start"
        time.sleep(0.1)
    return process


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


async def _until(predicate: Callable[[], object], within_s: float, what: str) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < within_s, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


def _asked(fake_openai, text: str) -> int:
    """How many model requests carried `text` in their last user message."""
    count = 0
    for request in fake_openai.requests:
        users = [m for m in request["messages"] if m.get("role") == "user"]
        if users and text in json.dumps(users[-1].get("content"), ensure_ascii=False):
            count += 1
    return count


async def test_a_running_0_3_5_gateway_is_recognised_within_5_s_and_another_homes_is_not(fake_openai, tmp_path):
    config_path = _onboard(_home(), fake_openai.base_url)
    other_home = tmp_path / "other-home"
    _onboard(other_home, fake_openai.base_url)
    fake_openai.respond_with(lambda body: text_reply("ok"))
    engine = Engine.open(config_path)
    owners: list[str | None] = []
    engine.bus.subscribe(lambda e: owners.append(e.owner) if isinstance(e, BackgroundOwnerChanged) else None)
    stranger = _start_gateway(other_home)  # another HOME's gateway, no --config: it serves that HOME's files
    try:
        await engine.start_services()
        engine.coexistence.check(await asyncio.to_thread(engine.coexistence._collect))
        assert engine.coexistence.background_owner() is None and engine.heartbeat.held_by is None
        gateway = _start_gateway(_home())
        try:
            took = await _until(lambda: engine.heartbeat.held_by, 5.0, "the app to see the gateway")
            reason = engine.heartbeat.held_by or ""
            assert f"nanobot gateway 0.3.5 (pid {gateway.pid}) since " in reason, reason
            assert engine.cron.held_by == reason and owners == [reason]
            assert str(stranger.pid) not in reason
            print(f"gateway recognised {took:.1f} s after its record appeared")
        finally:
            _stop(gateway)
        await _until(lambda: engine.heartbeat.held_by is None, 5.0, "the app to take the heartbeat back")
        assert owners == [reason, None]
    finally:
        _stop(stranger)
        await engine.shutdown()


@pytest.mark.heavy
async def test_a_job_made_by_each_program_runs_once_by_the_other(fake_openai):
    config_path = _onboard(_home(), fake_openai.base_url)
    workspace = _home() / ".nanobot" / "workspace"
    store, queue = workspace / "cron" / "jobs.json", workspace / "cron" / "action.jsonl"

    # 1. `nanobot agent` (0.3.5) schedules a job: it is queued in action.jsonl; the app lists and runs it once.
    due = (datetime.now(UTC) + timedelta(seconds=25)).isoformat(timespec="seconds")
    fake_openai.add_tool_calls([("cron", {"action": "add", "message": "stretch your legs", "at": due})])
    fake_openai.add_text("Scheduled.")
    result = run_reference_cli(V035, ["agent", "-m", "remind me to stretch", "--no-markdown"], home=_home())
    assert result.returncode == 0, result.stdout + result.stderr
    assert '"action": "add"' in queue.read_text(encoding="utf-8")
    engine = Engine.open(config_path)
    try:
        [job] = [j for j in engine.cron.list_jobs() if j.payload.message == "stretch your legs"]
        fake_openai.respond_with(lambda body: text_reply("Stretched."))
        await engine.start_services()
        try:
            await _until(lambda: engine.cron.runs(job.id), 40.0, "the app to run the CLI's job")
        except AssertionError:
            raise AssertionError((engine.cron.list_jobs(True), engine.cron.status(), engine.cron.held_by,
                                  store.read_text() if store.exists() else None, queue.read_text(), job)) from None
        assert engine.cron.runs(job.id)[0].status == "ok"
        assert _asked(fake_openai, "stretch your legs") == 1
        assert queue.read_bytes() == b"" and job.id not in store.read_text(encoding="utf-8")  # run, then gone
    finally:
        await engine.shutdown()
    assert job.id not in store.read_text(encoding="utf-8")

    # 2. The app schedules a job while the 0.3.5 gateway runs: the gateway runs it once, the app never.
    engine = Engine.open(config_path)
    gateway = _start_gateway(_home())
    try:
        await engine.start_services()
        await _until(lambda: engine.cron.held_by, 5.0, "the app to see the gateway")
        at_ms = int((time.time() + 8) * 1000)
        made = engine.cron.add_job("water", CronSchedule(kind="at", at_ms=at_ms), "water the plants")
        assert made.id not in store.read_text(encoding="utf-8")  # queued for the gateway, not written over it

        def gateway_ran() -> bool:
            jobs = json.loads(store.read_text(encoding="utf-8"))["jobs"]
            return any(j["id"] == made.id and j["state"]["lastStatus"] == "ok" for j in jobs)

        await _until(gateway_ran, 30.0, "the gateway to run the app's job")
        assert _asked(fake_openai, "water the plants") == 1
        assert engine.cron.runs(made.id) == []
        listed = engine.cron.get_job(made.id)
        assert listed is not None and listed.state.last_status == "ok" and not listed.enabled
    finally:
        _stop(gateway)
    try:
        engine.coexistence.check(await asyncio.to_thread(engine.coexistence._collect))
        assert engine.cron.held_by is None
        engine.cron.reload_if_changed()
        await asyncio.sleep(0.5)
        assert engine.cron.runs(made.id) == [] and _asked(fake_openai, "water the plants") == 1
    finally:
        await engine.shutdown()


@pytest.mark.heavy
async def test_a_turn_beside_a_gateway_holding_the_session_is_warned_before_and_its_erasure_reported(fake_openai):
    from nanobot_desktop.engine.events import SessionLinesLost

    config_path = _onboard(_home(), fake_openai.base_url)
    # `nanobot agent` schedules a job every 4 s: 0.3.5 binds it to cli:direct, which the gateway then holds
    fake_openai.add_tool_calls([("cron", {"action": "add", "message": "count the tulips", "every_seconds": 4})])
    fake_openai.add_text("Scheduled.")
    result = run_reference_cli(V035, ["agent", "-m", "count the tulips every few seconds", "--no-markdown"],
                               home=_home())
    assert result.returncode == 0, result.stdout + result.stderr
    # the gateway's job turns take 3 s, so the app's turn can land while one is in flight (the gateway
    # then saves the session as it loaded it before the app's lines: the case that loses them)
    fake_openai.respond_with(lambda body: text_reply("Forty tulips.", delay_s=3.0)
                             if "count the tulips" in json.dumps(body["messages"][-1]) else text_reply("Planted."))
    gateway = _start_gateway(_home())
    engine = Engine.open(config_path)
    lost: list[SessionLinesLost] = []
    engine.bus.subscribe(lambda e: lost.append(e) if isinstance(e, SessionLinesLost) else None)
    try:
        await _until(lambda: _asked(fake_openai, "count the tulips") >= 1, 30.0, "the gateway to run the job")
        await asyncio.to_thread(engine.coexistence.scan_now)
        warning = engine.coexistence.session_warning("cli:direct")
        assert warning and f"pid {gateway.pid}" in warning and "erase" in warning  # said before sending
        runs = _asked(fake_openai, "count the tulips")
        await _until(lambda: _asked(fake_openai, "count the tulips") > runs, 30.0, "the next run to start")
        turn = await engine.loop.process("cli:direct", "plant more tulips", channel="cli", chat_id="direct")
        assert turn.status == "ok", turn.error

        def noticed() -> bool:
            engine.sessions.notice_changes()
            return bool(lost)

        await _until(noticed, 20.0, "the app to notice its erased turn")
        assert lost[0].session_key == "cli:direct" and lost[0].count == 2 and f"pid {gateway.pid}" in lost[0].by
        erased = engine.sessions.lost_messages("cli:direct")
        assert {m["content"] for m in erased} <= {"plant more tulips", "Planted."}, erased
        print("erased by the gateway:", [(m["role"], m["content"]) for m in erased])
        new_key = engine.put_back_lost("cli:direct")
        restored = engine.sessions.load(new_key or "")
        assert restored is not None and [m["content"] for m in restored.messages] == [m["content"] for m in erased]
    finally:
        _stop(gateway)
        await engine.shutdown()
