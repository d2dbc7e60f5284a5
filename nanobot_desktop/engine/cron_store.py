"""The job list of `cron/jobs.json`: reading it when it changed on disk, and every change to it.

The file is the truth: it is re-read whenever its mtime/size/inode changes, so edits by the nanobot
CLI, a text editor or the GUI's watcher take effect without a restart. A jobs.json that cannot be
parsed is never written over: the error is kept, and changes are refused until the file is fixed.
`CronService` (cron.py) adds the timer and the runs on top of this.
"""

from __future__ import annotations

import copy
import logging
import uuid
from pathlib import Path
from typing import Any, Callable

from nanobot_desktop.engine.cron_types import (
    CronJob,
    CronJobState,
    CronPayload,
    CronSchedule,
    CronStoreError,
    compute_next_run,
    dump_store,
    is_system_job,
    parse_store,
    validate_schedule,
)
from nanobot_desktop.engine.workspace import atomic_write_text

log = logging.getLogger(__name__)

_UPDATABLE = {"name", "schedule", "message", "deliver", "channel", "to", "enabled", "delete_after_run"}


class CronStore:
    """jobs.json as a list of jobs; subclasses re-arm their timer in `_arm()` after every change."""

    def __init__(self, store_path: Path, now_ms: Callable[[], int]) -> None:
        self.store_path = Path(store_path)
        self._now_ms = now_ms
        self._jobs: list[CronJob] = []
        self._top_level: dict[str, Any] = {}
        self._signature: tuple[int, int, int] | None = None
        self._loaded = False
        self._store_error: CronStoreError | None = None

    def _arm(self) -> None:
        """Re-arm the timer after a change (nothing to arm in a bare store)."""

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

