"""Edit and resend, Regenerate, the "‹ 2/3 ›" switcher, Retry and /new's way out, driven in the real window.

The files on disk are the truth checked: the origin byte for byte unchanged, the branch a plain linear
session (read back by the nanobot CLI's session reader), no second copy of a retried message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.gui.chat.message import AssistantWidget
from nanobot_desktop.gui.chat.model import AssistantMessage, Notice, UserMessage
from nanobot_desktop.gui.chat.widgets import UserBubble
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle
from tests.reference_cli import POST4, run_reference_cli

__all__ = ["open_window"]


def chat_texts(window) -> list[tuple[str, str]]:
    return [(item.kind, item.text) for item in window.chat.model.items()
            if isinstance(item, (UserMessage, AssistantMessage))]


def row_widget(window, kind: type, nth: int):
    rows = [row for row, item in enumerate(window.chat.model.items()) if isinstance(item, kind)]
    return window.chat_view.widget_for_row(rows[nth])


def two_turns(qtbot, window, fake_openai) -> str:
    fake_openai.add_text("Paris.")
    send(qtbot, window, "capital of France?")
    wait_idle(qtbot, window)
    fake_openai.add_text("Berlin.")
    send(qtbot, window, "capital of Germany?")
    wait_idle(qtbot, window)
    return window.current_key


def wait_branch(qtbot, window, origin: str) -> str:
    qtbot.waitUntil(lambda: window.current_key != origin, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    return window.current_key


@pytest.mark.slow
def test_edit_and_resend_makes_a_branch_and_the_switcher_goes_back_and_forth(qtbot, open_window, fake_openai,
                                                                              tmp_path):
    window = open_window()
    origin = two_turns(qtbot, window, fake_openai)
    origin_path = window.engine.sessions.path_for(origin)
    before = origin_path.read_bytes()
    bubble = row_widget(window, UserMessage, 1)
    assert isinstance(bubble, UserBubble) and not bubble.message_actions.switcher.isVisible()
    qtbot.mouseClick(bubble.message_actions.edit_button, Qt.MouseButton.LeftButton)
    assert bubble.message_actions.edit_box.isVisible() and bubble.message_actions.edit_box.toPlainText() == "capital of Germany?"
    bubble.message_actions.edit_box.selectAll()
    qtbot.keyClicks(bubble.message_actions.edit_box, "capital of Italy?")
    fake_openai.add_text("Rome.")
    qtbot.mouseClick(bubble.message_actions.send_button, Qt.MouseButton.LeftButton)
    branch = wait_branch(qtbot, window, origin)
    qtbot.waitUntil(lambda: ("assistant", "Rome.") in chat_texts(window), timeout=WAIT_MS)
    assert chat_texts(window) == [("user", "capital of France?"), ("assistant", "Paris."),
                                  ("user", "capital of Italy?"), ("assistant", "Rome.")]
    assert origin_path.read_bytes() == before
    lines = session_lines(window, branch)
    assert lines[0]["metadata"]["branch_of"] == {"key": origin, "at": 2}
    assert [(m["role"], m["content"]) for m in lines[1:]] == [
        ("user", "capital of France?"), ("assistant", "Paris."), ("user", "capital of Italy?"), ("assistant", "Rome.")]
    # the switcher at the edited message: 2/2 here, 1/2 in the origin
    qtbot.waitUntil(lambda: row_widget(window, UserMessage, 1).message_actions.switcher.isVisible(), timeout=WAIT_MS)
    switcher = row_widget(window, UserMessage, 1).message_actions.switcher
    assert switcher.position_label.text() == "2/2"
    assert not switcher.next_button.isEnabled() and switcher.previous_button.isEnabled()
    assert not row_widget(window, UserMessage, 0).message_actions.switcher.isVisible()
    qtbot.mouseClick(switcher.previous_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current_key == origin, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: ("assistant", "Berlin.") in chat_texts(window), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: row_widget(window, UserMessage, 1).message_actions.switcher.isVisible(), timeout=WAIT_MS)
    switcher = row_widget(window, UserMessage, 1).message_actions.switcher
    assert switcher.position_label.text() == "1/2"
    qtbot.mouseClick(switcher.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current_key == branch, timeout=WAIT_MS)
    assert origin_path.read_bytes() == before
    # the nanobot CLI continues the branch as a plain session
    window.lifecycle.request_quit()
    qtbot.waitUntil(lambda: window.lifecycle.is_finished, timeout=20_000)
    fake_openai.add_text("Madrid.")
    done = run_reference_cli(POST4, ["agent", "-m", "and Spain?", "-s", branch, "--no-markdown"],
                             home=Path(window.engine.config_path).parent.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Madrid." in done.stdout
    sent = [m["content"] for m in fake_openai.requests[-1]["messages"][1:]]
    assert sent[:4] == ["capital of France?", "Paris.", "capital of Italy?", "Rome."]
    assert "Berlin." not in json.dumps(fake_openai.requests[-1])
    assert origin_path.read_bytes() == before


def test_regenerate_makes_a_branch_with_a_new_reply_to_the_same_message(qtbot, open_window, fake_openai):
    window = open_window()
    origin = two_turns(qtbot, window, fake_openai)
    origin_path = window.engine.sessions.path_for(origin)
    before = origin_path.read_bytes()
    reply = row_widget(window, AssistantMessage, 0)
    assert isinstance(reply, AssistantWidget) and reply.message_actions.regenerate_button.isVisible()
    fake_openai.add_text("Paris, on the Seine.")
    qtbot.mouseClick(reply.message_actions.regenerate_button, Qt.MouseButton.LeftButton)
    branch = wait_branch(qtbot, window, origin)
    qtbot.waitUntil(lambda: ("assistant", "Paris, on the Seine.") in chat_texts(window), timeout=WAIT_MS)
    assert chat_texts(window) == [("user", "capital of France?"), ("assistant", "Paris, on the Seine.")]
    assert origin_path.read_bytes() == before
    lines = session_lines(window, branch)
    assert lines[0]["metadata"]["branch_of"] == {"key": origin, "at": 1}
    assert [(m["role"], m["content"]) for m in lines[1:]] == [("user", "capital of France?"),
                                                              ("assistant", "Paris, on the Seine.")]
    request = fake_openai.requests[-1]["messages"]
    assert [m["role"] for m in request] == ["system", "user"] and request[-1]["content"].endswith("capital of France?")
    qtbot.waitUntil(lambda: row_widget(window, AssistantMessage, 0).message_actions.switcher.isVisible(), timeout=WAIT_MS)
    assert row_widget(window, AssistantMessage, 0).message_actions.switcher.position_label.text() == "2/2"


def test_retry_after_a_failed_turn_sends_the_saved_message_without_a_second_copy(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_error(400, "the endpoint refused this once")
    send(qtbot, window, "capital of Spain?")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.notice_bar.button("Retry") is not None, timeout=WAIT_MS)
    path = window.engine.sessions.path_for(window.current_key)
    assert path.read_bytes().count(b'"capital of Spain?"') == 1
    fake_openai.add_text("Madrid.")
    qtbot.mouseClick(window.notice_bar.button("Retry"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: ("assistant", "Madrid.") in chat_texts(window), timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert chat_texts(window) == [("user", "capital of Spain?"), ("assistant", "Madrid.")]
    assert path.read_bytes().count(b'"capital of Spain?"') == 1
    assert [(m["role"], m["content"]) for m in session_lines(window)[1:]] == [
        ("user", "capital of Spain?"), ("assistant", "Madrid.")]


@pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing)")  # the / command popup, offscreen
def test_new_with_a_failing_consolidation_offers_start_anyway_and_try_again(qtbot, open_window, fake_openai):
    window = open_window()
    origin = two_turns(qtbot, window, fake_openai)
    path = window.engine.sessions.path_for(origin)
    before = path.read_bytes()
    fake_openai.add_text("I will not call the tool")
    send(qtbot, window, "/new")
    qtbot.waitUntil(lambda: window.notice_bar.button("Start anyway") is not None, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert "it could not be summarised into memory" in window.notice_bar.text()
    # said once in people's words; the model's fault is one click away, under the chat's notice
    words = [item for item in window.chat.model.items()
             if isinstance(item, Notice) and "memory" in item.text and "Summarising" not in item.text]
    assert len(words) == 1 and words[0].level == "error" and "did not call save_memory" in words[0].detail
    assert "save_memory" not in window.notice_bar.text() and "save_memory" not in words[0].text
    command = row_widget(window, UserMessage, 2)
    assert command.item.text == "/new" and not command.message_actions.edit_button.isVisibleTo(command)
    typed = row_widget(window, UserMessage, 1)
    assert typed.message_actions.edit_button.isVisibleTo(typed)
    assert window.notice_bar.button("Try again") is not None
    assert path.read_bytes() == before
    # Try again: this time the model saves memory, and the conversation is cleared
    fake_openai.add_text("still no tool")
    qtbot.mouseClick(window.notice_bar.button("Try again"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.notice_bar.button("Start anyway") is not None, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert path.read_bytes() == before and len(fake_openai.requests) == 4
    # Start anyway: a new chat; the old conversation stays, unchanged, in the list
    qtbot.mouseClick(window.notice_bar.button("Start anyway"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current_key != origin, timeout=WAIT_MS)
    assert window.chat.model.rowCount() == 0
    assert path.read_bytes() == before
    assert origin in window.sessions_panel.model.keys()
    fake_openai.add_text("Hi again.")
    send(qtbot, window, "a fresh start")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.windowTitle() == "nanobot — a fresh start", timeout=WAIT_MS)
    assert origin in window.sessions_panel.model.keys()


@pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing)")  # the / command popup, offscreen
def test_try_again_starts_the_new_chat_once_memory_is_saved(qtbot, open_window, fake_openai):
    window = open_window()
    origin = two_turns(qtbot, window, fake_openai)
    fake_openai.add_text("I will not call the tool")
    send(qtbot, window, "/new")
    qtbot.waitUntil(lambda: window.notice_bar.button("Try again") is not None, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    fake_openai.add_tool_calls([("save_memory", {"history_entry": "[2026-11-24 10:00] Capitals.",
                                                 "memory_update": "# Memory\nLikes capitals."})])
    before = window.engine.sessions.path_for(origin).read_bytes()
    qtbot.mouseClick(window.notice_bar.button("Try again"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.engine.memory.read_long_term() == "# Memory\nLikes capitals.", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.current_key != origin, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert "not cleared" not in window.notice_bar.text()
    assert window.chat.model.rowCount() == 0
    lines = session_lines(window, origin)  # kept, with its messages counted as saved to memory
    assert lines[0]["last_consolidated"] == 4 and len(lines) == 5
    assert window.engine.sessions.path_for(origin).read_bytes()[512:] == before[512:]


@pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing)")  # the / command popup, offscreen
def test_new_that_works_opens_a_new_chat_and_the_old_one_stays_listed(qtbot, open_window, fake_openai):
    window = open_window()
    origin = two_turns(qtbot, window, fake_openai)
    fake_openai.add_tool_calls([("save_memory", {"history_entry": "[2026-11-24 10:00] Capitals.",
                                                 "memory_update": "# Memory\nLikes capitals."})])
    send(qtbot, window, "/new")
    qtbot.waitUntil(lambda: window.current_key != origin, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert window.chat.model.rowCount() == 0
    assert window.engine.memory.read_long_term() == "# Memory\nLikes capitals."
    fake_openai.add_text("Rivers, then.")
    send(qtbot, window, "let us talk about rivers")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.windowTitle() == "nanobot — let us talk about rivers", timeout=WAIT_MS)
    assert origin in window.sessions_panel.model.keys()
    window.open_session(origin)
    qtbot.waitUntil(lambda: ("assistant", "Berlin.") in chat_texts(window), timeout=WAIT_MS)
    assert chat_texts(window)[-1] == ("assistant", "Berlin.")  # no "/new" line was written into it
