"""Showing and hiding the main window the way the tray, the menus and a second launch ask for it.

Here, in window/, so the window and the tray need nothing from shell/ (the composition root, which
nothing imports); shell/single_instance.py maps a second launch's commands onto these.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


def bring_forward(window: QWidget) -> None:
    """Show the window (restored if minimised), raise it and give it the focus."""
    if window.isMinimized():
        window.showNormal()
    else:
        window.show()
    window.raise_()
    window.activateWindow()


def toggle_shown(window: QWidget) -> None:
    """Hide a window that is on screen; bring forward one that is hidden or minimised."""
    if window.isVisible() and not window.isMinimized():
        window.hide()
    else:
        bring_forward(window)
