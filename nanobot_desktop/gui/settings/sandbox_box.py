"""Settings → Tools: whether shell commands run in the OS sandbox, and how.

A box of its own so the settings dialog only places it; it says plainly when this system has no
sandbox ("not sandboxed"), because then exec always asks first.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from typing import Any

from nanobot_desktop.engine import AppSettings, sandbox_support
from nanobot_desktop.gui.common.engine_words import sandbox_line
from nanobot_desktop.gui.common.i18n import translate


class SandboxBox(QGroupBox):
    """Status line plus the two exec sandbox settings (desktop.json: `execSandboxAlways`, `execNetwork`)."""

    def __init__(self, app: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(translate("Settings", "Shell command sandbox"), parent)
        support = sandbox_support()
        if support.available:
            status = translate("Settings", "{sandbox}. With the workspace restriction on, commands can write only inside "
                                           "the workspace.").format(sandbox=sandbox_line(support.summary))
        else:
            status = translate("Settings", "{sandbox}. Shell commands always ask first.").format(
                sandbox=sandbox_line(support.summary))
        self.status_label = QLabel(status, self)
        self.status_label.setWordWrap(True)
        self.reach_label = QLabel(translate(
            "Settings", "In the sandbox a command can read the system's programs and libraries, write only the "
                        "workspace and its own empty /tmp, and use the network if allowed below. It cannot read "
                        "your home, the config folder (API keys) or the app's files, cannot change the app's "
                        "state (.nanobot), cannot use files with other hard links, and cannot reach any local "
                        "service's socket: D-Bus, X11/Wayland, audio, ssh-agent, gpg-agent, this app."), self)
        self.reach_label.setObjectName("sandboxReach")
        self.reach_label.setWordWrap(True)
        self.reach_label.setVisible(support.available)
        self.always_check = QCheckBox(translate("Settings", "Sandbox shell commands even when the workspace restriction is off"), self)
        self.always_check.setChecked(app.exec_sandbox_always)
        self.network_check = QCheckBox(translate("Settings", "Sandboxed commands may use the network"), self)
        self.network_check.setChecked(app.exec_network)
        for check in (self.always_check, self.network_check):
            check.setEnabled(support.available)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status_label)
        layout.addWidget(self.reach_label)
        layout.addWidget(self.always_check)
        layout.addWidget(self.network_check)

    def values(self) -> tuple[bool, bool]:
        return self.always_check.isChecked(), self.network_check.isChecked()

    @staticmethod
    def patch(values: tuple[bool, bool]) -> dict[str, Any]:
        """The app settings to change for these values (they are the app's own: the CLI has no sandbox)."""
        return {"app.execSandboxAlways": values[0], "app.execNetwork": values[1]}
