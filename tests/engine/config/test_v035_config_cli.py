"""nanobot 0.3.5's config rules with the real CLI (issue 29's acceptance): a symlinked config, and
`${NAME}` keys, on one config and workspace shared by the CLI and the app."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nanobot_desktop.engine.runtime import Engine
from tests.reference_cli import V035, onboard, run_reference_cli

pytestmark = pytest.mark.slow


def _home() -> Path:
    return Path(os.environ["HOME"])


def _onboard(base_url: str, api_key: str = "sk-test", api_base: str | None = None) -> Path:
    result = onboard(V035, _home())
    assert result.returncode == 0, result.stdout + result.stderr
    config_path = _home() / ".nanobot" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["agents"]["defaults"].update({"model": "fake-model", "provider": "custom"})
    config["providers"]["custom"].update({"apiKey": api_key, "apiBase": api_base or base_url})
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return config_path


def _cli_turn(message: str, env: dict[str, str] | None = None) -> None:
    result = run_reference_cli(V035, ["agent", "-m", message, "--no-markdown"], home=_home(), env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def _texts(request: dict) -> str:
    return json.dumps(request["messages"], ensure_ascii=False)


async def test_with_a_symlinked_config_both_programs_continue_one_conversation(fake_openai):
    config = _onboard(fake_openai.base_url)
    target = _home() / "dotfiles" / "nanobot.json"
    target.parent.mkdir()
    config.rename(target)
    config.symlink_to(target)
    fake_openai.add_text("CLI reply one")
    _cli_turn("first from the CLI")
    engine = Engine.open(config)
    try:
        assert engine.sessions.sessions_dir.parent == target.parent / "sessions"
        assert [info.key for info in engine.sessions.list_sessions()] == ["cli:direct"]
        fake_openai.add_text("the app's answer")
        result = await engine.loop.process("cli:direct", "a turn from the app", channel="cli", chat_id="direct")
        assert result.status == "ok", result.error
        assert "first from the CLI" in _texts(fake_openai.requests[-1])
    finally:
        await engine.shutdown()
    fake_openai.add_text("CLI reply two")
    _cli_turn("second from the CLI")
    sent = _texts(fake_openai.requests[-1])
    assert "a turn from the app" in sent and "the app's answer" in sent and "first from the CLI" in sent
    assert not (config.parent / "sessions").exists()  # nothing beside the link


@pytest.mark.heavy
async def test_env_referenced_keys_reach_the_endpoint_expanded_from_both_programs(fake_openai, monkeypatch):
    config = _onboard(fake_openai.base_url, api_key="${NB_TEST_KEY}", api_base="${NB_TEST_BASE}")
    env = {"NB_TEST_KEY": "sk-from-the-environment", "NB_TEST_BASE": fake_openai.base_url}
    fake_openai.add_text("CLI reply")
    _cli_turn("from the CLI", env)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    engine = Engine.open(config)
    try:
        engine.update_config({"agents.defaults.temperature": 0.2})
        fake_openai.add_text("app reply")
        result = await engine.loop.process("cli:direct", "from the app", channel="cli", chat_id="direct")
        assert result.status == "ok", result.error
    finally:
        await engine.shutdown()
    keys = [{k.lower(): v for k, v in request.headers.items()}["authorization"] for request in fake_openai.requests]
    assert keys == ["Bearer sk-from-the-environment"] * 2
    saved = json.loads(config.read_text(encoding="utf-8"))["providers"]["custom"]
    assert (saved["apiKey"], saved["apiBase"]) == ("${NB_TEST_KEY}", "${NB_TEST_BASE}")
    fake_openai.add_text("CLI again")
    _cli_turn("CLI after the app saved", env)  # 0.3.5 still reads the file the app saved
    assert "from the app" in _texts(fake_openai.requests[-1])
