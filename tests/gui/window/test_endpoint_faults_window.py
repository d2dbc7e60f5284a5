"""The window shows a stalled endpoint while it waits, and keeps a cut-off reply marked as such."""

from __future__ import annotations

import re

from nanobot_desktop.gui.chat.message import AssistantWidget
from nanobot_desktop.gui.chat.model import AssistantMessage, Notice
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle

__all__ = ["open_window"]


def test_waiting_for_a_silent_endpoint_is_shown_then_explained(qtbot, open_window, make_engine, fake_openai):
    engine = make_engine()
    engine.app_settings.model_first_byte_timeout = 3.0
    engine.app_settings.model_wait_for_local = False  # the fake is on 127.0.0.1: as a remote endpoint here
    window = open_window(engine)
    fake_openai.add_stall()
    # The label as it reads right after each waiting update (the window's own slot runs first): a
    # poll could miss the 2 s in which it shows when the machine is busy.
    seen: list[str] = []
    window.chat.waiting_changed.connect(lambda _key, _text: seen.append(window.commands.busy_label.text()))
    send(qtbot, window, "Anyone there?")
    shown = re.compile(r"^● Waiting for an answer… \d s \(gives up after 3 s\)  \(Esc to stop\)$")
    qtbot.waitUntil(lambda: any(shown.match(text) for text in seen), timeout=WAIT_MS)
    wait_idle(qtbot, window)
    notice = window.chat.model.item(window.chat.model.rowCount() - 1)
    assert isinstance(notice, Notice) and notice.level == "error"
    assert "sent nothing for 3 s, so the call was given up (first-byte timeout)" in notice.text
    assert "Waiting" not in window.commands.busy_label.text()


def test_a_reply_cut_off_by_the_endpoint_stays_marked(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_drop("Half of a good answer, ")
    send(qtbot, window, "Explain")
    wait_idle(qtbot, window)
    reply = next(item for item in window.chat.model.items() if isinstance(item, AssistantMessage))
    assert reply.cut and not reply.unsaved and reply.text == "Half of a good answer, "
    widget = window.chat_view.widget_for_row(window.chat.model.items().index(reply))
    assert isinstance(widget, AssistantWidget)
    qtbot.waitUntil(lambda: widget.status_label.text() == "Cut off by the endpoint", timeout=WAIT_MS)
    assert not widget.retry_button.isVisible()
    assert "closed the connection mid-reply after 23 characters" in window.notice_bar.text()
    assert "The partial reply was kept, marked as cut off." in window.notice_bar.text()
    kept = session_lines(window)[-1]
    assert kept["role"] == "assistant" and kept["cut_off"] == "cut" and kept["content"] == "Half of a good answer,"
    window.chat.reload_session(window.current_key)  # read back from the file: still marked
    qtbot.waitUntil(lambda: any(isinstance(i, AssistantMessage) and i.cut for i in window.chat.model.items()),
                    timeout=WAIT_MS)
