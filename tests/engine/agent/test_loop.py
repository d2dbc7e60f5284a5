"""The whole agent loop against the loopback fake endpoint: events, tools, errors, stop, /new, subagents."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from nanobot_desktop.engine import events as ev
from nanobot_desktop.engine.tools.policy import ApprovalAnswer


def session_lines(engine, key: str) -> list[dict]:
    path = engine.sessions.path_for(key)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def collect(engine) -> list[ev.Event]:
    seen: list[ev.Event] = []
    engine.bus.subscribe(seen.append)
    return seen


async def allow_all(_request):
    return ApprovalAnswer.ALLOW_ONCE


async def test_streamed_text_reply_is_published_and_saved(make_engine, fake_openai):
    engine = make_engine()
    seen = collect(engine)
    fake_openai.add_text("Hello there, human!", chunk_size=4)
    result = await engine.loop.process("desktop:a", "hi")
    assert result.status == "ok" and result.reply == "Hello there, human!"
    deltas = "".join(e.text for e in seen if isinstance(e, ev.TextDelta))
    assert deltas == "Hello there, human!"
    kinds = [type(e).__name__ for e in seen]
    assert kinds[0] == "TurnStarted" and kinds[-1] == "TurnFinished"
    assert "LLMCallStarted" in kinds and "LLMCallFinished" in kinds
    lines = session_lines(engine, "desktop:a")
    assert lines[0]["_type"] == "metadata" and lines[0]["key"] == "desktop:a"
    assert [(m["role"], m["content"]) for m in lines[1:]] == [("user", "hi"), ("assistant", "Hello there, human!")]
    assert all("timestamp" in m for m in lines[1:])
    # what was sent: system prompt first, runtime block merged into the user message
    sent = fake_openai.requests[0]
    assert sent["stream"] is True and sent["messages"][0]["role"] == "system"
    assert sent["messages"][-1]["content"].startswith("[Runtime Context — metadata only, not instructions]")
    assert sent["messages"][-1]["content"].endswith("\n\nhi")


async def test_the_saved_user_message_is_the_text_sent_not_a_copy_of_it(make_engine, fake_openai):
    """The chat keeps the text a person sent; the session keeps that same string, not a second copy cut
    from the prompt (a long pasted text was held twice). The file is as before; a text that itself starts
    with a runtime block keeps it."""
    engine = make_engine()
    pasted = "Please summarise this log:\n\n" + "\n".join(f"12:00:{n:02d} worker {n} finished" for n in range(60))
    fake_openai.add_text("Sixty workers finished.")
    await engine.loop.process("desktop:a", pasted)
    kept = engine.sessions.get_or_create("desktop:a").messages
    assert kept[-2]["role"] == "user" and kept[-2]["content"] is pasted
    own_block = "[Runtime Context — metadata only, not instructions]\nwritten by the person\n\nand more"
    fake_openai.add_text("Noted.")
    await engine.loop.process("desktop:a", own_block)
    assert engine.sessions.get_or_create("desktop:a").messages[-2]["content"] is own_block
    lines = session_lines(engine, "desktop:a")
    assert [(m["role"], m["content"]) for m in lines[1:]] == [
        ("user", pasted), ("assistant", "Sixty workers finished."), ("user", own_block), ("assistant", "Noted.")]


async def test_multi_step_tool_chain_runs_tools_in_order(make_engine, fake_openai):
    engine = make_engine()
    (engine.workspace.root / "notes.txt").write_text("the answer is 42", encoding="utf-8")
    seen = collect(engine)
    fake_openai.add_tool_calls([("list_dir", {"path": "."})])
    fake_openai.add_tool_calls([("read_file", {"path": "notes.txt"})])
    fake_openai.add_text("It says 42.")
    result = await engine.loop.process("desktop:chain", "what is in notes?")
    assert result.reply == "It says 42."
    finished = [e for e in seen if isinstance(e, ev.ToolCallFinished)]
    assert [(e.name, e.status) for e in finished] == [("list_dir", "ok"), ("read_file", "ok")]
    assert finished[1].result == "the answer is 42"
    lines = session_lines(engine, "desktop:chain")[1:]
    assert [m["role"] for m in lines] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert lines[1]["tool_calls"][0]["function"] == {"name": "list_dir", "arguments": '{"path": "."}'}
    assert lines[4] == {**lines[4], "role": "tool", "name": "read_file", "content": "the answer is 42"}
    # the third request carries both tool results back to the model
    third = fake_openai.requests[2]["messages"]
    assert [m["role"] for m in third[-4:]] == ["assistant", "tool", "assistant", "tool"]


async def test_parallel_tool_calls_in_one_response(make_engine, fake_openai):
    engine = make_engine()
    (engine.workspace.root / "a.txt").write_text("A", encoding="utf-8")
    (engine.workspace.root / "b.txt").write_text("B", encoding="utf-8")
    fake_openai.add_tool_calls([("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})])
    fake_openai.add_text("A and B")
    seen = collect(engine)
    await engine.loop.process("desktop:par", "read both")
    results = [e.result for e in seen if isinstance(e, ev.ToolCallFinished)]
    assert results == ["A", "B"]
    lines = session_lines(engine, "desktop:par")[1:]
    assert len(lines[1]["tool_calls"]) == 2
    assert [m.get("content") for m in lines if m["role"] == "tool"] == ["A", "B"]


async def test_reasoning_content_is_streamed_and_kept_on_disk(make_engine, fake_openai):
    engine = make_engine()
    seen = collect(engine)
    fake_openai.add_reasoning("let me think", then_text="Done.")
    result = await engine.loop.process("desktop:r", "think")
    assert result.reply == "Done."
    assert "".join(e.text for e in seen if isinstance(e, ev.ReasoningDelta)) == "let me think"
    final = session_lines(engine, "desktop:r")[-1]
    assert final["reasoning_content"] == "let me think" and final["content"] == "Done."


async def test_rate_limit_then_success(make_engine, fake_openai):
    engine = make_engine()
    fake_openai.add_error(429, "slow down")
    fake_openai.add_text("ok now")
    result = await engine.loop.process("desktop:429", "hi")
    assert result.reply == "ok now"
    assert len(fake_openai.requests) == 2


async def test_server_error_forever_fails_clearly_and_keeps_the_user_message(make_engine, fake_openai):
    engine = make_engine()
    seen = collect(engine)
    fake_openai.add_error(500, "boom", times=None)
    result = await engine.loop.process("desktop:500", "please answer")
    assert result.status == "failed"
    failed = [e for e in seen if isinstance(e, ev.TurnFailed)]
    assert len(failed) == 1 and failed[0].kind == "server" and "\n" not in failed[0].error
    assert "Traceback" not in failed[0].error
    lines = session_lines(engine, "desktop:500")[1:]
    assert [(m["role"], m["content"]) for m in lines] == [("user", "please answer")]


async def test_malformed_tool_call_goes_back_to_the_model_as_an_error(make_engine, fake_openai):
    engine = make_engine()
    seen = collect(engine)
    fake_openai.add_raw_tool_call("read_file", '{"path": "a.txt" "oops"')
    fake_openai.add_text("Sorry, retrying was not needed.")
    result = await engine.loop.process("desktop:bad", "read")
    assert result.status == "ok"
    finished = [e for e in seen if isinstance(e, ev.ToolCallFinished)]
    assert finished[0].status == "error" and "could not be read" in finished[0].result
    tool_line = [m for m in session_lines(engine, "desktop:bad") if m.get("role") == "tool"][0]
    assert "could not be read" in tool_line["content"]


async def test_max_iterations_stops_with_an_explanation(make_engine, fake_openai):
    engine = make_engine(maxToolIterations=3)
    for _ in range(3):
        fake_openai.add_tool_calls([("list_dir", {"path": "."})])
    result = await engine.loop.process("desktop:max", "loop forever")
    assert "maximum number of tool call iterations (3)" in result.reply
    assert len(fake_openai.requests) == 3


async def test_stop_during_long_exec_kills_process_and_saves_partial_turn(make_engine, fake_openai, tmp_path):
    engine = make_engine()
    engine.approvals.respond_with(allow_all)
    marker = tmp_path / "pid.txt"
    started = asyncio.Event()
    engine.bus.subscribe(lambda e: started.set() if isinstance(e, ev.ToolCallStarted) else None)
    fake_openai.add_tool_calls([("exec", {"command": f"echo $$ > {marker}; sleep 60"})], content="Running it.")
    task = engine.loop.submit("desktop:stop", "run the long thing")
    await asyncio.wait_for(started.wait(), 10)
    for _ in range(200):
        if marker.exists() and marker.read_text().strip():
            break
        await asyncio.sleep(0.02)
    pid = int(marker.read_text().strip())
    stop = engine.loop.submit("desktop:stop", "/stop")
    stop_result = await asyncio.wait_for(stop, 10)
    assert stop_result.reply == "⏹ Stopped 1 task(s)."
    assert task.cancelled()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    lines = session_lines(engine, "desktop:stop")[1:]
    assert [m["role"] for m in lines] == ["user", "assistant", "tool"]
    assert lines[2]["stopped"] is True and "cancelled" in lines[2]["content"]
    # the stopped session continues normally
    fake_openai.add_text("fine")
    assert (await engine.loop.process("desktop:stop", "next")).reply == "fine"
    history_roles = [m["role"] for m in fake_openai.requests[-1]["messages"][1:]]
    assert history_roles == ["user", "assistant", "tool", "user"]


async def test_stop_with_nothing_running(make_engine):
    engine = make_engine()
    assert (await engine.loop.submit("desktop:idle", "/stop")).reply == "No active task to stop."


def _fill_session(engine, key: str, count: int) -> None:
    session = engine.sessions.get_or_create(key)
    messages = []
    for i in range(count):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"})
    engine.sessions.append(session, messages)


async def test_new_archives_into_memory_then_clears(make_engine, fake_openai):
    engine = make_engine()
    _fill_session(engine, "telegram:new", 6)  # a chat channel's session keeps its key (the gateway's)
    fake_openai.add_tool_calls([("save_memory", {"history_entry": "[2026-11-22 10:00] Talked about m0-m5.",
                                                 "memory_update": "# Memory\nUser likes m."})])
    result = await engine.loop.process("telegram:new", "/new")
    assert result.reply == "New session started."
    assert engine.memory.read_history() == "[2026-11-22 10:00] Talked about m0-m5.\n\n"
    assert engine.memory.read_long_term() == "# Memory\nUser likes m."
    assert session_lines(engine, "telegram:new")[1:] == []
    archived = list((engine.workspace.sessions_dir / ".archive").glob("*.jsonl"))
    assert len(archived) == 1 and len(archived[0].read_text().splitlines()) == 7


async def test_new_does_not_clear_when_archiving_fails(make_engine, fake_openai):
    engine = make_engine()
    _fill_session(engine, "desktop:newfail", 4)
    fake_openai.add_text("I will not call the tool")
    result = await engine.loop.process("desktop:newfail", "/new")
    assert result.status == "failed" and result.kind == "new_blocked"
    assert result.error == ("The conversation was not cleared, because saving it to memory failed: the model did "
                            "not call save_memory. Nothing was lost; you can try again or start a new chat and keep this one.")
    assert len(session_lines(engine, "desktop:newfail")) == 5
    assert engine.memory.read_history() == ""


async def test_background_consolidation_persists_offset(make_engine, fake_openai):
    engine = make_engine(memoryWindow=10)
    _fill_session(engine, "desktop:cons", 12)

    def route(body):
        from tests.fake_openai import text_reply, tool_calls_reply

        if any(t["function"]["name"] == "save_memory" for t in body.get("tools") or []):
            return tool_calls_reply([("save_memory", {"history_entry": "[2026-11-22 10:00] old stuff",
                                                      "memory_update": "facts"})])
        return text_reply("hello")

    fake_openai.respond_with(route)
    await engine.loop.process("desktop:cons", "hi")
    await engine.loop.wait_for_consolidation("desktop:cons")
    # 12 stored + this turn's user message (appended before the background task starts) = 13; keep 5 → 8
    assert json.loads(engine.sessions.path_for("desktop:cons").read_text().splitlines()[0])["last_consolidated"] == 8
    summarised = [r for r in fake_openai.requests if any(t["function"]["name"] == "save_memory"
                                                         for t in r.get("tools") or [])][0]
    prompt = summarised["messages"][-1]["content"]
    assert "USER: m0" in prompt and "USER: hi" not in prompt and ": m7" in prompt and ": m8" not in prompt
    assert engine.memory.read_long_term() == "facts"


async def test_subagent_round_trip_announces_back_to_origin(make_engine, fake_openai):
    engine = make_engine()
    seen = collect(engine)
    done = asyncio.Event()

    def route(body):
        from tests.fake_openai import text_reply, tool_calls_reply

        first_user = next(m for m in body["messages"] if m["role"] == "user")["content"]
        last = body["messages"][-1]
        if body["messages"][0]["content"].startswith("# Subagent"):
            return text_reply("The file has 3 lines.")
        if isinstance(last.get("content"), str) and "[Subagent 'count lines' completed successfully]" in last["content"]:
            return text_reply("Your file has three lines.")
        if last["role"] == "user" and "count" in str(first_user):
            return tool_calls_reply([("spawn", {"task": "Count the lines of a.txt", "label": "count lines"})])
        return text_reply("I started a helper for that.")

    fake_openai.respond_with(route)
    engine.bus.subscribe(lambda e: done.set() if isinstance(e, ev.TurnFinished)
                         and e.reply == "Your file has three lines." else None)
    result = await engine.loop.process("desktop:sub", "count the lines in the background")
    assert result.reply == "I started a helper for that."
    await asyncio.wait_for(done.wait(), 10)
    finished = [e for e in seen if isinstance(e, ev.SubagentFinished)]
    assert finished[0].status == "ok" and finished[0].result == "The file has 3 lines."
    record = engine.subagents.list()[0]
    assert record.status == "ok" and record.transcript[0]["content"].startswith("# Subagent")
    subagent_calls = [e for e in seen if isinstance(e, ev.LLMCallFinished) and e.turn_id == f"subagent-{record.task_id}"]
    assert len(subagent_calls) == 1 and subagent_calls[0].session_key == "desktop:sub"  # visible in the inspector
    # every event says who started its work: the person's turn, the subagent, the system's hand-back turn
    started = [e for e in seen if isinstance(e, ev.TurnStarted)]
    assert [e.started_by for e in started] == [ev.Origin.PERSON, ev.Origin.SYSTEM]
    assert {e.started_by for e in seen if getattr(e, "turn_id", "") == started[0].turn_id} == {ev.Origin.PERSON}
    assert {e.started_by for e in seen if getattr(e, "turn_id", "") == started[1].turn_id} == {ev.Origin.SYSTEM}
    assert {e.started_by for e in seen if getattr(e, "turn_id", "") == f"subagent-{record.task_id}"} == \
        {ev.Origin.SUBAGENT}
    assert [e.started_by for e in finished] == [ev.Origin.SUBAGENT]
    lines = session_lines(engine, "desktop:sub")
    assert "[Subagent 'count lines' completed successfully]" in lines[-2]["content"]
    assert lines[-1]["content"] == "Your file has three lines."


async def test_subagent_can_be_cancelled_one_by_one(make_engine, fake_openai):
    engine = make_engine()
    fake_openai.add_hang()
    text = engine.subagents.spawn("wait forever", label="waiter", origin_session_key="desktop:c")
    assert "Subagent [waiter] started" in text
    task_id = engine.subagents.list()[0].task_id
    for _ in range(200):
        if fake_openai.requests:
            break
        await asyncio.sleep(0.01)
    assert await engine.subagents.cancel(task_id) is True
    assert engine.subagents.list()[0].status == "cancelled"


async def test_message_tool_to_current_chat_suppresses_duplicate_reply(make_engine, fake_openai):
    engine = make_engine()
    seen = collect(engine)
    fake_openai.add_tool_calls([("message", {"content": "Here you go"})])
    fake_openai.add_text("Here you go")
    result = await engine.loop.process("desktop:msg", "send it")
    assert result.reply is None
    outbound = [e for e in seen if isinstance(e, ev.OutboundMessage)]
    assert [(o.channel, o.chat_id, o.content) for o in outbound] == [("desktop", "msg", "Here you go")]


async def test_denied_approval_is_reported_to_the_model(make_engine, fake_openai):
    engine = make_engine()

    async def deny(_request):
        return ApprovalAnswer.DENY

    engine.approvals.respond_with(deny)
    fake_openai.add_tool_calls([("write_file", {"path": "x.txt", "content": "hi"})])
    fake_openai.add_text("ok, I won't")
    seen = collect(engine)
    await engine.loop.process("desktop:deny", "write it")
    finished = [e for e in seen if isinstance(e, ev.ToolCallFinished)][0]
    assert finished.status == "denied"
    assert not (engine.workspace.root / "x.txt").exists()
    requested = [e for e in seen if isinstance(e, ev.ApprovalRequested)][0]
    assert requested.request.diff and "+hi" in requested.request.diff


async def test_allow_always_is_saved_to_config(make_engine, fake_openai):
    engine = make_engine()

    async def always(_request):
        return ApprovalAnswer.ALLOW_ALWAYS

    engine.approvals.respond_with(always)
    fake_openai.add_tool_calls([("write_file", {"path": "x.txt", "content": "hi"})])
    fake_openai.add_text("done")
    await engine.loop.process("desktop:always", "write it")
    assert (engine.workspace.root / "x.txt").read_text() == "hi"
    saved = json.loads(Path(engine.config_path).read_text())
    assert "approval" not in saved["tools"]  # the app's policy is not the CLI's business
    assert saved["providers"]["custom"]["apiKey"] == "sk-test"
    app = json.loads((Path(engine.config_path).parent / "desktop.json").read_text())
    assert app["toolApproval"] == {"write_file": "allow"}


async def test_turns_in_different_sessions_run_concurrently(make_engine, fake_openai):
    engine = make_engine()
    fake_openai.add_hang()
    slow = engine.loop.submit("desktop:slow", "hang")
    for _ in range(200):
        if fake_openai.requests:
            break
        await asyncio.sleep(0.01)
    fake_openai.add_text("quick")
    quick = await asyncio.wait_for(engine.loop.process("desktop:quick", "hi"), 10)
    assert quick.reply == "quick"
    assert await engine.loop.stop("desktop:slow") == 1
    assert slow.cancelled()


async def test_update_config_updates_live_tools_policy_and_files(make_engine):
    from nanobot_desktop.engine.events import ConfigChanged

    engine = make_engine()
    seen: list[ConfigChanged] = []
    engine.bus.subscribe(lambda event: seen.append(event) if isinstance(event, ConfigChanged) else None)
    # (write_file: exec may be "allow" only while it runs sandboxed, and this engine's restriction is off)
    engine.update_config({"tools.exec.timeout": 7, "app.toolApproval": {"write_file": "allow"}})
    assert engine.tools.get("exec").timeout_s == 7
    assert engine.policy.decision_for("write_file") == "allow"
    saved = json.loads(Path(engine.config_path).read_text())
    assert saved["tools"]["exec"]["timeout"] == 7 and "approval" not in saved["tools"]
    app = json.loads((Path(engine.config_path).parent / "desktop.json").read_text())
    assert app == {"toolApproval": {"write_file": "allow"}}
    assert [event.paths for event in seen] == [("tools.exec.timeout", "app.toolApproval")]
    assert seen[0].touches("tools.exec") and not seen[0].touches("gateway.heartbeat")


async def test_update_config_switches_the_heartbeat_on_and_off(make_engine):
    engine = make_engine()  # the test config has the heartbeat disabled
    await engine.start_services()
    try:
        assert not engine.heartbeat.running
        engine.update_config({"gateway.heartbeat.enabled": True})
        for _ in range(100):
            if engine.heartbeat.running:
                break
            await asyncio.sleep(0.01)
        assert engine.heartbeat.running
        engine.update_config({"gateway.heartbeat.enabled": False})
        for _ in range(100):
            if not engine.heartbeat.running:
                break
            await asyncio.sleep(0.01)
        assert not engine.heartbeat.running
    finally:
        await engine.shutdown()


async def test_missing_provider_fails_the_turn_as_a_config_problem(tmp_path):
    from nanobot_desktop.engine.runtime import Engine

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"agents": {"defaults": {"workspace": str(tmp_path / "ws")}}}), encoding="utf-8")
    engine = Engine.open(config)
    seen = collect(engine)
    result = await engine.loop.process("desktop:x", "hi")
    assert result.status == "failed" and "apiKey" in result.error
    failed = [e for e in seen if isinstance(e, ev.TurnFailed)][0]
    assert failed.kind == "config" and "Unexpected" not in failed.error


async def test_stopping_a_cron_turn_stops_only_the_turn_not_the_scheduler(make_engine, fake_openai):
    from nanobot_desktop.engine.background.cron import CronSchedule

    engine = make_engine()
    runs: list[ev.CronJobRan] = []
    second_run = asyncio.Event()

    def on_event(event):
        if isinstance(event, ev.CronJobRan):
            runs.append(event)
            if len(runs) == 2:
                second_run.set()

    engine.bus.subscribe(on_event)
    fake_openai.add_hang()
    fake_openai.add_text("second run done")
    job = engine.cron.add_job("tick", CronSchedule(kind="every", every_ms=50), "do the thing")
    await engine.cron.start()
    try:
        for _ in range(500):
            if fake_openai.requests:
                break
            await asyncio.sleep(0.01)
        assert await engine.loop.stop(f"cron:{job.id}") == 1
        await asyncio.wait_for(second_run.wait(), 10)
    finally:
        await engine.shutdown()
    assert (runs[0].status, runs[0].error) == ("error", "stopped by the user")
    assert (runs[1].status, runs[1].result) == ("ok", "second run done")


async def test_heartbeat_and_cron_turns_say_who_started_them(make_engine, fake_openai):
    from nanobot_desktop.engine.background.cron import CronSchedule
    from tests.fake_openai import text_reply, tool_calls_reply

    engine = make_engine()
    seen = collect(engine)
    engine.workspace.heartbeat_file.write_text("- water the plants\n", encoding="utf-8")

    def route(body):
        if [tool["function"]["name"] for tool in body.get("tools") or []] == ["heartbeat"]:
            return tool_calls_reply([("heartbeat", {"action": "run", "tasks": "Water the plants"})])
        return text_reply("done")

    fake_openai.respond_with(route)
    assert (await engine.heartbeat.trigger_now()).decision == "run"
    job = engine.cron.add_job(name="tidy", schedule=CronSchedule(kind="every", every_ms=3_600_000), message="tidy up")
    assert await engine._run_cron_job(job) == "done"
    await engine.shutdown()
    started = [(e.session_key, e.started_by) for e in seen if isinstance(e, ev.TurnStarted)]
    assert [origin for _key, origin in started] == [ev.Origin.HEARTBEAT, ev.Origin.CRON]
    # the heartbeat's decision (a model call outside any turn) and its record say so too
    assert {e.started_by for e in seen if isinstance(e, (ev.HeartbeatDecided, ev.HeartbeatRan))} == {ev.Origin.HEARTBEAT}
    calls = [e.started_by for e in seen if isinstance(e, ev.LLMCallFinished)]
    assert calls == [ev.Origin.HEARTBEAT, ev.Origin.HEARTBEAT, ev.Origin.CRON]


async def test_a_model_calls_end_and_the_turns_end_are_loop_steps_of_their_own(make_engine, fake_openai):
    """Under the window's loop the end of a long reply had come as one step: the call's last chunk,
    LLMCallFinished and its listeners, the save and TurnFinished with its listeners (12-15 ms). Other
    work of the loop (the window's paint) now runs between the call's end and the turn's."""
    engine = make_engine()
    fake_openai.add_text("All done.")
    turns_of_other_work = [0]
    seen_at: dict[type, int] = {}
    saved_at: list[int] = []  # the loop turn of each append (the question, then the reply)

    def note(event: ev.Event) -> None:
        seen_at.setdefault(type(event), turns_of_other_work[0])
        if isinstance(event, ev.SessionChanged) and event.reason == "appended":
            saved_at.append(turns_of_other_work[0])

    engine.bus.subscribe(note)
    stop = asyncio.Event()

    async def other_work() -> None:
        while not stop.is_set():
            turns_of_other_work[0] += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(other_work())
    try:
        result = await engine.loop.process("desktop:steps", "hello")
    finally:
        stop.set()
        await other
        await engine.shutdown()
    assert result.status == "ok" and result.reply == "All done."
    assert seen_at[ev.TurnFinished] > seen_at[ev.LLMCallFinished]
    # the reply's save (its fsync) and TurnFinished (the window's listeners) are steps of their own too
    assert len(saved_at) == 2 and seen_at[ev.TurnFinished] > saved_at[-1] > seen_at[ev.LLMCallFinished]
    lines = (engine.workspace.sessions_dir / "desktop_steps.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1])["content"] == "All done."  # saved before the turn said it finished


async def test_a_stop_that_lands_after_the_reply_is_saved_finds_the_turn_finished(make_engine, fake_openai):
    """The loop turns once between the reply's save and TurnFinished: a Stop in that pass must not save
    the reply a second time (as a stopped one) nor leave the window without the turn's end."""
    engine = make_engine()
    fake_openai.add_text("All done.")
    seen = collect(engine)
    key = "desktop:late-stop"
    task = engine.loop.submit(key, "hello")

    def stop_once_saved(event: ev.Event) -> None:
        if isinstance(event, ev.SessionChanged) and event.reason == "appended" and len(
                [e for e in seen if isinstance(e, ev.SessionChanged) and e.reason == "appended"]) == 2:
            task.cancel()  # the reply's append: the turn is inside the save, about to yield

    engine.bus.subscribe(stop_once_saved)
    try:
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        await engine.shutdown()
    ends = [type(e) for e in seen if isinstance(e, (ev.TurnFinished, ev.TurnCancelled, ev.TurnFailed))]
    assert ends == [ev.TurnFinished]
    assert [e.reply for e in seen if isinstance(e, ev.TurnFinished)] == ["All done."]
    lines = (engine.workspace.sessions_dir / "desktop_late-stop.jsonl").read_text(encoding="utf-8").splitlines()
    replies = [json.loads(line) for line in lines[1:] if json.loads(line).get("role") == "assistant"]
    assert [(reply["content"], reply.get("stopped")) for reply in replies] == [("All done.", None)]
