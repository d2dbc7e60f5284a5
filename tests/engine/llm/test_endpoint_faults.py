"""Every malformed or stalled reply of an endpoint gets its own message, and the partial reply stays.

Issue 13 ("Endpoint faults"): a cut-off stream was reported as "Could not connect… Is the server
running?" and the partial reply dropped; an HTML page or `choices: []` ended the turn as a silent
success; a stalled endpoint said nothing for minutes; a trickle never ended. Each kind here runs the
real CLI against the fake endpoint, with the timeouts shortened through the config (never a sleep in
the test), and checks the exit code, the message, and what the session file kept.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nanobot_desktop.engine import events as ev
from nanobot_desktop.engine.config.paths import app_settings_path
from tests.conftest import write_test_config
from tests.write_faults import run_cli_limited

PARTIAL = "The first half of a careful answer, "


def _config(tmp_path: Path, base_url: str, first_byte: float = 10.0, idle: float = 1.5) -> Path:
    path = write_test_config(tmp_path / "cfg" / "config.json", base_url, tmp_path / "ws")
    app_settings_path(path).write_text(json.dumps({"modelFirstByteTimeout": first_byte, "modelIdleTimeout": idle,
                                                       "modelWaitForLocal": False}))  # given up on, as a remote one
    return path


def _session_lines(tmp_path: Path) -> list[dict]:
    path = tmp_path / "ws" / "sessions" / "cli_direct.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines()[1:] if line.strip()]


FAULTS = {
    # kind: (script the fake, expected words in the error, kind saved with the partial reply or None)
    "cut": (lambda f: f.add_drop(PARTIAL),
            "The endpoint closed the connection mid-reply after 36 characters (the stream was cut off before "
            "it finished). The partial reply was kept, marked as cut off.", "cut"),
    "malformed": (lambda f: f.add_invalid_chunk(PARTIAL),
                  "The endpoint sent a stream chunk that is not valid JSON (Expecting ',' delimiter) after 36 "
                  "characters of the reply, so the reply could not be read to the end. The partial reply was "
                  "kept, marked as cut off.", "malformed"),
    "idle": (lambda f: f.add_hang(PARTIAL),
             "The endpoint stopped sending mid-reply (no progress for 1.5 s after 36 characters), so the call was "
             "given up. The partial reply was kept, marked as cut off.", "stalled"),
    "trickle": (lambda f: f.add_trickle("abcdefghijklmnopqrstuvwxyz" * 4, 0.3),
                "The endpoint's stream slowed to a trickle", "stalled"),
    "html": (lambda f: f.add_html(),
             "answered with a web page (text/html), not a chat-completions stream: check the base URL in "
             "Settings (it usually ends in /v1).", None),
    "empty": (lambda f: f.add_empty_choices(),
              "The endpoint's reply contained no choices (3 chunks, each with an empty choices list): the model "
              "gave no answer. Try again, or pick another model in Settings.", None),
    "stall": (lambda f: f.add_stall(),
              "accepted the request but sent nothing for 2.5 s, so the call was given up (first-byte timeout). "
              "The server may be overloaded or stuck: try again.", None),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(FAULTS))
def test_each_endpoint_fault_has_its_own_message_and_keeps_the_partial_reply(kind, fake_openai, tmp_path):
    script, expected, saved_kind = FAULTS[kind]
    config = _config(tmp_path, fake_openai.base_url, first_byte=2.5 if kind == "stall" else 10.0)
    script(fake_openai)
    done = run_cli_limited("agent", "-m", "explain", "--config", str(config), home=tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and expected in last, last
    assert "Could not connect" not in last and "Is the server running" not in last
    lines = _session_lines(tmp_path)
    assert lines[0]["role"] == "user" and lines[0]["content"] == "explain"
    if saved_kind is None:
        assert len(lines) == 1 and done.stdout == ""  # nothing arrived: nothing to keep
    else:
        kept = lines[-1]
        assert kept["role"] == "assistant" and kept["cut_off"] == saved_kind
        assert kept["content"] and done.stdout.strip() == kept["content"]
        if kind != "trickle":
            assert kept["content"] == PARTIAL.strip()
    assert len(fake_openai.requests) == 1  # a fault is reported, not hidden behind silent retries


def test_waiting_for_the_first_byte_is_announced_while_it_lasts(make_engine, fake_openai, tmp_path):
    engine = make_engine()
    engine.app_settings.model_first_byte_timeout = 2.5
    engine.app_settings.model_wait_for_local = False  # the fake is on 127.0.0.1: as a remote endpoint here
    fake_openai.add_stall()
    seen: list[object] = []
    engine.bus.subscribe(seen.append)

    async def run():
        try:
            return await engine.loop.process("cli:direct", "hello?")
        finally:
            await engine.shutdown()

    result = asyncio.run(run())
    assert result.status == "failed" and result.kind == "timeout"
    waits = [e for e in seen if isinstance(e, ev.WaitingForModel)]
    assert waits and all(w.phase == "first_byte" and w.limit_s == 2.5 for w in waits)
    assert waits[0].waited_s >= 2.0
    failed = [e for e in seen if isinstance(e, ev.TurnFailed)]
    assert len(failed) == 1 and failed[0].kind == "timeout" and "first-byte timeout" in failed[0].error


def test_a_cut_reply_shows_in_the_turn_failed_event_with_its_partial_text(make_engine, fake_openai):
    engine = make_engine()
    fake_openai.add_drop(PARTIAL)
    seen: list[object] = []
    engine.bus.subscribe(seen.append)

    async def run():
        try:
            return await engine.loop.process("cli:direct", "explain")
        finally:
            await engine.shutdown()

    result = asyncio.run(run())
    failed = [e for e in seen if isinstance(e, ev.TurnFailed)][0]
    assert failed.kind == "cut" and failed.partial_text == PARTIAL.strip() and not failed.unsaved
    assert result.reply == PARTIAL.strip()
    # The next turn sends the kept partial reply back as history, so the model knows where it stopped.
    fake_openai.add_text("continuing")
    engine2 = make_engine()

    async def again():
        try:
            return await engine2.loop.process("cli:direct", "go on")
        finally:
            await engine2.shutdown()

    assert asyncio.run(again()).reply == "continuing"
    history = [m for m in fake_openai.requests[-1]["messages"] if m["role"] == "assistant"]
    assert history[-1]["content"] == PARTIAL.strip()
