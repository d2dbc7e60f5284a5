"""Dock title bars (issue 26): the app's own title and close button — no float button — and a title bar
that grows with the text size (200 %), its close button closing the panel as a person clicks it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDockWidget

from nanobot_desktop.gui.common.text_size import apply_text_size
from nanobot_desktop.gui.window.dock_title import DockTitleBar
from tests.gui.window_fixtures import open_window

__all__ = ["open_window"]


def test_dock_titles_have_one_close_button_and_grow_with_the_text(qtbot, open_window, qapp):
    window = open_window()
    window.resize(1280, 800)
    docks = window.findChildren(QDockWidget)
    assert docks
    for dock in docks:
        bar = dock.titleBarWidget()
        assert isinstance(bar, DockTitleBar), dock.objectName()
        assert not dock.features() & QDockWidget.DockWidgetFeature.DockWidgetFloatable, dock.objectName()
        assert bar.label.text() == dock.windowTitle()
    sessions = window.docks["sessionsDock"]
    bar = sessions.titleBarWidget()
    qtbot.waitUntil(bar.isVisible)
    height_at_100 = bar.height()
    size = qapp.font().pointSizeF()
    try:
        apply_text_size(qapp, 200)
        qtbot.waitUntil(lambda: bar.height() >= 1.4 * height_at_100, timeout=5000)
        assert bar.height() >= bar.label.fontMetrics().height()  # the title's line fits its bar
        assert bar.close_button.height() >= bar.close_button.fontMetrics().height()
    finally:
        apply_text_size(qapp, 100)
    QApplication.processEvents()
    assert abs(qapp.font().pointSizeF() - size) < 0.01
    qtbot.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
    assert sessions.isHidden()
