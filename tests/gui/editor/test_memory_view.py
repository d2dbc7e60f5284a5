"""MemoryView against a real engine: saving MEMORY.md keeps versions, outside writes show up (or raise
the conflict bar), consolidation through the loopback fake lands in the editors, versions can be
compared and restored, and the HISTORY search filters entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from nanobot_desktop.engine.events import ConsolidationFinished, ConsolidationStarted
from nanobot_desktop.engine.workspace import atomic_write_text
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.workspace.memory_view import MemoryVersionsModel, MemoryView
from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher
from nanobot_desktop.gui.workspace.sync import WorkspaceSync



@pytest.fixture
def memory_setup(qtbot, make_engine):
    """(engine, view, sync): a shown MemoryView with hot reload, both editors loaded."""
    engine = make_engine()
    watcher = WorkspaceWatcher(quiet_ms=50)
    sync = WorkspaceSync(engine, watcher)
    bridge = EngineBridge(engine)
    view = MemoryView(engine, bridge, sync)
    qtbot.addWidget(view)
    view.resize(1200, 720)
    view.show()
    qtbot.waitUntil(lambda: not view.memory_editor.is_loading and not view.history_editor.is_loading)
    yield engine, view, sync
    view.shutdown()
    sync.close()
    watcher.stop()
    bridge.detach()


def type_at_end(qtbot, editor, text: str) -> None:
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    for index, piece in enumerate(text.split("\n")):
        if index:
            qtbot.keyClick(editor.text_edit, Qt.Key.Key_Return)
        if piece:
            qtbot.keyClicks(editor.text_edit, piece)


def sources(view: MemoryView) -> list[str]:
    model = view.versions_model
    return [model.data(model.index(row, 0), MemoryVersionsModel.SourceRole) for row in range(model.rowCount())]


def test_ctrl_s_writes_exact_bytes_and_keeps_a_user_version(qtbot, memory_setup, qtmodeltester):
    engine, view, _sync = memory_setup
    memory_file = engine.memory.memory_file
    before = memory_file.read_bytes()
    editor = view.memory_editor
    type_at_end(qtbot, editor, "\n- Prefers green tea.")
    assert editor.is_dirty
    with qtbot.waitSignal(editor.saved, timeout=5000):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert memory_file.read_bytes() == before + b"\n- Prefers green tea.\n"  # the file's final newline is kept
    qtbot.waitUntil(lambda: sources(view) == ["user"], timeout=5000)
    version = engine.memory.list_versions()[0]
    assert version.path.read_bytes() == before, "the replaced text is what the version keeps"
    assert view.versions_model.data(view.versions_model.index(0, 1)) == "your save"
    qtmodeltester.check(view.versions_model)


def test_outside_write_to_clean_editor_shows_new_text(qtbot, memory_setup):
    engine, view, sync = memory_setup
    with qtbot.waitSignal(sync.changed_applied, timeout=5000) as applied:
        atomic_write_text(engine.memory.memory_file, "# Memory\n\n- Written by another program.\n")
    assert applied.args == [engine.memory.memory_file]
    qtbot.waitUntil(lambda: view.memory_editor.text() == "# Memory\n\n- Written by another program.\n")
    assert not view.memory_editor.is_dirty and not view.memory_editor.has_conflict


def make_conflict(qtbot, engine, view) -> Path:
    editor = view.memory_editor
    type_at_end(qtbot, editor, "\n- mine")
    with qtbot.waitSignal(editor.conflict_changed, timeout=5000):
        atomic_write_text(engine.memory.memory_file, "from outside\n")
    assert editor.conflict_bar.isVisible()
    assert editor.text().endswith("\n- mine"), "unsaved edits must never be overwritten"
    return engine.memory.memory_file


def test_conflict_reload_takes_the_disk_version(qtbot, memory_setup):
    engine, view, _sync = memory_setup
    make_conflict(qtbot, engine, view)
    with qtbot.waitSignal(view.memory_editor.loaded, timeout=5000):
        qtbot.mouseClick(view.memory_editor.conflict_bar.button("Reload"), Qt.MouseButton.LeftButton)
    assert view.memory_editor.text() == "from outside\n" and not view.memory_editor.is_dirty


def test_conflict_keep_mine_then_save_overwrites_and_keeps_outside_text_as_version(qtbot, memory_setup):
    engine, view, _sync = memory_setup
    path = make_conflict(qtbot, engine, view)
    mine = view.memory_editor.text()
    qtbot.mouseClick(view.memory_editor.conflict_bar.button("Keep mine"), Qt.MouseButton.LeftButton)
    assert not view.memory_editor.conflict_bar.isVisible() and path.read_text() == "from outside\n"
    with qtbot.waitSignal(view.memory_editor.saved, timeout=5000):
        qtbot.keyClick(view.memory_editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert path.read_text(encoding="utf-8") == mine + "\n"  # the file's final newline is kept
    assert engine.memory.read_version(engine.memory.list_versions()[0]) == "from outside\n"


def test_conflict_compare_shows_the_difference(qtbot, memory_setup):
    engine, view, _sync = memory_setup
    make_conflict(qtbot, engine, view)
    qtbot.mouseClick(view.memory_editor.conflict_bar.button("Compare"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(view.memory_editor.diff_view.isVisible)
    diff = view.memory_editor.diff_view.diff_text()
    assert "-from outside" in diff and "+- mine" in diff


def test_consolidation_lands_in_editor_and_versions_and_can_be_restored(qtbot, qloop, memory_setup, fake_openai,
                                                                        tmp_path):
    engine, view, _sync = memory_setup
    old_memory = engine.memory.read_long_term()
    badge_states: list[tuple[str, bool]] = []
    def note(event: object) -> None:  # subscribed after the view: sees the badge as the view left it
        badge_states.append((type(event).__name__, view.consolidating_badge.isVisible()))

    view.bridge.subscribe({ConsolidationStarted: note, ConsolidationFinished: note}, view)

    fake_openai.add_text("Noted.")
    first = engine.loop.submit("desktop:mem", "I moved to Lyon.")
    qtbot.waitUntil(first.done, timeout=10000)
    fake_openai.add_tool_calls([("save_memory", {"history_entry": "[2026-11-22 10:00] x", "memory_update": "new facts"})])
    archive = engine.loop.submit("desktop:mem", "/new")
    qtbot.waitUntil(archive.done, timeout=10000)
    assert archive.result().status == "command"

    assert badge_states == [("ConsolidationStarted", True), ("ConsolidationFinished", False)]
    qtbot.waitUntil(lambda: view.memory_editor.text() == "new facts", timeout=5000)
    qtbot.waitUntil(lambda: "[2026-11-22 10:00] x" in view.history_editor.text(), timeout=5000)
    qtbot.waitUntil(lambda: sources(view) == ["consolidation"], timeout=5000)

    view.versions_table.selectRow(0)
    qtbot.waitUntil(view.memory_editor.diff_view.isVisible, timeout=5000)
    diff = view.memory_editor.diff_view.diff_text()
    assert "+new facts" in diff and any(line.startswith("-") and not line.startswith("---") for line in diff.splitlines())
    view.grab().save(str(tmp_path / "memory.png"))

    assert view.restore_button.isEnabled()
    qtbot.mouseClick(view.restore_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: engine.memory.read_long_term() == old_memory, timeout=5000)
    qtbot.waitUntil(lambda: view.memory_editor.text() == old_memory, timeout=5000)
    qtbot.waitUntil(lambda: sources(view) == ["restore", "consolidation"], timeout=5000)
    assert engine.memory.read_version(engine.memory.list_versions()[0]) == "new facts"
    assert "Restored" in view.status_label.text()


def test_failed_consolidation_is_reported_and_changes_nothing(qtbot, qloop, memory_setup, fake_openai):
    engine, view, _sync = memory_setup
    before = engine.memory.memory_file.read_bytes()
    fake_openai.add_text("Hi.")
    turn = engine.loop.submit("desktop:fail", "hello")
    qtbot.waitUntil(turn.done, timeout=10000)
    fake_openai.add_text("I will not call the tool.")
    archive = engine.loop.submit("desktop:fail", "/new")
    qtbot.waitUntil(archive.done, timeout=10000)
    assert "could not be summarised into memory" in view.status_label.text()
    assert "did not call save_memory" in view.status_label.toolTip()  # the model's fault, one hover away
    assert not view.consolidating_badge.isVisible()
    assert engine.memory.memory_file.read_bytes() == before and sources(view) == []


def test_history_search_filters_entries_as_you_type(qtbot, make_engine):
    engine = make_engine()
    for entry in ("[2026-11-01 09:00] Talked about moving to Lyon.\nThe user likes the old town.",
                  "[2026-11-02 09:00] Planned a trip to Paris by train.",
                  "[2026-11-03 09:00] Lyon again: found a flat near the river.",
                  "[2026-11-04 09:00] Cooking: a tarte tatin recipe."):
        engine.memory.append_history(entry)
    bridge = EngineBridge(engine)
    view = MemoryView(engine, bridge)
    qtbot.addWidget(view)
    view.show()
    search = view.history_search
    try:
        qtbot.waitUntil(lambda: not view.history_editor.is_loading)
        with qtbot.waitSignal(search.results_shown, timeout=5000):
            qtbot.keyClicks(search.field, "lyon")
        shown = search.results.toPlainText()
        assert search.showing_results
        assert shown == ("[2026-11-01 09:00] Talked about moving to Lyon.\nThe user likes the old town.\n\n"
                         "[2026-11-03 09:00] Lyon again: found a flat near the river.")
        assert search.count_label.text() == "2 of 4 entries match"
        assert search.highlighted_count() == 2

        with qtbot.waitSignal(search.results_shown, timeout=5000):
            qtbot.keyClicks(search.field, " RIVER")
        assert search.results.toPlainText() == "[2026-11-03 09:00] Lyon again: found a flat near the river."

        search.field.clear()
        assert not search.showing_results and search.pages.currentWidget() is view.history_editor

        with qtbot.waitSignal(search.results_shown, timeout=5000):
            qtbot.keyClicks(search.field, "tatin")
        block_start = search.results.document().findBlockByNumber(0).position()
        assert search.show_entry_at(block_start + 5)
        assert not search.showing_results
        assert view.history_editor.text_edit.textCursor().block().text().startswith("[2026-11-04 09:00]")

        with qtbot.waitSignal(search.results_shown, timeout=5000):
            qtbot.keyClicks(search.field, "zanzibar")
        assert search.count_label.text() == "0 of 4 entries match"
        qtbot.keyClick(search.field, Qt.Key.Key_Escape)
        assert search.field.text() == "" and not search.showing_results
    finally:
        view.shutdown()
        bridge.detach()


def test_history_search_follows_new_entries(qtbot, make_engine):
    engine = make_engine()
    engine.memory.append_history("[2026-11-01 09:00] First.")
    watcher = WorkspaceWatcher(quiet_ms=50)
    sync = WorkspaceSync(engine, watcher)
    bridge = EngineBridge(engine)
    view = MemoryView(engine, bridge, sync)
    qtbot.addWidget(view)
    search = view.history_search
    try:
        with qtbot.waitSignal(search.results_shown, timeout=5000):
            qtbot.keyClicks(search.field, "kiwi")
        assert search.count_label.text() == "0 of 1 entry match"
        with qtbot.waitSignal(search.results_shown, timeout=5000):
            engine.memory.append_history("[2026-11-05 09:00] Bought kiwi.")  # the agent appends meanwhile
        assert search.results.toPlainText() == "[2026-11-05 09:00] Bought kiwi."
    finally:
        view.shutdown()
        sync.close()
        watcher.stop()
        bridge.detach()
