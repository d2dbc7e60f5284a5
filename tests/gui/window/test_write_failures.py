"""In the window, a write the disk refuses loses nothing the person typed or was shown (issue 18).

The failures are real: the sessions or memory folder is made read-only (a read-only bind mount when
the tests run as root, for whom permission bits do not stop writes; permission bits otherwise).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from nanobot_desktop.gui.chat.message import AssistantWidget
from nanobot_desktop.gui.chat.model import AssistantMessage, Notice, UserMessage
from tests.fake_openai import text_reply
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle
from tests.gui.editor.test_memory_view import memory_setup
from tests.write_faults import ReadOnly, read_only

__all__ = ["open_window", "memory_setup"]


def _reason(guard_how: str) -> str:
    return "is on a read-only file system" if guard_how == "bind mount" else "You have no permission to write"


def test_a_message_the_disk_refuses_goes_back_to_the_composer(qtbot, open_window, fake_openai):
    window = open_window()
    sessions = window.engine.workspace.sessions_dir
    sessions.mkdir(parents=True, exist_ok=True)
    fake_openai.add_text("never asked for")
    with read_only(sessions) as how:
        send(qtbot, window, "Please remember this")
        wait_idle(qtbot, window)
        qtbot.waitUntil(lambda: window.composer.text() == "Please remember this", timeout=WAIT_MS)
    notice = window.chat.model.item(window.chat.model.rowCount() - 1)
    assert isinstance(notice, Notice) and notice.level == "error"
    assert _reason(how) in notice.text and "your message was not saved and was not sent" in notice.text
    assert _reason(how) in window.notice_bar.text()
    assert fake_openai.requests == []
    assert list(sessions.glob("*.jsonl")) == []


def test_a_reply_the_disk_refuses_stays_on_screen_marked_not_saved_and_retry_saves_it(qtbot, open_window,
                                                                                      fake_openai):
    window = open_window()
    sessions = window.engine.workspace.sessions_dir
    sessions.mkdir(parents=True, exist_ok=True)
    guard = ReadOnly(sessions)
    guard.check()

    def respond(_body):  # the user's line is on disk by now; the reply will not be
        guard.apply()
        return text_reply("A reply worth keeping.")

    fake_openai.respond_with(respond)
    try:
        send(qtbot, window, "Tell me something")
        wait_idle(qtbot, window)
        reply = next(item for item in window.chat.model.items() if isinstance(item, AssistantMessage))
        assert reply.text == "A reply worth keeping." and reply.unsaved and not reply.streaming
        widget = window.chat_view.widget_for_row(window.chat.model.items().index(reply))
        assert isinstance(widget, AssistantWidget)
        qtbot.waitUntil(lambda: widget.retry_button.isVisible(), timeout=WAIT_MS)
        qtbot.waitUntil(lambda: "Not saved" in widget.status_label.text(), timeout=WAIT_MS)
        assert "the reply is shown but was not saved" in window.notice_bar.text()
        assert window.notice_bar.button("Retry save") is not None
        assert [m.get("content") for m in session_lines(window)[1:]] == ["Tell me something"]

        qtbot.mouseClick(widget.retry_button, Qt.MouseButton.LeftButton)  # still read-only: still not saved
        qtbot.waitUntil(lambda: "still not saved" in window.notice_bar.text(), timeout=WAIT_MS)
        assert reply.unsaved
    finally:
        guard.undo()
    qtbot.mouseClick(widget.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not reply.unsaved, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not widget.retry_button.isVisible(), timeout=WAIT_MS)
    assert [(m["role"], m["content"]) for m in session_lines(window)[1:]] == [
        ("user", "Tell me something"), ("assistant", "A reply worth keeping.")]
    assert isinstance(window.chat.model.item(0), UserMessage)


def test_the_next_message_takes_an_unsaved_reply_along(qtbot, open_window, fake_openai):
    """Sending again (instead of pressing Retry save) writes the waiting reply first, in order."""
    window = open_window()
    sessions = window.engine.workspace.sessions_dir
    sessions.mkdir(parents=True, exist_ok=True)
    guard = ReadOnly(sessions)
    guard.check()
    calls = []

    def respond(_body):
        calls.append(1)
        if len(calls) == 1:
            guard.apply()
            return text_reply("First reply.")
        return text_reply("Second reply.")

    fake_openai.respond_with(respond)
    try:
        send(qtbot, window, "One")
        wait_idle(qtbot, window)
    finally:
        guard.undo()
    first = next(item for item in window.chat.model.items() if isinstance(item, AssistantMessage))
    assert first.unsaved
    send(qtbot, window, "Two")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: not first.unsaved, timeout=WAIT_MS)
    assert [(m["role"], m["content"]) for m in session_lines(window)[1:]] == [
        ("user", "One"), ("assistant", "First reply."), ("user", "Two"), ("assistant", "Second reply.")]
    sent = [(m["role"], m["content"]) for m in fake_openai.requests[-1]["messages"] if m["role"] != "system"]
    assert sent[:2] == [("user", "One"), ("assistant", "First reply.")]  # the model sees what it said


def test_saving_memory_into_a_read_only_folder_keeps_the_editor_dirty_and_says_why(qtbot, memory_setup):
    engine, view, _sync = memory_setup
    editor = view.memory_editor
    memory_file = engine.memory.memory_file
    before = memory_file.read_bytes()
    versions = sorted(engine.memory.versions_dir.glob("*")) if engine.memory.versions_dir.exists() else []
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor.text_edit, "A fact I typed.")
    assert editor.is_dirty
    with read_only(memory_file.parent) as how:
        with qtbot.waitSignal(editor.save_failed, timeout=WAIT_MS) as failed:
            qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    message = failed.args[0]
    assert message.startswith("Could not save MEMORY.md: ")
    assert _reason(how) in message and "Nothing on disk changed, and your text stays here." in message
    assert editor.error_bar.isVisible() and _reason(how) in editor.error_bar.text
    assert editor.is_dirty and editor.text().endswith("A fact I typed.")
    assert memory_file.read_bytes() == before
    now = sorted(engine.memory.versions_dir.glob("*")) if engine.memory.versions_dir.exists() else []
    assert now == versions
    assert not [p for p in Path(memory_file.parent).iterdir() if p.name.endswith(".tmp")]


def test_a_workspace_that_is_a_file_is_one_sentence_in_a_message_box(qtbot, qloop, fake_openai, tmp_path):
    import asyncio

    from PySide6.QtWidgets import QApplication, QMessageBox

    from nanobot_desktop.gui.shell.startup import open_engine_for_gui
    from tests.conftest import write_test_config

    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    config = write_test_config(tmp_path / "cfg" / "config.json", fake_openai.base_url, afile)

    def box() -> QMessageBox | None:
        return next((w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()),
                    None)

    task = asyncio.ensure_future(open_engine_for_gui(str(config), None))
    qtbot.waitUntil(lambda: box() is not None, timeout=WAIT_MS)
    shown = box()
    assert shown is not None
    assert shown.text() == ("The workspace could not be opened:\n\nThe workspace "
                            f"{afile} is a file, not a folder: choose a folder (--workspace, or "
                            "agents.defaults.workspace in the config).")
    shown.close()
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    assert task.result() is None and afile.read_text() == "mine"
