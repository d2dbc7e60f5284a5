"""The job list of `cron/jobs.json`: reading it when it changed on disk, and every change to it.

The file is the truth: it is re-read whenever its mtime/size/inode changes, so edits by the nanobot
CLI, a text editor or the GUI's watcher take effect without a restart. On a nanobot 0.3 workspace
(`shared_actions`) the store is `<workspace>/cron/jobs.json` and changes may also be queued in
`action.jsonl` beside it (cron_actions.py): the app reads them as part of the store, merges them into
jobs.json when it is the one that fires the jobs, and queues its own changes there while another
program (a 0.3 gateway) fires them, so that program's next save cannot lose them. A jobs.json that cannot be
parsed is never written over: the error is kept, and changes are refused until the file is fixed.
`CronService` (cron.py) adds the timer and the runs on top of this.
"""

from __future__ import annotations

import copy
import logging
import uuid
from pathlib import Path
from typing import Any, Callable

from nanobot_desktop.engine.background.cron_actions import (
    action_path,
    append_action,
    cron_lock,
    params_to_store_dict,
    read_actions,
    store_dict_to_params,
)
from nanobot_desktop.engine.background.cron_types import (
    CronJob,
    CronJobState,
    CronPayload,
    CronSchedule,
    CronStoreError,
    compute_next_run,
    dump_store,
    is_system_job,
    job_to_dict,
    parse_store,
    read_job,
    validate_schedule,
)
from nanobot_desktop.engine.workspace import atomic_write_text
from nanobot_desktop.engine.changes import ChangeTracker, signature_of

log = logging.getLogger(__name__)

_UPDATABLE = {"name", "schedule", "message", "deliver", "channel", "to", "enabled", "delete_after_run"}


