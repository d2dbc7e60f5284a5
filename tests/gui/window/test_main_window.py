"""The main window: docks, the action registry shared by menus/tray/shortcuts, window state across
restarts, notices for configuration problems, orderly shutdown, and the start-up path."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QPushButton

from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.gui.shell.app import run_gui
from nanobot_desktop.gui.shell.startup import open_engine_for_gui
from tests.conftest import write_test_config
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle

__all__ = ["open_window"]


def keys_of(action: QAction) -> list[str]:
    return [key.toString(QKeySequence.SequenceFormat.PortableText) for key in action.shortcuts()]


def test_docks_panels_and_menus_share_one_set_of_actions(qtbot, open_window):
    window = open_window()
    assert window.panel_errors == []
    assert window.dockWidgetArea(window.sessions_dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    for name in ("inspectorDock", "workspaceDock"):
        assert window.dockWidgetArea(window.docks[name]) == Qt.DockWidgetArea.RightDockWidgetArea
    assert "memoryDock" not in window.docks and window.pages.page("memory_view") is window.panel("memory_view")
    for name in ("heartbeat_view", "cron_view", "subagents_view", "mcp_view"):  # pages of the Agent area, not docks
        assert window.agent_area.page(name) is window.panel(name), name
    assert set(window.docks) == {"sessionsDock", "inspectorDock", "workspaceDock"}
    assert not window.docks["inspectorDock"].isVisible()  # the drawer is closed at first
    window.docks["inspectorDock"].show()
    window.docks["workspaceDock"].show()
    assert window.tabifiedDockWidgets(window.docks["inspectorDock"]) == [window.docks["workspaceDock"]]  # one place

    a = window.actions
    assert keys_of(a.new_chat)[0] == "Ctrl+N" and keys_of(a.stop) == ["Esc"] and keys_of(a.rename_session) == ["F2"]
    assert "Del" in keys_of(a.delete_session) and "Ctrl+Z" in keys_of(a.undo_delete)
    assert keys_of(a.search_sessions) == ["Ctrl+K"] and "Ctrl+," in keys_of(a.settings)
    assert "Ctrl+Q" in keys_of(a.quit)
    assert a.settings.menuRole() == QAction.MenuRole.PreferencesRole and a.quit.menuRole() == QAction.MenuRole.QuitRole
    assert a.rename_session.shortcutContext() == Qt.ShortcutContext.WidgetWithChildrenShortcut
    assert all(action.toolTip() for action in a.all().values())

    menu_actions = {action for menu in window.menus.values() for action in menu.actions()}
    for name in ("new_chat", "stop", "rename_session", "delete_session", "undo_delete", "export_markdown",
                 "export_json", "reveal_file", "search_sessions", "settings", "run_heartbeat", "pause_heartbeat",
                 "show_hide", "quit", "open_log_folder", "about", "reset_layout"):
        assert a.get(name) in menu_actions, name
    for name in ("sessionsDock", "inspectorDock", "memoryPage", "workspaceDock", "heartbeatPage", "scheduledPage",
                 "subagentsPage", "mcpPage", "agentPage", "drawer", "skills"):
        assert a.dock_toggles[name] in window.menus["view"].actions(), name
    for name in ("agentPage", "heartbeatPage", "scheduledPage", "subagentsPage", "mcpPage"):
        assert a.dock_toggles[name] in window.menus["agent"].actions(), name
    tray = window.tray
    assert tray is not None
    assert tray.actions["quit"] is a.quit and tray.actions["new_chat"] is a.new_chat
    assert tray.actions["heartbeat_run"] is a.run_heartbeat and tray.actions["toggle_window"] is a.show_hide
    assert tray.menu.actions()[0] is a.show_hide

    a.dock_toggles["workspaceDock"].trigger()  # toggles hide a shown dock …
    assert not window.docks["workspaceDock"].isVisible()
    a.dock_toggles["workspaceDock"].trigger()  # … and show a hidden one
    assert window.docks["workspaceDock"].isVisible()
    a.dock_toggles["heartbeatPage"].trigger()  # a page toggle shows its page of the Agent area
    assert window.pages.page_name() == "agent" and window.panel("heartbeat_view").isVisible()
    a.dock_toggles["skills"].trigger()  # the drawer sits beside the chat: the chat comes back with it
    assert window.docks["workspaceDock"].isVisible()
    assert window.panel("files_view").tabs.currentWidget() is window.panel("files_view").skills_view


def test_shortcuts_new_chat_search_and_stop(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_text("Fine, thanks.")
    send(qtbot, window, "How are you?")
    wait_idle(qtbot, window)
    first = window.current_key
    qtbot.waitUntil(lambda: window.windowTitle() == "nanobot — How are you?", timeout=WAIT_MS)
    assert not window.actions.stop.isEnabled()
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.current_key != first and window.current_key.startswith("desktop:")
    assert window.windowTitle() == "nanobot — New chat" and window.chat.model.rowCount() == 0
    empty = window.current_key
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.current_key == empty  # an empty new chat is reused, not multiplied
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is window.sessions_panel.search_box
    # picking the old session in the list shows it again, loaded from its file
    index = window.sessions_panel.model.index_of_key(first)
    window.sessions_panel.view.setCurrentIndex(index)
    assert window.current_key == first
    qtbot.waitUntil(lambda: window.chat.model.rowCount() == 2, timeout=WAIT_MS)
    assert [i.text for i in window.chat.model.items()] == ["How are you?", "Fine, thanks."]
    assert window.windowTitle() == "nanobot — How are you?"


def test_window_state_and_the_current_session_survive_a_restart(qtbot, open_window, make_engine, tmp_path):
    settings_file = tmp_path / "restart.ini"
    engine = make_engine()
    session = engine.sessions.get_or_create("cli:direct")
    engine.sessions.append(session, [{"role": "user", "content": "remember me"},
                                     {"role": "assistant", "content": "I will."}])
    first = open_window(engine, settings_file=settings_file)
    first.open_session("cli:direct")
    first.resize(720, 520)  # inside the offscreen screen (800x600): restoreGeometry keeps windows on screen
    first.move(30, 40)
    first.docks["sessionsDock"].hide()  # the session list collapsed
    qtbot.wait(20)
    geometry, size = first.pos(), first.size()
    first.close()  # no tray here: the first close asks whether to keep running; Quit quits through the lifecycle
    qtbot.waitUntil(lambda: any(isinstance(w, QMessageBox) and w.objectName() == "keepRunningQuestion" and w.isVisible()
                                for w in QApplication.topLevelWidgets()), timeout=WAIT_MS)
    question = next(w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.objectName() == "keepRunningQuestion")
    qtbot.mouseClick(question.findChild(QPushButton, "quitButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: first.lifecycle.is_finished, timeout=WAIT_MS)
    assert not first.watcher.is_running
    assert not first.engine.cron.running

    second = open_window(make_engine(), settings_file=settings_file)
    assert second.size() == size and second.pos() == geometry
    assert not second.docks["inspectorDock"].isVisible() and not second.docks["sessionsDock"].isVisible()
    assert second.current_key == "cli:direct"
    qtbot.waitUntil(lambda: second.chat.model.rowCount() == 2, timeout=WAIT_MS)


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # raising the open dialog, offscreen
def test_no_provider_configured_shows_a_notice_with_settings(qtbot, open_window, tmp_path):
    config_path = write_test_config(tmp_path / "bare" / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws2")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["providers"] = {}
    config["agents"]["defaults"]["provider"] = "auto"
    config["agents"]["defaults"]["model"] = "gpt-4o"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    window = open_window(Engine.open(config_path))
    assert window.notice_bar.text().startswith("No model can be used yet (")
    assert window.notice_bar.text().endswith("Open Settings to choose a provider and a model.")
    qtbot.mouseClick(window.notice_bar.button("Open Settings"), Qt.MouseButton.LeftButton)
    assert window.commands.settings_dialog is not None and window.commands.settings_dialog.isVisible()
    assert window.commands.open_settings() is window.commands.settings_dialog  # one dialog at a time
    window.commands.settings_dialog.reject()
    send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    last = window.chat.model.item(window.chat.model.rowCount() - 1)
    assert last.kind == "notice" and last.level == "error"
    assert "Open Settings to choose a provider and model." in last.text
    assert window.notice_bar.button("Open Settings") is not None


def test_a_deleted_current_session_gives_way_to_a_new_chat(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_text("ok")
    send(qtbot, window, "to be deleted")
    wait_idle(qtbot, window)
    key = window.current_key
    qtbot.waitUntil(lambda: key in window.sessions_panel.model.keys(), timeout=WAIT_MS)
    window.sessions_panel.delete_session(key)
    assert window.current_key != key and window.chat.model.rowCount() == 0
    assert window.windowTitle() == "nanobot — New chat"


class _UrlCatcher(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_open_log_folder_and_services(qtbot, open_window, tmp_path):
    window = open_window(log_folder=tmp_path / "logs", start_services=True)
    qtbot.waitUntil(lambda: window.engine.cron.running, timeout=WAIT_MS)
    catcher = _UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    try:
        window.actions.open_log_folder.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(url.toLocalFile()) for url in catcher.urls] == [tmp_path / "logs"]
    window.actions.pause_heartbeat.trigger()
    assert window.engine.heartbeat.paused and "Resume" in window.actions.pause_heartbeat.text()
    window.actions.pause_heartbeat.trigger()
    assert not window.engine.heartbeat.paused
    window.actions.about.trigger()
    assert window.commands.about_box is not None and window.commands.about_box.isVisible()
    window.commands.about_box.close()


def test_quit_action_shuts_everything_down_in_order(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_hang()
    send(qtbot, window, "long job")
    qtbot.waitUntil(lambda: len(fake_openai.requests) == 1, timeout=WAIT_MS)
    window.actions.quit.trigger()
    qtbot.waitUntil(lambda: window.lifecycle.is_finished, timeout=WAIT_MS)
    assert not window.chat.is_busy(window.current_key)
    lines = window.engine.sessions.path_for(window.current_key).read_text(encoding="utf-8").splitlines()
    assert '"stopped": true' in lines[-1]  # the cancelled turn was saved as stopped
    assert not window.watcher.is_running and not window.engine.approvals.attended  # the chat and the tray left


def test_run_gui_builds_the_main_window_by_default():
    assert inspect.signature(run_gui).parameters["window_factory"].default is None


def test_a_broken_config_is_reported_and_left_untouched(qtbot, qloop, tmp_path):
    config_path = tmp_path / "broken" / "config.json"
    config_path.parent.mkdir()
    config_path.write_bytes(b'{"agents": {"defaults": {"model": "x",}}}')
    task = asyncio.ensure_future(open_engine_for_gui(str(config_path), None))
    qtbot.waitUntil(lambda: _message_box() is not None, timeout=WAIT_MS)
    box = _message_box()
    assert "config.json line 1" in box.text() and "left untouched" in box.text()
    assert not box.testAttribute(Qt.WidgetAttribute.WA_QuitOnClose)  # closing it must not quit by itself
    box.close()
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    assert task.result() is None
    assert config_path.read_bytes() == b'{"agents": {"defaults": {"model": "x",}}}'


def test_first_run_shows_onboarding_and_cancelling_quits(qtbot, qloop, tmp_path):
    config_path = tmp_path / "fresh" / "config.json"
    task = asyncio.ensure_future(open_engine_for_gui(str(config_path), str(tmp_path / "fresh-ws")))
    qtbot.waitUntil(lambda: _top_level("onboardingDialog") is not None, timeout=WAIT_MS)
    dialog = _top_level("onboardingDialog")
    assert dialog.isVisible()
    # closing it is not "the last window closed": Finish must lead to the main window, not to a quit
    assert not dialog.testAttribute(Qt.WidgetAttribute.WA_QuitOnClose)
    dialog.reject()
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    assert task.result() is None and not config_path.exists()


def _message_box() -> QMessageBox | None:
    return next((w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()), None)


def _top_level(name: str):
    return next((w for w in QApplication.topLevelWidgets() if w.objectName() == name and w.isVisible()), None)



def test_the_default_factory_opens_the_engine_and_builds_the_window(qtbot, qloop, fake_openai, tmp_path, monkeypatch):
    from nanobot_desktop.gui.shell import startup
    from nanobot_desktop.gui.shell.lifecycle import LaunchOptions, Lifecycle
    from nanobot_desktop.gui.shell.startup import create_main_window
    from nanobot_desktop.gui.window.main_window import MainWindow

    monkeypatch.setattr(startup, "_setup_logging", lambda _path: tmp_path / "logs")  # keep the root logger as is
    config_path = write_test_config(tmp_path / "cfg" / "config.json", fake_openai.base_url, tmp_path / "ws3")
    lifecycle = Lifecycle(LaunchOptions(config=str(config_path), workspace=str(tmp_path / "other-ws")))
    task = asyncio.ensure_future(create_main_window(lifecycle))
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    window = task.result()
    try:
        assert isinstance(window, MainWindow)
        assert Path(window.engine.workspace.root) == tmp_path / "other-ws"  # --workspace wins
        assert window.log_folder == tmp_path / "logs"
        assert window.commands.model_label.text() == "Model: fake-model"
        assert str(tmp_path / "other-ws") in window.commands.workspace_label.text()
        assert window.notice_bar.text() == ""  # a configured provider: nothing to warn about
    finally:
        lifecycle.request_quit()
        qtbot.waitUntil(lambda: lifecycle.is_finished, timeout=WAIT_MS)
        if window is not None:
            window.deleteLater()


def test_docks_exist_at_once_and_their_panels_arrive_after_the_first_paint(qtbot, qloop, make_engine, tmp_path):
    """Start-up (SPEC §5): the window paints before the dock panels exist; they then fill every dock."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QScrollArea

    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.window.main_window import MainWindow
    from nanobot_desktop.gui.window.docks import PanelPlaceholder
    from nanobot_desktop.gui.window.panels import DOCK_TITLES

    settings = QSettings(str(tmp_path / "lazy.ini"), QSettings.Format.IniFormat)
    lifecycle = Lifecycle()
    window = MainWindow(make_engine(), lifecycle, settings=settings, start_services=False, use_tray=False)

    def inside(name: str):
        holder = window.docks[name].widget()
        return holder.widget() if isinstance(holder, QScrollArea) else holder

    try:
        assert set(window.docks) == set(DOCK_TITLES)  # every dock, placed, with its View-menu toggle …
        assert all(name in window.actions.dock_toggles for name in DOCK_TITLES)
        assert isinstance(inside("inspectorDock"), PanelPlaceholder)  # … but no panel before the first paint
        window.show()
        qtbot.waitUntil(lambda: window.lifetime.panels is not None and not window.lifetime.panels.pending, timeout=WAIT_MS)
        seen = {name for name, dock in window.docks.items() if dock.isVisible()}
        assert seen == {"sessionsDock"}  # the drawer is closed at first
        # A dock nobody can see yet (hidden, or a tab behind another) gets its panel when it is shown;
        # the inspector too (what it shows is recorded from the start: the next test).
        unseen = [name for name in DOCK_TITLES if name not in seen]
        assert unseen == ["inspectorDock", "workspaceDock"]
        assert all(isinstance(inside(name), PanelPlaceholder) for name in unseen)
        for name in unseen:
            dock = window.docks[name]
            if dock.isHidden():
                window.actions.dock_toggles[name].trigger()  # View → the panel's toggle, as a person does
                assert dock.isVisible()  # brought to the front of its tab group
            else:
                dock.raise_()  # a tab behind another: its tab clicked
            qtbot.waitUntil(lambda name=name: not isinstance(inside(name), PanelPlaceholder), timeout=WAIT_MS)
        for name, dock in window.docks.items():
            assert inside(name).panel_title == DOCK_TITLES[name] == dock.windowTitle()
        # The Memory page: built when its tab is first shown.
        assert isinstance(window.pages.page("memory_view"), PanelPlaceholder)
        window.pages.tabBar().setCurrentIndex(window.pages.indexOf(window.pages.page("memory_view")))
        qtbot.waitUntil(lambda: not isinstance(window.pages.page("memory_view"), PanelPlaceholder), timeout=WAIT_MS)
        # The Agent area's pages: each built when it is first shown, not when the area is.
        assert all(isinstance(window.agent_area.page(name), PanelPlaceholder) for name in ("heartbeat_view", "mcp_view"))
        window.pages.tabBar().setCurrentIndex(window.pages.indexOf(window.agent_area))
        qtbot.waitUntil(lambda: not isinstance(window.agent_area.page("heartbeat_view"), PanelPlaceholder), timeout=WAIT_MS)
        assert isinstance(window.agent_area.page("mcp_view"), PanelPlaceholder)
        window.agent_area.side_list.setCurrentRow(3)  # MCP, clicked in the side list
        qtbot.waitUntil(lambda: window.agent_area.page("mcp_view") is window.lifetime.panels.built.get("mcp_view")
                        and not isinstance(window.agent_area.page("mcp_view"), PanelPlaceholder), timeout=WAIT_MS)
        assert window.panel_errors == []
    finally:
        lifecycle.request_quit()
        qtbot.waitUntil(lambda: lifecycle.is_finished, timeout=20_000)
        window.close()
        window.deleteLater()


