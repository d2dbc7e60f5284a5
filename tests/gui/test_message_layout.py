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
