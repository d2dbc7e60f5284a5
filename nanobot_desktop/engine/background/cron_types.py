"""The records of `cron/jobs.json`, their exact on-disk shape and schedule arithmetic (reference §10).

On disk the keys are camelCase; snake_case spellings are accepted on read (0.3.5 writes camelCase but
reads both). Keys this version does not know (0.3.5's `sessionKey`, `originChannel`, …) are kept in
`extra` and written back after the known ones, so a file shared with another nanobot keeps them.
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sessions.key import SessionKey

log = logging.getLogger(__name__)

STORE_VERSION = 1


class CronStoreError(Exception):
    """jobs.json cannot be read as a job store. Names the file and where the problem is."""

    def __init__(self, path: Path, problem: str, line: int | None = None, column: int | None = None) -> None:
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(f"{path}{where}: {problem}")
        self.path = path
        self.problem = problem
        self.line = line
        self.column = column


@dataclass
class CronSchedule:
    """When a job runs: `every` N ms, a `cron` expression (optionally in an IANA `tz`), or once `at`."""

    kind: str
    at_ms: int | None = None
    every_ms: int | None = None
    expr: str | None = None
    tz: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class CronPayload:
    """What a job does: an agent turn with `message`, optionally delivered to `channel`/`to`."""

    kind: str = "agent_turn"
    message: str = ""
    deliver: bool = False
    channel: str | None = None
    to: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class CronJobState:
    next_run_at_ms: int | None = None
    last_run_at_ms: int | None = None
    last_status: str | None = None  # "ok", "error" or "skipped"
    last_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class CronJob:
    id: str
    name: str
    enabled: bool = True
    schedule: CronSchedule = field(default_factory=lambda: CronSchedule(kind="every"))
    payload: CronPayload = field(default_factory=CronPayload)
    state: CronJobState = field(default_factory=CronJobState)
    created_at_ms: int = 0
    updated_at_ms: int = 0
    delete_after_run: bool = False
    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


# --- schedules ---------------------------------------------------------------------------------------

SYSTEM_JOB_KIND = "system_event"


def is_system_job(job: CronJob) -> bool:
    """A protected job nanobot 0.3's gateway registers for itself ("heartbeat", "dream"): it has no
    message to send, the gateway runs it, and it cannot be removed (0.3 refuses that too)."""
    return job.payload.kind == SYSTEM_JOB_KIND


def job_session(job: CronJob) -> tuple[str, str | None, str | None]:
    """(session key, channel, chat id) a job's run belongs to.

    A job nanobot 0.3 bound to a chat session (`payload.sessionKey`, with its origin channel and chat)
    runs in that session, as 0.3 runs it; any other job in a session of its own, `cron:<id>`.
    """
    extra = job.payload.extra
    bound = extra.get("sessionKey")
    if isinstance(bound, str) and bound:
        channel, chat_id = extra.get("originChannel"), extra.get("originChatId")
        if not (isinstance(channel, str) and channel and isinstance(chat_id, str) and chat_id):
            parsed = SessionKey.found(bound)
            channel, chat_id = parsed.channel, parsed.chat_id
        return bound, channel or None, chat_id or None
    return f"cron:{job.id}", job.payload.channel, job.payload.to


def _zone(tz: str) -> Any:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown timezone '{tz}' (expected an IANA name such as 'Europe/Berlin')") from None


def _check_cron_expr(expr: str | None) -> str:
    from croniter import croniter

    if not expr or not expr.strip():
        raise ValueError("a cron schedule needs an expression, e.g. '0 9 * * 1-5'")
    try:
        croniter(expr.strip())
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"invalid cron expression '{expr}': {exc}") from None
    return expr.strip()


def validate_schedule(schedule: CronSchedule, now_ms: int) -> None:
    """Raise ValueError with a specific message when `schedule` could never run as meant."""
    if schedule.kind not in ("every", "cron", "at"):
        raise ValueError(f"unknown schedule kind '{schedule.kind}' (expected every, cron or at)")
    if schedule.tz and schedule.kind != "cron":
        raise ValueError("tz can only be used with cron schedules")
    if schedule.tz:
        _zone(schedule.tz)
    if schedule.kind == "every":
        if isinstance(schedule.every_ms, bool) or not isinstance(schedule.every_ms, int) or schedule.every_ms <= 0:
            raise ValueError(f"an 'every' schedule needs a positive interval, got {schedule.every_ms!r} ms")
    elif schedule.kind == "cron":
        schedule.expr = _check_cron_expr(schedule.expr)
    elif schedule.at_ms is None:
        raise ValueError("an 'at' schedule needs a time")
    elif schedule.at_ms <= now_ms:
        when = datetime.fromtimestamp(schedule.at_ms / 1000).strftime("%Y-%m-%d %H:%M:%S")
        raise ValueError(f"the time {when} is in the past")


def compute_next_run(schedule: CronSchedule, now_ms: int) -> int | None:
    """Next fire time in epoch ms after `now_ms`, or None when the schedule will not fire again."""
    if schedule.kind == "at":
        return schedule.at_ms if schedule.at_ms and schedule.at_ms > now_ms else None
    if schedule.kind == "every":
        return now_ms + schedule.every_ms if schedule.every_ms and schedule.every_ms > 0 else None
    if schedule.kind == "cron" and schedule.expr:
        from croniter import croniter

        try:
            # Without tz: naive local time, so .timestamp() applies the local DST rules of that day.
            zone = _zone(schedule.tz) if schedule.tz else None
            base = datetime.fromtimestamp(now_ms / 1000, tz=zone)
            return int(croniter(schedule.expr, base).get_next(datetime).timestamp() * 1000)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("cron schedule %r cannot be computed: %s", schedule.expr, exc)
    return None


MISSED_RUN_ONCE = "run_once"
MISSED_SKIP = "skip"
MISSED_RULES = (MISSED_RUN_ONCE, MISSED_SKIP)
DEFAULT_MISSED_RULE = MISSED_RUN_ONCE
MISSED_RULE_WORDS = {MISSED_RUN_ONCE: "run once now", MISSED_SKIP: "skip"}
MAX_COUNTED_MISSES = 1000


def count_runs_between(schedule: CronSchedule, first_due_ms: int, now_ms: int) -> int:
    """How many times the schedule came due from `first_due_ms` up to `now_ms` (at least 1; a cron
    expression is counted up to MAX_COUNTED_MISSES)."""
    if schedule.kind == "every" and schedule.every_ms and schedule.every_ms > 0:
        return 1 + max(0, now_ms - first_due_ms) // schedule.every_ms
    if schedule.kind == "cron" and schedule.expr:
        count, due = 1, first_due_ms
        while count < MAX_COUNTED_MISSES:
            following = compute_next_run(schedule, due)
            if following is None or following > now_ms or following <= due:
                break
            count, due = count + 1, following
        return count
    return 1


def never_fires_reason(job: CronJob, now_ms: int) -> str | None:
    """Why an enabled job's schedule can never fire again (None when it will, or the job is off)."""
    if not job.enabled:
        return None
    schedule = job.schedule
    try:
        validate_schedule(copy.deepcopy(schedule), now_ms if schedule.kind != "at" else (schedule.at_ms or 1) - 1)
    except ValueError as exc:
        return str(exc)
    if schedule.kind == "at" and (schedule.at_ms or 0) <= now_ms and job.state.next_run_at_ms is None:
        when = datetime.fromtimestamp((schedule.at_ms or 0) / 1000).astimezone().strftime("%Y-%m-%d %H:%M %Z")
        return f"its time ({when}) has passed"
    if schedule.kind != "at" and compute_next_run(schedule, now_ms) is None:
        return "no date matches the schedule"
    return None


