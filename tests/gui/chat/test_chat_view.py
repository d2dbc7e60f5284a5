"""ChatModel, Markdown rendering, ChatView (streaming, copy, escaping, cards, scrolling, paging) and theme."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QPalette, QTextCursor
from PySide6.QtWidgets import QApplication

from nanobot_desktop.gui.chat.cards import ApprovalCardWidget
from nanobot_desktop.gui.chat.model import (
    ApprovalCard, AssistantMessage, ChatModel, ItemDataRole, ItemIdRole, ItemKindRole, Notice,
    StatusRole, StreamingRole, ToolCard, UserMessage, summarize_arguments,
)
from nanobot_desktop.gui.chat.view import ChatView
from nanobot_desktop.gui.chat.message import AssistantWidget
from nanobot_desktop.gui.chat.widgets import ToolCardWidget, UserBubble
from nanobot_desktop.gui.chat.markdown_render import KEEP_STREAMED_CODE_OVER, IncrementalMessage, MarkdownRenderer, split_blocks
from nanobot_desktop.gui.common.palette import is_dark
from nanobot_desktop.gui.common.theme import apply_theme, current_theme_mode


def sample_items() -> list:
    return [
        UserMessage("hello", attachments=("/tmp/a.png",)),
        AssistantMessage(text="**hi**", reasoning="thinking"),
        ToolCard.from_call("c1", "read_file", {"path": "notes.md"}),
        ApprovalCard.for_tool_call("c2", "exec", {"command": "ls -la", "working_dir": "/w"}),
        Notice("stopped", level="stopped"),
    ]


@pytest.fixture
def view(qtbot):
    model = ChatModel()
    chat = ChatView(model)
    qtbot.addWidget(chat)
    chat.resize(640, 480)
    return chat


def show(qtbot, chat: ChatView) -> None:
    chat.show()
    qtbot.waitExposed(chat)


# --- model -----------------------------------------------------------------------------------------


def test_model_passes_the_qt_model_tester_through_every_kind_of_change(qtmodeltester):
    model = ChatModel()
    model.extend(sample_items())
    qtmodeltester.check(model)  # also keeps watching the changes below
    model.begin_assistant()
    for delta in ("Hel", "lo ", "world"):
        model.append_text_delta(delta)
    model.append_reasoning_delta("because")
    model.finish_assistant()
    model.append(ToolCard.from_call("c3", "exec", {"command": "make"}))
    model.update_tool("c3", "ok", 0.5)
    model.set_approval_state("c2", "allowed", "allow_once")
    model.set_items(sample_items())
    model.clear()
    assert model.rowCount() == 0


def test_model_roles_describe_each_item():
    model = ChatModel()
    model.extend(sample_items())
    kinds = [model.data(model.index(row), ItemKindRole) for row in range(model.rowCount())]
    assert kinds == ["user", "assistant", "tool", "approval", "notice"]
    assert model.data(model.index(2), StatusRole) == "running"
    assert model.data(model.index(3), ItemDataRole).command == "ls -la"
    assert model.data(model.index(3), ItemDataRole).working_dir == "/w"
    assert len({model.data(model.index(row), ItemIdRole) for row in range(5)}) == 5
    assert b"kind" in model.roleNames().values()


def test_streaming_deltas_change_only_the_last_row(qtbot):
    model = ChatModel()
    model.extend(sample_items())
    model.begin_assistant()
    changed_rows: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom, _roles: changed_rows.append((top.row(), bottom.row())))
    for delta in ["a"] * 100:
        model.append_text_delta(delta)
    last = model.rowCount() - 1
    assert changed_rows == [(last, last)] * 100
    assert model.data(model.index(last), StreamingRole) is True
    assert model.item(last).text == "a" * 100


def test_appending_a_card_finishes_the_streaming_message_and_new_deltas_start_a_new_one():
    model = ChatModel()
    model.append_text_delta("first")  # no streaming message yet: one is started
    model.append(ToolCard.from_call("c1", "exec", {"command": "ls"}))
    model.append_text_delta("second")
    first, card, second = model.items()
    assert (first.text, first.streaming) == ("first", False)
    assert isinstance(card, ToolCard)
    assert (second.text, second.streaming) == ("second", True)
    model.finish_assistant(stopped=True)
    assert second.stopped and not second.streaming


def test_model_rejects_unknown_states_and_calls():
    model = ChatModel()
    model.append(ToolCard.from_call("c1", "exec", {"command": "ls"}))
    with pytest.raises(ValueError, match="unknown tool status 'done'"):
        model.update_tool("c1", "done")
    with pytest.raises(KeyError, match="no tool card for tool call 'nope'"):
        model.update_tool("nope", "ok")
    with pytest.raises(KeyError, match="no approval card"):
        model.set_approval_state("c1", "allowed")


def test_argument_summary_is_the_first_value_on_one_short_line():
    assert summarize_arguments({"path": "a.txt", "content": "x"}) == "a.txt"
    assert summarize_arguments({"command": "echo  a\nb"}) == "echo a b"
    assert summarize_arguments({"n": [1, 2]}) == "[1, 2]"
    long = summarize_arguments({"q": "x" * 200})
    assert len(long) == 60 and long.endswith("…")
    assert summarize_arguments({}) == ""


# --- markdown rendering ----------------------------------------------------------------------------


def test_blocks_split_at_blank_lines_but_never_inside_fences_or_indented_continuations():
    text = "para one\n\n```\ncode\n\nmore code\n```\n\n- item\n\n    continued\n\nlast"
    boundaries, fence = split_blocks(text)
    blocks = [text[start:end] for start, end in zip([0, *boundaries], [*boundaries, len(text)], strict=True)]
    assert blocks == ["para one\n\n", "```\ncode\n\nmore code\n```\n", "\n- item\n\n    continued\n\n", "last"]
    assert fence is None
    # A fence opening right under a paragraph still starts its own block; an open one is reported.
    assert split_blocks("intro\n```py\nstill open\n\n") == ([6], "```")


def test_incremental_rendering_matches_a_full_render_and_stays_linear():
    paragraphs = [f"Paragraph {i} with *some* text and `code`." for i in range(200)]
    text = "\n\n".join(paragraphs[:100]) + "\n\n```python\nx = 1\n\ny = 2\n```\n\n" + "\n\n".join(paragraphs[100:])
    renderer = MarkdownRenderer()
    incremental = IncrementalMessage(renderer)
    for end in range(0, len(text), 7):
        incremental.update(text[:end], final=False)
    incremental.update(text, final=True)
    full_html, full_codes = MarkdownRenderer().render(text)
    assert incremental.html() == full_html
    assert incremental.codes == full_codes == ["x = 1\n\ny = 2"]
    # ~1,400 updates: re-rendering the whole text each time would convert ~1,400 × len/2 characters.
    assert renderer.chars_rendered < 20 * len(text)


def test_raw_html_from_the_model_is_escaped_and_code_is_highlighted_inline():
    html, codes = MarkdownRenderer().render(
        'Hi <script>alert(1)</script> <img src=x onerror="alert(2)">\n\n<div>block</div>\n\n```python\nif a < b: pass\n```'
    )
    assert "<script" not in html and "<img" not in html and "<div>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'style="color:' in html  # pygments inline styles, no CSS classes needed
    assert codes == ["if a < b: pass"]


# --- view: streaming -------------------------------------------------------------------------------


def test_streaming_2000_deltas_renders_the_right_text_and_only_the_last_message(qtbot, view):
    model = view.model()
    model.append(UserMessage("question"))
    model.append(AssistantMessage(text="An **earlier** answer."))
    model.append(UserMessage("next question"))
    show(qtbot, view)
    earlier_uid = model.item(1).uid
    assert view.render_counts[earlier_uid] == 1

    model.begin_assistant()
    streaming_uid = model.item(3).uid
    words = [f"word{i} " if i % 40 else f"\n\nPara{i} " for i in range(2000)]
    flushes = 0
    for number, delta in enumerate(words, start=1):
        model.append_text_delta(delta)
        if number % 100 == 0:
            view.flush_now()
            flushes += 1
    model.append_text_delta("\n\n```python\nprint('done')\n```\n")
    before_timer = view.render_counts[streaming_uid]
    qtbot.waitUntil(lambda: view.render_counts[streaming_uid] > before_timer, timeout=5000)  # the 40 ms timer
    widget = view.widget_for_row(3)
    assert isinstance(widget, AssistantWidget)
    live_text = widget.browser.toPlainText()
    assert "Para1960" in live_text and "word1999" in live_text and "print('done')" in live_text

    model.finish_assistant()
    qtbot.waitUntil(lambda: widget.status_label.isHidden(), timeout=5000)
    expected = "".join(words) + "\n\n```python\nprint('done')\n```\n"
    assert model.item(3).text == expected
    assert widget.browser.toPlainText() == reference_text(qtbot, expected)
    assert view.render_counts[earlier_uid] == 1  # earlier messages are never rebuilt
    assert flushes + 2 <= view.render_counts[streaming_uid] <= flushes + 4
    # Each flush converted only the growing tail: re-rendering the whole message per flush would
    # convert about flushes × len/2 characters.
    assert view.renderer.chars_rendered < 2 * len(expected)
    assert widget.codes()[-1] == "print('done')"


def test_the_live_document_while_streaming_reads_like_the_final_one(qtbot, view):
    text = ("## Plan\n\n1. Read the file\n2. Fix the bug\n\n```python\ndef f(x):\n\n    return x * 2\n```\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter the table.\n\n- one\n- two\n\n> quoted\n\nThe end")
    model = view.model()
    model.begin_assistant()
    for start in range(0, len(text), 5):
        model.append_text_delta(text[start:start + 5])
        view.flush_now()
    widget = view.widget_for_row(0)
    live = widget.browser.toPlainText()
    model.finish_assistant()
    view.flush_now()
    assert live == widget.browser.toPlainText() == reference_text(qtbot, text)


def reference_text(qtbot, text: str) -> str:
    """What the same message looks like rendered in one go (as when loaded from history)."""
    reference = AssistantWidget(AssistantMessage(text=text), MarkdownRenderer())
    qtbot.addWidget(reference)
    return reference.browser.toPlainText()


@pytest.mark.parametrize("lines", [200, 900])  # under / over KEEP_STREAMED_CODE_OVER characters
def test_an_open_code_fence_grows_by_whole_lines_without_re_rendering(qtbot, view, lines):
    model = view.model()
    model.begin_assistant()
    model.append_text_delta("Here:\n```python\nx = 1\ny = ")
    view.flush_now()
    widget = view.widget_for_row(0)
    assert "x = 1" in widget.browser.toPlainText()
    assert "y =" not in widget.browser.toPlainText()  # an unfinished line waits for its newline
    assert widget.codes() == ["x = 1\ny = "]
    rendered_before = view.renderer.chars_rendered
    for i in range(lines):
        model.append_text_delta(f"{i}\nz_{i} = ")
        view.flush_now()
    assert view.renderer.chars_rendered == rendered_before  # lines were appended, nothing re-rendered
    assert f"z_{lines - 2} = {lines - 1}" in widget.browser.toPlainText()

    model.append_text_delta("0\n```\n\nAfter.")
    view.flush_now()
    code = widget.codes()[0]
    assert code.startswith("x = 1\ny = 0\nz_0 = 1\n") and code.endswith(f"z_{lines - 1} = 0")
    model.finish_assistant()
    view.flush_now()
    assert widget.browser.toPlainText() == reference_text(qtbot, model.item(0).text)
    big = len(code) > KEEP_STREAMED_CODE_OVER
    # A big block keeps its streamed lines when the fence closes; a small one is rendered once, exactly.
    assert (view.renderer.chars_rendered - rendered_before < 100) is big


def test_a_streaming_message_replaced_by_the_final_text_is_rebuilt(qtbot, view):
    model = view.model()
    model.append_text_delta("draft that the engine later replaces")
    view.flush_now()
    model.finish_assistant(final_text="Final **answer**.")
    view.flush_now()
    widget = view.widget_for_row(0)
    assert widget.browser.toPlainText() == "Final answer."


# --- view: copy and escaping -----------------------------------------------------------------------

CODE = 'def f(a):\n\tif a < 3 and "&amp;":\n\t\treturn "<b>"\n'


def test_code_block_copy_button_puts_exactly_the_code_on_the_clipboard(qtbot, view):
    """Each code block has a real Copy button at the right of its header line (issue 26: not a link)."""
    model = view.model()
    message = f"Intro\n\n```python\n{CODE}```\n\nand a second block:\n\n```\nsecond\n```\n"
    model.append(AssistantMessage(text=message))
    show(qtbot, view)
    widget = view.widget_for_row(0)
    assert isinstance(widget, AssistantWidget)
    browser = widget.browser
    qtbot.waitUntil(lambda: sorted(browser.copy_buttons) == [0, 1])
    first = browser.copy_buttons[0]
    assert first.isVisible() and first.text() == "Copy" and first.toolTip() and not first.icon().isNull()
    found = browser.document().find("Copy")  # the anchor stays in the document, drawn in the block's colour
    header = browser.cursorRect(QTextCursor(found))
    assert first.geometry().top() <= header.center().y() <= first.geometry().bottom()  # on the header line …
    assert first.geometry().right() > browser.viewport().width() * 0.8  # … at its right end
    assert browser.copy_buttons[1].geometry().top() > first.geometry().bottom()
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(first, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() != "", timeout=5000)
    assert QGuiApplication.clipboard().text() == CODE.removesuffix("\n")

    qtbot.mouseClick(browser.copy_buttons[1], Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "second"
    qtbot.mouseClick(widget.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == message


def test_copy_buttons_follow_a_streaming_reply_and_a_new_width(qtbot, view):
    """The buttons are placed from the first changed block on (bench/stream_stall.py: a walk over every
    block at each update stalled the loop); blocks streamed later get theirs, and a new width moves all."""
    model = view.model()
    show(qtbot, view)
    model.append_text_delta(f"Intro\n\n```python\n{CODE}```\n\nthen ")
    view.flush_now()
    browser = view.widget_for_row(0).browser

    def placed() -> dict[int, int]:
        """Each shown button's vertical centre, by code block."""
        return {index: button.geometry().center().y() for index, button in browser.copy_buttons.items()
                if button.isVisible()}

    qtbot.waitUntil(lambda: sorted(placed()) == [0])
    first_y = placed()[0]
    for word in ("more ", "text ", "and\n\n```\nsecond\n```\n\nand a third:\n\n```\nthird\n```\n\nend."):
        model.append_text_delta(word)
        view.flush_now()
    qtbot.waitUntil(lambda: sorted(placed()) == [0, 1, 2])
    assert placed()[0] == first_y < placed()[1] < placed()[2]  # the first did not move, the others below it

    def on_their_headers() -> bool:
        """Each button on its code block's header line (where its anchor is), at the line's right end."""
        document, position = browser.document(), 0
        for index in range(3):
            found = document.find("Copy", position)
            position = found.position()
            header = browser.cursorRect(QTextCursor(found)).center().y()
            button = browser.copy_buttons[index].geometry()
            width = browser.viewport().width()
            if not (button.top() <= header <= button.bottom() and width * 0.8 < button.right() <= width):
                return False
        return True

    assert on_their_headers()
    width = browser.viewport().width()
    view.resize(360, view.height())  # narrower than the reading width: the text wraps anew
    qtbot.waitUntil(lambda: browser.viewport().width() < width - 100)
    qtbot.waitUntil(on_their_headers)


