"""The window's life: layout saved and restored (the measures are in window/layout.py), panels built after the first paint, closing to the
tray or quitting, and the ordered shutdown the lifecycle runs.

A mixin of MainWindow (window/main_window.py). Start-up order (SPEC §5, start to first painted
window): the frame paints; the engine arrives (`MainWindow.attach_engine`); after the next paint the
dock panels, hot reload and the tray are built one per event-loop turn; the engine's services start
after them, so the panels see their first events.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QCloseEvent, QPaintEvent, QResizeEvent, QShowEvent

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.layout import WindowLayout
from nanobot_desktop.gui.window.panels import PANELS, ShutsDown

# asyncio is imported where it is used: the window's frame paints before asyncio and qasync load.

log = logging.getLogger(__name__)

SESSION_KEY = "mainWindow/currentSession"
BUILD_PANELS_ANYWAY_MS = 1000  # if no paint comes after showing (e.g. minimised), build the panels then


class WindowLifetime(WindowLayout):
    """Layout, the build after the first paint, close and shutdown (mixed into MainWindow)."""

    # --- window state ------------------------------------------------------------------------------

    def save_window_state(self) -> None:
        self.save_layout()
        if self.current_key:
            self.settings_store.setValue(SESSION_KEY, self.current_key)
        self.settings_store.sync()

    def _restore_window_state(self) -> None:
        self.restore_layout()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """Docks give way before the chat is squeezed (window/layout.py); then the widths are balanced."""
        self.fit_docks_to_width(event.size().width())
        super().resizeEvent(event)
        if self._shown_once:
            QTimer.singleShot(0, self, self.balance_docks)

    # --- after the first paint -----------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            if self.engine is not None:
                self.composer.focus_input()
                QTimer.singleShot(0, self, self.composer.focus_input)  # after the docks took their focus
            QTimer.singleShot(BUILD_PANELS_ANYWAY_MS, self, self._schedule_panels)
            QTimer.singleShot(0, self, self.balance_docks)  # the restored widths, checked

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        super().paintEvent(event)
        if not self._build_scheduled:
            self._schedule_panels()  # the window is on screen: now the rest

    def _schedule_panels(self) -> None:
        if self._build_scheduled or self._panels is None:
            return  # without an engine there is nothing to build yet (attach_engine schedules it)
        self._build_scheduled = True
        QTimer.singleShot(0, self, self._build_next_panel)

    def _build_next_panel(self) -> None:
        """One pending panel per event-loop turn, so the window stays responsive while they arrive."""
        if self._quitting or self.lifecycle is None or self.lifecycle.is_quitting or self._panels is None:
            return
        self._panels.build_next()
        if self._panels.pending:
            QTimer.singleShot(0, self, self._build_next_panel)

    def _all_panels_built(self) -> None:
        errors = self._panels.errors if self._panels is not None else []
        if errors:
            text = translate("Window", "Some panels could not be loaded ({errors}). The chat works without them; "
                                       "the log (Help → Open log folder) has the details.")
            self.notice_bar.show_notice(text.format(errors="; ".join(errors)), "error")
        if self._services_pending:  # after the panels, so they see the services' first events
            self._services_pending = False
            self._spawn(self._start_services())

    # --- closing -------------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self._quitting or self.lifecycle is None or self.lifecycle.is_quitting:
            event.accept()
            return
        self.save_window_state()
        if self.tray is not None and self.tray.handle_close(self.quit):  # to the tray, the background, or asking
            event.ignore()
            return
        event.accept()
        self.quit()

    def quit(self) -> None:
        self._quitting = True
        if self.lifecycle is not None:
            self.lifecycle.request_quit()

    # --- background work and shutdown ----------------------------------------------------------------

    async def _start_services(self) -> None:
        from nanobot_desktop.engine import ConfigError

        try:
            await self.engine.start_services()
        except (ConfigError, OSError, ValueError) as error:
            text = translate("Window", "The heartbeat and scheduled jobs did not start ({error}). Fix the problem named "
                                       "there, then restart the app.")
            self.notice_bar.show_notice(text.format(error=error), "error")

    async def shutdown(self) -> None:
        """Save the layout, stop the engine, then the panels and the watcher (the lifecycle calls this)."""
        self._quitting = True
        try:
            self.save_window_state()
        except RuntimeError:  # the window is already gone (interpreter teardown)
            pass
        if self._panels is not None:
            self._panels.cancel()  # nothing more is built once shutting down
        for task in [t for t in self._tasks if not t.done()]:
            task.cancel()
        await _step("engine", self.engine.shutdown())
        await _step("chat", self.chat.shutdown())
        self.bridge.detach()
        await _step("sessions panel", self.sessions_panel.shutdown())
        await _step("composer", self.composer.shutdown())
        panels = self._panels
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
        if self._owns_watcher:
            self.watcher.stop()


async def _step(name: str, awaitable: Awaitable[None]) -> None:
    """One shutdown step: its failure is logged and the next step still runs."""
    import asyncio

    try:
        await awaitable
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("shutdown step %s failed", name)
