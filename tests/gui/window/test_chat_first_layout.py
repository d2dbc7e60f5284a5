"""Issue 26, part A: the conversation owns the centre. The chat's column holds a reading width at every
window size with the drawer closed; the drawer opens from the toolbar and its shortcut; the Agent
area's pages (Heartbeat, Scheduled, Subagents, MCP) fit a 1024×640 window with every button's text
whole; a layout saved by an older version (bottom docks, an open inspector) starts cleanly; at
QT_SCALE_FACTOR 1.5 and 2 the window fits its screen. Measured from the widgets' geometry, offscreen."""

from __future__ import annotations

import json
import textwrap

import pytest
from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QDockWidget, QMainWindow, QScrollArea, QWidget

from nanobot_desktop.gui.common.design import READING_CHARS
from nanobot_desktop.gui.window.layout import GIVEN_WAY_KEY, STATE_KEY
from nanobot_desktop.gui.window.pages import CHAT_PAGE
from nanobot_desktop.gui.window.panels import AGENT_AREA, AGENT_PAGES, DRAWER_PANELS
from tests.gui.window_fixtures import open_window
from tests.gui.window_process import run_window_script

__all__ = ["open_window"]  # the fixture, used by name

SIZES = ((1024, 640), (1280, 800), (1920, 1080))


def resize_and_settle(qtbot, window, width: int, height: int) -> None:
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.width() == width and window.height() == height)
    QApplication.processEvents()


def drawer_docks(window) -> list[QDockWidget]:
    return [window.docks[spec.dock] for spec in DRAWER_PANELS]


def column_margins(window) -> tuple[int, int]:
    """Left and right room beside the chat's column, inside the chat's viewport."""
    viewport = window.chat_view.scroll_area.viewport()
    column = window.chat_view._items_layout.geometry()
    return column.left(), viewport.width() - column.right() - 1


def test_the_chat_column_holds_a_reading_width_at_every_size_with_the_drawer_closed(qtbot, open_window):
    window = open_window()
    char = window.chat_view.fontMetrics().averageCharWidth()
    for width, height in SIZES:
        resize_and_settle(qtbot, window, width, height)
        qtbot.waitUntil(lambda: window.chat_view.column_width() > 0)
        assert all(dock.isHidden() for dock in drawer_docks(window)), (width, "the drawer is closed by default")
        assert window.docks["sessionsDock"].isVisible(), width
        column = window.chat_view.column_width()
        assert 70 * char <= column <= 80 * char, (width, column, column / char)
        assert abs(column - READING_CHARS * char) <= char, (width, column / char)
        left, right = column_margins(window)
        assert abs(left - right) <= 2 * char, (width, left, right)  # centred
        composer = window.composer.mapTo(window, window.composer.rect().topLeft()).x()
        column_x = window.chat_view._container.mapTo(window, window.chat_view._items_layout.geometry().topLeft()).x()
        assert abs(composer - column_x) <= 3 * char, (width, composer, column_x)  # the composer lines up with it


def test_the_drawer_opens_from_the_toolbar_and_its_shortcut_and_the_session_list_collapses(qtbot, open_window):
    window = open_window()
    resize_and_settle(qtbot, window, 1280, 800)
    toolbar = window.toolbar
    drawer_button = toolbar.widgetForAction(window.docking.drawer_action)
    assert drawer_button is not None and drawer_button.isVisible() and drawer_button.toolTip()
    assert not drawer_button.icon().isNull()
    qtbot.mouseClick(drawer_button, Qt.MouseButton.LeftButton)
    inspector = window.docks[DRAWER_PANELS[0].dock]
    qtbot.waitUntil(lambda: inspector.isVisible() and not inspector.visibleRegion().isEmpty())
    assert window.dockWidgetArea(inspector) == Qt.DockWidgetArea.RightDockWidgetArea
    assert window.docking.drawer_action.isChecked()
    qtbot.waitUntil(lambda: window.panel("inspector") is not None and window.panel("inspector").isVisible())
    qtbot.waitUntil(lambda: window.pages.width() >= window.docking.chat_min_width, timeout=3000)

    qtbot.keyClick(window, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: all(dock.isHidden() for dock in drawer_docks(window)))
    assert not window.docking.drawer_action.isChecked()

    window.show_skills()  # opens the drawer on the Workspace panel's Skills tab …
    files = window.docks["workspaceDock"]
    qtbot.waitUntil(lambda: files.isVisible() and not files.visibleRegion().isEmpty())
    qtbot.mouseClick(drawer_button, Qt.MouseButton.LeftButton)  # … closed, and opened again where it was
    qtbot.waitUntil(lambda: all(dock.isHidden() for dock in drawer_docks(window)))
    qtbot.mouseClick(drawer_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: files.isVisible() and not files.visibleRegion().isEmpty())

    sessions_button = toolbar.widgetForAction(window.actions.dock_toggles["sessionsDock"])
    qtbot.mouseClick(sessions_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.docks["sessionsDock"].isVisible())
    qtbot.mouseClick(sessions_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.docks["sessionsDock"].isVisible())


