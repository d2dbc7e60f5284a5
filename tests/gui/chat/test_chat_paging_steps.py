"""Scrolling up makes the next widget above the viewport in event-loop steps of its own (make it,
render its Markdown, show it out of sight, let the far widgets go, place it), and what is on screen
stays where it was (bench/session_open.py's scroll row)."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import shiboken6

from nanobot_desktop.gui.chat.markdown_render import MarkdownRenderer
from nanobot_desktop.gui.chat.message import AssistantWidget
from nanobot_desktop.gui.chat.model import AssistantMessage, ChatItem, ChatModel, ToolCard, UserMessage
from nanobot_desktop.gui.chat.view import ChatView
from nanobot_desktop.gui.chat.widgets import ItemWidget

WAIT_MS = 5000


def turns(count: int) -> list[ChatItem]:
    items: list[ChatItem] = []
    for number in range(count):
        items += [
            UserMessage(f"Question {number}: what is in notes.md?"),
            AssistantMessage(text=f"Let me look at **notes.md** ({number})."),
            ToolCard.from_call(f"call{number}", "read_file", {"path": "notes.md"}),
            AssistantMessage(text=f"Here it is:\n\n```python\nprint({number})\n```\n\n- one\n- two"),
        ]
    return items


class Steps:
    """What each build step of every ChatView made after the fixture: widgets made, rows placed,
    Markdown renders; `after_step` (if set) runs after each step, in that loop turn."""

    def __init__(self) -> None:
        self.recorded: list[dict[str, Any]] = []
        self.made: list[ItemWidget] = []
        self.after_step: Callable[[dict[str, Any]], None] | None = None
        self.before_step: Callable[[], Any] | None = None
        """Its result is kept as the step's "before"."""


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> Steps:
    recorder = Steps()
    make, build_step = ChatView._make_widget, ChatView._build_step

    def counting_make(self: ChatView, item: ChatItem, render: bool = True) -> ItemWidget:
        widget = make(self, item, render)
        recorder.made.append(widget)
        return widget

    def recording_step(self: ChatView) -> None:
        before = recorder.before_step() if recorder.before_step is not None else None
        made, first, renders = len(recorder.made), self.first_loaded_row, sum(self.render_counts.values())
        build_step(self)
        step = {"made": len(recorder.made) - made, "placed": first - self.first_loaded_row,
                "rendered": sum(self.render_counts.values()) - renders, "before": before,
                "widget": recorder.made[-1] if len(recorder.made) > made else None}
        recorder.recorded.append(step)
        if recorder.after_step is not None:
            recorder.after_step(step)

    monkeypatch.setattr(ChatView, "_make_widget", counting_make)
    monkeypatch.setattr(ChatView, "_build_step", recording_step)  # the view's timer calls the method set here
    return recorder


def shown_view(qtbot: Any, items: list[ChatItem]) -> ChatView:
    model = ChatModel()
    model.set_items(items)
    view = ChatView(model)
    qtbot.addWidget(view)
    view.resize(520, 400)
    view.show()
    qtbot.waitExposed(view)
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=WAIT_MS)
    return view


