"""The window on a nanobot 0.3 workspace: history.jsonl in the HISTORY pane, versions from git, the
Workspace page of Settings, and onboarding's choice of layout — driven as a person would."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QLabel, QLineEdit, QSpinBox

from nanobot_desktop.engine.layout import LayoutKind, prepare_workspace
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.settings.dialog import SettingsDialog
from nanobot_desktop.gui.workspace.history_journal_pane import HistoryJournalPane
from nanobot_desktop.gui.workspace.memory_view import MemoryView
from tests.gui.settings.test_onboarding import make_dialog as make_onboarding
from tests.gui.settings.test_onboarding import retype, scan_on_model_page

LEFT = Qt.MouseButton.LeftButton
ENTRIES = [{"cursor": 1, "timestamp": "2026-03-01 09:00", "content": "Planned the garden with the user."},
           {"cursor": 2, "timestamp": "2026-03-02 18:30", "content": "Fixed the bicycle brakes.",
            "session_key": "cli:direct"}]


@pytest.fixture
def v03_engine(make_engine, tmp_path):
    """An engine on a workspace set up in nanobot 0.3's layout, with two history entries."""
    workspace = tmp_path / "ws"
    prepare_workspace(workspace, LayoutKind.V03)
    (workspace / "memory" / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in ENTRIES))
    (workspace / "memory" / ".cursor").write_text("2")
    engine = make_engine()
    assert engine.layout.is_v03
    return engine


@pytest.fixture
def memory_view(qtbot, v03_engine):
    bridge = EngineBridge(v03_engine)
    view = MemoryView(v03_engine, bridge)
    qtbot.addWidget(view)
    view.resize(1200, 720)
    view.show()
    pane = view.history_search
    assert isinstance(pane, HistoryJournalPane)
    qtbot.waitUntil(lambda: pane.model.rowCount() == 2)
    yield view
    view.shutdown()
    bridge.detach()


def _rows(pane: HistoryJournalPane) -> list[str]:
    return [pane.model.index(row).data() for row in range(pane.model.rowCount())]


def test_history_pane_shows_searches_adds_and_edits_history_jsonl(qtbot, memory_view, v03_engine):
    pane: HistoryJournalPane = memory_view.history_search
    journal_file = v03_engine.workspace.root / "memory" / "history.jsonl"
    assert memory_view.history_editor is None
    assert _rows(pane) == ["[2026-03-01 09:00]  Planned the garden with the user.",
                           "[2026-03-02 18:30]  Fixed the bicycle brakes."]  # newest last

    qtbot.keyClicks(pane.field, "bicycle")
    qtbot.waitUntil(lambda: pane.model.rowCount() == 1)
    assert "1 matching entry" in pane.status.text()
    pane.field.clear()
    qtbot.waitUntil(lambda: pane.model.rowCount() == 2)

    qtbot.mouseClick(pane.add_button, LEFT)
    qtbot.keyClicks(pane.text_box, "Talked about tomatoes.")
    with qtbot.waitSignal(pane.entry_saved, timeout=5000) as saved:
        qtbot.mouseClick(pane.save_button, LEFT)
    assert saved.args == [3]
    qtbot.waitUntil(lambda: pane.model.rowCount() == 3)
    lines = journal_file.read_text().splitlines()
    assert [json.loads(line) for line in lines[:2]] == ENTRIES
    assert json.loads(lines[2])["content"] == "Talked about tomatoes." and json.loads(lines[2])["cursor"] == 3
    assert (journal_file.parent / ".cursor").read_text() == "3"

    pane.list.setCurrentIndex(pane.model.index(1))
    qtbot.mouseClick(pane.edit_button, LEFT)
    assert pane.text_box.toPlainText() == "Fixed the bicycle brakes."
    pane.text_box.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(pane.text_box, " And the chain.")
    with qtbot.waitSignal(pane.entry_saved, timeout=5000):
        qtbot.mouseClick(pane.save_button, LEFT)
    edited = json.loads(journal_file.read_text().splitlines()[1])
    assert edited == {**ENTRIES[1], "content": "Fixed the bicycle brakes. And the chain."}
    assert not (journal_file.parent / "HISTORY.md").exists()