def test_raw_html_is_shown_as_text_in_messages_and_bubbles(qtbot, view):
    model = view.model()
    model.append(UserMessage("<b>not bold</b><script>alert(1)</script>"))
    model.append(AssistantMessage(text="Look: <script>alert(1)</script> and <i>this</i>"))
    show(qtbot, view)
    bubble = view.widget_for_row(0)
    assert isinstance(bubble, UserBubble)
    assert bubble.text_label.textFormat() == Qt.TextFormat.PlainText
    assert bubble.text_label.text() == "<b>not bold</b><script>alert(1)</script>"
    browser = view.widget_for_row(1).browser
    assert browser.toPlainText() == "Look: <script>alert(1)</script> and <i>this</i>"


# --- view: cards -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("button", "answer", "state", "label"), [
    ("allow_once_button", "allow_once", "allowed", "Allowed once"),
    ("allow_always_button", "allow_always", "allowed", "Always allowed"),
    ("deny_button", "deny", "denied", "Denied"),
])
def test_approval_buttons_emit_the_answer_and_the_card_shows_its_final_state(qtbot, view, button, answer, state, label):
    model = view.model()
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new\n"
    model.append(ApprovalCard.for_tool_call("call-7", "write_file", {"path": "x.py", "content": "new\n"}, diff=diff))
    show(qtbot, view)
    card = view.widget_for_row(0)
    assert isinstance(card, ApprovalCardWidget)
    assert '"content": "new\\n"' in card.arguments_view.toPlainText()
    assert card.diff_view is not None and "+new" in card.diff_view.toPlainText()
    with qtbot.waitSignal(view.approval_answered, timeout=5000) as answered:
        qtbot.mouseClick(getattr(card, button), Qt.MouseButton.LeftButton)
    assert answered.args == ["call-7", answer, ""]
    assert (model.item(0).state, model.item(0).answer) == (state, answer)
    assert card.state_label.text() == label
    assert all(b.isHidden() for b in (card.allow_once_button, card.allow_always_button, card.deny_button))


