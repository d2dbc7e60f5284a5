"""HeartbeatService: no-task detection without any LLM call, the two phases, tick records, events."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.data import templates_dir
from nanobot_desktop.engine.events import Event, EventBus, HeartbeatDecided, HeartbeatRan
from nanobot_desktop.engine.background.heartbeat import HEARTBEAT_TOOL, HeartbeatService, TickRecord, has_no_tasks
from nanobot_desktop.engine.llm.types import LLMResponse, ProviderError, ToolCallRequest
from nanobot_desktop.engine.workspace import Workspace
from datetime import UTC

# Shaped like the original's template (title, an introduction, Active Tasks, Completed); our own words.
CLI_STYLE_TEMPLATE = """# Heartbeat Tasks

This file is read by your agent every half hour.
Put recurring work under Active Tasks; with nothing there, the check is skipped.

## Active Tasks

<!-- Add your periodic tasks below this line -->


## Completed

<!-- Move tasks here when done, or delete them -->

"""


class FakeChat:
    """Stands in for the model: records each call and answers with the next scripted response."""

    def __init__(self, *answers: LLMResponse | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    async def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
        self.calls.append((messages, tools))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def decision(action: str, tasks: str | None = None) -> LLMResponse:
    arguments: dict[str, Any] = {"action": action}
    if tasks is not None:
        arguments["tasks"] = tasks
    return LLMResponse(content=None, tool_calls=[ToolCallRequest(id="call_1", name="heartbeat", arguments=arguments)])


class Executor:
    def __init__(self, reply: str | None = "done", error: Exception | None = None) -> None:
        self.reply = reply
        self.error = error
        self.calls: list[str] = []

    async def __call__(self, tasks: str) -> str | None:
        self.calls.append(tasks)
        if self.error:
            raise self.error
        return self.reply


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace.at(tmp_path / "workspace")


def write_heartbeat(workspace: Workspace, text: str) -> None:
    workspace.root.mkdir(parents=True, exist_ok=True)
    workspace.heartbeat_file.write_text(text, encoding="utf-8")


def collect(bus: EventBus) -> list[Event]:
    events: list[Event] = []
    bus.subscribe(events.append)
    return events


# --- has_no_tasks ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t\n",
        "<!-- nothing yet -->\n\n<!--\n  a longer\n  comment\n-->\n",
        "# Heartbeat Tasks\n\n## Active Tasks\n\n## Completed\n",
        "## Active Tasks\n- \n- [ ]\n---\n",
    ],
)
def test_files_without_tasks(text: str) -> None:
    assert has_no_tasks(text) is True


def test_untouched_shipped_template_has_no_tasks() -> None:
    template = (templates_dir() / "HEARTBEAT.md").read_text(encoding="utf-8")
    assert has_no_tasks(template) is True
    assert has_no_tasks(template.rstrip() + "\n\n\n") is True


@pytest.mark.parametrize(
    "text",
    [
        CLI_STYLE_TEMPLATE.replace("-->\n\n\n## Completed", "-->\n- Check the weather and tell me if it rains\n\n## Completed"),
        "Check my inbox for invoices",
        "# Heartbeat Tasks\n\n- summarise the news\n",
        "## Active Tasks\n<!-- comment --> water the plants\n",
        CLI_STYLE_TEMPLATE,  # its introduction is not one of the known templates' lines: the model reads it
        CLI_STYLE_TEMPLATE + "- [x] renew the passport\n",  # under Completed
    ],
)
def test_files_with_tasks(text: str) -> None:
    assert has_no_tasks(text) is False


def test_shipped_template_with_a_task_added_has_tasks() -> None:
    template = (templates_dir() / "HEARTBEAT.md").read_text(encoding="utf-8")
    marker = "## Completed"
    assert marker in template
    assert has_no_tasks(template.replace(marker, "- back up ~/notes\n\n" + marker)) is False


# --- ticks -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("content", [None, "", "  \n\n ", "<!-- only a comment -->\n", "template"])
async def test_no_tasks_means_no_llm_call(workspace: Workspace, content: str | None) -> None:
    if content == "template":
        workspace.sync_templates()
    elif content is not None:
        write_heartbeat(workspace, content)
    chat, execute, bus = FakeChat(), Executor(), EventBus()
    events = collect(bus)
    service = HeartbeatService(workspace, chat, execute, bus=bus)
    record = await service.trigger_now()
    assert chat.calls == [] and execute.calls == []
    assert (record.decision, record.tasks, record.result, record.error, record.trigger) == ("skipped", "", None, None, "manual")
    assert record.skip_reason in ("missing", "empty", "template") and record.explanation
    assert [type(e) for e in events] == [HeartbeatDecided, HeartbeatRan]
    assert all(e.session_key == "heartbeat" for e in events)
    assert service.ticks == [record] and service.last_tick is record


async def test_no_tool_call_is_skip(workspace: Workspace) -> None:
    write_heartbeat(workspace, "## Active Tasks\n- look at the backups\n")
    chat = FakeChat(LLMResponse(content="Nothing to do."), decision("skip"))
    execute = Executor()
    service = HeartbeatService(workspace, chat, execute)
    first = await service.trigger_now()
    second = await service.trigger_now()
    assert (first.decision, second.decision) == ("skip", "skip")
    assert execute.calls == []
    messages, tools = chat.calls[0]
    assert tools == [HEARTBEAT_TOOL]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "heartbeat" in messages[0]["content"]
    assert "- look at the backups" in messages[1]["content"]


async def test_run_decision_executes_the_tasks(workspace: Workspace) -> None:
    write_heartbeat(workspace, "## Active Tasks\n- every morning, summarise the newsletters\n")
    bus = EventBus()
    events = collect(bus)
    chat = FakeChat(decision("run", "Summarise today's newsletters"))
    execute = Executor(reply="Here is your summary.")
    service = HeartbeatService(workspace, chat, execute, bus=bus)
    record = await service.trigger_now()
    assert execute.calls == ["Summarise today's newsletters"]
    assert (record.decision, record.tasks, record.result, record.error) == ("run", "Summarise today's newsletters", "Here is your summary.", None)
    assert record.session_key == "heartbeat" and record.duration_s >= 0
    decided = [e for e in events if isinstance(e, HeartbeatDecided)]
    ran = [e for e in events if isinstance(e, HeartbeatRan)]
    assert (decided[0].decision, decided[0].tasks) == ("run", "Summarise today's newsletters")
    assert (ran[0].decision, ran[0].result, ran[0].error) == ("run", "Here is your summary.", None)


async def test_run_without_summary_hands_over_the_task_lines(workspace: Workspace) -> None:
    write_heartbeat(workspace, "## Active Tasks\n- water the plants\n\n## Completed\n- old thing\n")
    execute = Executor()
    await HeartbeatService(workspace, FakeChat(decision("run")), execute).trigger_now()
    assert execute.calls == ["- water the plants\n- old thing"]  # every line the person wrote


async def test_file_is_read_fresh_on_every_tick(workspace: Workspace) -> None:
    write_heartbeat(workspace, "")
    chat = FakeChat(decision("skip"))
    service = HeartbeatService(workspace, chat, Executor())
    assert (await service.trigger_now()).decision == "skipped"
    write_heartbeat(workspace, "- call the plumber\n")
    assert (await service.trigger_now()).decision == "skip"
    assert len(chat.calls) == 1


@pytest.mark.parametrize(
    ("chat", "execute", "message"),
    [
        (FakeChat(ProviderError("Cannot reach http://127.0.0.1:9/v1", kind="unreachable")), Executor(), "Cannot reach http://127.0.0.1:9/v1"),
        (FakeChat(decision("run", "do it")), Executor(error=RuntimeError("tool exploded")), "tool exploded"),
        (FakeChat(decision("later")), Executor(), "action='later'"),
        (
            FakeChat(LLMResponse(content=None, tool_calls=[ToolCallRequest("c", "heartbeat", {}, "{act", parse_error="bad JSON")])),
            Executor(),
            "could not be read: bad JSON",
        ),
    ],
)
async def test_errors_are_recorded_and_do_not_stop_the_service(
    workspace: Workspace, chat: FakeChat, execute: Executor, message: str
) -> None:
    write_heartbeat(workspace, "- something to do\n")
    bus = EventBus()
    events = collect(bus)
    service = HeartbeatService(workspace, chat, execute, bus=bus)
    record = await service.trigger_now()
    assert record.decision == "error" and message in (record.error or "")
    assert [e.error for e in events if isinstance(e, HeartbeatRan)] == [record.error]
    chat.answers.append(decision("skip"))
    assert (await service.trigger_now()).decision == "skip"


async def test_non_utf8_file_is_an_error_not_a_crash(workspace: Workspace) -> None:
    workspace.root.mkdir(parents=True)
    workspace.heartbeat_file.write_bytes(b"- caf\xe9 order\n")
    record = await HeartbeatService(workspace, FakeChat(), Executor()).trigger_now()
    assert record.decision == "error" and "not UTF-8" in (record.error or "")


async def test_trigger_now_while_a_tick_runs_joins_it(workspace: Workspace) -> None:
    write_heartbeat(workspace, "- long task\n")
    started, release = asyncio.Event(), asyncio.Event()
    calls: list[str] = []

    async def slow_execute(tasks: str) -> str:
        calls.append(tasks)
        started.set()
        await release.wait()
        return "finished"

    chat = FakeChat(decision("run", "long task"))
    service = HeartbeatService(workspace, chat, slow_execute)
    first = asyncio.create_task(service.trigger_now())
    await asyncio.wait_for(started.wait(), timeout=10)
    assert service.ticking is True
    second = asyncio.create_task(service.trigger_now())  # scheduled before the release below, so it joins
    release.set()
    one, two = await asyncio.gather(first, second)
    assert one is two and one.result == "finished"
    assert calls == ["long task"] and len(chat.calls) == 1
    assert len(service.ticks) == 1 and service.ticking is False


# --- the loop ----------------------------------------------------------------------------------------

async def test_timer_ticks_and_stop_ends_the_loop(workspace: Workspace) -> None:
    write_heartbeat(workspace, "")
    bus = EventBus()
    ticked = asyncio.Event()
    bus.subscribe(lambda e: ticked.set() if isinstance(e, HeartbeatRan) else None)
    service = HeartbeatService(workspace, FakeChat(), Executor(), interval_s=3600, bus=bus)
    await service.start()
    loop_task = service._loop_task
    await service.start()  # idempotent
    assert service._loop_task is loop_task and service.running
    assert service.next_tick_at is not None
    service.set_interval(0.01)  # the waiting loop picks up the new interval
    await asyncio.wait_for(ticked.wait(), timeout=10)
    await service.stop()
    assert not service.running and service.next_tick_at is None
    assert isinstance(service.ticks[0], TickRecord) and service.ticks[0].trigger == "timer"


async def test_disabled_service_does_not_start(workspace: Workspace) -> None:
    service = HeartbeatService(workspace, FakeChat(), Executor(), enabled=False)
    await service.start()
    assert not service.running and service.ticks == []


async def test_pause_and_resume(workspace: Workspace) -> None:
    service = HeartbeatService(workspace, FakeChat(), Executor(), interval_s=3600)
    await service.start()
    try:
        service.pause()
        assert service.paused and service.next_tick_at is None
        write_heartbeat(workspace, "")
        assert (await service.trigger_now()).decision == "skipped"  # manual runs still work when paused
        service.resume()
        assert not service.paused and service.next_tick_at is not None
    finally:
        await service.stop()


async def test_stop_cancels_a_running_tick(workspace: Workspace) -> None:
    write_heartbeat(workspace, "- forever\n")
    started = asyncio.Event()

    async def hang(tasks: str) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    service = HeartbeatService(workspace, FakeChat(decision("run", "forever")), hang)
    waiter = asyncio.create_task(service.trigger_now())
    await asyncio.wait_for(started.wait(), timeout=10)
    await service.stop()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert service.last_tick is not None and service.last_tick.error == "cancelled (heartbeat stopped)"


def test_bad_interval_is_rejected(workspace: Workspace) -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        HeartbeatService(workspace, FakeChat(), Executor(), interval_s=0)
    service = HeartbeatService(workspace, FakeChat(), Executor())
    with pytest.raises(ValueError):
        service.set_interval(-5)
    assert service.interval_s == 1800


# --- every tick explains itself ------------------------------------------------------------------------

async def test_a_paused_timer_tick_is_recorded_as_skipped_without_reading_the_file(workspace: Workspace) -> None:
    write_heartbeat(workspace, "- a real task\n")
    bus = EventBus()
    ticked = asyncio.Event()
    bus.subscribe(lambda e: ticked.set() if isinstance(e, HeartbeatRan) else None)
    chat = FakeChat()
    service = HeartbeatService(workspace, chat, Executor(), interval_s=3600, bus=bus)
    await service.start()
    try:
        service.pause()
        service.set_interval(0.01)
        await asyncio.wait_for(ticked.wait(), timeout=10)
    finally:
        await service.stop()
    tick = service.ticks[0]
    assert (tick.decision, tick.skip_reason, tick.trigger) == ("skipped", "paused", "timer")
    assert "paused" in tick.explanation and chat.calls == []


async def test_another_program_running_the_heartbeat_skips_timer_ticks_with_its_reason(workspace: Workspace) -> None:
    write_heartbeat(workspace, "- a real task\n")
    bus = EventBus()
    ticked = asyncio.Event()
    bus.subscribe(lambda e: ticked.set() if isinstance(e, HeartbeatRan) else None)
    chat = FakeChat(decision("skip"))
    service = HeartbeatService(workspace, chat, Executor(), interval_s=3600, bus=bus)
    service.defer_to = lambda: "nanobot gateway (pid 4242)"
    await service.start()
    try:
        service.set_interval(0.01)
        await asyncio.wait_for(ticked.wait(), timeout=10)
    finally:
        await service.stop()
    tick = service.ticks[0]
    assert (tick.decision, tick.skip_reason, tick.trigger) == ("skipped", "external", "timer")
    assert tick.explanation == "another program runs the heartbeat: nanobot gateway (pid 4242)"
    assert chat.calls == []
    assert (await service.trigger_now()).decision == "skip"  # Run now still runs here


async def test_decided_skip_keeps_the_models_answer(workspace: Workspace) -> None:
    write_heartbeat(workspace, "- water the plants on Mondays\n")
    answer = LLMResponse(content="It is Tuesday; nothing to do.",
                         tool_calls=[ToolCallRequest(id="c1", name="heartbeat", arguments={"action": "skip"})])
    tick = await HeartbeatService(workspace, FakeChat(answer), Executor()).trigger_now()
    assert (tick.decision, tick.explanation) == ("skip", "It is Tuesday; nothing to do.")


async def test_a_ran_tick_lists_the_tools_it_used(make_engine, fake_openai) -> None:
    from tests.fake_openai import text_reply, tool_calls_reply

    engine = make_engine()
    engine.workspace.heartbeat_file.write_text("- look at the notes folder\n", encoding="utf-8")
    fake_openai.add(tool_calls_reply([("heartbeat", {"action": "run", "tasks": "look at the notes folder"})]))
    fake_openai.add(tool_calls_reply([("list_dir", {"path": "."})]))
    fake_openai.add(text_reply("The folder holds 6 files."))
    tick = await engine.heartbeat.trigger_now()
    await engine.shutdown()
    assert (tick.decision, tick.result, tick.error) == ("run", "The folder holds 6 files.", None)
    assert [(use.name, use.status, use.detail) for use in tick.tools] == [("list_dir", "ok", ".")]
    assert tick.approvals == ()


async def test_a_tick_long_overdue_after_the_computer_slept_says_what_was_missed(workspace: Workspace) -> None:
    from datetime import datetime, timedelta

    write_heartbeat(workspace, "")
    now = [datetime(2026, 11, 20, 9, 0, tzinfo=UTC)]
    bus = EventBus()
    ticked = asyncio.Event()
    bus.subscribe(lambda e: ticked.set() if isinstance(e, HeartbeatRan) else None)
    service = HeartbeatService(workspace, FakeChat(), Executor(), interval_s=1800, bus=bus, clock=lambda: now[0])
    service.CLOCK_CHECK_S = 0.01  # re-read the (fake) wall clock often instead of waiting a minute
    await service.start()
    try:
        assert service.next_tick_at == datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
        now[0] += timedelta(hours=3, minutes=5)  # the computer slept: the event loop's clock stood still
        await asyncio.wait_for(ticked.wait(), timeout=10)
    finally:
        await service.stop()
    (tick,) = service.ticks
    assert tick.trigger == "timer" and tick.decision == "skipped"
    assert tick.note == ("5 checks missed while the computer slept or the app was stalled (due 09:30 UTC); "
                         "checking once now")
