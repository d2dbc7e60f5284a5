"""Scheduled jobs kept in `cron/jobs.json`, fired while the app runs (nanobot 0.1.4.post4, reference §10).

`CronStore` (cron_store.py) keeps the file; this adds one asyncio timer, armed for the earliest due
job (capped at a minute, so an external edit is noticed even without a watcher); due jobs run one
after another. Runs the app could not make are never silently dropped: a job that came due while the
app was not running (found at start) or while the computer slept (found late by the timer) gets a
"missed" record in its history and is then run once now or skipped, by the rule the app sets per job
(`missed_rule`). The clock is injectable (`now_ms`), so all of this is testable without waiting.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Awaitable, Callable

from nanobot_desktop.engine.changes import ChangeTracker
from nanobot_desktop.engine.background.log import ToolUse, ToolUseRecorder
from nanobot_desktop.engine.background.cron_store import CronStore
from nanobot_desktop.engine.background.cron_types import (
    DEFAULT_MISSED_RULE,
    MAX_COUNTED_MISSES,
    MISSED_RULE_WORDS,
    MISSED_SKIP,
    CronJob,
    CronJobState,
    CronPayload,
    CronSchedule,
    CronStoreError,
    compute_next_run,
    count_runs_between,
    is_system_job,
    describe_schedule,
    never_fires_reason,
    validate_schedule,
)
from nanobot_desktop.engine.events import CronJobRan, EventBus

__all__ = [
    "CRON_PROMPT_TEMPLATE",
    "CronJob",
    "CronJobState",
    "CronPayload",
    "CronRunRecord",
    "CronSchedule",
    "CronService",
    "CronStoreError",
    "compute_next_run",
    "cron_job_prompt",
    "describe_schedule",
    "never_fires_reason",
    "validate_schedule",
]

log = logging.getLogger(__name__)

CRON_PROMPT_TEMPLATE = "[Scheduled Task] Timer finished.\n\nTask '{name}' has been triggered.\nScheduled instruction: {message}"
MAX_TIMER_SLEEP_S = 60.0  # wake at least this often to notice external edits and clock jumps
LATE_MS = 2 * 60_000  # a run this late was missed (the computer slept, the clock jumped)
HELD_POLL_S = 2.0  # while another program fires the jobs: how often to look whether it still does
MAX_RUN_RECORDS = 200


def cron_job_prompt(job: CronJob) -> str:
    """The user message a fired job becomes, worded as the original's gateway words it."""
    return CRON_PROMPT_TEMPLATE.format(name=job.name, message=job.payload.message)


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


def _local(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000).astimezone()


# --- the service -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CronRunRecord:
    """One entry of a job's history: a run ("ok", "error") or runs that were "missed".

    `trigger` is "timer", "manual" or "catch-up" (a missed run made up for); `note` explains a
    missed entry; `tools` and `approvals` are what the run used and asked for.
    """

    started_at: datetime
    job_id: str
    name: str
    status: str
    result: str | None
    error: str | None
    duration_s: float
    trigger: str = "timer"
    note: str = ""
    tools: tuple[ToolUse, ...] = ()
    approvals: tuple[str, ...] = ()


OnJob = Callable[[CronJob], Awaitable[str | None]]


