"""Fixtures for GUI tests: pytest-qt (offscreen, from tests/conftest.py) plus a qasync loop.

`qloop` — asyncio on the Qt event loop, for sync tests ("Pattern A" of the Qt reference §3)
----------------------------------------------------------------------------------------------
Use it in any test whose code under test runs coroutines (`@qasync.asyncSlot`, `asyncio.ensure_future`,
`Lifecycle.request_quit()`, engine calls). Write the test as a plain `def`, not `async def`:

    def test_send(qtbot, qloop):
        window = MainWindow(...)
        qtbot.mouseClick(window.send_button, Qt.MouseButton.LeftButton)   # the asyncSlot schedules a Task
        qtbot.waitUntil(lambda: window.reply_shown, timeout=5000)            # waiting pumps Qt => asyncio runs

How it works: the session's QApplication is not inside `exec()`; pytest-qt's waits (`waitUntil`,
`waitSignal`) spin a nested Qt loop. `QEventLoop(qapp, already_running=True)` tells qasync that the
Qt loop "is running", so asyncio callbacks and tasks run whenever those waits pump events.
Nothing runs between your statements unless you wait: an `asyncSlot` only *schedules* its task.

To wait for a task or future itself, use `qtbot.waitUntil(task.done)`, then `task.result()`.

Failures are never lost:
- An exception inside an `asyncSlot` goes to `sys.excepthook`; pytest-qt captures it and fails
  the test ("Exceptions caught in Qt event loop").
- An exception in any other task or callback reaches the loop's exception handler; the fixture
  collects those and fails the test at teardown with the collected messages.

Teardown (do not copy `loop.stop()` into tests: in already_running mode it calls `app.exit()` and
every later `qtbot.waitUntil` of the session then times out):
cancel the pending tasks, let Qt process events a few times so the cancellations run, mark the loop
as not running, clear asyncio's running loop, close the loop, and detach it from the app.
A new loop per test on the session `qapp` is fine.

`_qt_objects_die_on_the_gui_thread` (autouse)
---------------------------------------------
pytest-qt closes the widgets given to `qtbot.addWidget` and calls `deleteLater()`, but no event
loop runs afterwards to delete them, and PySide widgets usually sit in Python reference cycles. The
cyclic garbage collector can then run in *any* thread (a watchdog observer, a reader thread) and
destroy a Qt object there: "QObject::~QObject: Timers cannot be stopped from another thread", which
fails the test that happens to be running, or worse. After every GUI test this fixture deletes the
pending objects and collects the cycles on the GUI thread.

Before the test it collects what earlier tests left and freezes the survivors (`collect_and_freeze` in
tests/conftest.py), so that collection walks only this test's objects, not the session's whole heap.

It then fails the test if a top-level widget it made is still there: a window or dialog nobody
closed keeps timers and background work running into the next test (where their errors land).
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any, Iterator

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QSettings
from PySide6.QtWidgets import QApplication, QMainWindow

from nanobot_desktop.gui.common.qt_asyncio import QtAsyncioLoop
from tests.conftest import collect_and_freeze


@pytest.fixture(autouse=True)
def _qt_objects_die_on_the_gui_thread(qapp: QApplication, request: pytest.FixtureRequest) -> Iterator[None]:
    collect_and_freeze(request.module.__name__)  # so the collection below walks only this test's objects
    existing = qapp.topLevelWidgets()  # held, so no new widget can reuse one of their ids
    before = {id(widget) for widget in existing}
    yield
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    left = [widget for widget in qapp.topLevelWidgets() if id(widget) not in before]
    if left:
        names = ", ".join(f"{type(widget).__name__}({widget.objectName() or widget.windowTitle()!r})" for widget in left)
        for widget in left:  # so the next test starts clean
            widget.close()
            widget.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        pytest.fail(f"the test left top-level widgets behind (give them to qtbot.addWidget or delete them): {names}")


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[QtAsyncioLoop]:
    loop = QtAsyncioLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    errors: list[str] = []

    def collect(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exception = context.get("exception")
        message = context.get("message", "")
        errors.append(f"{message}: {exception!r}" if exception else message)

    loop.set_exception_handler(collect)
    loop.collected_errors = errors  # type: ignore[attr-defined]  # for a test that asserts on them early
    try:
        yield loop
    finally:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        for _ in range(5):
            qapp.processEvents()
        loop._QEventLoop__is_running = False  # type: ignore[attr-defined]  # qasync keeps this private
        asyncio.events._set_running_loop(None)
        try:
            qapp.aboutToQuit.disconnect(loop._after_run_forever)
        except (RuntimeError, TypeError):
            pass
        loop.close()
        asyncio.set_event_loop(None)
    still_pending = [task for task in pending if not task.done()]
    if still_pending:
        pytest.fail(f"tasks ignored cancellation at teardown: {still_pending}")
    if errors:
        pytest.fail("errors inside the asyncio loop:\n" + "\n".join(errors))


@pytest.fixture
def tray_use_dbus() -> bool:
    """Whether `tray_env`'s TrayController starts its D-Bus notifier (a test module may override this)."""
    return True


@pytest.fixture
def tray_env(qtbot: Any, qloop: QtAsyncioLoop, make_engine: Any, tmp_path: Path,
             tray_use_dbus: bool) -> Iterator[tuple[Any, Any, QMainWindow, Any]]:
    """(engine, bridge, hidden main window, TrayController with its own settings file); all shut down after."""
    from nanobot_desktop.gui.common.bridge import EngineBridge
    from nanobot_desktop.gui.window.tray import TrayController

    engine = make_engine()
    bridge = EngineBridge(engine)
    window = QMainWindow()
    qtbot.addWidget(window)
    settings = QSettings(str(tmp_path / "tray.ini"), QSettings.Format.IniFormat)
    tray = TrayController(engine, bridge, window, use_dbus=tray_use_dbus, settings=settings)
    yield engine, bridge, window, tray
    tray.shutdown()
    bridge.detach()
    done = asyncio.ensure_future(engine.shutdown())
    qtbot.waitUntil(done.done, timeout=5000)


@pytest.fixture
def panel_env(tray_env: tuple[Any, Any, QMainWindow, Any]) -> Iterator[tuple[Any, Any, QMainWindow, Any, list[Any]]]:
    """`tray_env` and a list of the background panels the test made: each is shut down before the rest."""
    panels: list[Any] = []
    yield (*tray_env, panels)
    for panel in panels:
        panel.shutdown()
