"""Recording every model call the app makes, off the event loop, without ever failing a turn.

The recorder listens to LLMCallFinished (published for every call: chat turns, subagents,
consolidation and the heartbeat's decision alike; see agent/turn.publish_call_finished) and keeps each
event; one worker thread of its own turns them into UsageRows and writes them, in batches, so the GUI
thread never waits on SQLite, nor on the store's import (sqlite3 and all, ~5 ms, which at the first
call landed in the loop step that ends the first reply: bench/stream_stall.py). A call waits
BATCH_DELAY_S before its write starts, so the calls of a busy moment (a turn's tool iterations, a
subagent's burst) share one transaction: a write opens both files, checks their schema and commits (an
fsync), which at one write per call cost each turn ~1 ms of the event loop's time and a few pages of disk
writes (bench/engine_overhead.py, bench/session_append.py).
Shutdown and `flush` write at once, so no row is lost by the wait.

A file that is locked or damaged fails no turn: the rows stay in memory, a UsageRecorded event
carries the notice, and the write is tried again (soon for a lock, rarely for a damaged file) and
with the next new call's batch, until it works or the app quits (a last try at shutdown).

The budget is checked after each write, in the same thread: crossing 80 % of a daily or monthly limit
publishes a BudgetCrossed warning; reaching 100 % holds background work (heartbeat timer ticks, cron
jobs, new subagents) until the person resumes it (`resume_background`). Chat turns never wait.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from nanobot_desktop.engine.events import BudgetCrossed, EventBus, LLMCallFinished, UsageRecorded
from nanobot_desktop.engine.usage.store_errors import UsageFileError

if TYPE_CHECKING:
    from nanobot_desktop.engine.idle_threads import IdleExitingExecutor
    from nanobot_desktop.engine.usage.prices import ModelPrice
    from nanobot_desktop.engine.usage.reader import UsageReader
    from nanobot_desktop.engine.usage.store import UsageRow, UsageWriter

log = logging.getLogger(__name__)

WARN_LEVEL = 0.8
RETRY_LOCKED_S = 5.0
RETRY_DAMAGED_S = 60.0
BATCH_DELAY_S = 0.5


@dataclass(frozen=True)
class Budget:
    """Optional limits in US dollars (None: no limit for that period)."""

    daily: float | None = None
    monthly: float | None = None


def row_from_event(event: LLMCallFinished, provider: str) -> UsageRow:
    from nanobot_desktop.engine.usage.store import UsageRow

    return UsageRow(
        started_at_ms=max(0, int((event.at - event.latency_s) * 1000)), duration_ms=max(0, int(event.latency_s * 1000)),
        provider=provider, model=event.model, kind=event.source, session_key=event.session_key,
        finish_reason="error" if event.error else event.finish_reason, input_tokens=event.prompt_tokens,
        output_tokens=event.completion_tokens, cache_read_tokens=event.cache_read_tokens,
        cache_write_tokens=event.cache_write_tokens, estimated=event.estimated,
        error_status_code=event.error_status, error_kind=event.error_kind or None)


class UsageRecorder:
    """The usage record of one config folder: rows in, sums out (see the module docstring)."""

    def __init__(self, folder: Path, bus: EventBus, *, provider_name: Callable[[], str],
                 prices: Callable[[], dict[str, ModelPrice]], budget: Callable[[], Budget]) -> None:
        self.folder = folder
        self._writer: UsageWriter | None = None
        self._reader: UsageReader | None = None
        self._bus = bus
        self._provider_name = provider_name
        self.prices = prices
        self._budget = budget
        self._pending: list[tuple[LLMCallFinished, str]] = []  # each call and its provider, until written
        self._cli_ids: dict[int, int] = {}
        self._writing: asyncio.Future[tuple[int, str, dict[str, float]]] | None = None
        self._retry: asyncio.TimerHandle | None = None
        self._batch: asyncio.TimerHandle | None = None  # the write that waits for more rows to join it
        self._executor: IdleExitingExecutor | None = None
        self.problem = ""
        """Why rows wait in memory ("" when everything is written)."""
        self._announced: dict[str, float] = {}  # budget period ("day:2026-11-28") -> highest level published
        self._resumed: set[str] = set()  # periods whose spent budget the person chose to go past
        self._held: dict[str, str] = {}  # period -> why background work waits
        bus.subscribe(self._on_event)

    @property
    def reader(self) -> UsageReader:
        """Sums over the record (made on first use: the empty window adds nothing up)."""
        if self._reader is None:
            from nanobot_desktop.engine.usage.reader import UsageReader
            from nanobot_desktop.engine.usage.summary_file import default_summary_path

            self._reader = UsageReader(self.folder, default_summary_path(self.folder))
        return self._reader

    @property
    def writer(self) -> UsageWriter:
        """Writes the rows (made with the first one: the store's module is not part of the app's start)."""
        if self._writer is None:
            from nanobot_desktop.engine.usage.store import UsageWriter

            self._writer = UsageWriter(self.folder)
        return self._writer

    def has_record(self) -> bool:
        """Whether there is anything to read at all (either usage file)."""
        from nanobot_desktop.engine.usage.store_errors import APP_FILE, CLI_FILE

        return (self.folder / APP_FILE).is_file() or (self.folder / CLI_FILE).is_file()

    # --- rows in ------------------------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        return len(self._pending)

    def _on_event(self, event: object) -> None:
        if isinstance(event, LLMCallFinished):
            try:
                provider = self._provider_name()
            except Exception:  # noqa: BLE001 - a config that cannot say still records the call
                provider = "custom"
            self._pending.append((event, provider))
            self._soon()

    def _soon(self) -> None:
        """Start a write BATCH_DELAY_S from now (at once without a running loop), unless one is under way
        or already waiting: the rows that come meanwhile join it."""
        if self._writing is not None or self._batch is not None or not self._pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._kick()
            return
        if self._retry is not None:  # a new call's batch tries what waits after a failure too
            self._retry.cancel()
            self._retry = None
        self._batch = loop.call_later(BATCH_DELAY_S, self._kick)

    def _kick(self) -> None:
        if self._batch is not None:
            self._batch.cancel()
            self._batch = None
        if self._writing is not None or not self._pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): write here
            self._finish(self._write_batch(list(self._pending)), None)
            return
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self._writing = loop.run_in_executor(self._worker(), self._write_batch, list(self._pending))
        self._writing.add_done_callback(self._written)

    def _worker(self) -> IdleExitingExecutor:
        """The recorder's own thread: started with a batch (the empty window has none), ended when idle."""
        if self._executor is None:
            from nanobot_desktop.engine.idle_threads import IdleExitingExecutor

            self._executor = IdleExitingExecutor(1, name="usage-record")
        return self._executor

    def _write_batch(self, batch: list[tuple[LLMCallFinished, str]]) -> tuple[int, str, dict[str, float]]:
        """Worker thread: write, then (with a budget set) add up what today and this month cost."""
        written = self.writer.write([row_from_event(event, provider) for event, provider in batch], self._cli_ids)
        return written, self.writer.cli_note, self._spent() if self._has_budget() else {}

    def _written(self, future: asyncio.Future[tuple[int, str, dict[str, float]]]) -> None:
        self._writing = None
        if future.cancelled():
            return
        error = future.exception()
        if error is not None and not isinstance(error, UsageFileError):
            log.error("the usage record could not be written", exc_info=error)
            error = UsageFileError(f"the usage record could not be written ({error})", lasting=False)
        self._finish(future.result() if error is None else None, error)

    def _finish(self, result: tuple[int, str, dict[str, float]] | None, error: BaseException | None) -> None:
        if result is None:
            lasting = isinstance(error, UsageFileError) and error.lasting
            problem = str(error)
            if problem != self.problem:
                log.warning("usage record: %s (%d rows wait in memory)", problem, len(self._pending))
            self.problem = problem
            self._bus.publish(UsageRecorded("", written=0, pending=len(self._pending), problem=problem))
            self._schedule_retry(RETRY_DAMAGED_S if lasting else RETRY_LOCKED_S)
            return
        written, cli_note, spent = result
        del self._pending[:written]
        self._cli_ids.clear()
        self.problem = cli_note
        self._bus.publish(UsageRecorded("", written=written, pending=len(self._pending), problem=cli_note))
        if spent:
            self._judge_budget(spent)
        self._soon()

    def _schedule_retry(self, delay_s: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._retry is not None:
            self._retry.cancel()
        self._retry = loop.call_later(delay_s, self._kick)

    async def flush(self) -> None:
        """Wait until every row so far is written or has failed to be (shutdown, tests)."""
        while True:
            if self._writing is not None:
                await asyncio.wait([self._writing])
                continue
            if not self._pending or (self.problem and self._retry is not None):
                return
            self._kick()
            if self._writing is None:
                return

    async def close(self) -> None:
        """A last try to write what waits, then stop the worker thread."""
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._pending and self._writing is None:
            self._kick()  # also ends the wait of a batch
        if self._writing is not None:
            await asyncio.wait([self._writing])
        for timer in (self._retry, self._batch):
            if timer is not None:
                timer.cancel()
        self._retry = self._batch = None
        if self._pending:
            log.warning("usage record: %d rows could not be written before quitting: %s", len(self._pending),
                        self.problem)
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None
        if self._reader is not None:
            self._reader.close()

    # --- the budget ---------------------------------------------------------------------------------------

    def _has_budget(self) -> bool:
        budget = self._budget()
        return budget.daily is not None or budget.monthly is not None

    def _spent(self) -> dict[str, float]:
        """Period id -> US dollars spent (priced calls only), for the periods with a limit."""
        today = date.today()
        summary = self.reader.summary(self.prices(), today)
        return {f"day:{today.isoformat()}": summary.day.cost, f"month:{today.strftime('%Y-%m')}":
                summary.calendar_month.cost}

    def _judge_budget(self, spent: dict[str, float]) -> None:
        budget = self._budget()
        self._held.clear()
        for period, cost in spent.items():
            kind = period.partition(":")[0]
            limit = budget.daily if kind == "day" else budget.monthly
            if limit is None or limit <= 0:
                continue
            level = 1.0 if cost >= limit else WARN_LEVEL if cost >= WARN_LEVEL * limit else 0.0
            if level >= 1.0 and period not in self._resumed:
                name = "daily" if kind == "day" else "monthly"
                self._held[period] = f"the {name} usage budget of ${limit:.2f} is spent (${cost:.2f})"
            if level > self._announced.get(period, 0.0):
                self._announced[period] = level
                self._bus.publish(BudgetCrossed("", period=kind, level=level, spent=cost, limit=limit))

    async def check_budget(self) -> None:
        """Add up the spending now (at start: a budget spent before a restart still holds)."""
        if not self._has_budget():
            self._held.clear()
            return
        loop = asyncio.get_running_loop()
        self._judge_budget(await loop.run_in_executor(self._worker(), self._spent))

    def budget_hold(self) -> str | None:
        """Why background work waits now (a spent budget), or None."""
        return next(iter(self._held.values()), None)

    def resume_background(self) -> None:
        """The person chose to go on past the spent budget: background work runs again until the next
        period's budget is spent."""
        self._resumed.update(self._held)
        self._held.clear()
