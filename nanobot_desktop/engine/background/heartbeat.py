"""The periodic check of HEARTBEAT.md (nanobot 0.1.4.post4 two-phase heartbeat, reference §9).

Each tick reads the file fresh from disk. Whether the model is asked at all is decided by the one rule
in `heartbeat_rule` (only a file with nothing a person wrote is skipped). Otherwise phase 1 asks the
model through the virtual `heartbeat` tool whether there is work (`skip`/`run`), and phase 2 hands the
task summary to `on_execute` (an agent turn in the `heartbeat` session). Every tick, including one
skipped because the heartbeat is paused or another program runs it, is recorded with its reason for
the GUI's timeline; nothing a tick does can end the loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Awaitable, Callable

from nanobot_desktop.engine.background.log import ToolUse, ToolUseRecorder
from nanobot_desktop.engine.events import EventBus, HeartbeatDecided, HeartbeatRan, Origin, origin_context
from nanobot_desktop.engine.background.heartbeat_rule import SKIP_WORDS, analyse, text_lines
from nanobot_desktop.engine.llm.types import ChatWithTools
from nanobot_desktop.engine.usage.source import source_context
from nanobot_desktop.engine.workspace import Workspace
from nanobot_desktop.engine.own_files import LinkedOut

log = logging.getLogger(__name__)

SESSION_KEY = "heartbeat"
MAX_TICKS = 500
SKIP_PAUSED = "paused"
LATE_S = 120  # a timer tick this much later than planned (and later than one interval) missed checks
SKIP_EXTERNAL = "external"
SKIP_BUDGET = "budget"

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


def has_no_tasks(text: str | None) -> bool:
    """True when a tick would not ask the model about this text (see `heartbeat_rule`)."""
    return analyse(text).skip_reason is not None


# --- the service -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TickRecord:
    """One heartbeat tick and why it went as it did.

    `decision`: "skipped" (no model call; `skip_reason` is "missing", "empty", "template", "paused" or
    "external"), "skip" (the model decided so; `reason` holds its answer), "run" or "error".
    `trigger`: "timer" or "manual". `tools`: the tool calls of the run; `approvals`: what it asked for.
    """

    started_at: datetime
    decision: str
    tasks: str
    result: str | None
    error: str | None
    duration_s: float
    session_key: str = SESSION_KEY
    trigger: str = "timer"
    skip_reason: str = ""
    reason: str = ""
    tools: tuple[ToolUse, ...] = ()
    approvals: tuple[str, ...] = ()
    note: str = ""  # e.g. "3 checks missed while the computer slept …; checking once now"

    @property
    def explanation(self) -> str:
        """One sentence for the timeline: why nothing ran, or what the model said."""
        if self.decision == "skipped":
            return self.reason or SKIP_WORDS.get(self.skip_reason, self.skip_reason)
        if self.decision == "skip":
            return self.reason or "the model found nothing to do"
        return self.reason


class HeartbeatError(Exception):
    """A tick could not be completed for a reason worth showing (unreadable file, odd model answer)."""


class HeartbeatService:
    """Ticks every `interval_s` seconds (the first tick one interval after start, as the original)."""

    CLOCK_CHECK_S = 60.0

    def __init__(
        self,
        workspace: Workspace,
        chat: ChatWithTools,
        on_execute: Callable[[str], Awaitable[str | None]],
        interval_s: int = 1800,
        enabled: bool = True,
        bus: EventBus | None = None,
        clock: Callable[[], datetime] | None = None,
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
        self._clock = clock or (lambda: datetime.now().astimezone())
        self._late_note = ""
        # Who runs the heartbeat instead of the app (a `nanobot gateway` on this workspace), if anyone:
        # see engine/background/coexistence.py. While it says so, timer ticks are left to that process (and the
        # timeline says so); "Run now" still runs here.
        self.defer_to: Callable[[], str | None] | None = None
        # Why background work waits (a spent usage budget, engine/usage/recorder.py): timer ticks skip.
        self.budget_hold: Callable[[], str | None] | None = None

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
        while True:  # start(), set_interval() and resume() schedule the next tick; the loop after a tick
            self._wake.clear()
            if await self._wait_until_due():
                continue  # interval changed or resumed: start waiting afresh
            self._late_note = self._missed_note()
            try:
                await self._shared_tick("timer")
            except Exception:  # _tick records its own errors; this is a last line of defence
                log.exception("heartbeat tick failed")
            self._schedule_next()  # one interval from the end of the tick, as the original sleeps

    async def _wait_until_due(self) -> bool:
        """Sleep until the next tick is due by the wall clock; True when woken early (reschedule).

        The wait is cut into pieces of at most CLOCK_CHECK_S, because the event loop's clock stops while
        the computer sleeps: after a resume the due time may long have passed by the wall clock.
        """
        while True:
            due = self._next_tick_at
            remaining = (due - self._clock()).total_seconds() if due is not None else self._interval_s
            if remaining <= 0:
                return False
            try:
                # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a stop() that coincides with a wake
                async with asyncio.timeout(min(remaining, self.CLOCK_CHECK_S)):
                    await self._wake.wait()
                return True
            except TimeoutError:
                continue

    def _missed_note(self) -> str:
        """Say so when the tick comes much later than planned (the computer slept): one check now."""
        due = self._next_tick_at
        if due is None:
            return ""
        late = (self._clock() - due).total_seconds()
        if late < max(LATE_S, self._interval_s):
            return ""
        missed = int(late // self._interval_s)
        checks = "1 check" if missed == 1 else f"{missed} checks"
        return (f"{checks} missed while the computer slept or the app was stalled (due {due.strftime('%H:%M %Z').strip()}); "
                "checking once now")

    def _schedule_next(self) -> None:
        self._next_tick_at = self._clock() + timedelta(seconds=self._interval_s)

    async def _shared_tick(self, trigger: str) -> TickRecord:
        if self._current_tick is None or self._current_tick.done():
            self._current_tick = asyncio.create_task(self._tick(trigger), name=f"heartbeat-tick-{trigger}",
                                                     context=origin_context(Origin.HEARTBEAT,
                                                                            source_context("heartbeat", SESSION_KEY)))
        # shield: a waiter giving up (e.g. the loop being stopped) must not cancel a tick others await
        return await asyncio.shield(self._current_tick)

    def _skip_reason_before_reading(self, trigger: str) -> tuple[str, str] | None:
        """(skip_reason, words) when a timer tick must not look at the file at all."""
        elsewhere = self.held_by if trigger == "timer" else None
        if elsewhere:
            return SKIP_EXTERNAL, f"another program runs the heartbeat: {elsewhere}"
        if trigger == "timer" and self._paused:
            return SKIP_PAUSED, "the heartbeat is paused (from the tray); Run now still works"
        held = self.budget_hold() if trigger == "timer" and self.budget_hold is not None else None
        if held:
            return SKIP_BUDGET, f"{held}; background work waits until you resume it (Usage page); Run now still works"
        return None

    async def _tick(self, trigger: str) -> TickRecord:
        started_at = self._clock()
        t0 = time.monotonic()
        out: dict[str, Any] = {"decision": "error", "tasks": "", "result": None, "error": None,
                               "note": self._late_note if trigger == "timer" else ""}
        self._late_note = ""
        recorder = ToolUseRecorder(self._bus, SESSION_KEY)
        try:
            early = self._skip_reason_before_reading(trigger)
            content = None if early else self._read_file()
            skip_reason = early[0] if early else analyse(content).skip_reason
            if skip_reason is not None:
                out.update(decision="skipped", skip_reason=skip_reason, reason=early[1] if early else "")
                self._publish(HeartbeatDecided(SESSION_KEY, decision="skipped", reason=skip_reason))
            else:
                decision, tasks, answer = await self._decide(content or "")
                out.update(decision=decision, tasks=tasks, reason=answer)
                self._publish(HeartbeatDecided(SESSION_KEY, decision=decision, tasks=tasks))
                if decision == "run":
                    with recorder:
                        out["result"] = await self._on_execute(tasks)
        except asyncio.CancelledError:
            out.update(decision="error", result=None, error="cancelled (heartbeat stopped)")
            self._record(started_at, t0, trigger, recorder, out)
            raise
        except Exception as exc:  # noqa: BLE001 - ProviderError, a failing agent turn, an unreadable file: recorded
            out.update(decision="error", error=str(exc) or type(exc).__name__)
            log.warning("heartbeat tick failed: %s", out["error"])
        return self._record(started_at, t0, trigger, recorder, out)

    def _record(self, started_at: datetime, t0: float, trigger: str, recorder: ToolUseRecorder,
                out: dict[str, Any]) -> TickRecord:
        record = TickRecord(started_at, out["decision"], out["tasks"], out["result"], out["error"],
                            time.monotonic() - t0, SESSION_KEY, trigger, out.get("skip_reason", ""),
                            out.get("reason", ""), tuple(recorder.uses), tuple(recorder.approvals), out["note"])
        self._ticks.append(record)
        self._publish(HeartbeatRan(SESSION_KEY, decision=record.decision, tasks=record.tasks, result=record.result,
                                   error=record.error, reason=record.explanation))
        return record

    def _read_file(self) -> str | None:
        path = self.workspace.heartbeat_file
        try:
            raw = self.workspace.own.read(path)
        except (FileNotFoundError, LinkedOut):  # a link out of the workspace is told, never read
            return None
        except OSError as exc:
            raise HeartbeatError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise HeartbeatError(f"{path} is not UTF-8 text (byte {exc.start})") from None

    async def _decide(self, content: str) -> tuple[str, str, str]:
        """Phase 1: (action, tasks, the model's own words); no tool call at all means skip."""
        messages = [
            {"role": "system", "content": DECISION_SYSTEM_PROMPT},
            {"role": "user", "content": DECISION_USER_PROMPT.format(content=content)},
        ]
        response = await self._chat(messages, [HEARTBEAT_TOOL])
        call = next((c for c in response.tool_calls if c.name == "heartbeat"), None)
        said = " ".join((response.content or "").split())
        if call is None:
            return "skip", "", said or "the model made no decision call, which counts as skip"
        if call.parse_error:
            raise HeartbeatError(f"the model's heartbeat decision could not be read: {call.parse_error}")
        action = call.arguments.get("action") or "skip"
        if action not in ("skip", "run"):
            raise HeartbeatError(f"the model answered action={action!r}; expected 'skip' or 'run'")
        tasks = str(call.arguments.get("tasks") or "").strip()
        if action == "run" and not tasks:  # the model forgot the summary: hand over the person's lines
            tasks = "\n".join(text_lines(content))
        if action == "skip":
            said = said or (f"skip: {tasks}" if tasks else "the model answered skip")
        return action, tasks, said

    def _publish(self, event: Any) -> None:
        if self._bus is not None:
            self._bus.publish(event)


def _check_interval(seconds: int) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise ValueError(f"the heartbeat interval must be a positive number of seconds, got {seconds!r}")