def test_the_inspector_opened_late_shows_every_call_made_while_it_was_closed(qtbot, open_window, fake_openai):
    """The drawer is closed at start, so the inspector's panel is not built (its widgets and modules stay
    out of the empty window); its timeline records from the start, so opening it shows the earlier turns."""
    from PySide6.QtWidgets import QScrollArea

    from nanobot_desktop.gui.window.docks import PanelPlaceholder

    window = open_window()
    qtbot.waitUntil(lambda: not window.lifetime.panels.pending, timeout=WAIT_MS)
    holder = window.docks["inspectorDock"].widget()
    assert isinstance(holder, QScrollArea) and isinstance(holder.widget(), PanelPlaceholder)
    for number in (1, 2):
        fake_openai.add_text(f"answer {number}")
        send(qtbot, window, f"question {number}")
        wait_idle(qtbot, window)
    assert isinstance(holder.widget(), PanelPlaceholder)  # two turns later: still not built
    window.actions.dock_toggles["inspectorDock"].trigger()  # View → Inspector, as a person does
    qtbot.waitUntil(lambda: not isinstance(holder.widget(), PanelPlaceholder), timeout=WAIT_MS)
    inspector = holder.widget()
    assert [inspector.turn_selector.itemText(row).split(" · ")[::2]
            for row in range(inspector.turn_selector.count())] == [["Turn 1", "question 1"], ["Turn 2", "question 2"]]
    assert inspector.model.rowCount() == 1  # the newest turn's one LLM call, shown
    calls = [entry for turn in inspector.model.turns(window.current_key) for entry in turn.entries]
    assert [call.messages[-1]["content"].split("\n")[-1] for call in calls] == ["question 1", "question 2"]