class CronStore:
    """jobs.json as a list of jobs; subclasses re-arm their timer in `_arm()` after every change."""

    def __init__(self, store_path: Path, now_ms: Callable[[], int], shared_actions: bool = False,
                 changes: ChangeTracker | None = None) -> None:
        """`changes` is the engine's one change tracker (engine/changes.py; one of its own when None):
        it records each save, so only a change someone else made is read back."""
        self.store_path = Path(store_path)
        self.shared_actions = shared_actions  # nanobot 0.3's action.jsonl and lock are used beside jobs.json
        self._now_ms = now_ms
        self._jobs: list[CronJob] = []
        self._top_level: dict[str, Any] = {}
        self._changes = changes if changes is not None else ChangeTracker()
        self._outside_unreported = False  # re-read for someone else's change since `reload_if_changed` last said so
        self._actions_read = 0  # bytes of action.jsonl already applied to `_jobs`
        self._loaded = False
        self._store_error: CronStoreError | None = None
        # How the store's files are read. In a 0.3 workspace they live in the workspace, where exec can
        # make links: the engine sets this to the workspace's own-files reader, which follows no link out.
        self.read_bytes: Callable[[Path], bytes] = Path.read_bytes

    def _arm(self) -> None:
        """Re-arm the timer after a change (nothing to arm in a bare store)."""

    def _owns_store(self) -> bool:
        """Whether this process fires the jobs, and so may rewrite jobs.json with queued lines merged
        (as in 0.3.5, only the program that runs the timer does); a bare store always does."""
        return True

    @property
    def watched_files(self) -> tuple[Path, ...]:
        """The files whose change means the job list may have changed."""
        return (self.store_path, action_path(self.store_path)) if self.shared_actions else (self.store_path,)

    # --- the file --------------------------------------------------------------------------------------

    @property
    def store_error(self) -> CronStoreError | None:
        """Why jobs.json cannot be used right now (None when it is fine or absent)."""
        self._refresh()
        return self._store_error

    def _record_own_write(self) -> None:
        for path in self.watched_files:
            self._changes.wrote(path)

    def _read_files(self) -> bool:
        """jobs.json with the queued action lines applied; True when there were lines to apply."""
        try:
            self._jobs, self._top_level = parse_store(self.store_path, self.read_bytes(self.store_path))
        except FileNotFoundError:
            self._jobs, self._top_level = [], {}
        self._actions_read = 0
        return self._apply_new_actions() if self.shared_actions else False

    def _apply_new_actions(self) -> bool:
        """Apply the action lines added since the last read; True when there were any."""
        actions, self._actions_read = read_actions(action_path(self.store_path), self._actions_read,
                                                   read=self.read_bytes)
        for action, params in actions:
            self._apply_action(action, params)
        return bool(actions) or self._actions_read > 0

    def _apply_action(self, action: str, params: dict[str, Any]) -> None:
        """One queued change, as 0.3.5 applies it: "del" drops the job, anything else puts it in whole."""
        where = action_path(self.store_path)
        if action == "del":
            self._jobs = [job for job in self._jobs if job.id != params.get("job_id")]
            return
        try:
            job = read_job(where, f"an {action!r} line", params_to_store_dict(params))
        except CronStoreError as exc:
            log.warning("%s", exc)
            return
        self._jobs = [other for other in self._jobs if other.id != job.id] + [job]

    def _refresh(self) -> bool:
        """Re-read jobs.json (and action.jsonl) if they changed on disk since we last read or wrote them."""
        changed = [self._changes.changed_outside(path) for path in self.watched_files]  # each one recorded
        if self._loaded and not any(changed):
            return False
        self._outside_unreported = self._loaded
        self._loaded = True
        if all(signature_of(path) is None for path in self.watched_files):
            self._jobs, self._top_level, self._store_error = [], {}, None
            return True
        try:
            if self.shared_actions:
                with cron_lock(self.store_path):
                    if self._read_files() and self._owns_store():
                        self._write_merged()
            else:
                self._read_files()
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
        """For a file watcher: pick up an external edit now and re-arm the timer. True when the job
        store changed from outside since this was last asked (re-read now, or already by the timer)."""
        self._refresh()
        changed, self._outside_unreported = self._outside_unreported, False
        if changed:
            self._arm()
        return changed

    def _write_merged(self) -> None:
        """jobs.json with every queued line folded in, and the queue emptied (the caller holds the lock)."""
        self._apply_new_actions()
        atomic_write_text(self.store_path, dump_store(self._jobs, self._top_level))
        if self._actions_read:
            atomic_write_text(action_path(self.store_path), "")
            log.info("merged the queued job changes of %s into %s", action_path(self.store_path), self.store_path)
        self._actions_read = 0
        self._record_own_write()

    def _save(self) -> None:
        if self._store_error is not None:
            raise CronStoreError(
                self.store_path, f"not saved, because the file on disk is unusable and must be fixed first ({self._store_error.problem})",
                self._store_error.line, self._store_error.column,
            )
        if self.shared_actions:
            with cron_lock(self.store_path):
                self._write_merged()
        else:
            atomic_write_text(self.store_path, dump_store(self._jobs, self._top_level))
            self._record_own_write()

    def _persist(self, action: str, job: CronJob) -> None:
        """Save one change: into jobs.json, or queued in action.jsonl while a 0.3 gateway owns jobs.json."""
        if not self.shared_actions or self._owns_store():
            self._save()
            return
        params = {"job_id": job.id} if action == "del" else store_dict_to_params(job_to_dict(job))
        append_action(self.store_path, action, params)
        self._record_own_write()

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
        if self.shared_actions:
            bind_to_session(job)
        self._jobs.append(job)
        self._persist("add", job)
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
        self._persist("update", job)
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
        self._persist("del", job)
        self._arm()
        return True

    def enable_job(self, job_id: str, enabled: bool = True) -> CronJob:
        return self.update_job(job_id, enabled=enabled)



def bind_to_session(job: CronJob) -> None:
    """Give a new job the session 0.3.5 requires of every agent job (it disables unbound ones):
    its own `cron:<id>` session, as the app runs any job, reached through the `cli` channel."""
    job.payload.extra.setdefault("sessionKey", f"cron:{job.id}")
    job.payload.extra.setdefault("originChannel", "cli")
    job.payload.extra.setdefault("originChatId", "direct")
