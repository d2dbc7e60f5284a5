"""Notices end when their condition ends and never repeat (issue 15), retries are shown with Stop,
and the error texts read as one sentence of what happened and one of what to do.

Chat-side notices run a real window against the loopback fake endpoint; the memory page's status
line runs a real MemoryView with hot reload (the fixture of test_memory_view)."""

from __future__ import annotations

import asyncio
import re

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.engine.workspace import atomic_write_text
from nanobot_desktop.gui.chat.failures import failure_text
from nanobot_desktop.gui.chat.model import Notice, UserMessage
from nanobot_desktop.gui.common.notice_bar import NoticeBar
from tests.gui.editor.test_memory_view import memory_setup, sources, type_at_end
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle

__all__ = ["memory_setup", "open_window"]

LEFT = Qt.MouseButton.LeftButton


# --- the bar itself ---------------------------------------------------------------------------------


def test_a_notice_shown_again_does_not_repeat_and_clear_only_ends_its_own_topic(qtbot):
    bar = NoticeBar()
    qtbot.addWidget(bar)
    bar.show_notice("The endpoint is down.", "error", [("Open Settings", lambda: None)], topic="turn-failed:a")
    first_button = bar.button("Open Settings")
    with qtbot.assertNotEmitted(bar.dismissed):
        bar.show_notice("The endpoint is down.", "error", [("Open Settings", lambda: None)], topic="turn-failed:a")
    assert bar.button("Open Settings") is first_button and len(bar.buttons) == 1  # the same notice, not a new one
    assert not bar.clear("turn-failed:b") and bar.text() == "The endpoint is down."
    assert bar.clear("turn-failed:a") and bar.isHidden() and bar.topic == ""
    assert not bar.update_text("Retrying (2/4) in 1 s…", "retry:a")  # nothing to update once it is gone


# --- chat notices -----------------------------------------------------------------------------------


