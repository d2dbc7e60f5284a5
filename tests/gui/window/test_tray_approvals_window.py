"""In the real main window: a background approval's card sits in its session, the tray's "Show in
window" opens that session with the card in view, and an answer from the tray settles the card."""

from __future__ import annotations

import asyncio

import pytest

from nanobot_desktop.gui.chat.model import ApprovalCard
from tests.engine.agent.test_background_approvals import TASK, route_heartbeat_exec
from tests.gui.window_fixtures import WAIT_MS, open_window  # noqa: F401  (a fixture)


@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_show_in_window_opens_the_session_with_its_card_and_the_tray_answer_settles_it(
        qtbot, open_window, fake_openai):  # noqa: F811  (the fixture imported above)
    window = open_window()
    engine = window.engine
    engine.workspace.heartbeat_file.write_text(TASK, encoding="utf-8")
    route_heartbeat_exec(fake_openai)
    tray = window.tray
    tick = asyncio.ensure_future(engine.heartbeat.trigger_now())
    qtbot.waitUntil(lambda: tray.state == "waiting", timeout=WAIT_MS)
    (pending,) = engine.approvals.pending()
    (entry,) = tray.approvals.menu_entries()
    actions = {action.text(): action for action in entry.actions()}

    actions["Show in window"].trigger()
    qtbot.waitUntil(lambda: window.current_key == "heartbeat", timeout=WAIT_MS)
    model = window.chat.model  # the session on screen
    qtbot.waitUntil(lambda: model.row_of_call(pending.call_id, "approval") >= 0, timeout=WAIT_MS)
    card = model.item(model.row_of_call(pending.call_id, "approval"))
    assert isinstance(card, ApprovalCard) and card.state == "pending" and card.command == "echo fed"

    actions["Allow once"].trigger()
    qtbot.waitUntil(tick.done, timeout=WAIT_MS)
    assert tick.result().result == "Tool said: fed"
    qtbot.waitUntil(lambda: model.item(model.row_of_call(pending.call_id, "approval")).state != "pending",
                    timeout=WAIT_MS)
    card = model.item(model.row_of_call(pending.call_id, "approval"))
    assert (card.state, card.answer, card.answered_by) == ("allowed", "allow_once", "tray")  # says who answered
    widget = window.chat_view.widget_for_row(model.row_of_call(pending.call_id, "approval"))
    assert widget.summary_text() == "Allowed once: exec echo fed (answered from the tray menu)"
    assert window.chat.answer_approval(pending.call_id, "deny") is False  # the card cannot answer it again
    assert model.item(model.row_of_call(pending.call_id, "approval")).state == "allowed"
    qtbot.waitUntil(lambda: tray.state != "waiting", timeout=WAIT_MS)
