"""nanobot 0.3.5's rules for config values and paths (issue 29): `${NAME}` references, the subagent
limit, sessions beside a symlinked config's target; the real-CLI halves are in test_v035_config_cli.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nanobot_desktop.engine.config import ConfigError
from nanobot_desktop.engine.config.env_refs import expand_env_refs
from nanobot_desktop.engine.layout import LayoutKind, detect_layout, max_concurrent_subagents, prepare_workspace


def test_env_refs_are_expanded_as_0_3_5_does() -> None:
    env = {"KEY": "sk-1", "HOST": "127.0.0.1"}
    assert expand_env_refs("${KEY}", "apiKey", env) == "sk-1"
    assert expand_env_refs("http://${HOST}:8/v1", "apiBase", env) == "http://127.0.0.1:8/v1"
    assert expand_env_refs("$KEY and ${ not a ref", "apiKey", env) == "$KEY and ${ not a ref"
    with pytest.raises(ConfigError, match=r"providers.custom.apiKey: environment variable MISSING is not set"):
        expand_env_refs("${MISSING}", lambda: "providers.custom.apiKey", env)


async def test_a_referenced_key_reaches_the_endpoint_and_the_file_keeps_the_reference(
        make_engine, fake_openai, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine()
    raw = json.loads(engine.config_path.read_text(encoding="utf-8"))
    raw["providers"]["custom"]["apiKey"] = "${NB_TEST_KEY}"
    raw["providers"]["custom"]["extraHeaders"] = {"X-Team": "${NB_TEST_TEAM}"}
    engine.config_path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    monkeypatch.setenv("NB_TEST_KEY", "sk-from-env")
    monkeypatch.setenv("NB_TEST_TEAM", "blue")
    engine.update_config({"agents.defaults.temperature": 0.3})  # reloads the file and saves it
    fake_openai.add_text("hi")
    result = await engine.loop.process("desktop:env", "hello")
    assert result.status == "ok", result.error
    headers = {k.lower(): v for k, v in fake_openai.requests[-1].headers.items()}
    assert headers["authorization"] == "Bearer sk-from-env" and headers["x-team"] == "blue"
    saved = json.loads(engine.config_path.read_text(encoding="utf-8"))["providers"]["custom"]
    assert saved["apiKey"] == "${NB_TEST_KEY}" and saved["extraHeaders"] == {"X-Team": "${NB_TEST_TEAM}"}
    monkeypatch.delenv("NB_TEST_KEY")
    result = await engine.loop.process("desktop:env", "again")
    assert result.status == "failed" and "NB_TEST_KEY is not set" in (result.error or "")


def test_max_concurrent_subagents_reads_0_3_5s_key_with_its_default() -> None:
    assert max_concurrent_subagents(None) == 4
    assert max_concurrent_subagents({"maxConcurrentSubagents": 2}) == 2
    assert max_concurrent_subagents({"maxConcurrentSubagents": 0}) == 4  # 0.3.5 refuses < 1
    assert max_concurrent_subagents({"maxConcurrentSubagents": True}) == 4


async def test_subagents_beyond_the_limit_wait_for_a_free_slot(make_engine, fake_openai) -> None:
    from tests.fake_openai import hang_reply, text_reply

    engine = make_engine(maxConcurrentSubagents=1)
    assert engine.settings().max_concurrent_subagents == 1
    # the first subagent's model call never answers (until it is cancelled); every other call does
    fake_openai.respond_with(lambda body: hang_reply() if body["messages"][-1]["content"] == "wait" else text_reply("done"))
    first = engine.subagents.spawn("wait", label="first", origin_session_key="desktop:s")
    engine.subagents.spawn("quick", label="second", origin_session_key="desktop:s")
    for _ in range(200):
        if fake_openai.requests:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    assert len(fake_openai.requests) == 1  # the second waits for the first
    first_id = next(r.task_id for r in engine.subagents.list() if r.label == "first")
    assert "first" in first and await engine.subagents.cancel(first_id)
    for _ in range(300):
        if len(fake_openai.requests) >= 2:
            break
        await asyncio.sleep(0.01)
    assert fake_openai.requests[1]["messages"][-1]["content"] == "quick"  # it ran once the slot was free
    # its result is announced to the session that spawned it: that turn's call is the third; once it is
    # in, no connection is still being made when the engine stops
    for _ in range(300):
        if len(fake_openai.requests) >= 3:
            break
        await asyncio.sleep(0.01)
    assert "Subagent 'second' completed successfully" in fake_openai.requests[2]["messages"][-1]["content"]
    await engine.shutdown()


def test_a_0_3_workspace_with_a_symlinked_config_keeps_sessions_beside_the_target(tmp_path: Path) -> None:
    target = tmp_path / "real" / "config.json"
    target.parent.mkdir()
    target.write_text("{}", encoding="utf-8")
    link = tmp_path / "home" / ".nanobot" / "config.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    prepare_workspace(tmp_path / "ws", LayoutKind.V03)
    assert detect_layout(tmp_path / "ws", link).sessions_root == tmp_path / "real" / "sessions"
    post4 = tmp_path / "old"
    (post4 / "memory").mkdir(parents=True)
    (post4 / "memory" / "HISTORY.md").write_text("", encoding="utf-8")
    assert detect_layout(post4, link).data_dir == link.parent  # post4 keeps its files beside the link


def test_keys_0_3_5_removed_are_never_written(tmp_path: Path) -> None:
    from nanobot_desktop.engine.config import patch_settings
    from tests.conftest import write_test_config

    path = write_test_config(tmp_path / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws")
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["agents"]["defaults"].update({"contextBlockLimit": 4, "fail_on_tool_error": True, "consolidationRatio": 0.5,
                                      "maxConcurrentSubagents": 2})
    raw["gateway"]["heartbeat"]["keepRecentMessages"] = 8
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    patch_settings(path, {"agents.defaults.temperature": 0.4})
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert set(saved["agents"]["defaults"]).isdisjoint({"contextBlockLimit", "fail_on_tool_error", "consolidationRatio"})
    assert "keepRecentMessages" not in saved["gateway"]["heartbeat"]
    assert saved["agents"]["defaults"]["maxConcurrentSubagents"] == 2 and saved["agents"]["defaults"]["temperature"] == 0.4

