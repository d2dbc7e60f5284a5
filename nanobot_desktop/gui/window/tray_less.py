"""Closing the window on a desktop with no tray (GNOME without the AppIndicator extension, many
Wayland sessions): ask once whether to keep running in the background.

Why ask: with no tray icon, "close to tray" would hide the window with no visible way back, and
quitting would stop the heartbeat and scheduled jobs the person may rely on. So the first close asks.
Either answer is saved as `keepRunningWithoutTray` in desktop.json, which applies to desktops without
a tray only (the same config on a desktop with a tray still closes to the tray): *Keep running* hides
the window (the menu entry's *Show or Hide the Window* action, `nanobot-desktop --toggle`, a second
launch or a notification's *Open* bring it back); *Quit* quits at every later close. Settings →
Appearance shows the answer and can change it.

Qt's `QSystemTrayIcon.isSystemTrayAvailable()` is the test for a tray: on Linux it asks the session
bus whether a StatusNotifierWatcher has a host registered, then looks for an XEmbed tray manager.
The question is a window-modal box opened with `open()`, never `exec()`: the event loop keeps running.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox, QWidget

from nanobot_desktop.gui.common.i18n import translate

__all__ = ["ASKED_KEY", "ask_keep_running", "was_asked"]

ASKED_KEY = "tray/askedWithoutTray"


def was_asked(settings: QSettings) -> bool:
    return bool(settings.value(ASKED_KEY, False, type=bool))


def ask_keep_running(window: QWidget, settings: QSettings, answered: Callable[[bool], None]) -> QMessageBox:
    """Show the question (once per settings store); `answered(True)` for *Keep running*."""
    box = QMessageBox(QMessageBox.Icon.Question, translate("Tray", "Keep nanobot running?"),
                      translate("Tray", "This desktop has no tray, so nanobot cannot wait there. Keep it running in "
                                        "the background (the heartbeat and scheduled tasks go on), or quit?"),
                      QMessageBox.StandardButton.NoButton, window)
    box.setObjectName("keepRunningQuestion")
    box.setInformativeText(translate("Tray", "Bring the window back with “Show or Hide the Window” in the app "
                                             "menu entry, or by running nanobot-desktop --toggle. "
                                             "Settings → Appearance changes this later."))
    keep = box.addButton(translate("Tray", "Keep running"), QMessageBox.ButtonRole.AcceptRole)
    keep.setObjectName("keepRunningButton")
    quit_button = box.addButton(translate("Tray", "Quit"), QMessageBox.ButtonRole.DestructiveRole)
    quit_button.setObjectName("quitButton")
    box.setDefaultButton(keep)
    box.setEscapeButton(keep)  # Escape is no decision to quit

    def finished() -> None:
        settings.setValue(ASKED_KEY, True)
        settings.sync()
        answered(box.clickedButton() is not quit_button)
        box.deleteLater()

    box.finished.connect(finished)
    box.open()
    return box
