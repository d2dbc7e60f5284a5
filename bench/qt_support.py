"""Qt helpers for the GUI benchmarks: an offscreen QApplication, waiting without busy-spinning,
noticing the first paint, and finding the main window when it exists.

Import this module before anything imports PySide6: it selects the offscreen platform (unless the
caller chose one), so the benchmarks run the same with or without a display.
"""

from __future__ import annotations

import gc
import importlib
import os
import time
from itertools import pairwise
from typing import Any, Callable, NamedTuple

try:
    import resource  # POSIX only: the blocking count of a LoopTicker's gaps
except ImportError:
    resource = None  # type: ignore[assignment]

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QWidget

MAIN_WINDOW_MODULE = "nanobot_desktop.gui.window.main_window"


def application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(["nanobot-desktop-bench"])
    assert isinstance(app, QApplication)
    return app


def wait_until(predicate: Callable[[], bool], timeout_s: float = 30.0, poll_ms: int = 1) -> float:
    """Run the Qt event loop until `predicate()` holds; returns the seconds waited.

    A nested QEventLoop with a short repeating timer: Qt (and a qasync loop riding on it) keeps
    running, and the process sleeps in poll() between events instead of spinning.
    """
    if predicate():
        return 0.0
    started = time.perf_counter()
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(poll_ms)

    def check() -> None:
        if predicate() or time.perf_counter() - started > timeout_s:
            loop.quit()

    timer.timeout.connect(check)
    timer.start()
    loop.exec()
    timer.stop()
    if not predicate():
        raise TimeoutError(f"condition not met within {timeout_s:.0f} s")
    return time.perf_counter() - started


def process_events_for(seconds: float) -> None:
    """Let Qt run for a while (settling layouts and deferred timers) without spinning."""
    deadline = time.perf_counter() + seconds
    wait_until(lambda: time.perf_counter() >= deadline, timeout_s=seconds + 5)


class PaintProbe(QObject):
    """Records when `widget` (or any widget inside it) is next painted, once armed."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self._widget = widget
        self.painted_at: float | None = None
        self.last_painted_at: float | None = None
        """The latest paint since `arm()` (the page settled: its last repaint after layouts and resizes)."""
        self.cpu_at_last_paint: float | None = None
        """time.process_time() at that latest paint."""
        self._armed = False
        self._recording = False
        application().installEventFilter(self)

    def arm(self) -> None:
        self.painted_at = self.last_painted_at = self.cpu_at_last_paint = None
        self._armed = self._recording = True

    @property
    def painted(self) -> bool:
        return self.painted_at is not None

    def close(self) -> None:
        application().removeEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if self._recording and event.type() == QEvent.Type.Paint and isinstance(watched, QWidget):
            if watched is self._widget or self._widget.isAncestorOf(watched):
                self.last_painted_at = time.perf_counter()
                self.cpu_at_last_paint = time.process_time()
                if self._armed:
                    self.painted_at = self.last_painted_at
                    self._armed = False
        return False


def main_window_class() -> Any | None:
    """`nanobot_desktop.gui.window.main_window.MainWindow`, or None while it does not exist yet."""
    try:
        module = importlib.import_module(MAIN_WINDOW_MODULE)
    except ModuleNotFoundError as error:
        if error.name == MAIN_WINDOW_MODULE:
            return None
        raise
    return getattr(module, "MainWindow", None)


def optional_class(module_name: str, class_name: str) -> Any | None:
    """A GUI class that another part of the app provides, or None when it is not there (yet)."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name:
            return None
        raise
    return getattr(module, class_name, None)


def asyncio_on_qt() -> Any:
    """A qasync loop riding on the QApplication without owning it (the tests' "Pattern A").

    `wait_until` then drives asyncio too: the nested Qt loop it runs fires qasync's timers and
    socket notifiers, so `asyncSlot`s, executors and the engine's coroutines make progress.
    """
    import asyncio

    from nanobot_desktop.gui.common.qt_asyncio import QtAsyncioLoop

    loop = QtAsyncioLoop(application(), already_running=True)
    asyncio.set_event_loop(loop)
    return loop


def run_coroutine(coroutine: Any, timeout_s: float = 60.0) -> Any:
    """Run a coroutine to its end on the qasync loop from `asyncio_on_qt` (Qt keeps running meanwhile)."""
    import asyncio

    task = asyncio.ensure_future(coroutine)
    wait_until(task.done, timeout_s)
    return task.result()


