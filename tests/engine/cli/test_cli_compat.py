"""The real nanobot CLIs (0.1.4.post4 and 0.3.5) run on the config the app writes, and the app runs on
the config they write — against the loopback fake endpoint, with a HOME of the test's own."""

from __future__ import annotations

import json
from pathlib import Path


import pytest

from nanobot_desktop.cli import main as desktop_cli
from nanobot_desktop.engine.config import load_app_settings, load_config
from nanobot_desktop.engine.llm.registry import resolve_provider
from nanobot_desktop.engine.runtime import Engine
from tests.reference_cli import POST4, V035, onboard, run_reference_cli

VERSIONS = [POST4, V035]
COMPLAINTS = ("warning", "unknown setting", "extra inputs", "failed to load", "no api key", "invalid configuration",
              "error")


def cli_turn(version: str, home: Path, fake_openai, reply: str) -> str:
    """`nanobot agent -m …` of that version; asserts it answered with `reply` and said nothing about the config."""
    fake_openai.add_text(reply)
    result = run_reference_cli(version, ["agent", "-m", "ping", "--no-markdown"], home=home)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert reply in result.stdout, output
    lowered = output.lower()
    assert not [word for word in COMPLAINTS if word in lowered], output
    return output


def refresh(version: str, home: Path) -> None:
    """`nanobot onboard` on an existing config, answering "N" (refresh, keep values)."""
    args, stdin = (["onboard"], "N\n") if version == POST4 else (["onboard", "--refresh"], None)
    result = run_reference_cli(version, args, home=home, stdin_text=stdin)
    assert result.returncode == 0 and "refreshed" in result.stdout, result.stdout + result.stderr


@pytest.mark.heavy
@pytest.mark.slow
def test_app_onboard_then_a_provider_set_through_the_engine_runs_in_both_clis(home: Path, fake_openai) -> None:
    assert desktop_cli(["onboard"]) == 0
    config_path = home / ".nanobot" / "config.json"
    engine = Engine.open(config_path)
    engine.update_config({"providers.custom.apiKey": "sk-fake", "providers.custom.apiBase": fake_openai.base_url,
                          "agents.defaults.provider": "custom", "agents.defaults.model": "fake-model",
                          "app.toolApproval": {"exec": "deny"}, "app.theme": "dark"})
    text = config_path.read_text(encoding="utf-8")
    assert "desktop" not in json.loads(text) and "approval" not in text
    for index, version in enumerate(VERSIONS):
        cli_turn(version, home, fake_openai, f"pong {index}")
        refresh(version, home)
        resolved = resolve_provider(load_config(config_path))
        assert (resolved.name, resolved.api_key, resolved.api_base, resolved.model) == (
            "custom", "sk-fake", fake_openai.base_url, "fake-model"), version
    assert load_app_settings(config_path).tool_approval == {"exec": "deny"}  # the CLIs never saw it


@pytest.mark.slow
def test_a_config_made_by_nanobot_035_onboard_starts_the_app_and_runs_a_turn(home: Path, fake_openai) -> None:
    result = onboard(V035, home)
    assert result.returncode == 0, result.stdout + result.stderr
    config_path = home / ".nanobot" / "config.json"
    data = json.loads(config_path.read_text(encoding="utf-8"))
    assert data["providers"]["custom"]["apiKey"] is None  # 0.3.5 writes null for every unset key
    data["providers"]["custom"].update(apiKey="sk-fake", apiBase=fake_openai.base_url)
    data["agents"]["defaults"].update(provider="custom", model="fake-model")
    config_path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    before = config_path.read_bytes()

    async def turn() -> str:
        engine = Engine.open(config_path)
        try:
            fake_openai.add_text("hello from the app")
            return (await engine.loop.process("cli:direct", "hi")).reply or ""
        finally:
            await engine.shutdown()

    import asyncio
    assert asyncio.run(turn()) == "hello from the app"
    assert config_path.read_bytes() == before  # starting the app rewrote nothing
    cli_turn(V035, home, fake_openai, "and from the CLI")


@pytest.mark.heavy
@pytest.mark.slow
def test_an_old_config_with_a_desktop_block_is_moved_once_and_both_clis_run_on_it(home: Path, fake_openai) -> None:
    config_path = home / ".nanobot" / "config.json"
    config_path.parent.mkdir()
    old = {"agents": {"defaults": {"workspace": str(home / "ws"), "model": "fake-model", "provider": "vllm",
                                   "disabledSkills": ["weather"]}},
           "providers": {"custom": {"apiKey": "", "apiBase": None},
                         "vllm": {"apiKey": "", "apiBase": fake_openai.base_url},
                         "ollama": {"apiKey": "", "apiBase": None}, "lmstudio": {"apiKey": "", "apiBase": None}},
           "tools": {"approval": {"exec": "allow"}},
           "desktop": {"theme": "dark", "closeToTray": False}}
    original = json.dumps(old, indent=2).encode("utf-8")
    config_path.write_bytes(original)
    rejected = run_reference_cli(POST4, ["agent", "-m", "ping", "--no-markdown"], home=home)
    assert "desktop" in (rejected.stdout + rejected.stderr)  # what users saw: post4 refuses the whole file

    assert desktop_cli(["onboard"]) == 0  # any start of the app moves the keys out
    backups = sorted(config_path.parent.glob("config.json.before-desktop-json*"))
    assert [b.read_bytes() for b in backups] == [original]
    assert load_app_settings(config_path).disabled_skills == ["weather"]
    moved = config_path.read_bytes()
    Engine.open(config_path)
    assert config_path.read_bytes() == moved and len(list(config_path.parent.glob("*.before-*"))) == 1  # once
    for index, version in enumerate(VERSIONS):
        cli_turn(version, home, fake_openai, f"still works {index}")