def test_exec_approval_shows_command_and_working_dir(qtbot, view):
    view.model().append(ApprovalCard.for_tool_call("c9", "exec", {"command": "rm -rf build", "working_dir": "/srv/app"}))
    card = view.widget_for_row(0)
    assert card.command_view.toPlainText() == "rm -rf build"
    assert card.working_dir_label.text() == "in /srv/app"


def test_tool_card_click_emits_its_call_id_and_follows_status(qtbot, view):
    model = view.model()
    model.append(ToolCard.from_call("call-3", "web_search", {"query": "qasync"}))
    show(qtbot, view)
    card = view.widget_for_row(0)
    assert isinstance(card, ToolCardWidget)
    assert card.summary_label.text() == "qasync" and card.duration_label.text() == "running…"
    with qtbot.waitSignal(view.tool_card_clicked, timeout=5000) as clicked:
        qtbot.mouseClick(card, Qt.MouseButton.LeftButton, pos=QPoint(20, card.height() // 2))
    assert clicked.args == ["call-3"]
    model.update_tool("call-3", "error", 2.04)
    assert card.duration_label.text() == "error · 2.0 s"
    assert card.status_label.text() == "✗"
    model.update_tool("call-3", "ok", 0.031)
    assert card.duration_label.text() == "ok · 31 ms"
    assert card.status_label.text() == "✓"


# --- view: scrolling and paging --------------------------------------------------------------------


def test_auto_scroll_follows_until_the_user_scrolls_up_and_resumes_at_the_bottom(qtbot, view):
    model = view.model()
    bar = view.scroll_area.verticalScrollBar()
    view.resize(480, 300)
    show(qtbot, view)
    model.extend(UserMessage(f"message {i}") for i in range(30))
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=5000)

    model.begin_assistant()
    for i in range(60):
        model.append_text_delta(f"streamed line {i}\n\n")
    old_maximum = bar.maximum()
    qtbot.waitUntil(lambda: bar.maximum() > old_maximum and bar.value() == bar.maximum(), timeout=5000)
    assert view.is_following()

    bar.setValue(bar.maximum() // 2)  # the user scrolls up
    assert not view.is_following()
    in_sight = next(widget for widget in view.loaded_widgets() if widget.isVisible() and widget.geometry().bottom() >= bar.value())
    on_screen = in_sight.y() - bar.value()
    old_maximum = bar.maximum()
    for i in range(40):
        model.append_text_delta(f"more {i}\n\n")
    qtbot.waitUntil(lambda: bar.maximum() > old_maximum, timeout=5000)
    # What the user looks at stays put (the value itself moves if far widgets above go meanwhile).
    qtbot.waitUntil(lambda: in_sight.y() - bar.value() == on_screen, timeout=5000)
    assert not view.is_following()

    bar.setValue(bar.maximum())  # back at the bottom: following again
    assert view.is_following()
    model.finish_assistant()
    model.extend(UserMessage(f"late {i}") for i in range(5))
    newest = view.loaded_widgets()[-1]  # (the oldest widgets may go meanwhile: the range need not grow)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() and newest.isVisible()
                    and newest.geometry().bottom() <= bar.value() + view.scroll_area.viewport().height(), timeout=5000)
    assert newest.item.text == "late 4"


def test_a_huge_model_opens_with_one_page_and_loads_older_pages_at_the_top(qtbot, view):
    model = view.model()
    items = [UserMessage(f"message {i}") if i % 2 else Notice(f"notice {i}") for i in range(10_000)]
    model.set_items(items)
    view.resize(480, 360)
    show(qtbot, view)
    bar = view.scroll_area.verticalScrollBar()
    assert view.first_loaded_row == 10_000 - ChatView.PAGE_SIZE
    assert len(view.loaded_widgets()) == ChatView.PAGE_SIZE
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=5000)

    anchor = view.loaded_widgets()[0]
    bar.setValue(0)  # the user reaches the top
    offset_on_screen = anchor.y() - bar.value()
    # One small step of widgets per scroll to the top (a few milliseconds of work, never a frame's worth).
    qtbot.waitUntil(lambda: view.first_loaded_row == 10_000 - ChatView.PAGE_SIZE - 1,
                    timeout=5000)
    # What was at the top of the viewport stays there: the new rows went above it.
    qtbot.waitUntil(lambda: bar.value() > 0 and anchor.y() - bar.value() == offset_on_screen, timeout=5000)
    assert view.widget_for_row(view.first_loaded_row).item is items[view.first_loaded_row]
    assert not view.is_following()

    model.append(UserMessage("newest"))  # new rows still arrive at the end
    assert view.widget_for_row(10_000).item.text == "newest"


