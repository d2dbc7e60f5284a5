"""The window's layout (issue 15): the chat keeps a usable width and the docks give way; Reset layout;
a layout saved at another scale comes back usable; Memory as a page of its own with 80 columns for
each file; the skill name field's width. Widths are read from the widgets' geometry, offscreen."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from nanobot_desktop.gui.window.layout import SCALE_KEY
from nanobot_desktop.gui.window.pages import CHAT_PAGE
from tests.gui.window_fixtures import open_window

__all__ = ["open_window"]  # the fixture, used by name

ROOT = Path(__file__).resolve().parents[3]
RIGHT_DOCKS = ("inspectorDock", "workspaceDock")


def resize_and_settle(qtbot, window, width: int, height: int) -> None:
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.width() == width and window.height() == height)
    QApplication.processEvents()
    qtbot.waitUntil(lambda: window.pages.width() >= window.docking.chat_min_width, timeout=3000)


def shown_right_docks(window) -> list[str]:
    """The right-hand docks a person sees (a tab behind another reports visible, with nothing on screen)."""
    return [name for name in RIGHT_DOCKS
            if window.docks[name].isVisible() and not window.docks[name].visibleRegion().isEmpty()]


def test_the_chat_keeps_a_usable_width_and_the_docks_give_way(qtbot, open_window):
    window = open_window()
    assert window.panel_errors == []
    window.docking.toggle_drawer()  # the drawer opened: it gives way like any dock
    chat_min = window.docking.chat_min_width
    assert chat_min >= 60 * window.fontMetrics().averageCharWidth()

    resize_and_settle(qtbot, window, 1400, 900)
    assert window.pages.width() >= chat_min
    assert window.docks["sessionsDock"].isVisible() and window.docks["inspectorDock"].isVisible()
    assert window.docks["sessionsDock"].width() >= window.docking.usable_width(window.docks["sessionsDock"])
    inspector = window.docks["inspectorDock"]
    assert inspector.width() >= window.docking.usable_width(inspector)

    resize_and_settle(qtbot, window, 900, 600)  # the right-hand panels give way; the chat keeps its room
    assert window.pages.width() >= chat_min, "the chat is squeezed at 900×600"
    assert shown_right_docks(window) == []
    assert window.docks["sessionsDock"].isVisible()
    assert window.docks["sessionsDock"].width() >= window.docking.usable_width(window.docks["sessionsDock"])

    resize_and_settle(qtbot, window, 1024, 700)  # wide enough again: they come back, at usable widths
    assert window.docks["inspectorDock"].isVisible()
    assert window.pages.width() >= chat_min
    assert window.docks["inspectorDock"].width() >= window.docking.usable_width(inspector)
    bar = window.panel("inspector").timeline.header()  # the inspector's column labels are whole, not split mid-word
    model = bar.model()
    for column in range(model.columnCount()):
        label = str(model.headerData(column, Qt.Orientation.Horizontal) or "")
        if label and not bar.isSectionHidden(column):
            assert bar.sectionSize(column) >= bar.fontMetrics().horizontalAdvance(label), label

    resize_and_settle(qtbot, window, 560, 500)  # narrower still: the session list goes too
    assert not window.docks["sessionsDock"].isVisible()
    resize_and_settle(qtbot, window, 1400, 900)
    assert window.docks["sessionsDock"].isVisible() and window.docks["inspectorDock"].isVisible()


def test_reset_layout_puts_the_default_docks_back(qtbot, open_window):
    window = open_window()
    resize_and_settle(qtbot, window, 1400, 900)
    window.actions.dock_toggles["workspaceDock"].trigger()
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, window.docks["workspaceDock"])  # moved
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.docks["sessionsDock"])  # moved
    window.actions.dock_toggles["heartbeatPage"].trigger()
    qtbot.waitUntil(lambda: window.pages.page_name() == "agent")

    view_menu = window.menus["view"]
    assert window.actions.reset_layout in view_menu.actions()
    window.actions.reset_layout.trigger()
    qtbot.waitUntil(lambda: window.docks["sessionsDock"].isVisible())
    assert window.dockWidgetArea(window.docks["sessionsDock"]) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert all(window.docks[name].isHidden() for name in RIGHT_DOCKS)  # the drawer closed …
    window.docking.toggle_drawer()  # … and in its place when opened, on the panel shown last
    qtbot.waitUntil(lambda: window.docks["workspaceDock"].isVisible())
    window.docks["inspectorDock"].show()
    for name in RIGHT_DOCKS:
        assert window.dockWidgetArea(window.docks[name]) == Qt.DockWidgetArea.RightDockWidgetArea, name
    assert window.tabifiedDockWidgets(window.docks["inspectorDock"]) == [window.docks["workspaceDock"]]
    qtbot.waitUntil(lambda: abs(window.docks["sessionsDock"].width() - window.docking.default_width(window.docks["sessionsDock"])) <= 8)
    assert window.pages.page_name() == CHAT_PAGE


SAVE_AT_SCALE_2 = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtWidgets import QApplication
    from nanobot_desktop.gui.window.main_window import MainWindow

    app = QApplication([])
    window = MainWindow(settings=QSettings(sys.argv[1], QSettings.Format.IniFormat))
    window.resize(700, 450)  # a 1400×900 screen at QT_SCALE_FACTOR=2
    window.show()
    for _ in range(20):
        app.processEvents()
    window.resizeDocks([window.docks["sessionsDock"]], [70], Qt.Orientation.Horizontal)  # squeezed there
    for _ in range(5):
        app.processEvents()
    print(window.screen().devicePixelRatio(), window.docks["sessionsDock"].width())
    window.lifetime.save_window_state()
""")