def test_scrolling_up_makes_and_places_each_widget_in_steps_of_its_own(qtbot: Any, steps: Steps) -> None:
    items = turns(60)
    view = shown_view(qtbot, items)
    bar = view.scroll_area.verticalScrollBar()
    start = view.first_loaded_row
    assert start > 8

    def in_sight() -> tuple[ItemWidget, int]:
        """The first widget in sight, and where it is on screen."""
        widget = next(widget for widget in view.loaded_widgets()
                      if widget.isVisible() and widget.geometry().bottom() >= bar.value())
        return widget, widget.y() - bar.value()

    steps.before_step = in_sight
    for _ in range(8):  # the person drags the scrollbar to the top, again and again
        first, done = view.first_loaded_row, len(steps.recorded)
        bar.setValue(bar.minimum())
        # Widgets come above until one is in sight (a turn's steps fold away): the view is then held
        # where it was, so it is no longer at the top.
        qtbot.waitUntil(lambda: view.first_loaded_row < first and bar.value() > bar.minimum(),  # noqa: B023
                        timeout=WAIT_MS)
        anchor, offset = [step["before"] for step in steps.recorded[done:] if step["placed"]][-1]
        # What was in sight before the last widget was placed is there again: it went above.
        qtbot.waitUntil(lambda: anchor.y() - bar.value() == offset, timeout=WAIT_MS)  # noqa: B023

    placed = start - view.first_loaded_row
    assert placed >= 8
    assert sum(step["placed"] for step in steps.recorded) == placed  # every widget of the paging went in by a step
    for step in steps.recorded:
        assert step["made"] <= 1 and step["placed"] <= 1, step  # one widget's worth per loop turn
        assert not (step["made"] and step["placed"]), step  # made in one turn, placed in a later one
        assert not (step["rendered"] and (step["made"] or step["placed"])), step  # its Markdown: a turn of its own
    assert any(step["rendered"] for step in steps.recorded)
    assert len(steps.recorded) >= 4 * placed  # make, show, trim, place (and render, for a reply)
    for row in range(view.first_loaded_row, view.last_loaded_row):
        widget = view.widget_for_row(row)
        assert widget is not None and widget.item is items[row]  # in order, each its own item


def test_scrolling_back_down_makes_the_widgets_that_went_again_in_steps(qtbot: Any, steps: Steps) -> None:
    items = turns(60)
    view = shown_view(qtbot, items)
    bar = view.scroll_area.verticalScrollBar()
    newest = len(items)
    for _ in range(12):  # far enough up that the newest widgets go
        first = view.first_loaded_row
        bar.setValue(bar.minimum())
        qtbot.waitUntil(lambda: view.first_loaded_row < first and bar.value() > bar.minimum(),  # noqa: B023
                        timeout=WAIT_MS)
    qtbot.waitUntil(lambda: view.last_loaded_row < newest, timeout=WAIT_MS)
    steps.recorded.clear()

    while view.last_loaded_row < newest:  # the person drags the scrollbar to the bottom, again and again
        last = view.last_loaded_row
        bar.setValue(bar.maximum())
        # A widget comes below, or the oldest ones went and what is in sight was held (no longer at the bottom).
        qtbot.waitUntil(lambda: view.last_loaded_row > last or bar.value() < bar.maximum(),  # noqa: B023
                        timeout=WAIT_MS)
    assert all(step["made"] <= 1 and step["placed"] <= 0 for step in steps.recorded)  # (placed counts rows above)
    assert not any(step["made"] and step["rendered"] for step in steps.recorded)
    assert sum(step["made"] for step in steps.recorded) >= newest - 1 - view.first_loaded_row - len(view.loaded_widgets())
    for row in range(view.first_loaded_row, view.last_loaded_row):
        widget = view.widget_for_row(row)
        assert widget is not None and widget.item is items[row]
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: view.loaded_widgets()[-1].isVisible()
                    and view.loaded_widgets()[-1].geometry().bottom() <= bar.value() + view.scroll_area.viewport().height(),
                    timeout=WAIT_MS)  # the newest answer is in sight at the end


def test_a_widget_made_for_the_row_above_goes_when_the_rows_change(qtbot: Any, steps: Steps) -> None:
    view = shown_view(qtbot, turns(40))
    model = view.model()
    assert model is not None
    made: list[ItemWidget] = []

    def reset_once_made(step: dict[str, Any]) -> None:
        if step["made"] and not made:  # a widget waits, made, for its next steps: now another session comes
            made.append(steps.made[-1])
            model.set_items(turns(2))

    steps.after_step = reset_once_made
    view.scroll_area.verticalScrollBar().setValue(0)  # the person goes to the top
    qtbot.waitUntil(lambda: bool(made), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not shiboken6.isValid(made[0]), timeout=WAIT_MS)  # deleted, not left parentless
    assert [widget.item for widget in view.loaded_widgets()] == model.items()
    container = view.scroll_area.widget()
    shown = [child for child in container.findChildren(ItemWidget) if child.isVisible()]
    assert shown and all(child in view.loaded_widgets() for child in shown)  # nothing else in the conversation


