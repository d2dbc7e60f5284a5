"""Spoken activity, offscreen: what a screen reader is told during real turns against the fake
endpoint (the real AT-SPI bus is tests/gui/common/test_atspi.py), once per step and never per token, and
how the setting turns it down."""

from __future__ import annotations

from PySide6.QtCore import Qt

from nanobot_desktop.engine import CronJobRan, HeartbeatRan, SubagentFinished
from nanobot_desktop.gui.common.accessibility import reply_shape
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]


def test_a_streamed_reply_is_announced_once_when_it_starts_and_once_when_it_ends(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_text("First part of the answer.\n\nSecond part, streamed in many small pieces.", chunk_size=3)
    reply_shape.cache_clear()
    send(qtbot, window, "Tell me")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: any(t.startswith("Reply finished") for t in window.access.announcer.spoken), timeout=WAIT_MS)
    assert window.access.announcer.spoken == ["nanobot is replying", "Reply finished: 2 paragraphs, 12 words"]
    reply = window.chat_view.widget_for_row(window.chat.model.rowCount() - 1).browser
    qtbot.waitUntil(lambda: reply.accessibleName() == "Reply from nanobot", timeout=WAIT_MS)  # the chat's last flush
    assert reply.accessibleDescription() == "2 paragraphs"
    # The reply's shape was worked out once, for the announcement and the chat's description both.
    assert (reply_shape.cache_info().misses, reply_shape.cache_info().hits) == (1, 1)


def test_failures_and_approvals_are_assertive_and_the_level_turns_the_rest_down(qtbot, open_window, fake_openai):
    window = open_window()
    heard: list[tuple[str, bool]] = []
    window.access.announcer.announced.connect(lambda text, important: heard.append((text, important)))
    window.engine.update_config({"app.announcements": "important"})
    qtbot.waitUntil(lambda: window.access.announcer.level == "important", timeout=WAIT_MS)
    fake_openai.add_tool_calls([("exec", {"command": "echo hi"})])
    fake_openai.add_text("Done.")
    send(qtbot, window, "Run it")
    qtbot.waitUntil(lambda: bool(window.chat.pending_approvals(window.current_key)), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: bool(heard), timeout=WAIT_MS)
    assert heard == [("Approval needed: nanobot wants to run the tool “exec”. Press Ctrl+Shift+A to answer.", True)]
    card = window.chat_view.widget_for_row(window.chat.model.row_of_call(window.chat.pending_approvals(window.current_key)[0],
                                                                          "approval"))
    card.focus_answer()
    qtbot.keyClick(card.allow_once_button, Qt.Key.Key_A)
    wait_idle(qtbot, window)
    assert len(heard) == 1, "with 'important', a finished reply is not announced"

    fake_openai.add_error(500, "upstream broke") if hasattr(fake_openai, "add_error") else None
    window.engine.update_config({"app.announcements": "off"})
    qtbot.waitUntil(lambda: window.access.announcer.level == "off", timeout=WAIT_MS)
    window.access.announcer.on_event(SubagentFinished(window.current_key, task_id="t1", label="research", status="ok", result="r"))
    assert len(heard) == 1


def test_background_work_finishing_is_announced(qtbot, open_window):
    window = open_window()
    announcer = window.access.announcer
    announcer.on_event(SubagentFinished("cli:other", task_id="t1", label="research", status="ok", result="done"))
    announcer.on_event(CronJobRan("cron:1", job_id="1", name="Morning summary", status="ok", result="sent"))
    announcer.on_event(HeartbeatRan("heartbeat", decision="run", tasks="check mail", result="ok"))
    announcer.on_event(HeartbeatRan("heartbeat", decision="skip", tasks="", result=None))  # nothing ran: silent
    assert announcer.spoken == ["Background task “research” finished: ok", "Scheduled task “Morning summary” finished: ok",
                                "Heartbeat finished: ok"]
