"""Beside a running `nanobot gateway` (a real process whose command line says so) the app fires
neither cron jobs nor the heartbeat and says why; when that process exits, both fire again."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nanobot_desktop.engine.background.coexistence import Coexistence, parse_nanobot_command
from nanobot_desktop.engine.events import BackgroundOwnerChanged

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc (Linux)")

COMMANDS = [
    (["/home/u/.local/bin/nanobot", "gateway"], ("gateway", None, None, None)),
    (["/usr/bin/python3", "/home/u/.local/bin/nanobot", "gateway", "--port", "1"], ("gateway", None, None, None)),
    (["python", "-m", "nanobot", "gateway", "-c", "/cfg/c.json"], ("gateway", Path("/cfg/c.json"), None, None)),
    (["nanobot", "agent"], ("agent", None, None, "cli:direct")),
    (["nanobot", "agent", "-s", "telegram:5", "-w", "/ws"], ("agent", None, Path("/ws"), "telegram:5")),
    (["nanobot", "agent", "-m", "one turn"], None),
    (["nanobot", "onboard"], None),
    (["nanobot-desktop", "gateway"], None),
    (["vim", "nanobot/gateway.py"], None),
]


@pytest.mark.parametrize("argv, expected", COMMANDS)
def test_command_lines_that_run_cron_or_hold_a_session(argv: list[str], expected) -> None:
    assert parse_nanobot_command(argv) == expected


def _fake_gateway(tmp_path: Path, config: Path) -> subprocess.Popen[bytes]:
    """A real process whose command line is `…/nanobot gateway --config <config>` (it only sleeps)."""
    script = tmp_path / "bin" / "nanobot"
    script.parent.mkdir(exist_ok=True)
    script.write_text("import sys, time\nprint('ready', flush=True)\ntime.sleep(120)\n", encoding="utf-8")
    process = subprocess.Popen([sys.executable, str(script), "gateway", "--config", str(config)],
                               stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"  # running: its command line is set
    return process


async def _until(predicate, within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


@pytest.mark.slow
async def test_a_running_gateway_stops_the_apps_heartbeat_and_cron_until_it_exits(make_engine, fake_openai,
                                                                                tmp_path: Path) -> None:
    engine = make_engine()
    (engine.workspace.root / "HEARTBEAT.md").write_text("## Active Tasks\n- water the plants\n", encoding="utf-8")
    owners: list[str | None] = []
    engine.bus.subscribe(lambda e: owners.append(e.owner) if isinstance(e, BackgroundOwnerChanged) else None)
    from nanobot_desktop.engine.background.cron_types import CronSchedule

    engine.cron.add_job("check", CronSchedule(kind="every", every_ms=1000), "say hi")  # due every second
    gateway = _fake_gateway(tmp_path, engine.config_path)
    try:
        engine.update_config({"gateway.heartbeat.enabled": True, "gateway.heartbeat.intervalS": 1})
        await engine.start_services()
        assert engine.coexistence.background_owner() is not None
        reason = engine.heartbeat.held_by or ""
        assert f"nanobot gateway (pid {gateway.pid})" in reason and engine.cron.held_by == reason
        assert owners == [reason]
        await asyncio.sleep(2.5)  # two heartbeat intervals and a cron poll: nothing may fire
        # each timer tick is left to the gateway and says so in the timeline (issue 20); nothing reaches a model
        assert all((t.decision, t.skip_reason) == ("skipped", "external") for t in engine.heartbeat.ticks)
        assert fake_openai.requests == [] and engine.cron.runs() == []
    finally:
        gateway.terminate()
        gateway.wait(10)
        gateway.stdout.close()
    from tests.fake_openai import text_reply

    fake_openai.respond_with(lambda body: text_reply("done"))  # the heartbeat's decision and any turn
    engine.coexistence.check()  # what the 5 s watch does
    assert owners == [reason, None] and engine.heartbeat.held_by is None
    await _until(lambda: engine.cron.runs() != [] and engine.heartbeat.ticks != [])
    assert engine.cron.runs()[0].status == "ok" and fake_openai.requests
    await engine.shutdown()


def test_a_second_app_instance_on_the_same_workspace_stands_by(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first = Coexistence(tmp_path / "a" / "config.json", workspace, lambda p: None, scan=list)
    second = Coexistence(tmp_path / "b" / "config.json", workspace, lambda p: None, scan=list)
    first.check()
    second.check()
    assert first.background_owner() is None
    assert f"another nanobot Desktop (pid {os.getpid()})" in (second.background_owner() or "")
    first.release()
    second.check()
    assert second.background_owner() is None
    second.release()


def test_a_gateway_on_another_workspace_is_ignored(tmp_path: Path) -> None:
    other_config = tmp_path / "other" / "config.json"
    coexistence = Coexistence(tmp_path / "config.json", tmp_path / "ws", lambda p: tmp_path / "elsewhere",
                              scan=lambda: [(42, ["nanobot", "gateway", "-c", str(other_config)], None)])
    coexistence.check()
    assert coexistence.background_owner() is None
    coexistence.release()
    same_ws = Coexistence(tmp_path / "config.json", tmp_path / "ws", lambda p: tmp_path / "ws",
                          scan=lambda: [(42, ["nanobot", "gateway", "-c", str(other_config)], None)])
    same_ws.check()
    assert "pid 42" in (same_ws.background_owner() or "")
    assert same_ws.session_warning("telegram:1") and same_ws.session_warning("desktop:x") is None
    same_ws.release()


def test_a_gateway_counts_only_when_it_is_the_same_users_and_its_home_serves_our_config(tmp_path: Path) -> None:
    from nanobot_desktop.engine.background.process_facts import ProcessFacts

    home = Path(os.environ["HOME"])
    ours = home / ".nanobot" / "config.json"
    named = lambda _config: Path("~/.nanobot/workspace")  # noqa: E731 - the raw value a config holds

    def owner(*facts: ProcessFacts) -> str | None:
        coexistence = Coexistence(ours, home / ".nanobot" / "workspace", named, scan=lambda: list(facts))
        coexistence._lock_holder = lambda: None  # type: ignore[method-assign] - only the scan is under test
        coexistence.check()
        return coexistence.background_owner()

    gateway = ["/opt/nanobot/bin/nanobot", "gateway"]
    assert owner(ProcessFacts(41, gateway, None, uid=os.getuid() + 1, home=home)) is None  # another user's
    assert owner(ProcessFacts(42, gateway, None, uid=os.getuid(), home=tmp_path / "other")) is None  # another HOME
    assert owner(ProcessFacts(43, ["nanobot-gateway"], None, uid=os.getuid(), home=tmp_path / "other")) is None
    assert "pid 44" in (owner(ProcessFacts(44, gateway, None, uid=os.getuid(), home=home)) or "")
    assert "pid 45" in (owner(ProcessFacts(45, ["nanobot-gateway"], None, uid=os.getuid(), home=home)) or "")
    # another HOME's gateway given our config by its full path serves us all the same
    assert "pid 46" in (owner(ProcessFacts(46, [*gateway, "--config", str(ours)], None, uid=os.getuid(),
                                           home=tmp_path / "other")) or "")


def test_the_owner_says_which_version_runs_since_when() -> None:
    from datetime import UTC, datetime

    from nanobot_desktop.engine.background.coexistence import OtherProcess

    since = datetime(2026, 11, 28, 9, 14, tzinfo=UTC)
    text = OtherProcess(4242, "gateway", None, None, version="0.3.5", since=since).describe()
    assert text == f"nanobot gateway 0.3.5 (pid 4242) since {since.astimezone().strftime('%H:%M')}"
