"""CronService, jobs.json compatibility and the cron tool."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import time
from collections.abc import Awaitable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from nanobot_desktop.engine.background.cron import (
    CronJob,
    CronSchedule,
    CronService,
    CronStoreError,
    compute_next_run,
    cron_job_prompt,
    describe_schedule,
)
from nanobot_desktop.engine.background.cron_types import dump_store, parse_store
from nanobot_desktop.engine.events import CronJobRan, Event, EventBus, ToolStatus
from nanobot_desktop.engine.tools.base import ToolContext, ToolResult, failed
from nanobot_desktop.engine.tools.cron_tool import CronTool
from nanobot_desktop.engine.workspace import atomic_write_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "cron"
BERLIN = ZoneInfo("Europe/Berlin")
# Friday 2026-11-20 10:00 in Berlin
FRIDAY_MS = int(datetime(2026, 11, 20, 10, 0, tzinfo=BERLIN).timestamp() * 1000)


class Clock:
    def __init__(self, now_ms: int) -> None:
        self.now = now_ms

    def __call__(self) -> int:
        return self.now


async def text_of(call: Awaitable[str | ToolResult]) -> str:
    """The text a tool call returned, whether it succeeded (a text) or failed (a failed result)."""
    result = await call
    return result.text if isinstance(result, ToolResult) else result


async def _never(job: CronJob) -> str | None:
    raise AssertionError(f"job {job.id} should not run in this test")


def _store(tmp_path: Path, fixture: str = "jobs_post4.json") -> Path:
    path = tmp_path / "cron" / "jobs.json"
    path.parent.mkdir()
    shutil.copyfile(FIXTURES / fixture, path)
    return path


def _on_disk(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _ran_events(bus: EventBus) -> tuple[list[CronJobRan], asyncio.Event]:
    seen: list[CronJobRan] = []
    arrived = asyncio.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, CronJobRan):
            seen.append(event)
            arrived.set()

    bus.subscribe(on_event)
    return seen, arrived


# --- the file format ---------------------------------------------------------------------------------

def test_original_file_round_trips_byte_for_byte() -> None:
    raw = (FIXTURES / "jobs_post4.json").read_bytes()
    jobs, top = parse_store(FIXTURES / "jobs_post4.json", raw)
    assert [j.id for j in jobs] == ["a1b2c3d4", "0f9e8d7c", "5e6f7a8b"]
    assert jobs[0].schedule.every_ms == 1_200_000 and jobs[0].payload.to == "8281248569"
    assert jobs[0].extra == {"sessionKey": "telegram:8281248569"}
    assert jobs[0].payload.extra == {"originChannel": "telegram", "originChatId": "8281248569"}
    assert dump_store(jobs, top).encode("utf-8") == raw


def test_saving_keeps_camel_case_order_and_unknown_keys(tmp_path: Path) -> None:
    path = _store(tmp_path)
    original = _on_disk(path)
    service = CronService(path, _never, now_ms=Clock(FRIDAY_MS))
    assert service.remove_job("0f9e8d7c") is True
    saved_text = path.read_text(encoding="utf-8")
    saved = json.loads(saved_text)
    expected = dict(original, jobs=[original["jobs"][0], original["jobs"][2]])
    assert saved == expected
    assert saved_text == json.dumps(expected, indent=2, ensure_ascii=False)  # same keys, order, indent, non-ASCII
    assert list(saved["jobs"][0]) == list(original["jobs"][0])
    assert "☕" in saved_text and "\\u" not in saved_text


def test_snake_case_file_loads_and_is_saved_as_camel_case(tmp_path: Path) -> None:
    path = _store(tmp_path, "jobs_snake_case.json")
    service = CronService(path, _never, now_ms=Clock(FRIDAY_MS))
    (job,) = service.list_jobs(include_disabled=True)
    assert (job.enabled, job.schedule.every_ms, job.state.last_error, job.updated_at_ms) == (False, 60000, "timeout", 1763000000001)
    service.update_job("11223344", name="Daily standup")
    saved = _on_disk(path)["jobs"][0]
    assert saved["name"] == "Daily standup"
    assert saved["schedule"] == {"kind": "every", "atMs": None, "everyMs": 60000, "expr": None, "tz": None}
    assert saved["state"]["lastError"] == "timeout" and "last_error" not in saved["state"]
    assert saved["createdAtMs"] == 1763000000000 and "created_at_ms" not in saved


def test_new_job_has_original_shape(tmp_path: Path) -> None:
    path = tmp_path / "cron" / "jobs.json"
    service = CronService(path, _never, now_ms=Clock(FRIDAY_MS))
    message = "Drink water and look away from the screen for a minute"
    job = service.add_job("", CronSchedule(kind="every", every_ms=20 * 60_000), message, deliver=True, channel="desktop", to="main")
    assert len(job.id) == 8 and int(job.id, 16) >= 0
    assert job.name == message[:30]
    on_disk = _on_disk(path)
    assert on_disk["version"] == 1
    assert on_disk["jobs"][0] == {
        "id": job.id,
        "name": message[:30],
        "enabled": True,
        "schedule": {"kind": "every", "atMs": None, "everyMs": 1_200_000, "expr": None, "tz": None},
        "payload": {"kind": "agent_turn", "message": message, "deliver": True, "channel": "desktop", "to": "main"},
        "state": {"nextRunAtMs": FRIDAY_MS + 1_200_000, "lastRunAtMs": None, "lastStatus": None, "lastError": None},
        "createdAtMs": FRIDAY_MS,
        "updatedAtMs": FRIDAY_MS,
        "deleteAfterRun": False,
    }


# --- schedules ---------------------------------------------------------------------------------------

def test_next_run_for_every_cron_with_tz_and_at() -> None:
    assert compute_next_run(CronSchedule(kind="every", every_ms=50), FRIDAY_MS) == FRIDAY_MS + 50
    weekday_9 = CronSchedule(kind="cron", expr="0 9 * * 1-5", tz="Europe/Berlin")
    monday_9 = int(datetime(2026, 11, 23, 9, 0, tzinfo=BERLIN).timestamp() * 1000)
    assert compute_next_run(weekday_9, FRIDAY_MS) == monday_9
    tokyo = CronSchedule(kind="cron", expr="0 9 * * *", tz="Asia/Tokyo")
    assert compute_next_run(tokyo, FRIDAY_MS) == int(datetime(2026, 11, 21, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo")).timestamp() * 1000)
    assert compute_next_run(CronSchedule(kind="at", at_ms=FRIDAY_MS + 1), FRIDAY_MS) == FRIDAY_MS + 1
    assert compute_next_run(CronSchedule(kind="at", at_ms=FRIDAY_MS), FRIDAY_MS) is None


def test_cron_without_tz_uses_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        schedule = CronSchedule(kind="cron", expr="30 7 * * *")
        expected = datetime(2026, 11, 20, 7, 30, tzinfo=ZoneInfo("America/New_York"))  # 04:00 there now
        assert compute_next_run(schedule, FRIDAY_MS) == int(expected.timestamp() * 1000)
    finally:
        monkeypatch.undo()
        time.tzset()


async def test_start_recomputes_next_runs_and_skips_missed_runs_by_rule(tmp_path: Path) -> None:
    path = _store(tmp_path)
    service = CronService(path, _never, now_ms=Clock(FRIDAY_MS), missed_rule=lambda _job_id: "skip")
    await service.start()
    await service.wait_for_catch_up()
    try:
        jobs = {j["id"]: j for j in _on_disk(path)["jobs"]}
        assert jobs["a1b2c3d4"]["state"]["nextRunAtMs"] == FRIDAY_MS + 1_200_000
        assert jobs["0f9e8d7c"]["state"]["nextRunAtMs"] == int(datetime(2026, 11, 23, 9, tzinfo=BERLIN).timestamp() * 1000)
        assert jobs["5e6f7a8b"]["state"]["nextRunAtMs"] is None  # an `at` in the past never fires
        assert jobs["5e6f7a8b"]["enabled"] is False and jobs["5e6f7a8b"]["state"]["lastStatus"] == "skipped"
        assert [j.id for j in service.list_jobs()] == ["a1b2c3d4", "0f9e8d7c"]
        # 0f9e8d7c has no next run stored (never armed), so nothing of it was missed
        assert [(r.job_id, r.status) for r in service.runs()] == [("a1b2c3d4", "missed"), ("5e6f7a8b", "missed")]
        assert service.runs()[0].note.startswith("missed 26")
        assert service.status()["next_wake_at_ms"] == FRIDAY_MS + 1_200_000
        assert service.status()["enabled"] is True
    finally:
        await service.stop()
    assert service.status()["enabled"] is False


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        (CronSchedule(kind="every", every_ms=60_000, tz="Europe/Berlin"), "tz can only be used with cron"),
        (CronSchedule(kind="cron", expr="0 9 * * *", tz="Mars/Olympus_Mons"), "unknown timezone 'Mars/Olympus_Mons'"),
        (CronSchedule(kind="cron", expr="61 * * * *"), "invalid cron expression '61 * * * *'"),
        (CronSchedule(kind="cron", expr="every day"), "invalid cron expression 'every day'"),
        (CronSchedule(kind="every", every_ms=0), "positive interval"),
        (CronSchedule(kind="at", at_ms=FRIDAY_MS - 1), "in the past"),
        (CronSchedule(kind="weekly"), "unknown schedule kind 'weekly'"),
    ],
)
def test_add_job_rejects_bad_schedules(tmp_path: Path, schedule: CronSchedule, message: str) -> None:
    path = tmp_path / "jobs.json"
    service = CronService(path, _never, now_ms=Clock(FRIDAY_MS))
    with pytest.raises(ValueError, match=re.escape(message)):
        service.add_job("x", schedule, "do it")
    assert not path.exists()


def test_valid_timezone_is_accepted(tmp_path: Path) -> None:
    service = CronService(tmp_path / "jobs.json", _never, now_ms=Clock(FRIDAY_MS))
    job = service.add_job("x", CronSchedule(kind="cron", expr="0 9 * * 1-5", tz="America/Vancouver"), "do it")
    assert job.state.next_run_at_ms is not None


def test_describe_schedule() -> None:
    assert describe_schedule(CronSchedule(kind="every", every_ms=20 * 60_000)) == "every 20 minutes"
    assert describe_schedule(CronSchedule(kind="every", every_ms=3_600_000)) == "every hour"
    assert describe_schedule(CronSchedule(kind="every", every_ms=90_000)) == "every 90 seconds"
    assert describe_schedule(CronSchedule(kind="cron", expr="0 9 * * 1-5", tz="Europe/Berlin")) == "cron 0 9 * * 1-5 (Europe/Berlin)"
    at_ms = int(datetime(2026, 11, 23, 9, 0).timestamp() * 1000)  # local time
    assert describe_schedule(CronSchedule(kind="at", at_ms=at_ms)) == "once at 2026-11-23 09:00"


def test_cron_job_prompt_matches_the_original_wording() -> None:
    job = CronJob(id="abcd1234", name="Stretch")
    job.payload.message = "Remind me to stretch"
    assert cron_job_prompt(job) == (
        "[Scheduled Task] Timer finished.\n\nTask 'Stretch' has been triggered.\nScheduled instruction: Remind me to stretch"
    )


# --- firing ------------------------------------------------------------------------------------------

async def test_every_job_fires_and_state_is_saved(tmp_path: Path) -> None:
    path = tmp_path / "cron" / "jobs.json"
    bus = EventBus()
    seen, arrived = _ran_events(bus)
    received: list[CronJob] = []

    async def on_job(job: CronJob) -> str:
        received.append(job)
        return f"did {job.payload.message}"

    service = CronService(path, on_job, bus=bus)
    await service.start()
    try:
        job = service.add_job("tick", CronSchedule(kind="every", every_ms=50), "the tick")
        await asyncio.wait_for(arrived.wait(), timeout=10)
    finally:
        await service.stop()
    assert received[0].id == job.id and received[0].payload.message == "the tick"
    assert (seen[0].job_id, seen[0].status, seen[0].result, seen[0].session_key) == (job.id, "ok", "did the tick", f"cron:{job.id}")
    state = _on_disk(path)["jobs"][0]["state"]
    assert state["lastStatus"] == "ok" and state["lastError"] is None
    assert state["nextRunAtMs"] > state["lastRunAtMs"]
    (run, *_) = service.runs(job.id)
    assert (run.job_id, run.name, run.status, run.result) == (job.id, "tick", "ok", "did the tick")


async def test_failing_job_is_recorded_and_the_service_keeps_going(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    bus = EventBus()
    seen, _arrived = _ran_events(bus)
    second_run = asyncio.Event()

    async def on_job(job: CronJob) -> str:
        if len(seen) >= 1:
            second_run.set()
        raise RuntimeError("model endpoint unreachable")

    service = CronService(path, on_job, bus=bus)
    await service.start()
    try:
        service.add_job("flaky", CronSchedule(kind="every", every_ms=20), "try")
        await asyncio.wait_for(second_run.wait(), timeout=10)
    finally:
        await service.stop()
    assert seen[0].status == "error" and seen[0].error == "model endpoint unreachable"
    state = _on_disk(path)["jobs"][0]["state"]
    assert (state["lastStatus"], state["lastError"]) == ("error", "model endpoint unreachable")
    assert service.runs()[0].status == "error"


async def test_at_job_fires_once_and_is_deleted(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    bus = EventBus()
    seen, arrived = _ran_events(bus)

    async def on_job(job: CronJob) -> None:
        return None

    service = CronService(path, on_job, bus=bus)
    await service.start()
    try:
        at_ms = int(time.time() * 1000) + 30
        job = service.add_job("once", CronSchedule(kind="at", at_ms=at_ms), "remind me", delete_after_run=True)
        await asyncio.wait_for(arrived.wait(), timeout=10)
    finally:
        await service.stop()
    assert seen[0].job_id == job.id
    assert _on_disk(path)["jobs"] == []
    assert service.list_jobs(include_disabled=True) == []


async def test_at_job_without_delete_flag_is_disabled_after_running(tmp_path: Path) -> None:
    clock = Clock(FRIDAY_MS)
    calls: list[str] = []

    async def on_job(job: CronJob) -> str:
        calls.append(job.id)
        return "ok"

    service = CronService(tmp_path / "jobs.json", on_job, now_ms=clock)
    job = service.add_job("later", CronSchedule(kind="at", at_ms=FRIDAY_MS + 60_000), "later")
    assert await service.run_job(job.id) is True
    (after,) = _on_disk(tmp_path / "jobs.json")["jobs"]
    assert after["enabled"] is False and after["state"]["nextRunAtMs"] is None
    assert after["state"]["lastRunAtMs"] == FRIDAY_MS
    assert await service.run_job(job.id) is False  # disabled now
    assert await service.run_job(job.id, force=True) is True
    assert calls == [job.id, job.id]
    assert await service.run_job("nope") is False


async def test_external_edit_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    service = CronService(path, _never)
    await service.start()
    try:
        job = service.add_job("hourly", CronSchedule(kind="every", every_ms=3_600_000), "check")
        assert service.status()["next_wake_at_ms"] is not None
        data = _on_disk(path)
        data["jobs"][0]["enabled"] = False
        data["jobs"][0]["state"]["nextRunAtMs"] = None
        data["jobs"][0]["payload"]["sessionKey"] = "desktop:main"
        atomic_write_text(path, json.dumps(data, indent=2))
        assert service.reload_if_changed() is True
        assert service.reload_if_changed() is False
        assert service.list_jobs() == []
        assert await service.run_job(job.id) is False
        assert service.status()["next_wake_at_ms"] is None
        # an edit is also noticed by any public call, without the watcher's poke
        data["jobs"][0]["enabled"] = True
        atomic_write_text(path, json.dumps(data, indent=2))
        (again,) = service.list_jobs()
        assert again.state.next_run_at_ms is not None  # enabled by hand: gets a next run
        service.update_job(job.id, message="check twice")
        assert _on_disk(path)["jobs"][0]["payload"]["sessionKey"] == "desktop:main"
    finally:
        await service.stop()


async def test_corrupt_store_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    broken = b'{"version": 1, "jobs": [\n  {"id": "a1b2c3d4",, }\n]}'
    path.write_bytes(broken)
    service = CronService(path, _never)
    await service.start()
    try:
        error = service.store_error
        assert isinstance(error, CronStoreError)
        assert str(path) in str(error) and (error.line, error.column) == (2, 21)  # the second comma
        assert "line 2" in service.status()["error"]
        with pytest.raises(CronStoreError, match="must be fixed first"):
            service.add_job("x", CronSchedule(kind="every", every_ms=1000), "do it")
        with pytest.raises(CronStoreError):
            service.remove_job("a1b2c3d4")
        assert path.read_bytes() == broken
        shutil.copyfile(FIXTURES / "jobs_snake_case.json", path)  # fixed by hand
        service.add_job("x", CronSchedule(kind="every", every_ms=60_000), "do it")
        assert service.store_error is None
        assert [j["id"] for j in _on_disk(path)["jobs"]][0] == "11223344"
    finally:
        await service.stop()


def test_wrong_field_type_names_the_job_field(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    path.write_text('{"version": 1, "jobs": [{"id": "x1", "schedule": {"kind": "every", "everyMs": "20m"}}]}')
    service = CronService(path, _never)
    assert service.list_jobs() == []
    assert "jobs[0].schedule.everyMs must be a whole number" in str(service.store_error)


# --- the tool ----------------------------------------------------------------------------------------

@pytest.fixture
def tool_ctx(tmp_path: Path) -> ToolContext:
    service = CronService(tmp_path / "jobs.json", _never)
    return ToolContext(workspace=tmp_path, session_key="telegram:42", channel="telegram", chat_id="42", cron=service)


async def test_tool_add_every_binds_job_to_the_chat(tool_ctx: ToolContext) -> None:
    reply = await CronTool().execute(tool_ctx, action="add", message="Stretch your legs", every_seconds=1200, cron_expr="0 9 * * *")
    (job,) = tool_ctx.cron.list_jobs()
    assert reply == f"Created job 'Stretch your legs' (id: {job.id})"
    assert job.schedule.kind == "every" and job.schedule.every_ms == 1_200_000  # every_seconds is checked first
    await CronTool().execute(tool_ctx, action="add", message="quoted", every_seconds="30")
    assert {j.name: j.schedule.every_ms for j in tool_ctx.cron.list_jobs()}["quoted"] == 30_000
    assert (job.payload.deliver, job.payload.channel, job.payload.to, job.delete_after_run) == (True, "telegram", "42", False)


async def test_tool_add_cron_and_at(tool_ctx: ToolContext) -> None:
    tool = CronTool()
    await tool.execute(tool_ctx, action="add", message="weather", cron_expr="0 9 * * 1-5", tz="Europe/Berlin")
    future = datetime.fromtimestamp(time.time() + 3600).replace(microsecond=0).isoformat()
    await tool.execute(tool_ctx, action="add", message="call mum", at=future)
    jobs = {j.name: j for j in tool_ctx.cron.list_jobs()}
    assert (jobs["weather"].schedule.expr, jobs["weather"].schedule.tz) == ("0 9 * * 1-5", "Europe/Berlin")
    assert jobs["call mum"].schedule.kind == "at" and jobs["call mum"].delete_after_run is True
    assert jobs["call mum"].schedule.at_ms == int(datetime.fromisoformat(future).timestamp() * 1000)


async def test_tool_add_errors_are_text(tool_ctx: ToolContext) -> None:
    tool = CronTool()
    assert await tool.execute(tool_ctx, action="add", every_seconds=60) == failed("Error: message is required for add")
    assert await tool.execute(tool_ctx, action="add", message="x") == failed("Error: either every_seconds, cron_expr, or at is required")
    assert "tz can only be used with cron_expr" in await text_of(tool.execute(tool_ctx, action="add", message="x", every_seconds=5, tz="UTC"))
    assert "unknown timezone 'Nowhere/City'" in await text_of(tool.execute(tool_ctx, action="add", message="x", cron_expr="* * * * *", tz="Nowhere/City"))
    assert "invalid cron expression" in await text_of(tool.execute(tool_ctx, action="add", message="x", cron_expr="soon"))
    assert "in the past" in await text_of(tool.execute(tool_ctx, action="add", message="x", at="2001-01-01T10:00:00"))
    assert "every_seconds must be a positive whole number" in await text_of(tool.execute(tool_ctx, action="add", message="x", every_seconds=-5))
    assert "invalid ISO datetime 'tomorrow'" in await text_of(tool.execute(tool_ctx, action="add", message="x", at="tomorrow"))
    no_chat = ToolContext(workspace=tool_ctx.workspace, channel="", chat_id="", cron=tool_ctx.cron)
    assert await tool.execute(no_chat, action="add", message="x", every_seconds=5) == failed("Error: no session context (channel/chat_id)")
    assert tool_ctx.cron.list_jobs(include_disabled=True) == []


async def test_tool_refuses_to_schedule_inside_a_cron_job(tool_ctx: ToolContext) -> None:
    tool_ctx.in_cron_job = True
    reply = await CronTool().execute(tool_ctx, action="add", message="again", every_seconds=5)
    assert reply == failed("Error: cannot schedule new jobs from within a cron job execution")
    assert tool_ctx.cron.list_jobs() == []
    assert await CronTool().execute(tool_ctx, action="list") == "No scheduled jobs."


async def test_tool_list_and_remove(tool_ctx: ToolContext) -> None:
    tool = CronTool()
    await tool.execute(tool_ctx, action="add", message="water", every_seconds=600)
    (job,) = tool_ctx.cron.list_jobs()
    assert await tool.execute(tool_ctx, action="list") == f"Scheduled jobs:\n- water (id: {job.id}, every)"
    assert await tool.execute(tool_ctx, action="remove") == failed("Error: job_id is required for remove")
    assert await tool.execute(tool_ctx, action="remove", job_id="deadbeef") == "Job deadbeef not found"
    assert await tool.execute(tool_ctx, action="remove", job_id=job.id) == f"Removed job {job.id}"
    assert await tool.execute(tool_ctx, action="list") == "No scheduled jobs."
    assert "unknown action 'pause'" in await text_of(tool.execute(tool_ctx, action="pause"))


async def test_tool_without_cron_service(tmp_path: Path) -> None:
    reply = await CronTool().execute(ToolContext(workspace=tmp_path), action="list")
    assert isinstance(reply, ToolResult) and reply.status is ToolStatus.ERROR and reply.text.startswith("Error:")


def test_tool_schema_matches_reference() -> None:
    schema = CronTool().to_schema()["function"]
    assert schema["name"] == "cron"
    params = schema["parameters"]
    assert set(params["properties"]) == {"action", "message", "every_seconds", "cron_expr", "tz", "at", "job_id"}
    assert params["properties"]["action"]["enum"] == ["add", "list", "remove"]
    assert params["properties"]["every_seconds"]["type"] == "integer"
    assert params["required"] == ["action"]


async def test_stop_cancels_a_running_job(tmp_path: Path) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def hang(job: CronJob) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    service = CronService(tmp_path / "jobs.json", hang)
    await service.start()
    service.add_job("slow", CronSchedule(kind="every", every_ms=10), "wait")
    await asyncio.wait_for(started.wait(), timeout=10)
    await service.stop()
    assert cancelled.is_set() and service.runs() == []
    assert _on_disk(tmp_path / "jobs.json")["jobs"][0]["state"]["lastRunAtMs"] is None


# --- missed runs (a controllable clock, no waiting) -------------------------------------------------------

@pytest.fixture
def berlin_time(monkeypatch: pytest.MonkeyPatch):
    """The person's computer is in Berlin: missed-run notes name Berlin wall-clock times."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _one_job_store(tmp_path: Path, schedule: dict, next_run_ms: int, job_id: str = "feedcat1") -> Path:
    path = tmp_path / "cron" / "jobs.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    job = {"id": job_id, "name": "Feed the cat", "enabled": True,
           "schedule": {"kind": "every", "atMs": None, "everyMs": None, "expr": None, "tz": None, **schedule},
           "payload": {"kind": "agent_turn", "message": "Remind me to feed the cat", "deliver": False,
                       "channel": None, "to": None},
           "state": {"nextRunAtMs": next_run_ms, "lastRunAtMs": None, "lastStatus": None, "lastError": None},
           "createdAtMs": next_run_ms - 3_600_000, "updatedAtMs": next_run_ms - 3_600_000, "deleteAfterRun": False}
    path.write_text(json.dumps({"version": 1, "jobs": [job]}, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize("rule", ["run_once", "skip"])
async def test_a_job_due_while_the_app_was_closed_is_shown_missed_and_follows_its_rule(tmp_path: Path, rule: str,
                                                                                      berlin_time: None) -> None:
    # every hour; last due Friday 07:00 Berlin, the app starts at 10:00: 07:00, 08:00, 09:00, 10:00 were missed
    due = FRIDAY_MS - 3 * 3_600_000
    path = _one_job_store(tmp_path, {"kind": "every", "everyMs": 3_600_000}, due)
    clock = Clock(FRIDAY_MS)
    ran: list[str] = []

    async def on_job(job: CronJob) -> str:
        ran.append(job.id)
        clock.now += 5_000  # the run takes five seconds of the fake clock
        return "fed"

    bus = EventBus()
    seen, _arrived = _ran_events(bus)
    service = CronService(path, on_job, bus=bus, now_ms=clock, missed_rule={"feedcat1": rule}.__getitem__)
    await service.start()
    try:
        assert service.catching_up("feedcat1") is (rule == "run_once")
        await service.wait_for_catch_up()
    finally:
        await service.stop()
    missed, *rest = service.runs("feedcat1")
    assert (missed.status, missed.trigger) == ("missed", "catch-up")
    assert missed.note.startswith("missed 4 runs (first due Fri 07:00 CET) ")
    assert "while the app was not running" in missed.note
    state = _on_disk(path)["jobs"][0]["state"]
    if rule == "run_once":
        assert ran == ["feedcat1"]
        assert [(r.status, r.trigger, r.result) for r in rest] == [("ok", "catch-up", "fed")]
        assert missed.note.endswith("the job's rule: run once now")
        assert (state["lastStatus"], state["lastRunAtMs"]) == ("ok", FRIDAY_MS)
        assert state["nextRunAtMs"] == FRIDAY_MS + 5_000 + 3_600_000
        assert [e.status for e in seen] == ["missed", "ok"]
    else:
        assert ran == [] and rest == []
        assert missed.note.endswith("the job's rule: skip")
        assert state["lastStatus"] == "skipped" and state["lastRunAtMs"] is None
        assert state["nextRunAtMs"] == FRIDAY_MS + 3_600_000
        assert [e.status for e in seen] == ["missed"]


async def test_a_run_found_late_after_sleep_is_missed_and_follows_its_rule(tmp_path: Path, berlin_time: None) -> None:
    due = FRIDAY_MS + 60_000
    path = _one_job_store(tmp_path, {"kind": "cron", "expr": "*/30 * * * *", "tz": "Europe/Berlin"}, due)
    clock = Clock(FRIDAY_MS)
    service = CronService(path, _never, now_ms=clock, missed_rule=lambda _job_id: "skip")
    await service.start()  # nothing missed yet: the next run is a minute away
    try:
        assert service.runs() == []
        clock.now = FRIDAY_MS + 3 * 3_600_000  # the computer slept three hours
        await service.fire_due()
    finally:
        await service.stop()
    (missed,) = service.runs()
    assert missed.status == "missed" and "while the computer slept" in missed.note
    assert missed.note.startswith("missed 6 runs (first due Fri 10:30 CET) ")  # start() armed 10:30; 10:30 … 13:00
    assert _on_disk(path)["jobs"][0]["state"]["nextRunAtMs"] == FRIDAY_MS + 3 * 3_600_000 + 30 * 60_000


def test_a_job_that_can_never_fire_says_so(tmp_path: Path) -> None:
    from nanobot_desktop.engine.background.cron import never_fires_reason

    past = CronJob(id="p", name="p", schedule=CronSchedule(kind="at", at_ms=FRIDAY_MS - 60_000))
    assert "has passed" in (never_fires_reason(past, FRIDAY_MS) or "")
    feb31 = CronJob(id="f", name="f", schedule=CronSchedule(kind="cron", expr="0 0 31 2 *"))
    assert never_fires_reason(feb31, FRIDAY_MS) == "no date matches the schedule"
    hourly = CronJob(id="h", name="h", schedule=CronSchedule(kind="every", every_ms=3_600_000))
    assert never_fires_reason(hourly, FRIDAY_MS) is None
    past.enabled = False
    assert never_fires_reason(past, FRIDAY_MS) is None  # a job that is off is not "never firing"
