"""Nothing lost beside a gateway (issue 29): lines the app appended that another program's rewrite
erases are noticed, said, and can be put back into a new session; the headless command warns first."""

from __future__ import annotations

import json

import pytest

from nanobot_desktop.engine.events import SessionLinesLost


async def test_an_erased_turn_is_reported_once_and_can_be_put_back(make_engine, fake_openai) -> None:
    engine = make_engine()
    lost: list[SessionLinesLost] = []
    engine.bus.subscribe(lambda e: lost.append(e) if isinstance(e, SessionLinesLost) else None)
    fake_openai.add_text("CLI-era reply")
    await engine.loop.process("cli:direct", "an older turn", channel="cli", chat_id="direct")
    path = engine.sessions.path_for("cli:direct")
    before_app = path.read_bytes().split(b"\n")
    fake_openai.add_text("Tuesday works.")
    await engine.loop.process("cli:direct", "book the dentist", channel="cli", chat_id="direct")
    # A CLI holding the session from before the app's turn saves it: whole file, re-encoded, no app lines.
    kept = [json.loads(line) for line in before_app if line.strip()]
    path.write_text("".join(json.dumps(obj) + "\n" for obj in kept), encoding="utf-8")
    engine.sessions.notice_changes([path])
    assert [(e.session_key, e.count) for e in lost] == [("cli:direct", 2)]
    assert [m["content"] for m in engine.sessions.lost_messages("cli:direct")] == ["book the dentist", "Tuesday works."]
    engine.sessions.notice_changes([path])  # reported once
    assert len(lost) == 1
    new_key = engine.put_back_lost("cli:direct")
    assert new_key is not None and new_key.startswith("desktop:")
    restored = engine.sessions.load(new_key)
    assert restored is not None and [m["content"] for m in restored.messages] == ["book the dentist", "Tuesday works."]
    assert restored.metadata["title"] == "Put back from cli:direct"
    assert engine.put_back_lost("cli:direct") is None  # once
    await engine.shutdown()


async def test_a_rewrite_that_keeps_the_apps_lines_is_not_a_loss(make_engine, fake_openai) -> None:
    engine = make_engine()
    lost: list[SessionLinesLost] = []
    engine.bus.subscribe(lambda e: lost.append(e) if isinstance(e, SessionLinesLost) else None)
    fake_openai.add_text("hello")
    await engine.loop.process("cli:direct", "hi", channel="cli", chat_id="direct")
    path = engine.sessions.path_for("cli:direct")
    lines = [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]
    lines.append({"role": "user", "content": "from the CLI", "timestamp": "2026-11-28T10:00:00"})
    path.write_text("".join(json.dumps(obj, ensure_ascii=True, indent=None) + "\n" for obj in lines),
                    encoding="utf-8")
    engine.sessions.notice_changes([path])
    assert lost == []
    await engine.shutdown()


@pytest.mark.slow
def test_the_headless_agent_warns_before_sending_into_a_session_a_gateway_holds(fake_openai, tmp_path):
    import subprocess

    from tests.conftest import write_test_config
    from tests.engine.cli.test_cli import run_cli
    from tests.engine.background.test_coexistence import _fake_gateway

    config = write_test_config(tmp_path / "cfg" / "config.json", fake_openai.base_url, tmp_path / "ws")
    gateway = _fake_gateway(tmp_path, config)
    try:
        fake_openai.add_text("sent anyway")
        done = run_cli("agent", "-m", "hello", "-s", "telegram:5", "--config", str(config), home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert f"Warning: nanobot gateway (pid {gateway.pid})" in done.stderr and "can erase" in done.stderr
        assert "use -s telegram:5-" in done.stderr  # without a terminal: said, then sent as asked
        assert done.stdout == "sent anyway\n"
        fake_openai.add_text("in a new one")
        quiet = run_cli("agent", "-m", "hello", "-s", "desktop:x", "--config", str(config), home=tmp_path)
        assert quiet.returncode == 0 and "Warning" not in quiet.stderr  # the app's own channel is not held
    finally:
        gateway.terminate()
        gateway.wait(10)
        assert isinstance(gateway, subprocess.Popen)
        gateway.stdout.close()
