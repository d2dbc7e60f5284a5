"""Approvals asked by background work: announced, answered from anywhere, expiring as Deny, never
blocking other background work; with a real Engine and the loopback fake endpoint."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from nanobot_desktop.engine.agent.approvals import ApprovalRefused
from nanobot_desktop.engine.events import (ApprovalAnswer, ApprovalAnswered, ApprovalRequested, ApprovalSource,
                                           ApprovalSurface, Event)
from tests.engine.cli.test_cli import run_cli
from tests.conftest import write_test_config
from tests.fake_openai import Reply, text_reply, tool_calls_reply

TASK = "## Active Tasks\n- Feed the cat: run `echo fed`\n"


def this_turns_tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Tool messages after the last user message (the session keeps earlier turns)."""
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    return [m for m in messages[last_user:] if m.get("role") == "tool"]


def route_heartbeat_exec(fake_openai, command: str = "echo fed") -> None:
    """Phase 1 says run; the agent calls exec once, then answers with what the tool said."""

    def route(body: dict[str, Any]) -> Reply:
        names = [tool["function"]["name"] for tool in body.get("tools") or []]
        if names == ["heartbeat"]:
            return tool_calls_reply([("heartbeat", {"action": "run", "tasks": "Feed the cat"})])
        tool_results = this_turns_tool_results(body)
        if not tool_results:
            return tool_calls_reply([("exec", {"command": command})])
        return text_reply("Tool said: " + tool_results[-1]["content"].strip().splitlines()[0])

    fake_openai.respond_with(route)


def collect(engine) -> list[Event]:
    events: list[Event] = []
    engine.bus.subscribe(events.append)
    return events


def attend(engine) -> None:
    """Somebody can answer (as the tray does in the app); without it an ask is denied at once."""
    engine.approvals.attach(ApprovalSurface.TRAY)


async def until_pending(engine) -> None:
    """Until an approval is waiting (announced by ApprovalRequested)."""
    announced = asyncio.Event()
    unsubscribe = engine.bus.subscribe(
        lambda event: announced.set() if isinstance(event, ApprovalRequested) else None)
    try:
        if not engine.approvals.pending():
            await asyncio.wait_for(announced.wait(), 10)
    finally:
        unsubscribe()


def tool_messages(fake_openai) -> list[str]:
    return [m["content"] for r in fake_openai.requests for m in r["messages"] if m.get("role") == "tool"]


@pytest.mark.parametrize(("answer", "status", "said"), [("allow_once", "ok", "Tool said: fed"),
                                                         ("deny", "denied", "Tool said: Error: the user denied running 'exec'")])
async def test_a_heartbeat_exec_waits_for_the_answer_given_from_the_tray(make_engine, fake_openai, answer, status,
                                                                         said) -> None:
    engine = make_engine()
    attend(engine)
    engine.workspace.heartbeat_file.write_text(TASK, encoding="utf-8")
    route_heartbeat_exec(fake_openai)
    events = collect(engine)
    tick_task = asyncio.ensure_future(engine.heartbeat.trigger_now())
    await until_pending(engine)
    (pending,) = engine.approvals.pending()
    assert (pending.title, pending.summary, pending.session_key, pending.source) == (
        "Heartbeat wants to run a command", "echo fed", "heartbeat", ApprovalSource.HEARTBEAT)
    assert pending.expires_at is not None and pending.expires_at - pending.asked_at == 1800
    announced = [e.request for e in events if isinstance(e, ApprovalRequested)]
    assert [(r.call_id, r.title, r.tool, r.summary, r.asker) for r in announced] == [
        (pending.call_id, "Heartbeat wants to run a command", "exec", "echo fed", "Heartbeat")]  # once
    engine.approvals.answer(pending.call_id, ApprovalAnswer(answer), ApprovalSurface.TRAY)
    with pytest.raises(ApprovalRefused, match="already answered from the tray"):  # only once
        engine.approvals.answer(pending.call_id, ApprovalAnswer(answer), ApprovalSurface.NOTIFICATION)
    tick = await tick_task
    await engine.shutdown()
    assert tick.decision == "run" and tick.result is not None and tick.result.startswith(said)
    assert [(use.name, use.status, use.waited_for_approval) for use in tick.tools] == [("exec", status, True)]
    words = "allowed once" if answer == "allow_once" else "denied"
    assert tick.approvals == (f"exec echo fed → {words}",)
    resolved = [e for e in events if isinstance(e, ApprovalAnswered)]
    assert [(e.call_id, e.answer.value, e.why, e.surface) for e in resolved] == [
        (pending.call_id, answer, "", ApprovalSurface.TRAY)]
    assert engine.approvals.pending() == []


