"""Odd input on the command line is one sentence on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import pytest

from tests.conftest import write_test_config
from tests.write_faults import run_cli_limited


@pytest.mark.parametrize(("key", "expected", "code"), [
    ("", "The session key '' is empty (or only spaces and punctuation): use one like cli:direct.", 2),
    ("   ", "is empty (or only spaces and punctuation)", 2),
    ("x" * 300, "The session key is too long (300 characters, 300 bytes as a file name; at most 249 bytes): "
                "use a shorter one.", 2),
    ("ü" * 130, "(130 characters, 260 bytes as a file name; at most 249 bytes)", 2),
])
@pytest.mark.slow
def test_unusable_session_keys(key, expected, code, fake_openai, tmp_path):
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    done = run_cli_limited("agent", "-m", "hi", "-s", key, "--config", str(config), home=tmp_path)
    assert done.returncode == code
    assert done.stderr.count("\n") == 1 and expected in done.stderr and "Traceback" not in done.stderr
    assert fake_openai.requests == []


@pytest.mark.slow
def test_workspace_that_is_a_file(fake_openai, tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, afile)
    for args in (["agent", "-m", "hi"], ["heartbeat", "--once"], ["onboard"]):
        done = run_cli_limited(*args, "--config", str(config), home=tmp_path)
        assert done.returncode == 1, args
        assert done.stderr.strip().splitlines()[-1] == (
            f"Error: The workspace {afile} is a file, not a folder: choose a folder (--workspace, or "
            "agents.defaults.workspace in the config).")
        assert "Traceback" not in done.stderr
    assert afile.read_text() == "mine"


@pytest.mark.slow
def test_workspace_inside_a_file(fake_openai, tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    done = run_cli_limited("agent", "-m", "hi", "--config", str(config), "--workspace", str(afile / "ws"),
                           home=tmp_path)
    assert done.returncode == 1
    assert f"is inside {afile}, which is a file, not a folder" in done.stderr and "Traceback" not in done.stderr


def test_an_unusable_key_given_to_the_engine_fails_the_turn_with_a_sentence(make_engine):
    """The window and the heartbeat reach the loop without the CLI's check: the turn fails cleanly."""
    import asyncio

    from nanobot_desktop.engine import events as ev

    engine = make_engine()
    seen: list[object] = []
    engine.bus.subscribe(seen.append)

    async def run():
        try:
            return await engine.loop.process("k" * 300, "hello")
        finally:
            await engine.shutdown()

    result = asyncio.run(run())
    assert result.status == "failed" and result.kind == "session"
    assert result.error.startswith("The session key is too long (300 characters")
    failed = [e for e in seen if isinstance(e, ev.TurnFailed)]
    assert len(failed) == 1 and failed[0].unsent_text == "hello"
