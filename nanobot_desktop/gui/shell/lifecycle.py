"""The single owner of shutdown.

Components register their long-running tasks (agent turns, heartbeat, watchers) and their async
cleanups (flush writers, close the HTTP client) here. Whatever asks to quit — the window's close,
the tray's Quit, Ctrl+C, the OS logging out, a stray `app.quit()` — ends up in `request_quit()`,
which runs exactly once: cancel and await every task, run the cleanups newest first (each with a
timeout, errors logged, never stopping the others), then mark the lifecycle finished. `run_gui`
waits for that, which stops the qasync loop and so quits the app.

Why the Quit event is routed here: Qt quits by sending `QEvent.Quit` to the application (last
window closed, `QCoreApplication.quit()`, macOS Cmd+Q). Intercepting it (DesktopApplication.event,
gui/shell/application.py) turns every one of those into an orderly `request_quit()` instead of the
loop vanishing under running tasks ("Task was destroyed but it is pending", unflushed files).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Coroutine

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QMainWindow

from nanobot_desktop.gui.shell.application import DesktopApplication

log = logging.getLogger(__name__)

Cleanup = Callable[[], "Awaitable[Any] | Any"]
WindowFactory = Callable[["Lifecycle"], "QMainWindow | Awaitable[QMainWindow | None]"]
"""Builds the app's window (or an awaitable of it; None means quit): see shell/app.py's run_gui."""


@dataclass(frozen=True)
class LaunchOptions:
    """What the command line asked for; the window factory reads it from `lifecycle.options`."""

    workspace: str | None = None
    config: str | None = None


@dataclass
class _CleanupEntry:
    name: str
    callback: Cleanup
    timeout_s: float


class Lifecycle(QObject):
    """Tasks and cleanups of the running app, and the one way to end it."""

    quit_requested = Signal()
    """Shutdown has begun (windows may hide, the tray may go); emitted once."""
    finished = Signal()
    """Every task is done and every cleanup has run; the app is about to exit."""
    instance_command = Signal(str)
    """A later launch sent "show" or "toggle" (after run_gui applied it to the window)."""

    def __init__(self, options: LaunchOptions | None = None, *, task_timeout_s: float = 5.0,
                 cleanup_timeout_s: float = 5.0, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.options = options or LaunchOptions()
        self.task_timeout_s = task_timeout_s
        self.cleanup_timeout_s = cleanup_timeout_s
        self._tasks: set[asyncio.Task[Any]] = set()
        self._cleanups: list[_CleanupEntry] = []
        self._shutdown_task: asyncio.Task[None] | None = None
        self._finished_event: asyncio.Event | None = None
        self._is_finished = False
        self._app: DesktopApplication | None = None
        self._about_to_quit_seen = False

    # --- registration --------------------------------------------------------------------------

    def add_task(self, task: "asyncio.Task[Any] | Coroutine[Any, Any, Any]", *, name: str | None = None) -> asyncio.Task[Any]:
        """Keep a long-running task alive until quit, then cancel and await it. A task that ends by
        itself is forgotten; if it failed, its error is logged (not silently lost)."""
        if inspect.iscoroutine(task):
            task = asyncio.ensure_future(task)
        assert isinstance(task, asyncio.Task)
        if name:
            task.set_name(name)
        if self.is_quitting:
            log.warning("task %s registered during shutdown: cancelling it", task.get_name())
            task.cancel()
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def add_cleanup(self, callback: Cleanup, *, name: str | None = None, timeout_s: float | None = None) -> None:
        """Run `callback` (sync, or returning an awaitable) at quit; later registrations run first."""
        if self.is_quitting:
            log.warning("cleanup %s registered during shutdown is ignored", name or callback)
            return
        self._cleanups.append(_CleanupEntry(
            name=name or str(getattr(callback, "__qualname__", repr(callback))),
            callback=callback,
            timeout_s=self.cleanup_timeout_s if timeout_s is None else timeout_s,
        ))

    # --- state ---------------------------------------------------------------------------------

    @property
    def is_quitting(self) -> bool:
        return self._shutdown_task is not None

    @property
    def is_finished(self) -> bool:
        return self._is_finished

    def tasks(self) -> set[asyncio.Task[Any]]:
        return set(self._tasks)

    # --- quitting ------------------------------------------------------------------------------

    def request_quit(self) -> "asyncio.Task[None]":
        """Start the shutdown once; later calls return the same task."""
        if self._shutdown_task is None:
            self._shutdown_task = asyncio.ensure_future(self._shutdown())
            self._shutdown_task.set_name("nanobot-desktop shutdown")
            self.quit_requested.emit()
        return self._shutdown_task

    async def wait_finished(self) -> None:
        """Return when the shutdown has completed (run_gui's main coroutine awaits this)."""
        if self._is_finished:
            return
        if self._finished_event is None:
            self._finished_event = asyncio.Event()
        await self._finished_event.wait()

    async def _shutdown(self) -> None:
        await self._cancel_tasks()
        for entry in reversed(self._cleanups):
            await self._run_cleanup(entry)
        self._cleanups.clear()
        self._is_finished = True
        if self._finished_event is not None:
            self._finished_event.set()
        self.finished.emit()

    async def _cancel_tasks(self) -> None:
        pending = {task for task in self._tasks if not task.done()}
        for task in pending:
            task.cancel()
        if not pending:
            return
        _done, still_running = await asyncio.wait(pending, timeout=self.task_timeout_s)
        for task in still_running:
            log.error("task %s ignored cancellation for %.1f s; quitting without it",
                      task.get_name(), self.task_timeout_s)

    async def _run_cleanup(self, entry: _CleanupEntry) -> None:
        try:
            result = entry.callback()
            if inspect.isawaitable(result):
                await asyncio.wait_for(result, entry.timeout_s)
        except TimeoutError:
            log.error("cleanup %s did not finish within %.1f s; skipped", entry.name, entry.timeout_s)
        except asyncio.CancelledError:
            if self._shutdown_task is not None and self._shutdown_task.cancelling():
                raise
            log.error("cleanup %s was cancelled", entry.name)
        except Exception:
            log.exception("cleanup %s failed", entry.name)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task %s failed", task.get_name(), exc_info=task.exception())

    # --- the application's quit paths ----------------------------------------------------------

    def attach_to_app(self, app: DesktopApplication) -> None:
        """Route every Qt quit (the platform's Quit event, aboutToQuit) through `request_quit()`."""
        self._app = app
        app.route_quit(self._on_quit_event)
        app.aboutToQuit.connect(self._on_about_to_quit)

    def detach_from_app(self) -> None:
        if self._app is not None:
            self._app.route_quit(None)
            self._app.aboutToQuit.disconnect(self._on_about_to_quit)
            self._app = None

    def keep_running_without_windows(self) -> None:
        """For the tray: closing the last window must not quit (qasync#39); the tray's Quit does."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.setQuitOnLastWindowClosed(False)

    def _on_quit_event(self) -> bool:
        """The platform asked the application to quit: shut down in order (True keeps the event from Qt)."""
        if self._is_finished:
            return False
        self.request_quit()
        return True

    def _on_about_to_quit(self) -> None:
        # Emitted as a Qt loop's exec() returns — possibly more than once (every exec() that ends
        # emits it), and with asyncio no longer running, so no shutdown can start here. We only
        # note that the loop was ended behind our back; run_gui then spins the loop again and
        # runs the shutdown.
        if self._about_to_quit_seen or self.is_quitting:
            return
        self._about_to_quit_seen = True
        log.warning("the Qt event loop ended without a quit request; shutting down now")

    @property
    def loop_ended_early(self) -> bool:
        """The Qt loop ended (app.exit()) before `request_quit()`; the shutdown still has to run."""
        return self._about_to_quit_seen