def test_the_engine_arrives_into_a_frame_that_has_already_painted(qtbot, qloop, make_engine, tmp_path):
    """The frame (menus, docks, status bar) shows without an engine; attach_engine fills it in place."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QScrollArea

    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.window.docks import PanelPlaceholder
    from nanobot_desktop.gui.window.main_window import MainWindow

    settings = QSettings(str(tmp_path / "frame.ini"), QSettings.Format.IniFormat)
    frame = MainWindow(settings=settings, start_services=False, use_tray=False)
    frame.show()
    qtbot.waitExposed(frame)
    assert frame.engine is None and frame.current_key == "" and frame.panel("inspector") is None
    assert isinstance(frame.docks["sessionsDock"].widget(), PanelPlaceholder)
    frame.actions.new_chat.trigger()  # nothing is connected yet: harmless
    assert frame.panel_errors == []

    engine = make_engine()
    lifecycle = Lifecycle()
    frame.attach_engine(engine, lifecycle)
    try:
        assert frame.docks["sessionsDock"].widget() is frame.sessions_panel
        assert frame.current_key  # a fresh session is open
        assert frame.commands.model_label.text() == f"Model: {engine.settings().model}"
        holder = frame.docks["inspectorDock"].widget()
        assert isinstance(holder, QScrollArea)
        frame.docking.open_drawer("inspectorDock")
        qtbot.waitUntil(lambda: holder.widget() is frame.panel("inspector") and frame.panel("inspector") is not None, timeout=WAIT_MS)
        send(qtbot, frame, "hello")  # the chat works in the frame it arrived in
        qtbot.waitUntil(lambda: [item.kind for item in frame.chat.model.items()][:1] == ["user"], timeout=WAIT_MS)
    finally:
        lifecycle.request_quit()
        qtbot.waitUntil(lambda: lifecycle.is_finished, timeout=20_000)
        frame.close()
        frame.deleteLater()


@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_the_no_model_notice_goes_once_settings_name_a_usable_provider(qtbot, open_window, fake_openai, tmp_path):
    config_path = write_test_config(tmp_path / "bare" / "config.json", fake_openai.base_url, tmp_path / "ws2")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["providers"] = {}
    config["agents"]["defaults"]["provider"] = "auto"
    config["agents"]["defaults"]["model"] = "fake-model"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    window = open_window(Engine.open(config_path))
    assert window.notice_bar.topic == "no-model" and not window.notice_bar.isHidden()
    dialog = window.commands.open_settings()  # from the menu: the notice's own button would dismiss it on click
    assert not window.notice_bar.isHidden()
    form = dialog.provider_form
    form.preset_combo.setCurrentIndex(form.preset_combo.findData("custom"))
    for edit, text in ((form.base_url_edit, fake_openai.base_url), (form.api_key_edit, "sk-test")):
        edit.setFocus()
        edit.selectAll()
        qtbot.keyClick(edit, Qt.Key.Key_Delete)
        qtbot.keyClicks(edit, text)
    with qtbot.waitSignal(dialog.applied, timeout=WAIT_MS):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(window.notice_bar.isHidden, timeout=WAIT_MS)
    fake_openai.add_text("Now I can answer.")
    send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    assert window.notice_bar.isHidden()
    assert any(getattr(item, "text", "") == "Now I can answer." for item in window.chat.model.items())


def _break_the_inspector(monkeypatch) -> None:
    """The Inspector's constructor fails, as a panel can on a bad file or a bug: the rest must work."""
    from nanobot_desktop.gui.inspector import panel as inspector_panel

    def broken(*_args, **_kwargs):
        raise RuntimeError("the timeline could not be read")

    monkeypatch.setattr(inspector_panel.InspectorPanel, "__init__", broken)