def test_a_turn_failure_notice_clears_when_the_next_turn_starts(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.require_api_key = "sk-the-right-one"
    send(qtbot, window, "Hello?")
    wait_idle(qtbot, window)
    expected = "The endpoint rejected the API key (401). Check the API key in Settings."
    assert window.notice_bar.text() == expected
    assert window.notice_bar.topic == f"turn-failed:{window.current_key}"
    fake_openai.require_api_key = None
    fake_openai.add_text("Hello!")
    send(qtbot, window, "Hello again")
    assert window.notice_bar.isHidden()  # gone as the new turn starts, not after it
    wait_idle(qtbot, window)
    assert window.notice_bar.isHidden()
    failures = [item for item in window.chat.model.items() if isinstance(item, Notice) and item.level == "error"]
    assert [n.text for n in failures] == [expected]  # the chat keeps its record, once


def test_a_turn_failure_notice_does_not_follow_the_person_to_another_chat(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_error(400, "Bad things in the request")
    send(qtbot, window, "Hello?")
    wait_idle(qtbot, window)
    assert window.notice_bar.text().startswith("The endpoint rejected the request (400); it said: “Bad things")
    window.new_chat()
    assert window.notice_bar.isHidden()


def test_retries_show_a_countdown_with_stop_and_stop_ends_the_turn_cleanly(qtbot, open_window, fake_openai,
                                                                            tmp_path):
    window = open_window()
    window.resize(1100, 700)
    provider = window.engine.provider()
    retried = asyncio.Event()

    async def first_retry_now_then_wait(delay_s: float) -> None:
        if not retried.is_set():
            retried.set()
            return
        await asyncio.Event().wait()  # the second retry's back-off: until Stop cancels it

    provider._sleep = first_retry_now_then_wait
    fake_openai.add_error(503, "Internal meltdown", retry_after=3, times=None)
    send(qtbot, window, "Are you there?")
    bar = window.notice_bar
    qtbot.waitUntil(lambda: bar.text().startswith("Retrying (3/4)"), timeout=WAIT_MS)
    assert re.fullmatch(r"Retrying \(3/4\) in [1-3] s…", bar.text()), bar.text()
    assert bar.topic == f"retry:{window.current_key}" and [b.text() for b in bar.buttons] == ["Stop"]
    assert "Retrying (3/4)" in window.commands.busy_label.text()  # not just "Working…"
    qtbot.wait(50)
    window.grab().save(str(tmp_path / "retry-status.png"))
    qtbot.waitUntil(lambda: bar.text() == "Retrying (3/4)…", timeout=WAIT_MS)  # the countdown ran out
    requests_before = len(fake_openai.requests)

    qtbot.mouseClick(bar.button("Stop"), LEFT)
    wait_idle(qtbot, window)
    assert bar.isHidden()  # no retry status left, and a stop is no failure
    last = window.chat.model.item(window.chat.model.rowCount() - 1)
    assert isinstance(last, Notice) and last.level == "stopped"
    assert len(fake_openai.requests) == requests_before == 2  # the waiting retry never went out
    assert [m["content"] for m in session_lines(window) if m.get("role") == "user"] == ["Are you there?"]
    assert window.composer.send_button.isVisible() and "Retrying" not in window.commands.busy_label.text()


def test_a_retry_status_ends_when_the_retry_gets_an_answer(qtbot, open_window, fake_openai):
    window = open_window()
    seen: list[str] = []
    window.chat.retry_changed.connect(lambda _key, attempt, total, _delay: seen.append(f"{attempt}/{total}"))
    fake_openai.add_error(502, "Bad gateway")
    fake_openai.add_text("Here now.")
    send(qtbot, window, "Hello?")
    wait_idle(qtbot, window)
    assert seen == ["2/4", "0/0"]  # shown once, then ended by the answer
    assert window.notice_bar.isHidden()
    assert [type(i) for i in window.chat.model.items()][:1] == [UserMessage]


def test_a_server_error_quotes_the_server_and_says_what_to_do_once(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_error(500, "Internal meltdown", times=None)
    send(qtbot, window, "Hello?")
    wait_idle(qtbot, window)
    expected = ("The endpoint had a server error (500) after 4 attempts; it said: “Internal meltdown”. "
                "Try again in a moment.")
    notice = window.chat.model.item(window.chat.model.rowCount() - 1)
    assert isinstance(notice, Notice) and notice.text == expected
    assert window.notice_bar.text() == expected
    assert "meltdown The endpoint" not in notice.text


@pytest.mark.parametrize(("error", "kind", "expected"), [
    ("The endpoint rejected the API key (401). Check the API key in Settings.", "auth",
     "The endpoint rejected the API key (401). Check the API key in Settings."),
    ("The endpoint closed the connection mid-reply after 36 characters (the stream was cut off before it "
     "finished). The partial reply was kept, marked as cut off.", "cut",
     "The endpoint closed the connection mid-reply after 36 characters (the stream was cut off before it "
     "finished). The partial reply was kept, marked as cut off. Send the message again to get a whole reply."),
    ("Unexpected error: ConfigError: no provider has an API key for model 'x'", "config",
     "no provider has an API key for model 'x'. Open Settings to choose a provider and model."),
    ("Unexpected error: KeyError: 'choices'", "other",
     "Unexpected error: KeyError: 'choices'. Try again; if it happens again, the log (Help → Open log folder) "
     "has the details."),
    ("https://x.test/v1 answered 404 Not Found; it said: “no route”. Check the base URL in Settings (it usually "
     "ends in /v1).", "other",
     "https://x.test/v1 answered 404 Not Found; it said: “no route”. Check the base URL in Settings (it usually "
     "ends in /v1)."),
])
def test_each_error_text_is_what_happened_then_what_to_do_without_repeats(error, kind, expected):
    text = failure_text(error, kind)
    assert text == expected
    sentences = [s.strip() for s in re.split(r"(?<=[.?!])\s+", text) if s.strip()]
    assert len(sentences) == len(set(sentences))


# --- the memory page's status line ------------------------------------------------------------------


def _consolidate(qtbot, engine, fake_openai, key: str, *, ok: bool) -> None:
    fake_openai.add_text("Hi.")
    turn = engine.loop.submit(key, "hello")
    qtbot.waitUntil(turn.done, timeout=WAIT_MS)
    if ok:
        fake_openai.add_tool_calls([("save_memory", {"history_entry": "[2026-11-24 10:00] said hello",
                                                     "memory_update": "# Memory\n\n- Says hello.\n"})])
    else:
        fake_openai.add_text("I will not call the tool.")
    archive = engine.loop.submit(key, "/new")
    qtbot.waitUntil(archive.done, timeout=WAIT_MS)


def test_a_consolidation_failure_clears_after_a_later_success(qtbot, qloop, memory_setup, fake_openai):
    engine, view, _sync = memory_setup
    _consolidate(qtbot, engine, fake_openai, "desktop:one", ok=False)
    assert view.status_label.text().startswith("Older messages could not be summarised into memory")
    assert "save_memory" not in view.status_label.text() and "save_memory" in view.status_label.toolTip()
    assert view.status_label.isVisible() and view.status_topic == "consolidation-failed"
    _consolidate(qtbot, engine, fake_openai, "desktop:two", ok=True)
    qtbot.waitUntil(lambda: view.memory_editor.text() == "# Memory\n\n- Says hello.\n", timeout=WAIT_MS)
    assert view.status_label.isHidden() and view.status_topic == ""


def test_restored_stays_until_memory_changes_again_and_the_diff_follows_the_disk(qtbot, memory_setup):
    engine, view, sync = memory_setup
    memory_file = engine.memory.memory_file
    editor = view.memory_editor
    type_at_end(qtbot, editor, "\n- Likes tea.")
    with qtbot.waitSignal(editor.saved, timeout=WAIT_MS):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: sources(view) == ["user"], timeout=WAIT_MS)
    view.versions_table.selectRow(0)
    qtbot.waitUntil(lambda: "+- Likes tea." in editor.diff_view.diff_text(), timeout=WAIT_MS)

    # Another program changes MEMORY.md: the open comparison follows (no stale diff).
    with qtbot.waitSignal(sync.changed_applied, timeout=WAIT_MS):
        atomic_write_text(memory_file, "# Memory\n\n- Written elsewhere.\n")
    qtbot.waitUntil(lambda: "+- Written elsewhere." in editor.diff_view.diff_text(), timeout=WAIT_MS)
    assert "(no differences)" not in editor.diff_view.diff_text()

    # Restore: the status stays through the restore's own write …
    qtbot.mouseClick(view.restore_button, LEFT)
    qtbot.waitUntil(lambda: view.status_topic == "restored", timeout=WAIT_MS)
    restored = memory_file.read_text(encoding="utf-8")
    qtbot.waitUntil(lambda: editor.text() == restored, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: sources(view) == ["restore", "user"], timeout=WAIT_MS)
    assert view.status_label.text().startswith("Restored MEMORY.md as of ")
    # … and ends with the next change of MEMORY.md: here the person's save.
    type_at_end(qtbot, editor, "\n- And coffee.")
    with qtbot.waitSignal(editor.saved, timeout=WAIT_MS):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(view.status_label.isHidden, timeout=WAIT_MS)
    assert view.status_topic == ""
