"""Issue 26: message actions as the peers show them. Copy and Regenerate sit only under the reply
that ends a turn (not under "Let me look…" before a tool step), the newest reply shows them, an
older message shows its actions while the pointer is over it or the keyboard focus is inside it, and
they are icon buttons with tooltips and accessible names."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from nanobot_desktop.gui.chat.message import AssistantWidget
from nanobot_desktop.gui.chat.model import AssistantMessage, UserMessage
from nanobot_desktop.gui.chat.widgets import UserBubble
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]  # the fixture, used by name


def widgets_of(window, kind) -> list:
    model = window.chat.model
    return [window.chat_view.widget_for_row(row) for row in range(model.rowCount()) if isinstance(model.item(row), kind)]


def test_actions_only_under_final_replies_and_revealed_on_hover_or_focus(qtbot, open_window, fake_openai):
    window = open_window()
    window.resize(1280, 800)
    fake_openai.add_tool_calls([("list_dir", {"path": "."})], content="Let me look around.")
    fake_openai.add_text("There is nothing here yet.")
    send(qtbot, window, "What is in my workspace?")
    wait_idle(qtbot, window)
    fake_openai.add_text("You are welcome.")
    send(qtbot, window, "Thanks")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: len(widgets_of(window, AssistantMessage)) == 3, timeout=WAIT_MS)
    step, answer, newest = widgets_of(window, AssistantMessage)
    qtbot.waitUntil(lambda: not newest.message.streaming and newest.copy_button.isVisibleTo(newest), timeout=WAIT_MS)
    assert isinstance(step, AssistantWidget) and step.message.text == "Let me look around."
    assert not step.is_final
    assert not step.copy_button.isVisibleTo(step) and not step.message_actions.regenerate_button.isVisibleTo(step)
    for reply in (answer, newest):
        assert reply.is_final and reply.copy_button.isVisibleTo(reply)
        assert reply.message_actions.regenerate_button.isVisibleTo(reply)
        for button in (reply.copy_button, reply.message_actions.regenerate_button):
            assert button.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly and not button.icon().isNull()
            assert button.toolTip() and button.accessibleName()
    assert newest.reveal.revealed  # the newest reply's actions show without a hover …
    assert not answer.reveal.revealed  # … an older one's wait for the pointer or the focus
    height = answer.height()
    qtbot.mouseMove(answer, QPoint(10, 10))
    qtbot.waitUntil(lambda: answer.reveal.revealed, timeout=WAIT_MS)
    assert answer.height() == height  # shown in the room they kept: nothing jumps
    qtbot.mouseMove(newest, QPoint(10, 10))
    qtbot.waitUntil(lambda: not answer.reveal.revealed, timeout=WAIT_MS)

    bubble = widgets_of(window, UserMessage)[0]
    assert isinstance(bubble, UserBubble) and not bubble.reveal.revealed
    bubble.message_actions.edit_button.setFocus(Qt.FocusReason.TabFocusReason)  # reached with Tab
    qtbot.waitUntil(lambda: bubble.reveal.revealed, timeout=WAIT_MS)
    qtbot.mouseClick(bubble.message_actions.edit_button, Qt.MouseButton.LeftButton)
    assert bubble.message_actions.edit_box.isVisible()


def test_the_steps_of_a_finished_turn_fold_into_one_row_and_a_running_turn_keeps_them_open(qtbot, open_window, fake_openai):
    from nanobot_desktop.gui.chat.model import ToolCard

    window = open_window()
    window.resize(1280, 800)
    fake_openai.add_tool_calls([("list_dir", {"path": "."})], content="Let me look around.")
    fake_openai.add_tool_calls([("list_dir", {"path": "."}), ("exec", {"command": "echo hi"})])
    fake_openai.add_text("Two folders and a greeting.")
    send(qtbot, window, "What is here?")
    qtbot.waitUntil(lambda: bool(window.chat.pending_approvals(window.current_key)), timeout=WAIT_MS)
    view = window.chat_view
    assert view.step_groups.headers() == []  # still running, waiting for an answer: every step in sight
    assert all(widget.isVisible() for widget in widgets_of(window, ToolCard))
    call_id = window.chat.pending_approvals(window.current_key)[0]
    card = view.widget_for_row(window.chat.model.row_of_call(call_id, "approval"))
    qtbot.mouseClick(card.allow_once_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: len(view.step_groups.headers()) == 1, timeout=WAIT_MS)
    [steps] = view.step_groups.headers()
    assert steps.text() == "3 steps" and steps.isVisible() and steps.toolTip() and steps.accessibleName() == "3 steps"
    tools = widgets_of(window, ToolCard)
    step_reply, answer = widgets_of(window, AssistantMessage)
    assert len(tools) == 3 and not any(widget.isVisible() for widget in tools) and not step_reply.isVisible()
    assert not card.isVisible() and answer.isVisible() and answer.message.text == "Two folders and a greeting."
    assert steps.y() < answer.y()
    qtbot.mouseClick(steps, Qt.MouseButton.LeftButton)  # unfolded …
    assert all(widget.isVisible() for widget in tools) and step_reply.isVisible() and card.isVisible()
    assert steps.isVisible() and steps.y() < tools[0].y()
    qtbot.mouseClick(steps, Qt.MouseButton.LeftButton)  # … and folded again
    assert not any(widget.isVisible() for widget in tools)