def test_an_item_that_changes_while_its_widget_waits_shows_what_it_is_now(qtbot: Any, steps: Steps) -> None:
    items = turns(40)
    view = shown_view(qtbot, items)
    model = view.model()
    assert model is not None
    changed: list[AssistantMessage] = []

    def change_once_rendered(step: dict[str, Any]) -> None:
        item = steps.made[-1].item if step["rendered"] else None
        if isinstance(item, AssistantMessage) and not changed:  # its widget is made and rendered, not placed
            item.text = "Rewritten **while it waited**."
            model.refresh_row(items.index(item))  # (as a fork switch announces a change in place)
            changed.append(item)

    steps.after_step = change_once_rendered
    bar = view.scroll_area.verticalScrollBar()
    while not changed or view.first_loaded_row > items.index(changed[0]):
        first = view.first_loaded_row
        bar.setValue(bar.minimum())
        qtbot.waitUntil(lambda: view.first_loaded_row < first and bar.value() > bar.minimum(),  # noqa: B023
                        timeout=WAIT_MS)
    widget = view.widget_for_row(items.index(changed[0]))
    assert isinstance(widget, AssistantWidget)
    assert widget.browser.toPlainText() == "Rewritten while it waited."


def test_a_long_reply_above_is_rendered_over_several_steps(qtbot: Any, steps: Steps) -> None:
    long_reply = AssistantMessage(text="\n\n".join(
        f"Section {number}: **bold**, `code` and a list:\n\n- one\n- two\n\n```python\nprint({number})\n```"
        for number in range(150)))
    items = [UserMessage("Tell me everything."), long_reply, *turns(12)]
    view = shown_view(qtbot, items)
    bar = view.scroll_area.verticalScrollBar()
    while view.first_loaded_row > 1:
        first = view.first_loaded_row
        bar.setValue(bar.minimum())
        qtbot.waitUntil(lambda: view.first_loaded_row < first and bar.value() > bar.minimum(),  # noqa: B023
                        timeout=WAIT_MS)
    widget = view.widget_for_row(1)
    assert isinstance(widget, AssistantWidget) and widget.item is long_reply
    assert "Section 149: bold" in widget.browser.toPlainText() and len(widget.codes()) == 150
    # Between the step that made it and the one that placed it, its Markdown took many steps, none of
    # them making or placing anything.
    reply_made = max(index for index, step in enumerate(steps.recorded) if step["made"] and step["widget"] is widget)
    placed = next(index for index, step in enumerate(steps.recorded) if index > reply_made and step["placed"])
    between = steps.recorded[reply_made + 1:placed]
    assert len(between) >= 10 and not any(step["made"] or step["placed"] for step in between)



def test_a_reply_rendered_in_steps_converts_each_block_once(qtbot: Any) -> None:
    text = "\n\n".join(f"Part {number}: *some* text.\n\n```\ncode {number}\n```" for number in range(30)) + "\n\nThe end."
    at_once, in_steps = MarkdownRenderer(), MarkdownRenderer()
    whole = AssistantWidget(AssistantMessage(text=text), at_once)
    stepped = AssistantWidget(AssistantMessage(text=text), in_steps, render=False)
    qtbot.addWidget(whole)
    qtbot.addWidget(stepped)
    turns_taken = 1
    while not stepped.prepare(0.0):  # a budget used up at once: one block per call
        turns_taken += 1
    stepped.refresh()
    assert turns_taken > 30
    assert stepped.browser.toPlainText() == whole.browser.toPlainText() and stepped.codes() == whole.codes()
    assert in_steps.chars_rendered == at_once.chars_rendered  # the last block too: once, not as a tail and again