def _plural(count: int, unit: str) -> str:
    return f"every {unit}" if count == 1 else f"every {count} {unit}s"


def describe_schedule(schedule: CronSchedule) -> str:
    """The schedule in words, for lists and the GUI ("every 20 minutes", "cron 0 9 * * 1-5 (Europe/Berlin)")."""
    if schedule.kind == "every":
        ms = schedule.every_ms or 0
        for unit_ms, unit in ((86_400_000, "day"), (3_600_000, "hour"), (60_000, "minute"), (1000, "second")):
            if ms > 0 and ms % unit_ms == 0:
                return _plural(ms // unit_ms, unit)
        return f"every {ms} ms"
    if schedule.kind == "cron":
        return f"cron {schedule.expr}" + (f" ({schedule.tz})" if schedule.tz else "")
    if schedule.kind == "at":
        if schedule.at_ms is None:
            return "once (no time set)"
        return "once at " + datetime.fromtimestamp(schedule.at_ms / 1000).strftime("%Y-%m-%d %H:%M")
    return schedule.kind


# --- reading -----------------------------------------------------------------------------------------

class _Reader:
    """Pulls typed fields out of one JSON object, remembering which keys were used."""

    def __init__(self, path: Path, where: str, data: Any) -> None:
        if not isinstance(data, dict):
            raise CronStoreError(path, f"{where} must be an object, got {_json_type(data)}")
        self.path = path
        self.where = where
        self.data = data
        self.used: set[str] = set()

    def _raw(self, camel: str, snake: str) -> tuple[str, Any] | None:
        found = None
        for key in (camel, snake):
            if key in self.data:
                self.used.add(key)
                if found is None:
                    found = (key, self.data[key])
        return found

    def get(self, camel: str, snake: str, kind: type | tuple[type, ...], default: Any, nullable: bool = True) -> Any:
        found = self._raw(camel, snake)
        if found is None:
            return default
        key, value = found
        if value is None and nullable:
            return None
        is_bool = isinstance(value, bool)
        wants_bool = kind is bool or (isinstance(kind, tuple) and bool in kind)
        if (is_bool and not wants_bool) or not isinstance(value, kind):
            expected = "true or false" if kind is bool else ("a whole number" if kind is int else "text")
            raise CronStoreError(self.path, f"{self.where}.{key} must be {expected}, got {json.dumps(value, ensure_ascii=False)}")
        return value

    def rest(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k not in self.used}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "text", bool: "true/false"}.get(type(value), "a number")


