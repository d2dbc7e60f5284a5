"""The tray when background work waits for the person: the "waiting" state, one menu entry per pending
approval with its answers, the notification, and expiry; a real engine and the loopback fake."""

from __future__ import annotations

import asyncio

import pytest

from nanobot_desktop.engine import ApprovalAnswer, ApprovalAnswered, ApprovalRefused, ApprovalSurface
from nanobot_desktop.gui.window.tray import tray_icon_path, tray_state
from tests.engine.agent.test_background_approvals import TASK, route_heartbeat_exec


@pytest.fixture
def tray_use_dbus() -> bool:
    """The approvals are answered from the menu and the plain notification, never over D-Bus."""
    return False


@pytest.fixture
def tray_env(tray_env, fake_openai):
    """(engine, tray): tests/gui/conftest.py's tray, its heartbeat about to ask for an exec approval."""
    engine, bridge, _window, tray = tray_env
    engine.workspace.heartbeat_file.write_text(TASK, encoding="utf-8")
    route_heartbeat_exec(fake_openai)
    tray.bridge_for_tests = bridge
    return engine, tray


def start_tick(qtbot, engine, tray):
    tick = asyncio.ensure_future(engine.heartbeat.trigger_now())
    qtbot.waitUntil(lambda: tray.state == "waiting", timeout=10000)
    return tick


def entry_actions(tray) -> dict[str, object]:
    (entry,) = tray.approvals.menu_entries()
    return {action.text(): action for action in entry.actions()}


def test_waiting_wins_and_has_its_own_icon() -> None:
    assert tray_state(busy=True, failed=True, paused=True, waiting=True) == "waiting"
    assert tray_state(busy=True, failed=False, paused=False, waiting=False) == "running"
    assert tray_icon_path("waiting").is_file()


def test_a_pending_approval_is_listed_in_the_menu_and_allow_once_finishes_the_task(qtbot, tray_env):
    engine, tray = tray_env
    answered: list[ApprovalAnswered] = []
    engine.bus.subscribe(lambda event: answered.append(event) if isinstance(event, ApprovalAnswered) else None)
    tick = start_tick(qtbot, engine, tray)
    (request,) = tray.approvals.pending.values()
    (entry,) = tray.approvals.menu_entries()
    assert entry.title() == "Heartbeat: exec `echo fed`"
    assert tray.menu.actions()[0] is entry.menuAction()  # at the top of the tray menu
    assert list(entry_actions(tray)) == ["Allow once", "Deny", "Show in window"]
    qtbot.waitUntil(lambda: bool(tray.approvals.notified))  # sent once the D-Bus notifier has started
    (title, body, buttons) = tray.approvals.notified[0]
    assert title == "Heartbeat wants to run a command" and body.startswith("`echo fed` — unanswered, it counts as Deny")
    assert buttons == []  # no notification server here: a plain message, answered from the menu

    entry_actions(tray)["Allow once"].trigger()
    qtbot.waitUntil(tick.done, timeout=10000)
    record = tick.result()
    assert record.result == "Tool said: fed"
    assert record.approvals == ("exec echo fed → allowed once",)
    assert tray.approvals.menu_entries() == []
    qtbot.waitUntil(lambda: tray.state == "idle", timeout=3000)
    assert [(e.call_id, e.answer, e.surface) for e in answered] == [
        (request.call_id, ApprovalAnswer.ALLOW_ONCE, ApprovalSurface.TRAY)]  # once, from the tray
    with pytest.raises(ApprovalRefused, match="already answered from the tray"):  # a card's late click
        engine.approvals.answer(request.call_id, ApprovalAnswer.DENY, ApprovalSurface.CARD)
    assert tray.approvals.answer(request.call_id, ApprovalAnswer.DENY) is False  # nor the menu again
    assert ("Heartbeat", "Tool said: fed", "heartbeat") in tray.notifications_sent


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # showing the window offscreen
def test_deny_from_the_menu_and_show_in_window(qtbot, tray_env):
    engine, tray = tray_env
    tick = start_tick(qtbot, engine, tray)
    with qtbot.waitSignal(tray.open_session_requested) as opened:
        entry_actions(tray)["Show in window"].trigger()
    assert opened.args == ["heartbeat"]
    assert tray.state == "waiting"  # showing does not answer
    entry_actions(tray)["Deny"].trigger()
    qtbot.waitUntil(tick.done, timeout=10000)
    assert tick.result().approvals == ("exec echo fed → denied",)
    assert tick.result().tools[0].status == "denied"


def test_an_unanswered_approval_expires_and_the_waiting_state_ends(qtbot, tray_env):
    engine, tray = tray_env
    engine.app_settings.background_approval_expiry_s = 0.3
    tick = start_tick(qtbot, engine, tray)
    qtbot.waitUntil(tick.done, timeout=10000)
    assert tick.result().approvals[0].startswith("exec echo fed → denied (nobody answered within 0.3 s")
    assert tray.approvals.menu_entries() == [] and tray.approvals.pending == {}
    qtbot.waitUntil(lambda: tray.state != "waiting", timeout=3000)


def test_the_heartbeat_view_says_what_it_waits_for(qtbot, tray_env):
    from nanobot_desktop.gui.background.heartbeat_view import HeartbeatView

    engine, tray = tray_env
    view = HeartbeatView(engine, tray.bridge_for_tests)
    qtbot.addWidget(view)
    tick = start_tick(qtbot, engine, tray)
    qtbot.waitUntil(lambda: "Waiting for your approval: exec `echo fed`" in view.status_label.text(), timeout=3000)
    entry_actions(tray)["Allow once"].trigger()
    qtbot.waitUntil(tick.done, timeout=10000)
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=3000)
    assert "Waiting" not in view.status_label.text()
    view.timeline.setCurrentIndex(view.model.index(0))
    assert "Waited for your approval: exec echo fed → allowed once" in view.details.toPlainText()
    view.shutdown()
