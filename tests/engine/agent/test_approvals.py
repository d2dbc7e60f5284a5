"""One approval object (issue 30): a tool call's ask is one request, published once with its call id,
answered exactly once through `Engine.approvals.answer` by whichever surface is first; every later
answer, and an answer to an id nobody asked, is refused. A real Engine and loop against the loopback
fake endpoint; the CLI's prompt as the real `python -m nanobot_desktop agent` on a terminal."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys

import pytest

from nanobot_desktop.engine.agent.approvals import NOBODY_LEFT, NOBODY_TO_ASK, ApprovalRefused
from nanobot_desktop.engine.events import (ApprovalAnswer, ApprovalAnswered, ApprovalReply, ApprovalRequested,
                                           ApprovalSource, ApprovalSurface, Event, ToolCallStarted)
from tests.conftest import write_test_config


def collect(engine) -> list[Event]:
    events: list[Event] = []
    engine.bus.subscribe(events.append)
    return events


async def until_asked(engine) -> ApprovalRequested:
    asked: asyncio.Future[ApprovalRequested] = asyncio.get_running_loop().create_future()
    unsubscribe = engine.bus.subscribe(
        lambda event: asked.done() or asked.set_result(event) if isinstance(event, ApprovalRequested) else None)
    try:
        return await asyncio.wait_for(asked, 30)
    finally:
        unsubscribe()


def tool_results(fake_openai) -> list[str]:
    return [m["content"] for r in fake_openai.requests for m in r["messages"] if m.get("role") == "tool"]


async def test_a_chat_ask_is_one_request_answered_once_and_a_second_answer_is_refused(make_engine, fake_openai):
    engine = make_engine()
    engine.approvals.attach(ApprovalSurface.CARD)  # the window's chat is there
    events = collect(engine)
    fake_openai.add_tool_calls([("write_file", {"path": "diary.md", "content": "dear diary"})])
    fake_openai.add_text("I left it alone.")
    turn = asyncio.ensure_future(engine.loop.process("desktop:s1", "write my diary"))
    asked = await until_asked(engine)
    request = asked.request
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert request.call_id == started[0].call_id  # the tool call's own id is the key
    assert (request.session_key, request.tool, request.source, request.expires_at) == (
        "desktop:s1", "write_file", ApprovalSource.CHAT, None)  # a chat turn's ask does not expire
    assert request.turn_id == started[0].turn_id and request.diff and "+dear diary" in request.diff
    assert engine.approvals.pending() == [request]

    answered = engine.approvals.answer(request.call_id, ApprovalReply(ApprovalAnswer.DENY, "  it is  private "),
                                       ApprovalSurface.CARD)
    assert (answered.answer, answered.reply.reason, answered.surface) == (ApprovalAnswer.DENY, "it is private",
                                                                           ApprovalSurface.CARD)
    with pytest.raises(ApprovalRefused, match=r"already answered from the card \(denied\)"):
        engine.approvals.answer(request.call_id, ApprovalAnswer.ALLOW_ONCE, ApprovalSurface.TRAY)
    with pytest.raises(ApprovalRefused, match="no approval with id 'nope' is waiting"):
        engine.approvals.answer("nope", ApprovalAnswer.ALLOW_ONCE, ApprovalSurface.NOTIFICATION)
    assert (await turn).status == "ok"
    await engine.shutdown()

    assert [e.call_id for e in events if isinstance(e, ApprovalRequested)] == [request.call_id]  # published once
    assert [(e.call_id, e.surface) for e in events if isinstance(e, ApprovalAnswered)] == [
        (request.call_id, ApprovalSurface.CARD)]  # answered once
    assert not (engine.workspace.root / "diary.md").exists()
    assert tool_results(fake_openai)[-1].startswith(
        "Error: the user denied running 'write_file' with these arguments and said: “it is private”.")
    assert engine.approvals.settled(request.call_id) is not None and engine.approvals.pending() == []


async def test_an_answering_surface_resolves_each_ask_once_and_allow_always_changes_the_policy(make_engine,
                                                                                             fake_openai):
    engine = make_engine()
    seen: list[str] = []

    async def terminal(request):
        seen.append(request.call_id)
        return ApprovalAnswer.ALLOW_ALWAYS

    stop = engine.approvals.respond_with(terminal)
    events = collect(engine)
    fake_openai.add_tool_calls([("write_file", {"path": "a.txt", "content": "a"})])
    fake_openai.add_text("written")
    assert (await engine.loop.process("desktop:s2", "write a")).status == "ok"
    (answered,) = [e for e in events if isinstance(e, ApprovalAnswered)]
    assert seen == [answered.call_id] and answered.surface is ApprovalSurface.TERMINAL
    with pytest.raises(ApprovalRefused, match=r"already answered from the terminal \(always allowed\)"):
        engine.approvals.answer(answered.call_id, ApprovalAnswer.DENY, ApprovalSurface.CARD)
    assert (engine.workspace.root / "a.txt").read_text(encoding="utf-8") == "a"
    assert engine.policy.decision_for("write_file") == "allow"  # "always" for this tool, saved
    assert json.loads((engine.config_path.parent / "desktop.json").read_text(encoding="utf-8"))[
        "toolApproval"]["write_file"] == "allow"
    stop()
    assert not engine.approvals.attended
    await engine.shutdown()


async def test_with_nobody_to_ask_the_ask_is_denied_at_once_and_says_why(make_engine, fake_openai):
    engine = make_engine()
    events = collect(engine)
    fake_openai.add_tool_calls([("exec", {"command": "echo hi"})])
    fake_openai.add_text("it was refused")
    assert (await engine.loop.process("desktop:s3", "run it")).status == "ok"
    await engine.shutdown()
    (answered,) = [e for e in events if isinstance(e, ApprovalAnswered)]
    assert (answered.answer, answered.surface, answered.why) == (ApprovalAnswer.DENY, ApprovalSurface.ENGINE,
                                                                 NOBODY_TO_ASK)
    assert tool_results(fake_openai)[-1].startswith(f"Error: 'exec' was not run: {NOBODY_TO_ASK}.")


async def test_when_the_last_surface_leaves_what_waits_is_denied(make_engine, fake_openai):
    engine = make_engine()
    detach = engine.approvals.attach(ApprovalSurface.CARD)
    fake_openai.add_tool_calls([("write_file", {"path": "b.txt", "content": "b"})])
    fake_openai.add_text("fine")
    turn = asyncio.ensure_future(engine.loop.process("desktop:s4", "write b"))
    request = (await until_asked(engine)).request
    with pytest.raises(ValueError, match="the engine settles approvals itself"):
        engine.approvals.answer(request.call_id, ApprovalAnswer.DENY, ApprovalSurface.ENGINE)
    detach()  # the window closed
    detach()  # twice is harmless
    assert (await turn).status == "ok"
    with pytest.raises(ApprovalRefused, match="is over: denied, approval needed and nobody is left"):
        engine.approvals.answer(request.call_id, ApprovalAnswer.ALLOW_ONCE, ApprovalSurface.TRAY)
    await engine.shutdown()
    assert NOBODY_LEFT in tool_results(fake_openai)[-1] and not (engine.workspace.root / "b.txt").exists()


@pytest.mark.slow
def test_the_cli_prompt_renders_the_request_and_answers_it_once(fake_openai, tmp_path):
    """The real `agent` command on a terminal: its prompt shows the request and "y" allows it once."""
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    fake_openai.add_tool_calls([("write_file", {"path": "out.txt", "content": "typed yes"})])
    fake_openai.add_text("Written.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NANOBOT_")}
    env.update(HOME=str(tmp_path), USERPROFILE=str(tmp_path))
    terminal, its_end = pty.openpty()  # a terminal for stdin: the prompt asks only at one
    try:
        process = subprocess.Popen([sys.executable, "-m", "nanobot_desktop", "agent", "-m", "write it", "--config",
                                    str(config)], stdin=its_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=env)
        os.close(its_end)
        os.write(terminal, b"y\n")  # typed ahead; the prompt reads the line when it asks
        out, err = process.communicate(timeout=60)
    finally:
        os.close(terminal)
    assert process.returncode == 0, err
    assert out.count("Allow write_file: path='out.txt', content='typed yes'? [y/N/a(lways)] ") == 1
    assert out.endswith("Written.\n")
    assert (tmp_path / "ws" / "out.txt").read_text(encoding="utf-8") == "typed yes"
    (result,) = tool_results(fake_openai)  # the tool ran once
    assert "out.txt" in result and not result.startswith("Error")