def _read_schedule(path: Path, where: str, data: Any) -> CronSchedule:
    r = _Reader(path, where, data)
    schedule = CronSchedule(
        kind=r.get("kind", "kind", str, "every", nullable=False),
        at_ms=r.get("atMs", "at_ms", int, None),
        every_ms=r.get("everyMs", "every_ms", int, None),
        expr=r.get("expr", "expr", str, None),
        tz=r.get("tz", "tz", str, None),
    )
    schedule.extra = r.rest()
    return schedule


def _read_payload(path: Path, where: str, data: Any) -> CronPayload:
    r = _Reader(path, where, data)
    payload = CronPayload(
        kind=r.get("kind", "kind", str, "agent_turn", nullable=False),
        message=r.get("message", "message", str, "", nullable=False),
        deliver=r.get("deliver", "deliver", bool, False, nullable=False),
        channel=r.get("channel", "channel", str, None),
        to=r.get("to", "to", str, None),
    )
    payload.extra = r.rest()
    return payload


def _read_state(path: Path, where: str, data: Any) -> CronJobState:
    r = _Reader(path, where, data)
    state = CronJobState(
        next_run_at_ms=r.get("nextRunAtMs", "next_run_at_ms", int, None),
        last_run_at_ms=r.get("lastRunAtMs", "last_run_at_ms", int, None),
        last_status=r.get("lastStatus", "last_status", str, None),
        last_error=r.get("lastError", "last_error", str, None),
    )
    state.extra = r.rest()
    return state


def read_job(path: Path, where: str, data: Any) -> CronJob:
    """One job object (camelCase keys, snake_case accepted); raises CronStoreError saying what is wrong."""
    r = _Reader(path, where, data)
    job_id = r.get("id", "id", str, None)
    if not job_id:
        raise CronStoreError(path, f"{where} has no id")
    job = CronJob(
        id=job_id,
        name=r.get("name", "name", str, "", nullable=False),
        enabled=r.get("enabled", "enabled", bool, True, nullable=False),
        schedule=_read_schedule(path, f"{where}.schedule", r.get("schedule", "schedule", dict, {}, nullable=False)),
        payload=_read_payload(path, f"{where}.payload", r.get("payload", "payload", dict, {}, nullable=False)),
        state=_read_state(path, f"{where}.state", r.get("state", "state", dict, {}, nullable=False)),
        created_at_ms=r.get("createdAtMs", "created_at_ms", int, 0, nullable=False),
        updated_at_ms=r.get("updatedAtMs", "updated_at_ms", int, 0, nullable=False),
        delete_after_run=r.get("deleteAfterRun", "delete_after_run", bool, False, nullable=False),
    )
    job.extra = r.rest()
    return job


def parse_store(path: Path, raw: bytes) -> tuple[list[CronJob], dict[str, Any]]:
    """Parse the bytes of jobs.json into jobs plus the file's other top-level keys (version included).

    Raises CronStoreError with the file and the line/column (or the job field) that is wrong.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CronStoreError(path, f"not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CronStoreError(path, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    r = _Reader(path, "the file", data)
    raw_jobs = r.get("jobs", "jobs", list, [], nullable=False)
    jobs = [read_job(path, f"jobs[{i}]", item) for i, item in enumerate(raw_jobs)]
    seen: set[str] = set()
    for job in jobs:
        if job.id in seen:
            raise CronStoreError(path, f"two jobs share the id '{job.id}'")
        seen.add(job.id)
    return jobs, r.rest()


# --- writing -----------------------------------------------------------------------------------------

def job_to_dict(job: CronJob) -> dict[str, Any]:
    """The job as the original writes it: known camelCase keys in its order, then kept unknown keys."""
    s, p, st = job.schedule, job.payload, job.state
    return {
        "id": job.id,
        "name": job.name,
        "enabled": job.enabled,
        "schedule": {"kind": s.kind, "atMs": s.at_ms, "everyMs": s.every_ms, "expr": s.expr, "tz": s.tz, **s.extra},
        "payload": {"kind": p.kind, "message": p.message, "deliver": p.deliver, "channel": p.channel, "to": p.to, **p.extra},
        "state": {
            "nextRunAtMs": st.next_run_at_ms,
            "lastRunAtMs": st.last_run_at_ms,
            "lastStatus": st.last_status,
            "lastError": st.last_error,
            **st.extra,
        },
        "createdAtMs": job.created_at_ms,
        "updatedAtMs": job.updated_at_ms,
        "deleteAfterRun": job.delete_after_run,
        **job.extra,
    }


def dump_store(jobs: list[CronJob], top_level_extra: dict[str, Any]) -> str:
    """jobs.json text: `{"version": 1, "jobs": [...]}` plus kept top-level keys, indent 2, ensure_ascii=False."""
    extra = dict(top_level_extra)
    version = extra.pop("version", STORE_VERSION)
    document = {"version": version, "jobs": [job_to_dict(job) for job in jobs], **extra}
    return json.dumps(document, indent=2, ensure_ascii=False)
