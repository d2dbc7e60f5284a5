"""A long conversation typed into the real window keeps message widgets only near what is on screen.

Each message widget costs ~100 kB of Qt objects, so the view deletes those more than a screenful
(`ChatView.MARGIN_SCREENS`) above or below the viewport and makes them again from the chat items when
scrolled back to (bench/long_session_memory.py measures what this saves over 100 turns).
"""

from __future__ import annotations

import pytest

from nanobot_desktop.gui.chat.view import ChatView
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]

TURNS = 40


def within_screenfuls(view: ChatView) -> bool:
    """The widgets shown span no more than the viewport and a margin of screenfuls above and below it
    (give or take the widget that straddles each edge of that band)."""
    height = view.scroll_area.viewport().height()
    shown = [widget for widget in view.loaded_widgets() if widget.isVisible()]
    if not shown or height <= 0:
        return False
    span = shown[-1].geometry().bottom() - shown[0].y()
    tallest = max(widget.height() for widget in shown)
    return span <= (1 + 2 * ChatView.MARGIN_SCREENS) * height + 2 * tallest


@pytest.mark.slow
def test_a_long_conversation_keeps_widgets_only_a_screenful_around_the_viewport(qtbot, open_window, fake_openai):
    window = open_window()
    view = window.chat_view
    bar = view.scroll_area.verticalScrollBar()
    counts: list[int] = []
    for number in range(TURNS):
        fake_openai.add_text(f"answer {number}: noted, the list has one more task now.")
        send(qtbot, window, f"question {number}: add one more task, please")
        wait_idle(qtbot, window)
        qtbot.waitUntil(lambda: within_screenfuls(view) and bar.value() == bar.maximum(), timeout=WAIT_MS)
        counts.append(len(view.loaded_widgets()))
    assert window.chat.model.rowCount() == 2 * TURNS
    assert view.loaded_widgets()[-1].item.text.startswith(f"answer {TURNS - 1}:")  # the newest reply, in sight
    assert counts[-1] < 2 * TURNS // 2  # not one widget per message: the oldest went
    assert max(counts[TURNS // 2:]) <= counts[TURNS // 2 - 1] + 2  # and the number stopped growing with the turns

    for _step in range(2 * TURNS):  # the person drags the scrollbar to the top until the first message
        if view.first_loaded_row == 0 and bar.value() == bar.minimum():
            break
        bar.setValue(bar.minimum())
        qtbot.waitUntil(lambda: bar.value() > bar.minimum() or view.first_loaded_row == 0, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: within_screenfuls(view), timeout=WAIT_MS)
        assert len(view.loaded_widgets()) <= max(counts) + 2
    assert view.first_loaded_row == 0
    assert view.loaded_widgets()[0].item.text == "question 0: add one more task, please"  # made again from its item
    assert view.last_loaded_row < 2 * TURNS  # the newest ones went on the way up


@pytest.mark.slow
def test_a_turns_folded_steps_read_the_same_after_its_widgets_went_and_came_back(qtbot, open_window, fake_openai):
    from PySide6.QtCore import Qt

    from nanobot_desktop.gui.chat.model import ToolCard

    window = open_window()
    view = window.chat_view
    bar = view.scroll_area.verticalScrollBar()
    for number in range(14):
        fake_openai.add_tool_calls([("list_dir", {"path": "."})], content=f"Let me look ({number}).")
        fake_openai.add_text(f"answer {number}: the folder is empty.")
        send(qtbot, window, f"question {number}: what is here?")
        wait_idle(qtbot, window)
        if number == 0:  # the person unfolds the first turn's steps
            qtbot.waitUntil(lambda: len(view.step_groups.headers()) == 1, timeout=WAIT_MS)
            qtbot.mouseClick(view.step_groups.headers()[0], Qt.MouseButton.LeftButton)
    first_card = window.chat.model.items()[2]
    assert isinstance(first_card, ToolCard)
    qtbot.waitUntil(lambda: view.first_loaded_row > 2, timeout=WAIT_MS)  # the first turn's widgets went
    for _step in range(100):  # and the person scrolls back up to it
        if view.first_loaded_row == 0 and bar.value() == bar.minimum():
            break
        bar.setValue(bar.minimum())
        # (a step made again folds behind its turn's row: the view goes on up without a scroll to wait for)
        qtbot.waitUntil(lambda: bar.value() > bar.minimum() or view.first_loaded_row == 0, timeout=WAIT_MS)
    assert view.first_loaded_row == 0
    qtbot.waitUntil(lambda: bool(view.step_groups.headers()), timeout=WAIT_MS)
    header = view.step_groups.headers()[0]
    card = view.widget_for_row(2)
    assert card is not None and card.item is first_card
    assert header.text() == "1 step"
    assert header.isChecked() and card.isVisible()  # still unfolded, as the person left it
    assert all(not h.isChecked() for h in view.step_groups.headers()[1:])  # the others still folded