def test_versions_come_from_git_and_a_save_is_a_commit(qtbot, memory_view, v03_engine):
    model = memory_view.versions_model
    qtbot.waitUntil(lambda: model.rowCount() == 1)
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Change"
    assert model.index(0, 1).data() == "init: nanobot memory store"
    initial = v03_engine.memory.memory_file.read_text()

    editor = memory_view.memory_editor
    qtbot.waitUntil(lambda: not editor.is_loading)
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor.text_edit, "- likes tomatoes")
    with qtbot.waitSignal(editor.saved, timeout=5000):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: model.rowCount() == 2)
    assert model.index(0, 1).data() == "user: edit memory/MEMORY.md"

    memory_view.versions_table.selectRow(1)
    qtbot.waitUntil(lambda: memory_view.restore_button.isEnabled())
    qtbot.mouseClick(memory_view.restore_button, LEFT)
    qtbot.waitUntil(lambda: model.rowCount() == 3)
    assert v03_engine.memory.memory_file.read_text() == initial
    assert model.index(0, 1).data().startswith("restore: memory/MEMORY.md as of ")
    assert not (v03_engine.workspace.root / "memory" / ".versions").exists()


def test_settings_say_the_layout_and_save_dream_settings_under_the_cli_keys(qtbot, qloop, v03_engine):
    dialog = SettingsDialog(v03_engine)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    dialog.tabs.setCurrentIndex(dialog.tabs.count() - 1)
    page = dialog.tabs.currentWidget()
    assert dialog.tabs.tabText(dialog.tabs.count() - 1) == "Workspace"
    assert "nanobot 0.3 workspace" in _title(page)
    hours = page.findChild(QSpinBox, "dreamInterval")
    model = page.findChild(QLineEdit, "dreamModel")
    assert hours.value() == 2 and model.text() == ""
    hours.setFocus()
    hours.selectAll()
    qtbot.keyClicks(hours, "6")
    qtbot.keyClicks(model, "cheap")
    with qtbot.waitSignal(dialog.applied, timeout=5000):
        qtbot.mouseClick(dialog.save_button, LEFT)
    defaults = json.loads(v03_engine.config_path.read_text())["agents"]["defaults"]
    assert defaults["dream"] == {"enabled": True, "intervalH": 6, "modelOverride": "cheap"}
    assert "contextWindowTokens" not in defaults  # not changed: not written


def _title(page) -> str:
    return page.findChild(QLabel, "layoutTitle").text()


def test_onboarding_can_set_up_a_0_3_workspace(qtbot, qloop, fake_openai, tmp_path):
    config_path = tmp_path / "cfg" / "config.json"
    workspace = tmp_path / "new-03"
    dialog = make_onboarding(qtbot, config_path, candidates=[("llama.cpp", fake_openai.base_url)])
    retype(qtbot, dialog.workspace_edit, str(workspace))
    assert dialog.v03_check.isEnabled()
    qtbot.mouseClick(dialog.v03_check, LEFT)
    scan_on_model_page(qtbot, dialog)
    dialog.server_list.setCurrentRow(0)
    with qtbot.waitSignal(dialog.finished_setup, timeout=5000):
        qtbot.mouseClick(dialog.finish_button, LEFT)
    assert (workspace / "memory" / "history.jsonl").exists() and (workspace / ".git").is_dir()
    assert not (workspace / "memory" / "HISTORY.md").exists() and not (workspace / "TOOLS.md").exists()

    again = make_onboarding(qtbot, tmp_path / "cfg2" / "config.json")
    retype(qtbot, again.workspace_edit, str(workspace))
    assert "nanobot 0.3" in again.workspace_note.text() and not again.v03_check.isEnabled()


def test_a_post4_workspace_keeps_its_editor_and_says_so(qtbot, qloop, make_engine):
    engine = make_engine()
    assert engine.layout.label == "nanobot 0.1.4 workspace"
    dialog = SettingsDialog(engine)
    qtbot.addWidget(dialog)
    assert "nanobot 0.1.4 workspace" in _title(dialog.tabs.widget(dialog.tabs.count() - 1))
    assert (engine.workspace.root / "memory" / "HISTORY.md").exists()
    assert not (engine.workspace.root / "memory" / "history.jsonl").exists()


def test_a_session_the_cli_writes_in_0_3s_folder_shows_up_live(qtbot, qloop, v03_engine, fake_openai):
    from nanobot_desktop.engine.workspace import atomic_write_text
    from nanobot_desktop.gui.workspace.sync import WorkspaceSync
    from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher

    watcher = WorkspaceWatcher(quiet_ms=50)
    sync = WorkspaceSync(v03_engine, watcher)
    try:
        sessions_dir = v03_engine.sessions.sessions_dir
        assert not str(sessions_dir).startswith(str(v03_engine.workspace.root))  # outside the workspace
        key = "telegram:42"
        fake_openai.add_text("hello from the app")
        turn = v03_engine.loop.submit(key, "hi")
        qtbot.waitUntil(turn.done, timeout=10000)
        path = sessions_dir / "dGVsZWdyYW06NDI.jsonl"
        lines = path.read_text().splitlines()
        # the CLI rewrites the whole file (atomic replace), one line longer
        new_line = json.dumps({"role": "user", "content": "typed in nanobot 0.3", "timestamp": "2026-11-24T10:00:00"})
        from nanobot_desktop.engine import SessionChanged

        outside: list[SessionChanged] = []
        v03_engine.bus.subscribe(lambda e: outside.append(e) if isinstance(e, SessionChanged) and e.outside else None)
        atomic_write_text(path, "\n".join([lines[0].rstrip(), *lines[1:], new_line]) + "\n")
        qtbot.waitUntil(lambda: any(event.session_key == key for event in outside), timeout=5000)
        assert v03_engine.sessions.get_or_create(key).messages[-1]["content"] == "typed in nanobot 0.3"
    finally:
        sync.close()
        watcher.stop()


