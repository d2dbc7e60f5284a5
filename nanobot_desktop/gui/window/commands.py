"""What the window's menu commands do that is not chatting: Settings, the heartbeat, the log folder,
About, and the status bar that shows the model and the workspace.

A part MainWindow owns (window/base.py says what each part is given), kept apart so the window's
class reads as its structure: the frame, the engine's arrival, sessions and chat.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QProgressBar

from nanobot_desktop.gui.common.engine_words import layout_label, layout_reason
from nanobot_desktop.gui.common.i18n import format_number, translate
from nanobot_desktop.gui.window.base import ChatParts, Frame

if TYPE_CHECKING:  # the engine's and the settings' modules load after the first paint
    from collections.abc import Callable, Coroutine
    from pathlib import Path
    from typing import Any

    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QMessageBox  # created by About, after the frame has painted

    from nanobot_desktop.engine import Config, SyncStatus
    from nanobot_desktop.gui.window.tray import TrayController
    from nanobot_desktop.gui.common.owned import OwnedWork
    from nanobot_desktop.gui.settings.dialog import SettingsDialog


log = logging.getLogger(__name__)
SYNC_STATUS_INTERVAL_MS = 30_000


class WindowCommands:
    """Settings, heartbeat, log folder, About, the status bar and the chat's notices, for one window."""

    def __init__(self, frame: Frame, current_key: Callable[[], str], tray: Callable[[], TrayController | None],
                 spawn: Callable[[Coroutine[Any, Any, object]], object], settings_applied: SignalInstance) -> None:
        """`settings_applied` is the window's signal, emitted with the new config when Settings saves."""
        self._window = frame.window
        self._actions = frame.actions
        self._current_key = current_key
        self._tray = tray
        self._spawn = spawn
        self._settings_applied = settings_applied
        self._parts: ChatParts | None = None
        self.log_folder: Path | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.about_box: QMessageBox | None = None
        self._retry_state: tuple[str, int, int, int] = ("", 0, 0, 0)
        self._retry_countdown: QTimer | None = None
        self._build_status_bar()

    def attach(self, parts: ChatParts, log_folder: Path | None) -> None:
        self._parts = parts
        self.log_folder = log_folder

    @property
    def _p(self) -> ChatParts:
        """The chat's parts: every command but the status bar's is reachable only once they exist."""
        assert self._parts is not None, "the engine has not arrived yet"
        return self._parts

    def _build_status_bar(self) -> None:
        bar = self._window.statusBar()
        self.busy_label = QLabel()
        self.busy_label.setObjectName("busyIndicator")
        self.model_label = QLabel()
        self.model_label.setObjectName("modelLabel")
        self.workspace_label = QLabel()
        self.workspace_label.setObjectName("workspaceLabel")
        self.workspace_label.setTextFormat(Qt.TextFormat.PlainText)
        bar.addWidget(self.busy_label)
        self.layout_label = QLabel()
        self.layout_label.setObjectName("layoutLabel")
        self.context_gauge = QProgressBar()  # how full the model's window was at this chat's last call
        self.context_gauge.setObjectName("contextGauge")
        self.context_gauge.setMaximumWidth(220)
        self.context_gauge.setTextVisible(True)
        self.context_gauge.hide()
        bar.addPermanentWidget(self.context_gauge)
        bar.addPermanentWidget(self.model_label)
        bar.addPermanentWidget(self.workspace_label)
        bar.addPermanentWidget(self.layout_label)
        self.sync_label = QLabel()  # "In sync with laptop · 2 min ago" when Syncthing syncs the workspace
        self.sync_label.setObjectName("syncLabel")
        self.sync_label.hide()
        bar.addPermanentWidget(self.sync_label)
        self._sync_work: OwnedWork | None = None  # OwnedWork, made with the engine (it imports asyncio: not before the first paint)
        self._sync_asking = False

    def refresh_sync_status(self) -> None:
        """Ask the engine what Syncthing says (in a thread: a few loopback requests), then show it."""
        if self._parts is None or self._sync_asking:
            return
        engine = self._parts.engine
        work = self._sync_work
        if work is None:
            from nanobot_desktop.gui.common.owned import OwnedWork

            work = self._sync_work = OwnedWork(self.sync_label)
            timer = QTimer(self.sync_label)
            timer.setInterval(SYNC_STATUS_INTERVAL_MS)
            timer.timeout.connect(self.refresh_sync_status)
            timer.start()
        self._sync_asking = True

        def ask() -> None:
            try:
                status = engine.sync_status()
            except Exception:
                log.exception("reading Syncthing's status failed")
                status = None
            work.post(lambda: self._show_sync_status(status))

        threading.Thread(target=ask, name="syncthing-status", daemon=True).start()

    def _show_sync_status(self, status: SyncStatus | None) -> None:
        self._sync_asking = False
        if status is None:
            self.sync_label.hide()
            return
        self.sync_label.setText(status.text)
        self.sync_label.setToolTip(translate("Window", "Syncthing syncs this workspace with: {devices}").format(
            devices=", ".join(status.devices) or translate("Window", "no other device")))
        self.sync_label.show()

    def update_status(self) -> None:
        from nanobot_desktop.gui.common.formatting import home_relative

        if self._parts is None:
            return
        busy = self._p.chat.is_busy(self._current_key()) if self._current_key() else False
        self.busy_label.setText(translate("Window", "● Working…  (Esc to stop)") if busy else "")
        switcher = self._p.composer.model_switcher
        shown = switcher.current_option().label if switcher is not None else self._p.engine.settings().model
        model = shown or translate("Window", "no model configured")  # the chat's own model, or the config's
        self.model_label.setText(translate("Window", "Model: {model}").format(model=model))
        root = str(self._p.engine.workspace.root)
        self.workspace_label.setText(translate("Window", "Workspace: {path}").format(path=home_relative(root)))
        self.workspace_label.setToolTip(root)
        layout = self._p.engine.layout  # which nanobot's files these are (engine/layout.py)
        self.layout_label.setText(layout_label(layout) if layout is not None else "")
        fill = self._p.chat.context_fill(self._current_key()) if self._current_key() else None
        self._show_context_fill(*(fill or (0, 0)))
        self.layout_label.setToolTip(translate("Window", "Read and written in this layout because {reason}").format(
            reason=layout_reason(layout.reason))
                                     if layout else "")

    def on_context_fill_changed(self, key: str, used: int, window: int) -> None:
        if key == self._current_key():
            self._show_context_fill(used, window)

    def _show_context_fill(self, used: int, window: int) -> None:
        """The gauge of the shown chat's context window: tokens used / window ("" when not known)."""
        self.context_gauge.setVisible(window > 0)
        if window <= 0:
            return
        self.context_gauge.setRange(0, window)
        self.context_gauge.setValue(min(used, window))
        self.context_gauge.setFormat(translate("Window", "Context {used} / {window}").format(
            used=format_number(used), window=format_number(window)))
        self.context_gauge.setToolTip(translate(
            "Window", "The last prompt of this chat used {used} of the model's {window}-token context window; "
                      "older messages are left out when it would not fit").format(
            used=format_number(used), window=format_number(window)))

    def on_waiting_changed(self, key: str, text: str) -> None:
        """The chat's "waiting for the model…" line for the session shown; "" when the wait is over."""
        if key == self._current_key():
            self.busy_label.setText(translate("Window", "● {status}  (Esc to stop)").format(status=text) if text else "")
            if not text:
                self.update_status()

    # --- notices about the chat shown: each one's lifetime ------------------------------------------
    #   turn-failed:<key>  until a new turn starts in that session, or another session is shown
    #   retry:<key>        while the engine waits to retry a model call; ends with an answer or the turn
    #   attachment         10 s, or until the next send
    #   save:<key>         "Saved" for 6 s; a failed retry until the next try
    #   no-model           until the config names a usable provider (checked after Settings)

    def on_retry_changed(self, key: str, attempt: int, attempts: int, delay_s: float) -> None:
        """ "Retrying (2/4) in 3 s…" with Stop while a model call waits to be retried; gone when it is over."""
        if key != self._current_key():
            return
        topic = f"retry:{key}"
        timer = self._retry_timer()
        if attempt <= 0:
            timer.stop()
            self._p.notice_bar.clear(topic)
            self.update_status()
            return
        self._retry_state = (key, attempt, attempts, max(0, round(delay_s)))
        stop = (translate("Window", "Stop"), self._actions.stop.trigger)
        self._p.notice_bar.show_notice(self._retry_text(), "warning", [stop], topic=topic)
        self.busy_label.setText(translate("Window", "● {status}  (Esc to stop)").format(status=self._retry_text()))
        timer.start()

    def _retry_timer(self) -> QTimer:
        timer = self._retry_countdown
        if timer is None:
            timer = QTimer(self._window)
            timer.setInterval(1000)
            timer.timeout.connect(self._retry_tick)
            self._retry_countdown = timer
        return timer

    def _retry_text(self) -> str:
        _key, attempt, attempts, seconds = self._retry_state
        if seconds > 0:
            return translate("Window", "Retrying ({attempt}/{attempts}) in {seconds} s…").format(
                attempt=attempt, attempts=attempts, seconds=seconds)
        return translate("Window", "Retrying ({attempt}/{attempts})…").format(attempt=attempt, attempts=attempts)

    def _retry_tick(self) -> None:
        key, attempt, attempts, seconds = self._retry_state
        self._retry_state = (key, attempt, attempts, max(0, seconds - 1))
        if not self._p.notice_bar.update_text(self._retry_text(), f"retry:{key}"):
            self._retry_timer().stop()
            return
        self.busy_label.setText(translate("Window", "● {status}  (Esc to stop)").format(status=self._retry_text()))
        if seconds <= 1:
            self._retry_timer().stop()

    def clear_chat_notices(self, keep_key: str = "") -> None:
        """Notices about another session's turn do not belong over the chat shown now."""
        for prefix in ("turn-failed:", "retry:", "save:"):
            topic = self._p.notice_bar.topic
            if topic.startswith(prefix) and topic != f"{prefix}{keep_key}":
                self._p.notice_bar.clear(topic)

    def check_config(self) -> bool:
        """A missing provider is the first thing a new user meets: say so, with the way out."""
        from nanobot_desktop.engine import ConfigError, resolve_provider

        try:
            resolve_provider(self._p.engine.config)
        except ConfigError as error:
            detail = str(error).rstrip(".")
            text = translate("Window", "No model can be used yet ({detail}). Open Settings to choose a provider and a model.")
            self._p.notice_bar.show_notice(text.format(detail=detail), "warning",
                                        [(translate("Window", "Open Settings"), self.open_settings)],
                                        topic="no-model")
            return False
        self._p.notice_bar.clear("no-model")  # lifetime: until the config names a usable provider
        return True

    def open_settings(self) -> SettingsDialog | None:
        """The non-modal Settings dialog (one at a time)."""
        if self.settings_dialog is not None and self.settings_dialog.isVisible():
            self.settings_dialog.raise_()
            self.settings_dialog.activateWindow()
            return self.settings_dialog
        try:
            from nanobot_desktop.gui.settings.dialog import SettingsDialog
        except ImportError as error:
            text = translate("Window", "Settings could not be opened ({error}). Reinstall the app with python3 dev.py, then try again.")
            self._p.notice_bar.show_notice(text.format(error=error), "error")
            return None
        dialog = SettingsDialog(self._p.engine, self._window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.applied.connect(self.on_settings_applied)
        dialog.destroyed.connect(self._forget_settings_dialog)
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _forget_settings_dialog(self) -> None:
        self.settings_dialog = None

    def on_settings_applied(self, config: Config) -> None:
        self._settings_applied.emit(config)
        if self._p.composer.model_switcher is not None:  # the default model or its provider may have changed
            self._p.composer.model_switcher.show_current()
        self.update_status()
        self.check_config()  # shows or clears the "no model" notice

    def run_heartbeat_now(self) -> None:
        tray = self._tray()
        if tray is not None:
            tray.run_heartbeat_now()
            return
        self._spawn(self._p.engine.heartbeat.trigger_now())

    def toggle_heartbeat_pause(self) -> None:
        tray = self._tray()
        if tray is not None:
            tray.toggle_heartbeat_pause()
        elif self._p.engine.heartbeat.paused:
            self._p.engine.heartbeat.resume()
        else:
            self._p.engine.heartbeat.pause()
        self.update_heartbeat_actions()

    def update_heartbeat_actions(self) -> None:
        if self._parts is None:
            return
        heartbeat = self._p.engine.heartbeat
        self._actions.pause_heartbeat.setText(translate("Actions", "&Resume heartbeat") if heartbeat.paused
                                             else translate("Actions", "&Pause heartbeat"))
        self._actions.run_heartbeat.setEnabled(not heartbeat.ticking)

    def open_log_folder(self) -> None:
        if self.log_folder is None:
            return
        from PySide6.QtCore import QUrl  # here, not at import: the frame paints without them (and their enums)
        from PySide6.QtGui import QDesktopServices

        self.log_folder.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_folder)))

    def show_about(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        from nanobot_desktop import __version__ as version

        box = QMessageBox(self._window)
        box.setWindowTitle(translate("Window", "About nanobot Desktop"))
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(translate("Window", "nanobot Desktop {version}\n\nA desktop app for the nanobot personal AI agent.\n"
                              "Workspace: {workspace}\nConfig: {config}").format(
            version=version, workspace=self._p.engine.workspace.root, config=self._p.engine.config_path))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.about_box = box
        box.open()