def test_a_panel_that_cannot_be_built_is_named_and_the_chat_still_works(qtbot, open_window, fake_openai, monkeypatch):
    _break_the_inspector(monkeypatch)
    fake_openai.add_text("Still here.")
    window = open_window()
    window.actions.dock_toggles["inspectorDock"].trigger()  # built when first shown: View → Inspector
    qtbot.waitUntil(lambda: bool(window.panel_errors), timeout=WAIT_MS)
    assert window.panel_errors == ["Inspector: the timeline could not be read"]
    qtbot.waitUntil(window.notice_bar.isVisible, timeout=WAIT_MS)
    assert window.notice_bar.text().startswith("Some panels could not be loaded (Inspector: the timeline could not be "
                                               "read). The chat works without them")
    failure = window.docks["inspectorDock"].findChild(QLabel, "inspectorDockError")
    assert failure is not None and failure.text() == ("The Inspector panel could not be loaded: the timeline could not "
                                                      "be read")
    send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    assert session_lines(window)[-1]["content"] == "Still here."


def test_a_panel_that_cannot_be_built_is_named_in_chinese(qtbot, qapp, open_window, fake_openai, monkeypatch):
    from nanobot_desktop.gui.common.i18n import install_translators, remove_translators

    _break_the_inspector(monkeypatch)
    assert install_translators(qapp, "zh_CN") == "zh_CN"
    try:
        window = open_window()
        window.actions.dock_toggles["inspectorDock"].trigger()
        qtbot.waitUntil(window.notice_bar.isVisible, timeout=WAIT_MS)
        assert window.panel_errors == ["检查器：the timeline could not be read"]
        assert "检查器：the timeline could not be read" in window.notice_bar.text()
        assert "Inspector" not in window.notice_bar.text()
    finally:
        remove_translators(qapp)