def test_files_view_commits_soul_saves_and_hides_tools_md(qtbot, v03_engine):
    from nanobot_desktop.gui.workspace.files_view import WorkspaceFilesView

    view = WorkspaceFilesView(v03_engine)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    view.refresh_file_list()
    assert "TOOLS.md" not in view.listed_files() and "SOUL.md" in view.listed_files()
    view.file_list.setCurrentRow(view.listed_files().index("SOUL.md"))
    editor = view.editor_for("SOUL.md")
    qtbot.waitUntil(lambda: not editor.is_loading)
    editor.text_edit.setFocus()
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor.text_edit, "Be brief.")
    with qtbot.waitSignal(editor.saved, timeout=5000):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    versions = v03_engine.memory.file_versions("SOUL.md")
    assert versions[0].message == "user: edit SOUL.md"
    assert v03_engine.memory.read_version(versions[0]).endswith("Be brief.\n")  # the final newline is kept
    view.shutdown()


def test_scheduled_view_shows_0_3_system_jobs_as_protected(qtbot, qloop, v03_engine):
    from nanobot_desktop.gui.background.cron_view import SYSTEM_JOB_NOTE, CronView

    store = v03_engine.cron.store_path
    store.parent.mkdir(parents=True, exist_ok=True)
    job = {"id": "dream", "name": "dream", "enabled": True,
           "schedule": {"kind": "every", "atMs": None, "everyMs": 7_200_000, "expr": None, "tz": "UTC"},
           "payload": {"kind": "system_event", "message": "", "deliver": False, "channel": None, "to": None},
           "state": {"nextRunAtMs": None, "lastRunAtMs": None, "lastStatus": None, "lastError": None},
           "createdAtMs": 1, "updatedAtMs": 1, "deleteAfterRun": False}
    store.write_text(json.dumps({"version": 1, "jobs": [job]}))
    bridge = EngineBridge(v03_engine)
    view = CronView(v03_engine, bridge)
    qtbot.addWidget(view)
    view.show()
    view.refresh()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1)
    view.table.selectRow(0)
    qtbot.waitUntil(lambda: SYSTEM_JOB_NOTE in view.details.toPlainText())
    assert not view.delete_button.isEnabled() and not view.run_button.isEnabled()
    assert view.model.index(0, view.model.NEXT).data() == "by the nanobot 0.3 gateway"
    view.shutdown()
    bridge.detach()


def test_soul_versions_are_listed_and_restorable_in_the_memory_view(qtbot, memory_view, v03_engine):
    soul = v03_engine.workspace.root / "SOUL.md"
    original = soul.read_text()
    soul.write_text("# Soul\n\nDream made me terse.\n")
    assert v03_engine.memory.git.commit("dream: periodic memory consolidation") is not None
    combo = memory_view.versions_file_combo
    assert combo.isVisible()
    combo.setCurrentIndex(combo.findText("SOUL.md"))
    model = memory_view.versions_model
    qtbot.waitUntil(lambda: model.rowCount() == 2 and model.index(0, 1).data().startswith("dream:"))
    memory_view.versions_table.selectRow(1)  # the init commit
    qtbot.waitUntil(lambda: memory_view.restore_button.isEnabled())
    qtbot.mouseClick(memory_view.restore_button, LEFT)
    qtbot.waitUntil(lambda: soul.read_text() == original)
    qtbot.waitUntil(lambda: "Restored SOUL.md" in memory_view.status_label.text())


def test_heartbeat_view_says_who_runs_the_heartbeat_of_a_0_3_workspace(qtbot, qloop, v03_engine):
    from nanobot_desktop.gui.background.heartbeat_view import HeartbeatView

    bridge = EngineBridge(v03_engine)
    view = HeartbeatView(v03_engine, bridge)
    qtbot.addWidget(view)
    view.show()
    assert view.layout_note.isVisible() and "protected “heartbeat” job" in view.layout_note.text()
    qtbot.waitUntil(lambda: not view.editor.is_loading)
    view.shutdown()
    bridge.detach()
