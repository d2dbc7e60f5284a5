"""The window's life: its state saved (the layout's measures are in window/layout.py), panels built
after the first paint, closing to the tray or quitting, the window's tasks and the ordered shutdown
the lifecycle runs.

A part MainWindow owns (window/base.py says what each part is given). Start-up order (SPEC §5,
start to first painted window): the frame paints; the engine arrives (`MainWindow.attach_engine`);
after the next paint the dock panels, hot reload and the tray are built one per event-loop turn; the
engine's services start after them, so the panels see their first events.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.base import ChatParts, Frame
from nanobot_desktop.gui.window.layout import DockLayout
from nanobot_desktop.gui.window.panels import PANELS, LazyPanels, ShutsDown

if TYPE_CHECKING:  # asyncio is imported where it is used: the frame paints before asyncio and qasync load
    import asyncio

    from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher

log = logging.getLogger(__name__)

SESSION_KEY = "mainWindow/currentSession"
BUILD_PANELS_ANYWAY_MS = 1000  # if no paint comes after showing (e.g. minimised), build the panels then


class WindowLifetime:
    """The build after the first paint, close, quit, the window's tasks and shutdown."""

    def __init__(self, frame: Frame, docking: DockLayout, current_key: Callable[[], str], *,
                 start_services: bool) -> None:
        self._frame = frame
        self._window = frame.window
        self._docking = docking
        self._current_key = current_key
        self._parts: ChatParts | None = None
        self.panels: LazyPanels | None = None
        """The panels built after the first paint (None until the engine has arrived)."""
        self._watcher: WorkspaceWatcher | None = None
        self._owns_watcher = False
        self._tasks: set[asyncio.Future[object]] = set()
        self.quitting = False
        self.shown_once = False
        self._build_scheduled = False
        self._services_pending = start_services

    def attach(self, parts: ChatParts, panels: LazyPanels, watcher: WorkspaceWatcher, *, owns_watcher: bool) -> None:
        """The engine has arrived: the panels to build, and what to shut down with it."""
        self._parts = parts
        self.panels = panels
        self._watcher = watcher
        self._owns_watcher = owns_watcher
        parts.lifecycle.add_cleanup(self.shutdown, name="main window", timeout_s=20.0)

    # --- the window's tasks --------------------------------------------------------------------------

    def spawn(self, coroutine: Coroutine[Any, Any, object]) -> asyncio.Future[object]:
        """Run `coroutine` as the window's task; cancelled at shutdown, its failure logged."""
        import asyncio  # not before the first paint (see shell/app.py)

        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Future[object]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work of the main window failed", exc_info=task.exception())

    # --- window state ------------------------------------------------------------------------------

    def save_window_state(self) -> None:
        self._docking.save_layout()
        if self._current_key():
            self._frame.store.setValue(SESSION_KEY, self._current_key())
        self._frame.store.sync()

    # --- after the first paint -----------------------------------------------------------------------

    def resized(self) -> None:
        """After a resize the widths are balanced (the docks gave way before it: window/layout.py)."""
        if self.shown_once:
            QTimer.singleShot(0, self._window, self._docking.balance_docks)

    def shown(self) -> None:
        if not self.shown_once:
            self.shown_once = True
            if self._parts is not None:
                composer = self._parts.composer
                composer.focus_input()
                QTimer.singleShot(0, self._window, composer.focus_input)  # after the docks took their focus
            QTimer.singleShot(BUILD_PANELS_ANYWAY_MS, self._window, self.schedule_panels)
            QTimer.singleShot(0, self._window, self._docking.balance_docks)  # the restored widths, checked

    def painted(self) -> None:
        if not self._build_scheduled:
            self.schedule_panels()  # the window is on screen: now the rest

    def schedule_panels(self) -> None:
        if self._build_scheduled or self.panels is None:
            return  # without an engine there is nothing to build yet (attach_engine schedules it)
        self._build_scheduled = True
        QTimer.singleShot(0, self._window, self._build_next_panel)

    def _build_next_panel(self) -> None:
        """One pending panel per event-loop turn, so the window stays responsive while they arrive."""
        if self.quitting or self._parts is None or self._parts.lifecycle.is_quitting or self.panels is None:
            return
        self.panels.build_next()
        if self.panels.pending:
            QTimer.singleShot(0, self._window, self._build_next_panel)

    def all_panels_built(self) -> None:
        errors = self.panels.errors if self.panels is not None else []
        if self._parts is None:
            return
        if errors:
            text = translate("Window", "Some panels could not be loaded ({errors}). The chat works without them; "
                                       "the log (Help → Open log folder) has the details.")
            self._parts.notice_bar.show_notice(text.format(errors="; ".join(errors)), "error")
        if self._services_pending:  # after the panels, so they see the services' first events
            self._services_pending = False
            self.spawn(self._start_services(self._parts))

    # --- closing -------------------------------------------------------------------------------------

    def may_close(self) -> bool:
        """Whether a close event closes the window (else it went to the tray, the background, or asks)."""
        if self.quitting or self._parts is None or self._parts.lifecycle.is_quitting:
            return True
        self.save_window_state()
        tray = self.panels.get_tray() if self.panels is not None else None
        if tray is not None and tray.handle_close(self.quit):
            return False
        self.quit()
        return True

    def quit(self) -> None:
        self.quitting = True
        if self._parts is not None:
            self._parts.lifecycle.request_quit()

    # --- background work and shutdown ----------------------------------------------------------------

    async def _start_services(self, parts: ChatParts) -> None:
        from nanobot_desktop.engine import ConfigError

        try:
            await parts.engine.start_services()
        except (ConfigError, OSError, ValueError) as error:
            text = translate("Window", "The heartbeat and scheduled jobs did not start ({error}). Fix the problem named "
                                       "there, then restart the app.")
            parts.notice_bar.show_notice(text.format(error=error), "error")

    async def shutdown(self) -> None:
        """Save the layout, stop the engine, then the panels and the watcher (the lifecycle calls this)."""
        self.quitting = True
        try:
            self.save_window_state()
        except RuntimeError:  # the window is already gone (interpreter teardown)
            pass
        panels = self.panels
        if panels is not None:
            panels.cancel()  # nothing more is built once shutting down
        for task in [t for t in self._tasks if not t.done()]:
            task.cancel()
        parts = self._parts
        if parts is None:
            return
        await _step("engine", parts.engine.shutdown())
        await _step("chat", parts.chat.shutdown())
        parts.bridge.detach()
        await _step("sessions panel", parts.sessions_panel.shutdown())
        await _step("composer", parts.composer.shutdown())
        built: dict[str, QObject | None] = {"tray": panels.tray, **panels.built} if panels is not None else {}
        for name in ("tray", *(spec.name for spec in PANELS)):
            panel = built.get(name)
            if isinstance(panel, ShutsDown):
                try:
                    result = panel.shutdown()
                    if result is not None:
                        await result
                except Exception:
                    log.exception("shutting down %s failed", name)
        if panels is not None and panels.sync is not None:
            panels.sync.close()
        if self._owns_watcher and self._watcher is not None:
            self._watcher.stop()


async def _step(name: str, awaitable: Awaitable[None]) -> None:
    """One shutdown step: its failure is logged and the next step still runs."""
    import asyncio

    try:
        await awaitable
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("shutdown step %s failed", name)
