"""What the window's menu commands do that is not chatting: Settings, the heartbeat, the log folder,
About, and the status bar that shows the model and the workspace.

A mixin of MainWindow (window/main_window.py), kept apart so the window's class reads as its
structure: the frame, the engine's arrival, sessions and chat.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel, QMessageBox

from nanobot_desktop.gui.window.base import WindowBase


class WindowCommands(WindowBase):
    """Settings, heartbeat, log folder, About and the status bar (mixed into MainWindow)."""

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
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
        bar.addPermanentWidget(self.model_label)
        bar.addPermanentWidget(self.workspace_label)
        bar.addPermanentWidget(self.layout_label)

    def _update_status(self) -> None:
        if self.engine is None:
            return
        busy = self.chat.is_busy(self.current_key) if self.current_key else False
        self.busy_label.setText("● Working…  (Esc to stop)" if busy else "")
        switcher = self.composer.model_switcher if getattr(self, "composer", None) is not None else None
        shown = switcher.current_option().label if switcher is not None else self.engine.settings().model
        model = shown or "no model configured"  # the chat's own model, or the config's
        self.model_label.setText(f"Model: {model}")
        root = str(self.engine.workspace.root)
        self.workspace_label.setText(f"Workspace: {root}")
        self.workspace_label.setToolTip(root)
        layout = getattr(self.engine, "layout", None)  # which nanobot's files these are (engine/layout.py)
        self.layout_label.setText(layout.label if layout is not None else "")
        self.layout_label.setToolTip(f"Read and written in this layout because {layout.reason}" if layout else "")

    def _on_waiting_changed(self, key: str, text: str) -> None:
        """The chat's "waiting for the model…" line for the session shown; "" when the wait is over."""
        if key == self.current_key:
            self.busy_label.setText(f"● {text}  (Esc to stop)" if text else "")
            if not text:
                self._update_status()

    def _check_config(self) -> bool:
        """A missing provider is the first thing a new user meets: say so, with the way out."""
        from nanobot_desktop.engine import ConfigError, resolve_provider

        try:
            resolve_provider(self.engine.config)
        except ConfigError as error:
            self.notice_bar.show_notice(f"No model is configured yet — open Settings. ({error})", "warning",
                                        [("Open Settings", self.open_settings)])
            return False
        return True

    def open_settings(self) -> Any:
        """The non-modal Settings dialog (one at a time)."""
        if self.settings_dialog is not None and self.settings_dialog.isVisible():
            self.settings_dialog.raise_()
            self.settings_dialog.activateWindow()
            return self.settings_dialog
        try:
            from nanobot_desktop.gui.settings.dialog import SettingsDialog
        except ImportError as error:
            self.notice_bar.show_notice(f"Settings are not available: {error}", "error")
            return None
        dialog = SettingsDialog(self.engine, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.applied.connect(self._on_settings_applied)
        dialog.destroyed.connect(lambda *_: setattr(self, "settings_dialog", None))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _on_settings_applied(self, config: Any) -> None:
        try:
            from nanobot_desktop.gui.shell.logging_setup import update_secrets

            update_secrets(config)
        except ImportError:
            pass
        if self.composer.model_switcher is not None:  # the default model or its provider may have changed
            self.composer.model_switcher.show_current()
        self._update_status()
        if self._check_config() and self.notice_bar.level == "warning":
            self.notice_bar.dismiss()

    def run_heartbeat_now(self) -> None:
        if self.tray is not None:
            self.tray.run_heartbeat_now()
            return
        self._spawn(self.engine.heartbeat.trigger_now())

    def toggle_heartbeat_pause(self) -> None:
        if self.tray is not None:
            self.tray.toggle_heartbeat_pause()
        elif self.engine.heartbeat.paused:
            self.engine.heartbeat.resume()
        else:
            self.engine.heartbeat.pause()
        self._update_heartbeat_actions()

    def _update_heartbeat_actions(self) -> None:
        if self.engine is None:
            return
        heartbeat = self.engine.heartbeat
        self.actions.pause_heartbeat.setText("&Resume heartbeat" if heartbeat.paused else "&Pause heartbeat")
        self.actions.run_heartbeat.setEnabled(not heartbeat.ticking)

    def open_log_folder(self) -> None:
        if self.log_folder is None:
            return
        self.log_folder.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_folder)))

    def show_about(self) -> None:
        from nanobot_desktop import __version__ as version

        box = QMessageBox(self)
        box.setWindowTitle("About nanobot Desktop")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(f"nanobot Desktop {version}\n\nA desktop app for the nanobot personal AI agent.\n"
                    f"Workspace: {self.engine.workspace.root}\nConfig: {self.engine.config_path}")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.about_box = box
        box.open()
