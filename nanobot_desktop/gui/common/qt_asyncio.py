"""The asyncio loop on the Qt loop: qasync's, with timers that let go of a cancelled callback at once.

qasync 0.28 returns a plain `asyncio.Handle` from `call_later`/`call_at` and keeps it, with the Qt
timer behind it, until the delay has passed, even after the handle was cancelled. Every
`asyncio.timeout` or `wait_for` that ends early leaves one behind: a model call's stall watchdog
(engine/llm/stream_faults.py) reschedules its deadline as chunks arrive, so each turn left ~5
handles, their contexts and a running Qt timer for a minute or more, and 100 turns held ~170 kB
that the window did not need (bench/long_session_memory.py). Here `call_later` returns a real
`asyncio.TimerHandle` whose `cancel()` kills its Qt timer and forgets it, as asyncio's own loops
drop a cancelled timer. Everything else is qasync's.

Its default executor stays qasync's (ten QThreads for the loop's life). Giving it workers that end when
idle (engine/idle_threads.py) took ~130 kB of malloc's per-thread caches off the RSS row, but the
streaming row read worse with it: 10–39 ms (mean 15.3) against 8–16 ms (mean 11.5) with qasync's, in 17
alternated pairs of bench/stream_stall.py run alone. The pools of their own (spill, usage, memory,
editor, images) do end when idle.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any, Callable

import qasync
from PySide6.QtCore import QObject, QTimerEvent
from PySide6.QtWidgets import QApplication


class _QtTimerHandle(asyncio.TimerHandle):
    """A TimerHandle that knows the Qt timer it runs on."""

    __slots__ = ("timer_id",)

    timer_id: int


class _Timers(QObject):
    """One Qt timer per pending handle; a fired or cancelled handle is dropped with its timer."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: dict[int, _QtTimerHandle] = {}
        self._thread = threading.get_ident()
        self._stopped = False

    def start(self, handle: _QtTimerHandle, delay_s: float) -> None:
        handle.timer_id = self.startTimer(int(max(0.0, delay_s) * 1000))
        self._pending[handle.timer_id] = handle

    def forget(self, handle: _QtTimerHandle) -> None:
        """Kill a cancelled handle's timer (on the loop's thread; from another one it waits to fire)."""
        if threading.get_ident() == self._thread and self._pending.pop(handle.timer_id, None) is not None:
            self.killTimer(handle.timer_id)

    def stop(self) -> None:
        """The loop is closed: no handle runs any more."""
        self._stopped = True
        for timer_id in self._pending:
            self.killTimer(timer_id)
        self._pending.clear()

    def pending(self) -> int:
        return len(self._pending)

    def timerEvent(self, event: QTimerEvent) -> None:  # noqa: N802
        timer_id = event.timerId()
        self.killTimer(timer_id)
        handle = self._pending.pop(timer_id, None)
        if handle is not None and not handle.cancelled() and not self._stopped:
            handle._run()  # what every asyncio loop does with a due handle


class QtAsyncioLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync has no type hints
    """qasync's loop whose delayed callbacks are `TimerHandle`s dropped as soon as they are cancelled."""

    def __init__(self, app: QApplication | None = None, *, already_running: bool = False) -> None:
        super().__init__(app, already_running=already_running)
        self._qt_timers = _Timers()

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any,
                   context: contextvars.Context | None = None) -> asyncio.TimerHandle:
        if asyncio.iscoroutinefunction(callback):
            raise TypeError("coroutines cannot be used with call_later")
        if not callable(callback):
            raise TypeError(f"callback must be callable: {type(callback).__name__}")
        handle = _QtTimerHandle(self.time() + delay, callback, args, self, context)
        self._qt_timers.start(handle, delay)
        return handle

    def call_at(self, when: float, callback: Callable[..., object], *args: Any,
                context: contextvars.Context | None = None) -> asyncio.TimerHandle:
        return self.call_later(when - self.time(), callback, *args, context=context)

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        if isinstance(handle, _QtTimerHandle):
            self._qt_timers.forget(handle)

    def pending_timers(self) -> int:
        """How many delayed callbacks wait (a test's and a benchmark's view of what the loop holds)."""
        return self._qt_timers.pending()

    def close(self) -> None:
        was_closed = self.is_closed()
        super().close()
        if not was_closed and self.is_closed():
            self._qt_timers.stop()
