"""A text file changed on two machines: the notice names the device, the comparison waits for the
person, and only their choice is written."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.gui.window_fixtures import open_window

__all__ = ["open_window"]  # the fixture


def test_a_memory_conflict_is_shown_with_the_device_and_only_the_choice_is_written(qtbot, open_window, make_engine):
    engine = make_engine()
    memory = engine.memory
    memory.write_long_term("# Memory\n\n- likes tea\n")
    memory.write_long_term("# Memory\n\n- likes tea\n- lives in Lisbon\n")
    copy = memory.memory_file.with_name("MEMORY (Laptop's conflicted copy 2099-11-28).md")
    copy.write_text("# Memory\n\n- likes tea\n- has a dog\n")
    window = open_window(engine)
    engine.merge_sync_copies()  # what start-up and the watcher do
    qtbot.waitUntil(lambda: "memory/MEMORY.md was changed on two machines (the other version is from Laptop)"
                    in window.notice_bar.text())

    qtbot.mouseClick(window.notice_bar.button("Compare and choose…"), Qt.MouseButton.LeftButton)
    dialog = window.notices.text_conflict_dialog
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    assert dialog.windowTitle() == "memory/MEMORY.md was changed on two machines"
    assert dialog.theirs.toPlainText().endswith("- has a dog\n") and dialog.ours.toPlainText().endswith("Lisbon\n")
    assert dialog.base is not None and dialog.base.toPlainText() == "# Memory\n\n- likes tea\n"
    assert memory.read_long_term().endswith("Lisbon\n") and copy.exists()  # nothing written yet

    qtbot.mouseClick(dialog.use_theirs, Qt.MouseButton.LeftButton)
    assert dialog.kept_text.toPlainText().endswith("- has a dog\n")
    dialog.kept_text.moveCursor(dialog.kept_text.textCursor().MoveOperation.End)
    qtbot.keyClicks(dialog.kept_text, "- lives in Lisbon")
    qtbot.keyClick(dialog.kept_text, Qt.Key.Key_Return)
    qtbot.mouseClick(dialog.keep, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert memory.read_long_term() == "# Memory\n\n- likes tea\n- has a dog\n- lives in Lisbon\n"
    assert not copy.exists() and engine.text_conflicts() == []
    assert "the other version is from Laptop" not in window.notice_bar.text()


def test_a_merged_session_copy_is_said_once_in_the_notice_bar(qtbot, open_window, make_engine):
    import json

    engine = make_engine()
    head = {"_type": "metadata", "key": "cli:direct", "created_at": "2026-11-28T10:00:00",
            "updated_at": "2026-11-28T10:00:00", "metadata": {}, "last_consolidated": 0}
    common = [{"role": "user", "content": "hi", "timestamp": "2026-11-28T10:00:00"}]
    extra = [{"role": "assistant", "content": "hello", "timestamp": "2026-11-28T10:00:01"},
             {"role": "user", "content": "more", "timestamp": "2026-11-28T10:00:05"}]
    main = engine.sessions.path_for("cli:direct")
    main.parent.mkdir(parents=True, exist_ok=True)
    main.write_text("".join(json.dumps(x) + "\n" for x in [head, *common]))
    main.with_name("cli_direct (Laptop's conflicted copy 2026-11-28).jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in [head, *common, *extra]))
    window = open_window(engine)
    engine.merge_sync_copies()
    qtbot.waitUntil(lambda: window.notice_bar.text()
                    == "Added 2 messages from Laptop (Dropbox) that were missing here (a sync conflict).")
    assert window.notice_bar.level == "info"


def test_the_status_bar_shows_what_syncthing_says_and_nothing_without_it(qtbot, open_window, make_engine, monkeypatch):
    from nanobot_desktop.engine.sync.syncthing import SyncStatus

    engine = make_engine()
    window = open_window(engine)
    qtbot.waitUntil(lambda: not window.commands._sync_asking)
    assert window.commands.sync_label.isHidden()  # no Syncthing in the test home
    monkeypatch.setattr(engine, "sync_status", lambda: SyncStatus("In sync with laptop · 2 min ago", True, ("laptop",)))
    window.commands.refresh_sync_status()
    qtbot.waitUntil(lambda: window.commands.sync_label.isVisible())
    assert window.commands.sync_label.text() == "In sync with laptop · 2 min ago"
    assert window.commands.sync_label.toolTip() == "Syncthing syncs this workspace with: laptop"