def clipped_buttons(page: QWidget) -> list[str]:
    """The buttons on `page` whose text does not fit (their own width, or the part of them on screen)."""
    clipped = []
    for button in page.findChildren(QAbstractButton):
        if not button.isVisible() or not button.text():
            continue
        text = button.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
        needed = button.fontMetrics().horizontalAdvance(text)
        if not button.icon().isNull():
            needed += button.iconSize().width()
        if button.width() < needed or button.visibleRegion().boundingRect().width() < needed:
            clipped.append(f"{text!r}: {button.width()} px for {needed} px")
    return clipped


def test_every_agent_page_fits_a_1024x640_window_and_no_dock_covers_the_chat(qtbot, open_window):
    window = open_window()
    resize_and_settle(qtbot, window, 1024, 640)
    assert not any(window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea for dock in window.docks.values())
    assert [spec.name for spec in AGENT_PAGES] == ["heartbeat_view", "cron_view", "subagents_view", "mcp_view", "usage_view"]
    area = window.agent_area
    assert area.titles() == ["Heartbeat", "Scheduled", "Subagents", "MCP", "Usage"]
    for spec in AGENT_PAGES:
        window.actions.dock_toggles[spec.dock].trigger()  # Agent → Heartbeat, as from the menu
        qtbot.waitUntil(lambda spec=spec: window.pages.page_name() == AGENT_AREA and area.page_name() == spec.name)
        panel = window.panel(spec.name)
        assert panel is not None and area.page(spec.name) is panel
        qtbot.waitUntil(lambda panel=panel: panel.isVisible())
        QApplication.processEvents()
        scroller = area.stack.currentWidget()
        assert isinstance(scroller, QScrollArea)
        assert not scroller.horizontalScrollBar().isVisible(), (spec.name, panel.minimumSizeHint())
        assert clipped_buttons(panel) == [], spec.name
        assert window.actions.dock_toggles[spec.dock].isChecked()
    window.actions.dock_toggles[AGENT_PAGES[-1].dock].trigger()  # again: back to the chat
    qtbot.waitUntil(lambda: window.pages.page_name() == CHAT_PAGE)

    area_button = window.toolbar.widgetForAction(window.actions.dock_toggles["agentPage"])
    qtbot.mouseClick(area_button, Qt.MouseButton.LeftButton)  # the toolbar's Agent button: the page shown last
    qtbot.waitUntil(lambda: window.pages.page_name() == AGENT_AREA)
    assert area.page_name() == AGENT_PAGES[-1].name
    qtbot.mouseClick(area_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.pages.page_name() == CHAT_PAGE)


def old_layout_state() -> QByteArray:
    """A window state as version 1 saved it: sessions left, inspector and workspace right, the four
    background panels docked below the chat and shown."""
    old = QMainWindow()
    old.setCentralWidget(QWidget())
    docks = {}
    for name, area in (("sessionsDock", Qt.DockWidgetArea.LeftDockWidgetArea),
                       ("inspectorDock", Qt.DockWidgetArea.RightDockWidgetArea),
                       ("workspaceDock", Qt.DockWidgetArea.RightDockWidgetArea),
                       ("heartbeatDock", Qt.DockWidgetArea.BottomDockWidgetArea),
                       ("scheduledDock", Qt.DockWidgetArea.BottomDockWidgetArea),
                       ("subagentsDock", Qt.DockWidgetArea.BottomDockWidgetArea),
                       ("mcpDock", Qt.DockWidgetArea.BottomDockWidgetArea)):
        dock = QDockWidget(name, old)
        dock.setObjectName(name)
        dock.setWidget(QWidget())
        old.addDockWidget(area, dock)
        docks[name] = dock
    old.tabifyDockWidget(docks["inspectorDock"], docks["workspaceDock"])
    for name in ("scheduledDock", "subagentsDock", "mcpDock"):
        old.tabifyDockWidget(docks["heartbeatDock"], docks[name])
    state = old.saveState(1)
    old.deleteLater()
    return state