async def test_an_unanswered_approval_expires_as_deny_and_other_work_goes_on(make_engine, fake_openai) -> None:
    from nanobot_desktop.engine.background.cron import CronSchedule

    engine = make_engine()
    attend(engine)
    engine.app_settings.background_approval_expiry_s = 0.5
    engine.workspace.heartbeat_file.write_text(TASK, encoding="utf-8")
    job = engine.cron.add_job("tidy", CronSchedule(kind="every", every_ms=3_600_000), "List the workspace")

    def route(body: dict[str, Any]) -> Reply:
        names = [tool["function"]["name"] for tool in body.get("tools") or []]
        if names == ["heartbeat"]:
            return tool_calls_reply([("heartbeat", {"action": "run", "tasks": "Feed the cat"})])
        if "List the workspace" in str([m for m in body["messages"] if m.get("role") == "user"][-1]["content"]):
            return text_reply("The workspace holds a few files.")
        tool_results = this_turns_tool_results(body)
        if not tool_results:
            return tool_calls_reply([("exec", {"command": "echo fed"})])
        return text_reply("Tool said: " + tool_results[-1]["content"].strip().splitlines()[0])

    fake_openai.respond_with(route)
    tick_task = asyncio.ensure_future(engine.heartbeat.trigger_now())
    await until_pending(engine)
    assert await engine.cron.run_job(job.id, force=True) is True  # not blocked by the waiting heartbeat
    assert engine.cron.runs(job.id)[-1].result == "The workspace holds a few files."
    assert not tick_task.done()

    (asked,) = engine.approvals.pending()
    tick = await tick_task  # the expiry ends the wait
    with pytest.raises(ApprovalRefused, match=r"is over: denied, nobody answered within 0\.5 s"):
        engine.approvals.answer(asked.call_id, ApprovalAnswer.ALLOW_ONCE, ApprovalSurface.TRAY)  # too late
    assert tick.decision == "run" and tick.tools[0].status == "denied"
    assert tick.approvals[0].startswith("exec echo fed → denied (nobody answered within 0.5 s, so it expired")
    denial = [text for text in tool_messages(fake_openai) if "was not run" in text]
    assert denial and "expired and counts as deny" in denial[0]  # the model received the reason
    assert tick.result is not None and tick.result.startswith("Tool said: Error: 'exec' was not run")
    # the next heartbeat runs as usual: the expired one left nothing behind
    fake_openai.respond_with(lambda body: tool_calls_reply([("heartbeat", {"action": "skip"})]))
    assert (await engine.heartbeat.trigger_now()).decision == "skip"
    assert engine.approvals.pending() == []
    await engine.shutdown()


async def test_background_policy_allow_and_deny_skip_the_question(make_engine, fake_openai) -> None:
    engine = make_engine()
    attend(engine)
    engine.workspace.heartbeat_file.write_text(TASK, encoding="utf-8")
    engine.update_config({"app.backgroundToolApproval": {"write_file": "allow", "exec": "deny"}})
    app_file = engine.config_path.parent / "desktop.json"  # the app's own settings, not config.json
    saved = json.loads(app_file.read_text(encoding="utf-8"))["backgroundToolApproval"]
    assert saved == {"write_file": "allow", "exec": "deny"}
    assert "backgroundToolApproval" not in engine.config_path.read_text(encoding="utf-8")
    assert engine.policy.decision_for("write_file") == "ask"  # the chat policy is separate

    def route(body: dict[str, Any]) -> Reply:
        names = [tool["function"]["name"] for tool in body.get("tools") or []]
        if names == ["heartbeat"]:
            return tool_calls_reply([("heartbeat", {"action": "run", "tasks": "Feed the cat"})])
        if this_turns_tool_results(body):
            return text_reply("Tool said: " + this_turns_tool_results(body)[-1]["content"].strip().splitlines()[0])
        return tool_calls_reply([("write_file", {"path": "fed.txt", "content": "fed"})])

    fake_openai.respond_with(route)
    tick = await engine.heartbeat.trigger_now()
    assert tick.approvals == () and (engine.workspace.root / "fed.txt").read_text(encoding="utf-8") == "fed"
    assert [(use.name, use.status) for use in tick.tools] == [("write_file", "ok")]

    route_heartbeat_exec(fake_openai)
    tick = await engine.heartbeat.trigger_now()
    await engine.shutdown()
    assert tick.tools[0].status == "denied" and tick.approvals == ()
    assert "background tool policy does not allow 'exec'" in tool_messages(fake_openai)[-1]


