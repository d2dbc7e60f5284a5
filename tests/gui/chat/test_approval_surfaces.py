"""The chat card as one surface of the engine's one approval object (issue 30): its click answers the
request once through the engine; the tray's (or a notification's) later answer to the same request is
refused; and a background ask answered from the card leaves the tray's menu. A real MainWindow on a
real Engine against the loopback fake endpoint."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.engine import ApprovalAnswer, ApprovalAnswered, ApprovalRefused, ApprovalSurface
from nanobot_desktop.gui.chat.cards import ApprovalCardWidget
from tests.engine.agent.test_background_approvals import TASK, route_heartbeat_exec
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]


def answers_of(window) -> list[ApprovalAnswered]:
    answered: list[ApprovalAnswered] = []
    window.engine.bus.subscribe(lambda event: answered.append(event) if isinstance(event, ApprovalAnswered) else None)
    return answered


def card_widget(qtbot, window, key: str) -> ApprovalCardWidget:
    qtbot.waitUntil(lambda: bool(window.chat.pending_approvals(key)), timeout=WAIT_MS)
    call_id = window.chat.pending_approvals(key)[0]
    widget = window.chat_view.widget_for_row(window.chat.model.row_of_call(call_id, "approval"))
    assert isinstance(widget, ApprovalCardWidget)
    return widget


def test_a_card_click_answers_once_and_the_tray_cannot_answer_it_again(qtbot, open_window, fake_openai):
    window = open_window()
    answered = answers_of(window)
    fake_openai.add_tool_calls([("exec", {"command": "echo hi"})])
    fake_openai.add_text("It printed hi.")
    send(qtbot, window, "Run echo hi")
    widget = card_widget(qtbot, window, window.current_key)
    call_id = widget.card.call_id
    assert window.engine.approvals.get(call_id) is not None  # the card is the engine's request, by its call id

    qtbot.mouseClick(widget.allow_once_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert [(e.call_id, e.answer, e.surface) for e in answered] == [
        (call_id, ApprovalAnswer.ALLOW_ONCE, ApprovalSurface.CARD)]
    with pytest.raises(ApprovalRefused, match=r"already answered from the card \(allowed once\)"):
        window.engine.approvals.answer(call_id, ApprovalAnswer.DENY, ApprovalSurface.TRAY)
    assert window.chat.answer_approval(call_id, "deny") is False  # nor the card a second time
    card = window.chat.model.item(window.chat.model.row_of_call(call_id, "approval"))
    assert (card.state, card.answer, card.answered_by) == ("allowed", "allow_once", "card")
    assert widget.summary_text() == "Allowed once: exec echo hi"  # answered here: no "answered from …"
    assert len(answered) == 1 and window.chat.model.item(window.chat.model.row_of_call(call_id, "tool")).status == "ok"


@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_a_background_ask_answered_on_its_card_leaves_the_tray_and_refuses_the_tray(qtbot, open_window, fake_openai):
    window = open_window()
    engine, tray = window.engine, window.tray
    answered = answers_of(window)
    engine.workspace.heartbeat_file.write_text(TASK, encoding="utf-8")
    route_heartbeat_exec(fake_openai)
    tick = asyncio.ensure_future(engine.heartbeat.trigger_now())
    qtbot.waitUntil(lambda: tray.state == "waiting", timeout=WAIT_MS)
    (request,) = tray.approvals.pending.values()
    window.open_session("heartbeat")
    widget = card_widget(qtbot, window, "heartbeat")
    assert widget.card.call_id == request.call_id  # one request: the tray's entry and the card are the same

    qtbot.mouseClick(widget.deny_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(tick.done, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: tray.approvals.menu_entries() == [], timeout=WAIT_MS)
    assert tray.approvals.answer(request.call_id, ApprovalAnswer.ALLOW_ONCE) is False  # refused, settled already
    assert [(e.call_id, e.answer, e.surface) for e in answered] == [
        (request.call_id, ApprovalAnswer.DENY, ApprovalSurface.CARD)]
    assert tick.result().approvals == ("exec echo fed → denied",)
    qtbot.waitUntil(lambda: tray.state != "waiting", timeout=WAIT_MS)
