"""Qt helpers for the GUI benchmarks: an offscreen QApplication, waiting without busy-spinning,
noticing the first paint, and finding the main window when it exists.

Import this module before anything imports PySide6: it selects the offscreen platform (unless the
caller chose one), so the benchmarks run the same with or without a display.
"""

from __future__ import annotations

import importlib
import os
import time
from typing import Any, Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer
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