class CronService(CronStore):
    """Keeps jobs.json and its timer; `on_job` runs a job (an agent turn) and returns its reply."""

    def __init__(
        self,
        store_path: Path,
        on_job: OnJob,
        bus: EventBus | None = None,
        now_ms: Callable[[], int] = wall_clock_ms,
        missed_rule: Callable[[str], str] | None = None,
        shared_actions: bool = False,
        changes: ChangeTracker | None = None,
    ) -> None:
        super().__init__(store_path, now_ms, shared_actions, changes)
        self._on_job = on_job
        self._bus = bus
        self._missed_rule = missed_rule or (lambda _job_id: DEFAULT_MISSED_RULE)
        self._runs: deque[CronRunRecord] = deque(maxlen=MAX_RUN_RECORDS)
        self._running = False
        self._timer: asyncio.Task[None] | None = None
        self._firing = False
        self._run_lock = asyncio.Lock()
        self._catch_up: asyncio.Task[None] | None = None
        self._catching_up: set[str] = set()
        # Who fires the jobs instead of the app (a `nanobot gateway` on this config), if anyone: see
        # engine/background/coexistence.py. While it says so, due jobs are left to it and the timer only polls.
        self.defer_to: Callable[[], str | None] | None = None

    # --- lifecycle -------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Note runs missed while the app was closed, recompute next runs, arm the timer.

        Missed jobs whose rule is "run once now" run one after another in the background
        (`wait_for_catch_up()` awaits them); start() itself returns at once.
        """
        if self._running:
            return
        self._refresh()
        self._running = True
        catch_up: list[str] = []
        if self._store_error is None and self._jobs and not self.held_by:  # a gateway catches up its own
            now = self._now_ms()
            for job in list(self._jobs):
                due = job.state.next_run_at_ms
                if job.enabled and due is not None and due <= now and not is_system_job(job):
                    if self._note_missed(job, due, now, "while the app was not running"):
                        catch_up.append(job.id)
                if job.enabled:
                    job.state.next_run_at_ms = compute_next_run(job.schedule, now)
            self._save()
        if catch_up:
            self._catching_up = set(catch_up)
            self._catch_up = asyncio.create_task(self._run_catch_up(catch_up), name="cron-catch-up")
        self._arm()

    async def wait_for_catch_up(self) -> None:
        """Wait until the missed runs found by start() have been made up for."""
        if self._catch_up is not None:
            await asyncio.shield(self._catch_up)

    def catching_up(self, job_id: str) -> bool:
        """A missed run of this job is about to be made up for."""
        return job_id in self._catching_up

    async def _run_catch_up(self, job_ids: list[str]) -> None:
        for job_id in job_ids:
            self._refresh()
            job = self._find(job_id)
            try:
                if job is not None:
                    await self._execute(job, "catch-up")
            except Exception:  # never let one job stop the others
                log.exception("catching up cron job %s failed", job_id)
            finally:
                self._catching_up.discard(job_id)
        self._arm()

    def _note_missed(self, job: CronJob, first_due_ms: int, now_ms: int, why: str) -> bool:
        """Record the missed runs of `job`; apply its rule. True when it should run once now."""
        rule = self._missed_rule(job.id)
        count = count_runs_between(job.schedule, first_due_ms, now_ms)
        runs = "1 run" if count == 1 else f"{count}{'+' if count >= MAX_COUNTED_MISSES else ''} runs"
        when = _local(first_due_ms).strftime("%a %H:%M %Z")
        note = f"missed {runs} (first due {when}) {why}; the job's rule: {MISSED_RULE_WORDS.get(rule, rule)}"
        self._runs.append(CronRunRecord(_local(now_ms), job.id, job.name, "missed", None, None, 0.0,
                                        "catch-up", note))
        self._publish(CronJobRan(f"cron:{job.id}", job_id=job.id, name=job.name, status="missed", result=None,
                                 error=None))
        if rule != MISSED_SKIP:
            return True
        job.state.last_status, job.state.last_error = "skipped", note
        if job.schedule.kind == "at":  # a skipped one-off will not come again
            job.enabled = False
            job.state.next_run_at_ms = None
        return False

    async def stop(self) -> None:
        """Cancel the timer and the catch-up, and the job they are running, and wait until they are gone."""
        self._running = False
        tasks = [t for t in (self._timer, self._catch_up) if t is not None and not t.done()]
        self._timer = self._catch_up = None
        self._catching_up.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass

    def _owns_store(self) -> bool:
        """Only while the app fires the jobs does it rewrite jobs.json; otherwise it queues its changes."""
        return self._running and not self.held_by

    @property
    def held_by(self) -> str | None:
        """Why another program fires the jobs now (the views show it); None when the app does."""
        return self.defer_to() if self.defer_to is not None else None

    @property
    def running(self) -> bool:
        return self._running

    def _next_wake_ms(self) -> int | None:
        due = [j.state.next_run_at_ms for j in self._jobs
               if j.enabled and j.state.next_run_at_ms is not None and not is_system_job(j)]
        return min(due) if due else None

    def _arm(self) -> None:
        if not self._running or self._firing:
            return  # a firing timer re-arms itself when it is done
        current = asyncio.current_task()
        if self._timer is not None and self._timer is not current and not self._timer.done():
            self._timer.cancel()
        delay = MAX_TIMER_SLEEP_S
        next_wake = self._next_wake_ms() if self._store_error is None else None
        if self.held_by:
            delay, next_wake = HELD_POLL_S, None
        if next_wake is not None:
            delay = min(delay, max(0.0, (next_wake - self._now_ms()) / 1000))
        self._timer = asyncio.create_task(self._on_timer(delay), name="cron-timer")

    async def _on_timer(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._firing = True
        try:
            await self.fire_due()
        except Exception:  # never let a bug end the timer for good
            log.exception("cron timer failed")
        finally:
            self._firing = False
        self._arm()

    async def fire_due(self) -> None:
        """Run every job that is due now; one due far too late counts as missed and follows its rule."""
        self._refresh()
        if self._store_error is not None or self.held_by:
            return  # nothing is fired over an unusable file, nor while another program fires the jobs
        now = self._now_ms()
        due = [(j.id, j.state.next_run_at_ms) for j in self._jobs
               if j.enabled and j.state.next_run_at_ms is not None and now >= j.state.next_run_at_ms
               and not is_system_job(j)]  # nanobot 0.3's gateway runs those
        for job_id, due_ms in due:
            job = self._find(job_id)
            if job is None or not job.enabled:  # an earlier job may have changed the store
                continue
            if now - due_ms > LATE_MS and not self._note_missed(job, due_ms, now, "while the computer slept"):
                if job.enabled:
                    job.state.next_run_at_ms = compute_next_run(job.schedule, now)
                job.updated_at_ms = now
                self._save_quietly()
                continue
            await self._execute(job, "catch-up" if now - due_ms > LATE_MS else "timer")

    async def _execute(self, job: CronJob, trigger: str = "timer") -> None:
        async with self._run_lock:
            started_ms = self._now_ms()
            t0 = time.monotonic()
            result: str | None = None
            error: str | None = None
            with ToolUseRecorder(self._bus, f"cron:{job.id}") as recorder:
                try:
                    result = await self._on_job(copy.deepcopy(job))
                except Exception as exc:  # noqa: BLE001 - a failing job is recorded, never fatal
                    error = str(exc) or type(exc).__name__
                    log.warning("cron job %s (%s) failed: %s", job.id, job.name, error)
            duration = time.monotonic() - t0
            status = "ok" if error is None else "error"
            self._record_outcome(job.id, started_ms, status, error)
            self._runs.append(CronRunRecord(_local(started_ms), job.id, job.name, status, result, error, duration,
                                            trigger, "", tuple(recorder.uses), tuple(recorder.approvals)))
            self._publish(CronJobRan(f"cron:{job.id}", job_id=job.id, name=job.name, status=status, result=result,
                                     error=error))

    def _publish(self, event: CronJobRan) -> None:
        if self._bus is not None:
            self._bus.publish(event)

    def _save_quietly(self) -> None:
        try:
            self._save()
        except (CronStoreError, OSError) as exc:
            log.error("cron state not saved: %s", exc)

    def _record_outcome(self, job_id: str, started_ms: int, status: str, error: str | None) -> None:
        self._refresh()  # the job ran for a while: the file may have been edited meanwhile
        if self._store_error is not None:
            log.error("cron job %s ran, but its state was not saved: %s", job_id, self._store_error)
            return
        job = self._find(job_id)
        if job is None:
            return  # removed while it ran
        now = self._now_ms()
        job.state.last_run_at_ms = started_ms
        job.state.last_status = status
        job.state.last_error = error
        job.updated_at_ms = now
        if job.schedule.kind == "at":
            if job.delete_after_run:
                self._jobs.remove(job)
            else:
                job.enabled = False
                job.state.next_run_at_ms = None
        else:
            job.state.next_run_at_ms = compute_next_run(job.schedule, now)
        try:
            self._save()
        except (CronStoreError, OSError) as exc:
            log.error("cron state not saved: %s", exc)

    async def run_job(self, job_id: str, force: bool = False) -> bool:
        """Run one job now; a disabled job only with `force`. False when not found or not run."""
        self._refresh()
        job = self._find(job_id)
        if job is None or (not job.enabled and not force) or is_system_job(job):
            return False
        await self._execute(job, "manual")
        self._arm()
        return True

    def status(self) -> dict[str, Any]:
        self._refresh()
        return {
            "enabled": self._running,
            "jobs": len(self._jobs),
            "next_wake_at_ms": self._next_wake_ms(),
            "store_path": str(self.store_path),
            "error": str(self._store_error) if self._store_error else None,
        }

    def runs(self, job_id: str | None = None) -> list[CronRunRecord]:
        """Recent executions, oldest first (the last 200 in this process)."""
        return [r for r in self._runs if job_id is None or r.job_id == job_id]