@pytest.mark.slow
def test_headless_heartbeat_once_denies_an_ask_and_prints_it(fake_openai, tmp_path) -> None:
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    (tmp_path / "ws" / "HEARTBEAT.md").write_text(TASK, encoding="utf-8")
    route_heartbeat_exec(fake_openai)
    done = run_cli("heartbeat", "--once", "--config", str(config), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "decision: run" in done.stdout
    assert "refused approval: exec echo fed → denied (approval needed and nobody to ask" in done.stdout
    assert "tool: exec echo fed → denied (after an approval)" in done.stdout


async def test_a_subagent_asks_as_background_work_named_by_its_label(make_engine, fake_openai) -> None:
    from nanobot_desktop.engine.events import SubagentFinished

    engine = make_engine()
    attend(engine)

    def route(body: dict[str, Any]) -> Reply:
        if str(body["messages"][0]["content"]).startswith("# Subagent"):
            if this_turns_tool_results(body):
                return text_reply("The cat is fed.")
            return tool_calls_reply([("exec", {"command": "echo fed"})])
        return text_reply("Noted.")  # the main agent reading the subagent's announcement

    fake_openai.respond_with(route)
    finished = asyncio.Event()
    engine.bus.subscribe(lambda event: finished.set() if isinstance(event, SubagentFinished) else None)
    engine.subagents.spawn("feed the cat with echo fed", label="feeder", origin_session_key="desktop:s1",
                           origin_channel="desktop", origin_chat_id="s1")
    await until_pending(engine)
    (pending,) = engine.approvals.pending()
    assert (pending.source, pending.asker, pending.title, pending.summary, pending.session_key) == (
        ApprovalSource.SUBAGENT, "Subagent “feeder”", "Subagent “feeder” wants to run a command", "echo fed",
        "desktop:s1")
    engine.approvals.answer(pending.call_id, ApprovalAnswer.ALLOW_ONCE, ApprovalSurface.NOTIFICATION)
    await asyncio.wait_for(finished.wait(), 10)
    (record,) = engine.subagents.list()
    await engine.shutdown()
    assert record.status == "ok" and "The cat is fed." in (record.result or "")
    assert any(text.strip() == "fed" for text in tool_messages(fake_openai))


async def test_a_scheduled_job_asks_with_its_name_and_its_history_shows_the_approval(make_engine, fake_openai) -> None:
    from nanobot_desktop.engine.background.cron import CronSchedule

    engine = make_engine()
    attend(engine)
    route_heartbeat_exec(fake_openai)  # the job's turn calls exec once, then reports
    job = engine.cron.add_job("Feed the cat", CronSchedule(kind="every", every_ms=3_600_000), "Feed the cat")
    run = asyncio.ensure_future(engine.cron.run_job(job.id))
    await until_pending(engine)
    (pending,) = engine.approvals.pending()
    assert (pending.title, pending.session_key, pending.source) == (
        "Scheduled task “Feed the cat” wants to run a command", f"cron:{job.id}", ApprovalSource.CRON)
    engine.approvals.answer(pending.call_id, ApprovalAnswer.DENY, ApprovalSurface.CARD)
    assert await run is True
    (record,) = engine.cron.runs(job.id)
    await engine.shutdown()
    assert record.approvals == ("exec echo fed → denied",)
    assert [(use.name, use.status) for use in record.tools] == [("exec", "denied")]


async def test_without_the_gui_a_terminal_approver_still_answers_background_asks(make_engine, fake_openai) -> None:
    engine = make_engine()  # no tray, as in `nanobot-desktop agent -m … --yes`
    asked: list[str] = []

    async def yes(request):
        asked.append(request.command or "")
        return ApprovalAnswer.ALLOW_ONCE

    engine.approvals.respond_with(yes)
    engine.workspace.heartbeat_file.write_text(TASK, encoding="utf-8")
    route_heartbeat_exec(fake_openai)
    tick = await engine.heartbeat.trigger_now()
    await engine.shutdown()
    assert asked == ["echo fed"] and tick.result == "Tool said: fed"
    assert tick.approvals == ("exec echo fed → allowed once",)
    assert engine.approvals.pending() == []
