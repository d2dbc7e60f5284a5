"""nanobot 0.3.5's interrupted turns (issue 29's acceptance): a checkpoint left by killing the real CLI
mid-turn is offered, *Continue* goes on from it without running a tool again, *Dismiss* closes it, and
the CLI continues the session the app left."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from nanobot_desktop.engine.layout import encode_session_key
from nanobot_desktop.engine.runtime import Engine
from tests.reference_cli import V035, onboard, reference_cli, run_reference_cli

pytestmark = pytest.mark.slow


def _home() -> Path:
    return Path(os.environ["HOME"])


def _onboard(base_url: str) -> Path:
    result = onboard(V035, _home())
    assert result.returncode == 0, result.stdout + result.stderr
    config_path = _home() / ".nanobot" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["agents"]["defaults"].update({"model": "fake-model", "provider": "custom"})
    config["providers"]["custom"].update({"apiKey": "sk-test", "apiBase": base_url})
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return config_path


def _kill_cli_mid_turn(fake_openai, message: str) -> None:
    """Run `nanobot agent -m` until its second model call (after the tool ran), then kill it."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(HOME=str(_home()), NO_COLOR="1", TERM="dumb")
    process = subprocess.Popen([str(reference_cli(V035)), "agent", "-m", message, "--no-markdown"], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(fake_openai.requests) < 2:
            assert process.poll() is None and time.monotonic() < deadline, "the CLI did not reach its second call"
            time.sleep(0.1)
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.heavy
async def test_a_turn_killed_in_the_cli_is_offered_and_continued_in_the_app(fake_openai):
    config_path = _onboard(fake_openai.base_url)
    workspace = _home() / ".nanobot" / "workspace"
    (workspace / "notes.txt").write_text("tulips: 40\n", encoding="utf-8")
    fake_openai.add_tool_calls([("read_file", {"path": "notes.txt"})])
    fake_openai.add_hang()
    _kill_cli_mid_turn(fake_openai, "how many tulips?")
    engine = Engine.open(config_path)
    try:
        side = engine.sessions.sessions_dir / f"{encode_session_key('cli:direct')}.checkpoint.json"
        assert side.exists()
        assert [info.key for info in engine.sessions.list_sessions()] == ["cli:direct"]  # never a session
        turn = engine.interrupted_turn("cli:direct")
        assert turn is not None and turn.can_continue and turn.phase == "tools_completed"
        assert turn.unknown_tools == ()
        fake_openai.add_text("You have 40 tulips.")
        result = await engine.continue_interrupted("cli:direct")
        assert result is not None and result.status == "ok" and result.reply == "You have 40 tulips."
        sent = fake_openai.requests[-1]["messages"]
        assert [m["role"] for m in sent[-4:]] == ["user", "assistant", "tool", "user"]
        assert "tulips: 40" in sent[-2]["content"] and "Continue the interrupted request" in sent[-1]["content"]
        assert not side.exists() and engine.interrupted_turn("cli:direct") is None
        assert len([r for r in fake_openai.requests if r["messages"][-1].get("role") == "tool"]) == 1  # no re-run
        header = json.loads(engine.sessions.path_for("cli:direct").read_bytes().split(b"\n", 1)[0])
        assert "pending_user_turn" not in header["metadata"]
    finally:
        await engine.shutdown()
    fake_openai.add_text("Plant ten more.")
    after = run_reference_cli(V035, ["agent", "-m", "and now?", "--no-markdown"], home=_home())
    assert after.returncode == 0, after.stdout + after.stderr
    texts = json.dumps(fake_openai.requests[-1]["messages"], ensure_ascii=False)
    assert "You have 40 tulips." in texts and "tulips: 40" in texts  # the CLI goes on from the app's session
    assert not side.exists()


async def test_a_turn_killed_while_its_tool_ran_is_dismissed_without_running_it_again(fake_openai):
    config_path = _onboard(fake_openai.base_url)
    fake_openai.add_tool_calls([("exec", {"command": "sleep 60"})])
    _kill_cli_mid_turn_while_tool_runs(fake_openai)
    engine = Engine.open(config_path)
    try:
        turn = engine.interrupted_turn("cli:direct")
        if turn is None:
            pytest.skip("0.3.5 saved no checkpoint before running this tool")
        assert turn.unknown_tools == ("exec",) and turn.phase == "awaiting_tools"
        assert engine.dismiss_interrupted("cli:direct")
        messages = engine.sessions.load("cli:direct").messages
        assert messages[-1]["role"] == "tool" and messages[-1]["content"].startswith("Error: Task interrupted")
        assert engine.interrupted_turn("cli:direct") is None
    finally:
        await engine.shutdown()


def _kill_cli_mid_turn_while_tool_runs(fake_openai) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(HOME=str(_home()), NO_COLOR="1", TERM="dumb")
    process = subprocess.Popen([str(reference_cli(V035)), "agent", "-m", "wait a minute", "--no-markdown"], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    side_files = _home() / ".nanobot" / "sessions"
    try:
        deadline = time.monotonic() + 60
        while not list(side_files.rglob("*.checkpoint.json")):
            if process.poll() is not None or time.monotonic() > deadline:
                return
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        process.kill()
        process.wait(10)
