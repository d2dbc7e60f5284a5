"""Scheduled jobs kept in `cron/jobs.json`, fired while the app runs (nanobot 0.1.4.post4, reference §10).

The file is the truth: it is re-read whenever its mtime/size/inode changes, so edits by the nanobot
CLI, a text editor or the GUI's watcher take effect without a restart. A jobs.json that cannot be
parsed is never written over: the service records the error, fires nothing and refuses changes until
the file is fixed. One asyncio timer is armed for the earliest due job (capped at a minute, so an
external edit is noticed even without a watcher); due jobs run one after another.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
import uuid
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Awaitable, Callable

from nanobot_desktop.engine.cron_types import (
    CronJob,
    CronJobState,
    CronPayload,
    CronSchedule,
    CronStoreError,
    compute_next_run,
    is_system_job,
    describe_schedule,
    dump_store,
    parse_store,
    validate_schedule,
)
from nanobot_desktop.engine.events import CronJobRan, EventBus
from nanobot_desktop.engine.workspace import atomic_write_text

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
    "validate_schedule",
]

log = logging.getLogger(__name__)

CRON_PROMPT_TEMPLATE = "[Scheduled Task] Timer finished.\n\nTask '{name}' has been triggered.\nScheduled instruction: {message}"
MAX_TIMER_SLEEP_S = 60.0  # wake at least this often to notice external edits and clock jumps
HELD_POLL_S = 2.0  # while another program fires the jobs: how often to look whether it still does
MAX_RUN_RECORDS = 200
_UPDATABLE = {"name", "schedule", "message", "deliver", "channel", "to", "enabled", "delete_after_run"}


def cron_job_prompt(job: CronJob) -> str:
    """The user message a fired job becomes, worded as the original's gateway words it."""
    return CRON_PROMPT_TEMPLATE.format(name=job.name, message=job.payload.message)


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


# --- the service -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CronRunRecord:
    """One execution of a job, for the GUI's run history."""

    started_at: datetime
    job_id: str
    name: str
    status: str  # "ok" or "error"
    result: str | None
    error: str | None
    duration_s: float


OnJob = Callable[[CronJob], Awaitable[str | None]]