def test_a_layout_saved_at_scale_2_comes_back_usable_at_scale_1(qtbot, qloop, make_engine, tmp_path):
    settings_file = tmp_path / "window.ini"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR="2", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", SAVE_AT_SCALE_2, str(settings_file)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    scale, sessions_width = done.stdout.split()
    assert float(scale) == 2.0 and int(sessions_width) <= 80, "the saved layout really has a squeezed session list"
    assert float(QSettings(str(settings_file), QSettings.Format.IniFormat).value(SCALE_KEY)) == 2.0

    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.window.main_window import MainWindow

    lifecycle = Lifecycle()
    window = MainWindow(make_engine(), lifecycle, settings=QSettings(str(settings_file), QSettings.Format.IniFormat),
                        start_services=False, use_tray=False)
    try:
        window.resize(1400, 900)
        window.show()
        qtbot.waitExposed(window)
        sessions = window.docks["sessionsDock"]
        qtbot.waitUntil(lambda: sessions.width() >= window.docking.usable_width(sessions), timeout=3000)
        assert sessions.isVisible() and window.pages.width() >= window.docking.chat_min_width
        for name in shown_right_docks(window):
            assert window.docks[name].width() >= window.docking.usable_width(window.docks[name]), name
    finally:
        lifecycle.request_quit()
        qtbot.waitUntil(lambda: lifecycle.is_finished, timeout=20_000)
        window.close()
        window.deleteLater()


def columns(editor) -> int:
    """How many characters of the editor's font fit across its text area."""
    edit = editor.text_edit
    return edit.viewport().width() // edit.fontMetrics().horizontalAdvance("x")


def test_memory_is_a_page_with_80_columns_for_each_file_and_readable_versions(qtbot, open_window):
    window = open_window()
    memory = window.engine.memory
    memory.write_long_term("# Memory\n\n- likes tea\n", source="user")
    memory.write_long_term("# Memory\n\n- likes tea\n- works on layouts\n", source="user")
    resize_and_settle(qtbot, window, 1400, 900)
    view = window.panel("memory_view")
    assert window.pages.page("memory_view") is view

    window.docking.toggle_drawer()  # the drawer open: the page takes the whole width all the same
    qtbot.waitUntil(lambda: window.docks["inspectorDock"].isVisible())
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)  # View → Memory (Ctrl+3)
    qtbot.waitUntil(lambda: view.isVisible())
    assert window.pages.page_name() == "memory_view"
    assert not window.docks["sessionsDock"].isVisible() and shown_right_docks(window) == []
    qtbot.waitUntil(lambda: view.versions_model.rowCount() >= 2, timeout=5000)
    QApplication.processEvents()
    assert columns(view.memory_editor) >= 80, columns(view.memory_editor)
    history = view.history_editor
    assert history is not None and columns(history) >= 80, columns(history)

    table = view.versions_table
    model = view.versions_model
    header = table.horizontalHeader()
    for column in range(model.columnCount()):
        needed = max([header.fontMetrics().horizontalAdvance(str(model.headerData(column, Qt.Orientation.Horizontal)))]
                     + [table.fontMetrics().horizontalAdvance(str(model.index(row, column).data() or ""))
                        for row in range(model.rowCount())])
        assert table.columnWidth(column) >= needed, f"column {column} is elided"

    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)  # again: back to the chat
    qtbot.waitUntil(lambda: window.pages.page_name() == CHAT_PAGE)
    qtbot.waitUntil(lambda: window.docks["sessionsDock"].isVisible() and window.docks["inspectorDock"].isVisible())
    assert window.docking.drawer_action.isChecked()


