"""nanobot 0.3's `cron/action.jsonl`: job changes queued by a program that does not fire the jobs.

A 0.3.5 `nanobot agent` (no timer of its own) does not rewrite `jobs.json`: it appends one line per
change — `{"action": "add" | "update" | "del", "params": …}` — under an OS file lock on
`<workspace>/cron.lock`, and whoever fires the jobs (its gateway, or this app) merges the lines into
`jobs.json` and empties the file, under the same lock. The app does both halves: it merges what it
finds when it fires the jobs, and queues its own changes here while a gateway fires them.

The `params` of a line are a whole job in 0.3.5's Python field names (snake_case); 0.3.5 builds its
job from them with keyword arguments, so a line the app writes carries exactly those fields.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ACTION_FILE = "action.jsonl"
LOCK_TIMEOUT_S = 30.0

# 0.3.5's field names, level by level (what `asdict(CronJob)` gives and `CronJob.from_dict` accepts).
_TOP = ("id", "name", "enabled", "schedule", "payload", "state", "created_at_ms", "updated_at_ms", "delete_after_run")
_SCHEDULE = ("kind", "at_ms", "every_ms", "expr", "tz")
_PAYLOAD = ("kind", "message", "deliver", "channel", "to", "channel_meta", "session_key", "origin_channel",
            "origin_chat_id", "origin_metadata")
_STATE = ("next_run_at_ms", "last_run_at_ms", "last_status", "last_error", "run_history")
_RUN = ("run_at_ms", "status", "duration_ms", "error", "run_id")
_DEFAULTS: dict[str, Any] = {"channel_meta": {}, "origin_metadata": {}, "run_history": [], "deliver": False}


def action_path(store_path: Path) -> Path:
    return store_path.parent / ACTION_FILE


def lock_path(store_path: Path) -> Path:
    """0.3.5's lock: the cron folder's path with `.lock` added (`<workspace>/cron.lock`)."""
    return Path(f"{store_path.parent}.lock")


@contextmanager
def cron_lock(store_path: Path) -> Iterator[None]:
    """The OS file lock 0.3.5 holds while it appends or merges action lines."""
    from filelock import FileLock

    store_path.parent.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path(store_path)), timeout=LOCK_TIMEOUT_S):
        yield


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def _convert(data: Any, names: tuple[str, ...], to_camel: bool) -> dict[str, Any]:
    if not isinstance(data, dict):
        return {}
    if to_camel:
        return {(_camel(k) if k in names else k): v for k, v in data.items()}
    wanted: dict[str, str] = {_camel(n): n for n in names}
    wanted.update((n, n) for n in names)
    return {wanted[str(k)]: v for k, v in data.items() if str(k) in wanted}


def params_to_store_dict(params: dict[str, Any]) -> dict[str, Any]:
    """An action line's job (snake_case) as a jobs.json entry (camelCase), for the store's reader."""
    job = _convert(params, _TOP, True)
    job["schedule"] = _convert(params.get("schedule"), _SCHEDULE, True)
    job["payload"] = _convert(params.get("payload"), _PAYLOAD, True)
    state = _convert(params.get("state"), _STATE, True)
    runs = state.get("runHistory")
    if isinstance(runs, list):
        state["runHistory"] = [_convert(run, _RUN, True) for run in runs if isinstance(run, dict)]
    job["state"] = state
    return job


def store_dict_to_params(job: dict[str, Any]) -> dict[str, Any]:
    """A jobs.json entry as the params 0.3.5 accepts: its fields only, every one present."""
    def level(data: Any, names: tuple[str, ...]) -> dict[str, Any]:
        found = _convert(data, names, False)
        return {name: found.get(name, copy_default(name)) for name in names}

    params = level(job, _TOP)
    params["schedule"] = level(job.get("schedule"), _SCHEDULE)
    params["payload"] = level(job.get("payload"), _PAYLOAD)
    state = level(job.get("state"), _STATE)
    state["run_history"] = [level(run, _RUN) for run in state["run_history"] or [] if isinstance(run, dict)]
    params["state"] = state
    return params


def copy_default(name: str) -> Any:
    value = _DEFAULTS.get(name)
    return type(value)() if isinstance(value, (dict, list)) else value


def read_actions(path: Path, start: int = 0, read: Callable[[Path], bytes] = Path.read_bytes,
                 ) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """(action, params) of each usable whole line from byte `start` on, in order, and the offset after
    the last whole line; an unusable line is logged and skipped (as 0.3.5 does)."""
    try:
        raw = read(path)
    except FileNotFoundError:
        return [], 0
    if start > len(raw):
        start = 0  # the file was emptied and written again since
    end = raw.rfind(b"\n") + 1
    text = raw[start:end].decode("utf-8", "replace") if end > start else ""
    actions: list[tuple[str, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            log.warning("%s line %d skipped: not JSON (%s)", path, number, exc)
            continue
        if not isinstance(entry, dict) or "action" not in entry or not isinstance(entry.get("params", {}), dict):
            log.warning("%s line %d skipped: not an action", path, number)
            continue
        actions.append((str(entry["action"]), entry.get("params", {})))
    return actions, max(end, start)


def append_action(store_path: Path, action: str, params: dict[str, Any]) -> None:
    """Queue one change for the program that fires the jobs (one whole line, under 0.3.5's lock)."""
    line = json.dumps({"action": action, "params": params}, ensure_ascii=False) + "\n"
    with cron_lock(store_path):
        store_path.parent.mkdir(parents=True, exist_ok=True)
        with open(action_path(store_path), "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


__all__ = ["ACTION_FILE", "action_path", "append_action", "cron_lock", "lock_path", "params_to_store_dict",
           "read_actions", "store_dict_to_params"]