def close_asyncio_on_qt(loop: Any) -> None:
    """Cancel what is left, then close the loop (its executor threads too) as the GUI tests do."""
    import asyncio

    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    for _ in range(5):
        application().processEvents()
    loop._QEventLoop__is_running = False  # qasync keeps this private; see tests/gui/conftest.py
    asyncio.events._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)


class Gap(NamedTuple):
    """The time between two ticks of a LoopTicker, and what the loop's thread did in it."""

    wall_ms: float
    cpu_ms: float  # running on a CPU (the VM host's steal is not in it)
    queued_ms: float  # runnable, waiting for a CPU behind other threads or processes
    waits: int | None  # times it blocked (the idle wait for the timer, the GIL, a lock, I/O); None: not known here

    @property
    def elsewhere_ms(self) -> float:
        """Neither running nor queued: blocked, or taken by the VM's host (the only thing left when waits is 0)."""
        return max(0.0, self.wall_ms - self.cpu_ms - self.queued_ms)

    def told(self) -> str:
        """The gap told apart, for a note."""
        if self.waits == 0:
            where = "taken by the VM's host (the thread never blocked)"
        else:
            times = "" if self.waits is None else f"{self.waits}×: "
            where = f"blocked ({times}the idle wait for the timer, or the GIL, a lock, I/O) or taken by the VM's host"
        return (f"{self.wall_ms:.0f} ms: {self.cpu_ms:.1f} ms on the loop's CPU, {self.queued_ms:.1f} ms waiting for "
                f"a CPU, {self.elsewhere_ms:.1f} ms {where}")


def worst(gaps: list[Gap]) -> Gap:
    """The longest gap on the clock (the rows' verdict)."""
    return max(gaps, key=lambda gap: gap.wall_ms)


class LoopTicker:
    """A precise QTimer ticking on the loop's thread; at each tick it notes the time, the thread's CPU time
    and run-queue wait (/proc/thread-self/schedstat) and how often the thread blocked (getrusage), so a
    long gap can be told apart: the loop's own work, other load, or a machine that was not running it.
    While it runs it also notes the garbage collector's full passes (one can be a stall of its own)."""

    def __init__(self, interval_ms: int) -> None:
        self._ticks: list[tuple[float, float, float, int | None]] = []
        self._collections: list[tuple[float, float]] = []  # (perf_counter at its start, ms) of each full pass
        self._collection_started = 0.0
        self._schedstat = os.open("/proc/thread-self/schedstat", os.O_RDONLY) \
            if os.path.exists("/proc/thread-self/schedstat") else None
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._schedstat is not None:
            running_ns, queued_ns = os.pread(self._schedstat, 64, 0).split()[:2]
            cpu, queued = int(running_ns) / 1e9, int(queued_ns) / 1e9
        else:
            cpu, queued = time.thread_time(), 0.0
        waits = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw if hasattr(resource, "RUSAGE_THREAD") else None
        self._ticks.append((now, cpu, queued, waits))

    def _on_collection(self, phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._collection_started = time.perf_counter()
        else:
            self._collections.append((self._collection_started, (time.perf_counter() - self._collection_started) * 1000))

    def start(self) -> None:
        self._timer.start()
        if self._on_collection not in gc.callbacks:
            gc.callbacks.append(self._on_collection)

    def clear(self) -> None:
        self._ticks.clear()
        self._collections.clear()

    def full_collections_ms(self, start: float = float("-inf"), end: float = float("inf")) -> list[float]:
        """How long each full garbage collection took that started from `start` to `end` (perf_counter seconds)."""
        return [ms for started, ms in self._collections if start <= started <= end]

    def gaps(self, start: float = float("-inf"), end: float = float("inf")) -> list[Gap]:
        """The gaps between the ticks noted from `start` to `end` (perf_counter seconds)."""
        inside = [tick for tick in self._ticks if start <= tick[0] <= end]
        return [Gap((b[0] - a[0]) * 1000, (b[1] - a[1]) * 1000, (b[2] - a[2]) * 1000,
                    None if a[3] is None or b[3] is None else b[3] - a[3])
                for a, b in pairwise(inside)]

    def close(self) -> None:
        self._timer.stop()
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)
        if self._schedstat is not None:
            os.close(self._schedstat)
            self._schedstat = None