class CronService:
    """Keeps jobs.json and its timer; `on_job` runs a job (an agent turn) and returns its reply."""

    def __init__(
        self,
        store_path: Path,
        on_job: OnJob,
        bus: EventBus | None = None,
        now_ms: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self.store_path = Path(store_path)
        self._on_job = on_job
        self._bus = bus
        self._now_ms = now_ms
        self._jobs: list[CronJob] = []
        self._top_level: dict[str, Any] = {}
        self._signature: tuple[int, int, int] | None = None
        self._loaded = False
        self._store_error: CronStoreError | None = None
        self._runs: deque[CronRunRecord] = deque(maxlen=MAX_RUN_RECORDS)
        self._running = False
        self._timer: asyncio.Task[None] | None = None
        self._firing = False
        self._run_lock = asyncio.Lock()
        # Who fires the jobs instead of the app (a `nanobot gateway` on this config), if anyone: see
        # engine/coexistence.py. While it says so, due jobs are left to it and the timer only polls.
        self.defer_to: Callable[[], str | None] | None = None

    # --- the file --------------------------------------------------------------------------------------

    @property
    def store_error(self) -> CronStoreError | None:
        """Why jobs.json cannot be used right now (None when it is fine or absent)."""
        self._refresh()
        return self._store_error

    def _stat_signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.store_path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _refresh(self) -> bool:
        """Re-read jobs.json if it changed on disk since we last read or wrote it; True if re-read."""
        signature = self._stat_signature()
        if self._loaded and signature == self._signature:
            return False
        self._loaded = True
        self._signature = signature
        if signature is None:
            self._jobs, self._top_level, self._store_error = [], {}, None
            return True
        try:
            self._jobs, self._top_level = parse_store(self.store_path, self.store_path.read_bytes())
            self._store_error = None
        except CronStoreError as exc:
            self._store_error = exc  # keep the last good jobs visible, but fire and save nothing
            log.error("cron store unusable, leaving it untouched: %s", exc)
        except OSError as exc:
            self._store_error = CronStoreError(self.store_path, f"cannot be read: {exc.strerror or exc}")
            log.error("%s", self._store_error)
        else:
            now = self._now_ms()
            for job in self._jobs:  # a job enabled by hand has no next run yet
                if job.enabled and job.state.next_run_at_ms is None:
                    job.state.next_run_at_ms = compute_next_run(job.schedule, now)
        return True

    def reload_if_changed(self) -> bool:
        """For a file watcher: pick up an external edit now and re-arm the timer. True if re-read."""
        changed = self._refresh()
        if changed:
            self._arm()
        return changed

    def _save(self) -> None:
        if self._store_error is not None:
            raise CronStoreError(
                self.store_path, f"not saved, because the file on disk is unusable and must be fixed first ({self._store_error.problem})",
                self._store_error.line, self._store_error.column,
            )
        atomic_write_text(self.store_path, dump_store(self._jobs, self._top_level))
        self._signature = self._stat_signature()

    def _writable(self) -> None:
        """Refresh, then refuse a change that would have to be saved over an unusable file."""
        self._refresh()
        if self._store_error is not None:
            self._save()  # raises the explanatory CronStoreError

    def _find(self, job_id: str) -> CronJob | None:
        return next((job for job in self._jobs if job.id == job_id), None)

    def _get(self, job_id: str) -> CronJob:
        job = self._find(job_id)
        if job is None:
            raise KeyError(f"no cron job with id '{job_id}'")
        return job

    # --- lifecycle -------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Recompute every enabled job's next run (missed runs are not caught up) and arm the timer."""
        if self._running:
            return
        self._refresh()
        self._running = True
        if self._store_error is None and self._jobs:
            now = self._now_ms()
            for job in self._jobs:
                if job.enabled:
                    job.state.next_run_at_ms = compute_next_run(job.schedule, now)
            self._save()
        self._arm()

    async def stop(self) -> None:
        """Cancel the timer, and the job it is running, and wait until both are gone."""
        self._running = False
        timer, self._timer = self._timer, None
        if timer is not None and not timer.done():
            timer.cancel()
            try:
                await timer
            except asyncio.CancelledError:
                pass

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
            self._refresh()
            if self._store_error is None and not self.held_by:
                now = self._now_ms()
                due = [j.id for j in self._jobs if j.enabled and j.state.next_run_at_ms is not None
                       and now >= j.state.next_run_at_ms and not is_system_job(j)]  # 0.3's gateway runs those
                for job_id in due:
                    job = self._find(job_id)
                    if job is not None and job.enabled:  # an earlier job may have changed the store
                        await self._execute(job)
        except Exception:  # never let a bug end the timer for good
            log.exception("cron timer failed")
        finally:
            self._firing = False
        self._arm()

    async def _execute(self, job: CronJob) -> None:
        async with self._run_lock:
            started_ms = self._now_ms()
            started_at = datetime.now().astimezone()
            t0 = time.monotonic()
            result: str | None = None
            error: str | None = None
            try:
                result = await self._on_job(copy.deepcopy(job))
            except Exception as exc:  # noqa: BLE001 - a failing job is recorded, never fatal
                error = str(exc) or type(exc).__name__
                log.warning("cron job %s (%s) failed: %s", job.id, job.name, error)
            duration = time.monotonic() - t0
            status = "ok" if error is None else "error"
            self._record_outcome(job.id, started_ms, status, error)
            self._runs.append(CronRunRecord(started_at, job.id, job.name, status, result, error, duration))
            if self._bus is not None:
                self._bus.publish(CronJobRan(f"cron:{job.id}", job_id=job.id, name=job.name, status=status, result=result, error=error))

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

    # --- public API ------------------------------------------------------------------------------------

    def list_jobs(self, include_disabled: bool = False) -> list[CronJob]:
        """Copies of the jobs, soonest next run first (jobs without one last)."""
        self._refresh()
        jobs = [j for j in self._jobs if include_disabled or j.enabled]
        jobs.sort(key=lambda j: (j.state.next_run_at_ms is None, j.state.next_run_at_ms or 0))
        return [copy.deepcopy(j) for j in jobs]

    def get_job(self, job_id: str) -> CronJob | None:
        self._refresh()
        job = self._find(job_id)
        return copy.deepcopy(job) if job else None

    def add_job(
        self,
        name: str,
        schedule: CronSchedule,
        message: str,
        deliver: bool = False,
        channel: str | None = None,
        to: str | None = None,
        delete_after_run: bool = False,
    ) -> CronJob:
        """Validate, store and arm a new job; raises ValueError (bad schedule) or CronStoreError."""
        self._writable()
        now = self._now_ms()
        schedule = copy.deepcopy(schedule)
        validate_schedule(schedule, now)
        if not message or not message.strip():
            raise ValueError("a job needs a message (the instruction the agent runs)")
        job = CronJob(
            id=uuid.uuid4().hex[:8],
            name=name or message[:30],
            enabled=True,
            schedule=schedule,
            payload=CronPayload(kind="agent_turn", message=message, deliver=deliver, channel=channel, to=to),
            state=CronJobState(next_run_at_ms=compute_next_run(schedule, now)),
            created_at_ms=now,
            updated_at_ms=now,
            delete_after_run=delete_after_run,
        )
        self._jobs.append(job)
        self._save()
        self._arm()
        return copy.deepcopy(job)

    def update_job(self, job_id: str, **changes: Any) -> CronJob:
        """Change name/schedule/message/deliver/channel/to/enabled/delete_after_run of one job."""
        unknown = set(changes) - _UPDATABLE
        if unknown:
            raise ValueError(f"cannot update {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(_UPDATABLE))})")
        self._writable()
        job = self._get(job_id)
        now = self._now_ms()
        if "schedule" in changes:
            schedule = copy.deepcopy(changes["schedule"])
            validate_schedule(schedule, now)
            job.schedule = schedule
        if "message" in changes and not str(changes["message"] or "").strip():
            raise ValueError("a job needs a message (the instruction the agent runs)")
        for key in ("message", "deliver", "channel", "to"):
            if key in changes:
                setattr(job.payload, key, changes[key])
        for key in ("name", "enabled", "delete_after_run"):
            if key in changes:
                setattr(job, key, changes[key])
        if "schedule" in changes or "enabled" in changes:
            job.state.next_run_at_ms = compute_next_run(job.schedule, now) if job.enabled else None
        job.updated_at_ms = now
        self._save()
        self._arm()
        return copy.deepcopy(job)

    def remove_job(self, job_id: str) -> bool:
        self._writable()
        job = self._find(job_id)
        if job is None:
            return False
        if is_system_job(job):
            raise ValueError(f"'{job.name}' is a protected system job of nanobot 0.3 (its gateway runs it); "
                             "turn it off in the config instead of removing it")
        self._jobs.remove(job)
        self._save()
        self._arm()
        return True

    def enable_job(self, job_id: str, enabled: bool = True) -> CronJob:
        return self.update_job(job_id, enabled=enabled)

    async def run_job(self, job_id: str, force: bool = False) -> bool:
        """Run one job now; a disabled job only with `force`. False when not found or not run."""
        self._refresh()
        job = self._find(job_id)
        if job is None or (not job.enabled and not force) or is_system_job(job):
            return False
        await self._execute(job)
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
