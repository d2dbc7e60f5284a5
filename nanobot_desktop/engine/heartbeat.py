"""The periodic check of HEARTBEAT.md (nanobot 0.1.4.post4 two-phase heartbeat, reference §9).

Each tick reads the file fresh from disk. A file with no task in it (missing, blank, only comments and
headings, or the untouched template) is skipped without asking any model, which the original did only
for an empty file. Otherwise phase 1 asks the model through the virtual `heartbeat` tool whether there
is work (`skip`/`run`), and phase 2 hands the task summary to `on_execute` (an agent turn in the
`heartbeat` session). Every tick is recorded for the GUI's timeline; nothing a tick does can end the loop.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Awaitable, Callable

from nanobot_desktop.data import templates_dir
from nanobot_desktop.engine.events import EventBus, HeartbeatDecided, HeartbeatRan
from nanobot_desktop.engine.llm.types import ChatWithTools
from nanobot_desktop.engine.workspace import HEARTBEAT_FILE, Workspace

log = logging.getLogger(__name__)

SESSION_KEY = "heartbeat"
MAX_TICKS = 500

HEARTBEAT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "heartbeat",
        "description": "Report heartbeat decision after reviewing tasks.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["skip", "run"],
                    "description": "skip = nothing to do, run = has active tasks",
                },
                "tasks": {
                    "type": "string",
                    "description": "Natural-language summary of active tasks (required for run)",
                },
            },
            "required": ["action"],
        },
    },
}

DECISION_SYSTEM_PROMPT = "You are a heartbeat agent. Call the heartbeat tool to report your decision."
DECISION_USER_PROMPT = (
    "Review the following HEARTBEAT.md and decide whether there are active tasks.\n\n{content}"
)

# --- "does this file hold a task?" -------------------------------------------------------------------

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)  # an unclosed comment hides the rest, as in Markdown
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_NOT_A_TASK = re.compile(r"^(?:(?:[-*+]|\d+[.)])\s*(?:\[[ xX]?\])?|[-*_=]{3,})$")  # bare bullets, rules


def _normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()


def _template_text() -> str | None:
    try:
        return (templates_dir() / HEARTBEAT_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def active_task_lines(text: str) -> list[str]:
    """The lines of HEARTBEAT.md that are tasks.

    Comments, headings, blank lines, bare bullets and anything under a `## Completed` heading are not.
    When the file has an `## Active Tasks` heading, the text before the first `##` heading is the
    file's own introduction (the original's template and ours both have one) and is not a task either.
    """
    lines = _COMMENT.sub("", text.replace("\r\n", "\n")).split("\n")
    headings = [_HEADING.match(line.strip()) for line in lines]
    structured = any(m and len(m.group(1)) == 2 and m.group(2).lower() == "active tasks" for m in headings)
    section: str | None = None  # title of the current `##` section; None before the first one
    tasks: list[str] = []
    for line, heading in zip(lines, headings, strict=True):
        stripped = line.strip()
        if heading:
            if len(heading.group(1)) == 2:
                section = heading.group(2).lower()
            continue
        if not stripped or _NOT_A_TASK.match(stripped):
            continue
        if (section is None and structured) or (section or "").startswith("completed"):
            continue
        tasks.append(stripped)
    return tasks


def has_no_tasks(text: str | None) -> bool:
    """True when a heartbeat tick has nothing to ask the model about (so no LLM call is made)."""
    if text is None or not text.strip():
        return True
    template = _template_text()
    if template is not None and _normalised(text) == _normalised(template):
        return True
    return not active_task_lines(text)


# --- the service -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TickRecord:
    """One heartbeat tick. `decision` is "no_tasks", "skip", "run" or "error"; `trigger` "timer" or "manual"."""

    started_at: datetime
    decision: str
    tasks: str
    result: str | None
    error: str | None
    duration_s: float
    session_key: str = SESSION_KEY
    trigger: str = "timer"


class HeartbeatError(Exception):
    """A tick could not be completed for a reason worth showing (unreadable file, odd model answer)."""


class HeartbeatService:
    """Ticks every `interval_s` seconds (the first tick one interval after start, as the original)."""

    def __init__(
        self,
        workspace: Workspace,
        chat: ChatWithTools,
        on_execute: Callable[[str], Awaitable[str | None]],
        interval_s: int = 1800,
        enabled: bool = True,
        bus: EventBus | None = None,
    ) -> None:
        _check_interval(interval_s)
        self.workspace = workspace
        self.enabled = enabled
        self._chat = chat
        self._on_execute = on_execute
        self._interval_s = interval_s
        self._bus = bus
        self._ticks: deque[TickRecord] = deque(maxlen=MAX_TICKS)
        self._loop_task: asyncio.Task[None] | None = None
        self._current_tick: asyncio.Task[TickRecord] | None = None
        self._wake = asyncio.Event()
        self._paused = False
        self._next_tick_at: datetime | None = None
        # Who runs the heartbeat instead of the app (a `nanobot gateway` on this workspace), if anyone:
        # see engine/coexistence.py. While it says so, timer ticks are left to that process.
        self.defer_to: Callable[[], str | None] | None = None

    # --- state for the GUI -----------------------------------------------------------------------------

    @property
    def interval_s(self) -> int:
        return self._interval_s

    @property
    def running(self) -> bool:
        """The periodic loop is started (ticks may still be paused)."""
        return self._loop_task is not None and not self._loop_task.done()

    @property
    def ticking(self) -> bool:
        """A tick is in progress right now."""
        return self._current_tick is not None and not self._current_tick.done()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def next_tick_at(self) -> datetime | None:
        """When the timer ticks next; None when stopped or paused."""
        return self._next_tick_at if self.running and not self._paused else None

    @property
    def ticks(self) -> list[TickRecord]:
        """Recorded ticks, newest last (the last 500)."""
        return list(self._ticks)

    @property
    def last_tick(self) -> TickRecord | None:
        return self._ticks[-1] if self._ticks else None

    # --- control ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        if not self.enabled or self.running:
            return
        self._schedule_next()
        self._loop_task = asyncio.create_task(self._run_loop(), name="heartbeat-loop")

    async def stop(self) -> None:
        """Stop the loop and cancel a running tick, waiting until both are gone."""
        tasks = [t for t in (self._loop_task, self._current_tick) if t is not None and not t.done()]
        self._loop_task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._next_tick_at = None

    @property
    def held_by(self) -> str | None:
        """Why another program runs the heartbeat now (the views show it); None when the app does."""
        return self.defer_to() if self.defer_to is not None else None

    def pause(self) -> None:
        """Timer ticks are skipped until `resume()`; `trigger_now()` still works."""
        self._paused = True

    def resume(self) -> None:
        """Resume ticking; the next tick comes one full interval from now."""
        if self._paused:
            self._paused = False
            self._schedule_next()
            self._wake.set()

    def set_interval(self, seconds: int) -> None:
        """Change the interval; the next tick comes one new interval from now."""
        _check_interval(seconds)
        self._interval_s = seconds
        self._schedule_next()
        self._wake.set()

    async def trigger_now(self) -> TickRecord:
        """Run one tick now (both phases). While a tick is running, wait for that one instead."""
        return await self._shared_tick("manual")

    # --- ticking ---------------------------------------------------------------------------------------

    async def _run_loop(self) -> None:
        while True:
            self._wake.clear()
            self._schedule_next()
            try:
                # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a stop() that coincides with a wake
                async with asyncio.timeout(self._interval_s):
                    await self._wake.wait()
                continue  # interval changed or resumed: start waiting afresh
            except TimeoutError:
                pass
            if self._paused or self.held_by:
                continue
            try:
                await self._shared_tick("timer")
            except Exception:  # _tick records its own errors; this is a last line of defence
                log.exception("heartbeat tick failed")

    def _schedule_next(self) -> None:
        self._next_tick_at = datetime.now().astimezone() + timedelta(seconds=self._interval_s)

    async def _shared_tick(self, trigger: str) -> TickRecord:
        if self._current_tick is None or self._current_tick.done():
            self._current_tick = asyncio.create_task(self._tick(trigger), name=f"heartbeat-tick-{trigger}")
        # shield: a waiter giving up (e.g. the loop being stopped) must not cancel a tick others await
        return await asyncio.shield(self._current_tick)

    async def _tick(self, trigger: str) -> TickRecord:
        started_at = datetime.now().astimezone()
        t0 = time.monotonic()
        decision, tasks, result, error = "error", "", None, None
        try:
            content = self._read_file()
            if has_no_tasks(content):
                decision = "no_tasks"
                self._publish(HeartbeatDecided(SESSION_KEY, decision=decision))
            else:
                decision, tasks = await self._decide(content or "")
                self._publish(HeartbeatDecided(SESSION_KEY, decision=decision, tasks=tasks))
                if decision == "run":
                    result = await self._on_execute(tasks)
        except asyncio.CancelledError:
            self._record(started_at, t0, "error", tasks, None, "cancelled (heartbeat stopped)", trigger)
            raise
        except Exception as exc:  # noqa: BLE001 - ProviderError, a failing agent turn, an unreadable file: recorded
            decision, error = "error", str(exc) or type(exc).__name__
            log.warning("heartbeat tick failed: %s", error)
        return self._record(started_at, t0, decision, tasks, result, error, trigger)

    def _record(self, started_at: datetime, t0: float, decision: str, tasks: str,
                result: str | None, error: str | None, trigger: str) -> TickRecord:
        record = TickRecord(started_at, decision, tasks, result, error, time.monotonic() - t0, SESSION_KEY, trigger)
        self._ticks.append(record)
        self._publish(HeartbeatRan(SESSION_KEY, decision=decision, tasks=tasks, result=result, error=error))
        return record

    def _read_file(self) -> str | None:
        path = self.workspace.heartbeat_file
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise HeartbeatError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise HeartbeatError(f"{path} is not UTF-8 text (byte {exc.start})") from None

    async def _decide(self, content: str) -> tuple[str, str]:
        """Phase 1: the model reports skip/run through the virtual tool; no call at all means skip."""
        messages = [
            {"role": "system", "content": DECISION_SYSTEM_PROMPT},
            {"role": "user", "content": DECISION_USER_PROMPT.format(content=content)},
        ]
        response = await self._chat(messages, [HEARTBEAT_TOOL])
        call = next((c for c in response.tool_calls if c.name == "heartbeat"), None)
        if call is None:
            return "skip", ""
        if call.parse_error:
            raise HeartbeatError(f"the model's heartbeat decision could not be read: {call.parse_error}")
        action = call.arguments.get("action") or "skip"
        if action not in ("skip", "run"):
            raise HeartbeatError(f"the model answered action={action!r}; expected 'skip' or 'run'")
        tasks = str(call.arguments.get("tasks") or "").strip()
        if action == "run" and not tasks:  # the model forgot the summary: hand over the task lines
            tasks = "\n".join(active_task_lines(content))
        return action, tasks

    def _publish(self, event: Any) -> None:
        if self._bus is not None:
            self._bus.publish(event)


def _check_interval(seconds: int) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise ValueError(f"the heartbeat interval must be a positive number of seconds, got {seconds!r}")