def test_a_layout_saved_by_an_older_version_starts_cleanly(qtbot, open_window, tmp_path):
    settings_file = tmp_path / "old.ini"
    store = QSettings(str(settings_file), QSettings.Format.IniFormat)
    store.setValue(STATE_KEY, old_layout_state())
    store.setValue(GIVEN_WAY_KEY, ["inspectorDock", "heartbeatDock"])
    store.sync()
    window = open_window(settings_file=settings_file)  # Qt warnings would fail the test
    resize_and_settle(qtbot, window, 1280, 800)
    assert window.docks["sessionsDock"].isVisible()
    assert all(dock.isHidden() for dock in drawer_docks(window))
    assert window.docking._given_way == []
    assert window.pages.page_name() == CHAT_PAGE
    qtbot.waitUntil(lambda: window.chat_view.column_width() >= 70 * window.chat_view.fontMetrics().averageCharWidth())
    window.lifetime.save_window_state()  # saved again, as version 2: the next start restores it
    second = open_window(settings_file=settings_file)
    assert second.restoreState(QSettings(str(settings_file), QSettings.Format.IniFormat).value(STATE_KEY), 2)


FIT_SCRIPT = textwrap.dedent("""
    import json, sys
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication
    from nanobot_desktop.gui.window.main_window import MainWindow

    app = QApplication([])
    window = MainWindow(settings=QSettings(sys.argv[1], QSettings.Format.IniFormat))
    window.show()
    for _ in range(20):
        app.processEvents()
    screen = window.screen()
    available, frame = screen.availableGeometry(), window.frameGeometry()
    print(json.dumps([screen.devicePixelRatio(), available.width(), available.height(), frame.x(), frame.y(),
                      frame.width(), frame.height(), window.minimumSizeHint().width(), window.minimumSizeHint().height()]))
""")


@pytest.mark.slow
@pytest.mark.parametrize("scale", ["1", "1.5", "2"])
def test_the_window_fits_a_1920x1080_screen_at_every_scale(tmp_path, scale):
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "big", "x": 0, "y": 0, "width": 1920, "height": 1080,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    facts = run_window_script(FIT_SCRIPT, tmp_path / "window.ini",
                              {"QT_QPA_PLATFORM": f"offscreen:configfile={config}", "QT_SCALE_FACTOR": scale}, timeout=60)
    ratio, screen_w, screen_h, x, y, width, height, min_w, min_h = facts
    assert ratio == float(scale)
    assert (screen_w, screen_h) == (round(1920 / ratio), round(1080 / ratio))
    assert x >= 0 and y >= 0 and x + width <= screen_w and y + height <= screen_h, facts
    assert min_w <= screen_w and min_h <= screen_h, facts
    assert width >= 0.6 * screen_w and height >= 0.6 * screen_h, "a usable size, not a postage stamp"


def test_the_memory_page_and_the_skills_drawer_fit_a_1024x640_window(qtbot, open_window):
    window = open_window()
    resize_and_settle(qtbot, window, 1024, 640)
    window.docking.show_page("memory_view")
    memory = window.panel("memory_view")
    qtbot.waitUntil(lambda: memory is not None and memory.isVisible())
    QApplication.processEvents()
    assert clipped_buttons(memory) == []

    window.docking.show_page(CHAT_PAGE)
    window.show_skills()  # the drawer opens beside the chat, on Skills
    skills = window.panel("files_view").skills_view
    qtbot.waitUntil(lambda: skills.isVisible() and skills.table.model().rowCount() > 0, timeout=10_000)
    QApplication.processEvents()
    assert skills.splitter.orientation() == Qt.Orientation.Vertical  # narrow: the editor goes below the list
    table, model = skills.table, skills.table.model()
    header = table.horizontalHeader()
    name_column = next(column for column in range(model.columnCount())
                       if model.headerData(column, Qt.Orientation.Horizontal) == "Skill")
    for row in range(model.rowCount()):  # every name whole (side by side they read "weat", "mem")
        name = str(model.index(row, name_column).data())
        assert header.sectionSize(name_column) >= table.fontMetrics().horizontalAdvance(name), name
    assert clipped_buttons(skills) == []
    qtbot.waitUntil(lambda: window.pages.width() >= window.docking.chat_min_width, timeout=3000)


def test_each_drawer_panel_fills_the_drawer_of_a_1024x640_window_without_scrolling(qtbot, open_window):
    """The drawer's panels sit in scroll areas (a wide one scrolls rather than squeezing the chat), but
    one that fits its drawer shows no scroll bar: the inspector used to scroll 70 px at this size."""
    window = open_window()
    resize_and_settle(qtbot, window, 1024, 640)
    for spec in DRAWER_PANELS:
        window.docking.open_drawer(spec.dock)
        holder = window.findChild(QScrollArea, f"{spec.dock}Scroller")
        qtbot.waitUntil(lambda holder=holder: holder.isVisible() and holder.widget().isVisible())
        QApplication.processEvents()
        panel, viewport = holder.widget(), holder.viewport()
        assert panel.minimumSizeHint().height() <= viewport.height(), spec.dock  # it can fit
        assert not holder.verticalScrollBar().isVisible(), spec.dock
        assert not holder.horizontalScrollBar().isVisible(), spec.dock
        assert panel.size() == viewport.size(), spec.dock