def test_closing_on_the_memory_page_saves_the_chat_layout(qtbot, open_window, tmp_path):
    window = open_window(settings_file=tmp_path / "closing.ini")
    resize_and_settle(qtbot, window, 1400, 900)
    window.docking.toggle_drawer()
    qtbot.waitUntil(lambda: window.docks["inspectorDock"].isVisible())
    window.docking.show_page("memory_view")
    qtbot.waitUntil(lambda: not window.docks["inspectorDock"].isVisible())
    window.lifetime.save_window_state()
    second = open_window(settings_file=tmp_path / "closing.ini")
    resize_and_settle(qtbot, second, 1400, 900)  # the offscreen screen is 800×600: the restored size was fitted to it
    qtbot.waitUntil(lambda: second.docks["inspectorDock"].isVisible() and second.docks["sessionsDock"].isVisible())
    assert second.pages.page_name() == CHAT_PAGE


def test_the_skill_name_field_has_a_usable_width(qtbot, open_window):
    window = open_window()
    for width, height in ((900, 600), (1400, 900)):
        resize_and_settle(qtbot, window, width, height)
        window.actions.dock_toggles["skills"].trigger()
        skills = window.panel("files_view").skills_view
        qtbot.waitUntil(lambda s=skills: s.isVisible())
        # Opened from the menu in a narrow window, the panel still leaves the chat its usable width.
        qtbot.waitUntil(lambda: window.pages.width() >= window.docking.chat_min_width, timeout=3000)
        qtbot.mouseClick(skills.new_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda s=skills: s.name_field.isVisible())
        field = skills.name_field
        needed = field.fontMetrics().horizontalAdvance(field.placeholderText())
        assert field.width() >= needed, (width, field.width(), needed)
        qtbot.keyClicks(field, "weekly-report")
        assert field.text() == "weekly-report"
        qtbot.mouseClick(skills.cancel_button, Qt.MouseButton.LeftButton)


AGENT_PAGE_TOGGLES = ("heartbeatPage", "scheduledPage", "subagentsPage", "mcpPage", "usagePage")


def test_the_agent_pages_tables_show_every_column_label_whole(qtbot, open_window):
    """Opened from the View menu in a 1400×900 window, each Agent page fits its place (no scroll bar)
    and its table shows every column label whole, without a horizontal scroll bar. (The Scheduled
    panel once asked for the room of its add/edit form while showing a job's details, so the dock
    scrolled and held the jobs table at one row, with "Last run" squeezed to "st r".)"""
    from PySide6.QtWidgets import QAbstractItemView

    window = open_window()
    resize_and_settle(qtbot, window, 1400, 900)
    for name in AGENT_PAGE_TOGGLES:
        window.actions.dock_toggles[name].trigger()
        dock = window.agent_area.stack.currentWidget()  # the page's scroll area
        qtbot.waitUntil(lambda dock=dock: dock.isVisible() and window.pages.page_name() == "agent")
        qtbot.waitUntil(lambda dock=dock: dock.findChildren(QAbstractItemView) != [], timeout=5000)
        QApplication.processEvents()
        for view in dock.findChildren(QAbstractItemView):
            header = getattr(view, "horizontalHeader", lambda: None)()
            if header is None or not view.isVisible():
                continue
            model = view.model()
            for column in range(model.columnCount()):
                label = str(model.headerData(column, Qt.Orientation.Horizontal) or "")
                if label and not header.isSectionHidden(column):
                    assert header.sectionSize(column) >= header.fontMetrics().horizontalAdvance(label), (name, label)
            assert not view.horizontalScrollBar().isVisible(), (name, view.objectName())
        holder = dock  # the page's scroll area: the panel fits without it at this size
        assert not holder.verticalScrollBar().isVisible(), (name, holder.widget().minimumSizeHint(), holder.size())
        window.actions.dock_toggles[name].trigger()  # again: back to the chat
        qtbot.waitUntil(lambda dock=dock: not dock.isVisible())