def test_a_short_page_loads_older_items_until_the_view_can_scroll(qtbot, view):
    view.PAGE_SIZE = 3
    view.model().set_items(Notice(f"n{i}") for i in range(40))
    view.resize(480, 400)
    show(qtbot, view)
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5000)
    assert 0 < view.first_loaded_row < 37


# --- theme -----------------------------------------------------------------------------------------


@pytest.fixture
def restore_theme(qapp):
    style, palette = qapp.style().name(), QPalette(qapp.palette())
    yield
    qapp.setStyle(style)
    qapp.setPalette(palette)


def test_light_and_dark_palettes_and_the_chat_follows(qtbot, qapp, restore_theme, view):
    view.model().append(AssistantMessage(text="```\ncode\n```"))
    show(qtbot, view)
    apply_theme(qapp, "dark")
    assert is_dark(qapp.palette()) and qapp.style().name().lower() == "fusion"
    qtbot.waitUntil(lambda: view.renderer.style.dark, timeout=5000)
    assert "#272822" in view.widget_for_row(0).browser.toHtml().lower()  # monokai code background
    apply_theme(qapp, "light")
    assert not is_dark(qapp.palette())
    qtbot.waitUntil(lambda: not view.renderer.style.dark, timeout=5000)
    with pytest.raises(ValueError, match="unknown theme 'blue'"):
        apply_theme(qapp, "blue")


def test_system_mode_follows_the_color_scheme_signal(qapp, restore_theme):
    apply_theme(qapp, "system")
    hints = qapp.styleHints()
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert is_dark(qapp.palette())
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert not is_dark(qapp.palette())
    apply_theme(qapp, "light")  # an explicit choice stops following the system
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert not is_dark(qapp.palette())
    assert current_theme_mode(qapp) == "light"
    assert isinstance(QApplication.instance(), QApplication)


def test_an_empty_chat_shows_a_hint_until_the_first_message(qtbot):
    from nanobot_desktop.gui.chat.model import ChatModel, UserMessage

    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    view.show()
    assert view.empty_hint.isVisible() and "Enter sends" in view.empty_hint.text()
    model.append(UserMessage(text="hello"))
    assert not view.empty_hint.isVisible()
    model.clear()
    assert view.empty_hint.isVisible()
