"""Code blocks and tables use more of the window than the reading column, the prose around them does not
(issue 26): a reply with a long code line and a table, streamed from the loopback endpoint, measured at
1280×800 and 1920×1080 from the widgets' and the document's geometry."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QTextFormat

from nanobot_desktop.gui.chat.model import AssistantMessage
from nanobot_desktop.gui.common.design import READING_CHARS, WIDE_CHARS
from tests.gui.window.test_chat_first_layout import resize_and_settle
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]

CODE_LINE = "result = compute(" + ", ".join(f"argument_{n}" for n in range(5)) + ")  # a 90-column line"
WIDE_REPLY = (f"Here is the call, and what each option means.\n\n```python\n{CODE_LINE}\n```\n\n"
              "| option | what it does | default |\n|---|---|---|\n"
              "| --verbose | prints every step it takes while it works through the list of files | off |\n\n"
              "That is all there is to it: run it once and read what it prints, line by line, before going on.")


def replies(window) -> list:
    rows = [row for row, item in enumerate(window.chat.model.items()) if isinstance(item, AssistantMessage)]
    return [window.chat_view.widget_for_row(row) for row in rows]


def block_starting(document, text: str):
    block = document.begin()
    while block.isValid() and not block.text().startswith(text):
        block = block.next()
    assert block.isValid(), text
    return block


def test_code_and_tables_get_more_room_than_the_prose(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_text("A plain answer, in one short paragraph of prose.")
    send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    fake_openai.add_text(WIDE_REPLY, chunk_size=40)
    send(qtbot, window, "show me the call")
    wait_idle(qtbot, window)
    view = window.chat_view
    char = view.fontMetrics().averageCharWidth()
    for width, height in ((1280, 800), (1920, 1080)):
        resize_and_settle(qtbot, window, width, height)
        plain, wide = replies(window)
        column = view._items_layout.geometry()
        qtbot.waitUntil(lambda: wide.width() > column.width() + 20 * char, timeout=WAIT_MS)  # noqa: B023
        assert abs(column.width() - READING_CHARS * char) <= char, (width, column.width() / char)
        assert plain.width() == column.width()  # prose-only replies keep the reading column
        assert wide.width() <= WIDE_CHARS * char + 1, (width, wide.width() / char)
        assert abs(wide.geometry().center().x() - column.center().x()) <= 2  # centred on the column

        def copy_right() -> int:
            return wide.copy_button.mapTo(view._container, wide.copy_button.rect().topRight()).x()  # noqa: B023

        qtbot.waitUntil(lambda: abs(copy_right() - column.right()) <= 2 * char, timeout=WAIT_MS)  # noqa: B023  under its prose
        document = wide.browser.document()
        qtbot.waitUntil(lambda: document.begin().blockFormat().leftMargin() > 0, timeout=WAIT_MS)  # noqa: B023
        origin = wide.browser.viewport().mapTo(view._container, QPoint(0, 0)).x() + document.documentMargin()
        for prose in (document.begin(), block_starting(document, "That is all")):
            left = origin + prose.blockFormat().leftMargin()
            assert abs(left - column.left()) <= 3, (width, left, column.left())  # the prose starts at the column
            lines = prose.layout()
            assert max(lines.lineAt(n).width() for n in range(lines.lineCount())) <= column.width(), width
        code = block_starting(document, "result = compute(")
        assert code.blockFormat().hasProperty(QTextFormat.Property.BackgroundBrush)
        assert code.blockFormat().leftMargin() == 0
        assert code.layout().lineCount() == 1, width  # the long line is not wrapped at the reading width
        assert code.layout().lineAt(0).naturalTextWidth() > column.width()
        table = document.rootFrame().childFrames()[0]
        table_rect = document.documentLayout().frameBoundingRect(table)
        assert abs(origin + table.format().leftMargin() - column.left()) <= 3  # starts with the prose
        assert table_rect.right() > column.width(), width  # and may reach past its right edge


def test_a_table_streamed_after_the_reply_was_widened_starts_with_the_prose(qtbot):
    """A table that arrives in a later flush than the code that widened the reply: inside the edit that
    inserts it, Qt has not made it a frame yet, so its cells had been inset like prose and the table
    itself left at the reply's edge (seen when a stream's flushes split the code and the table)."""
    from PySide6.QtGui import QTextCursor

    from nanobot_desktop.gui.chat.model import ChatModel
    from nanobot_desktop.gui.chat.view import ChatView

    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    view.resize(1800, 900)
    view.show()
    qtbot.waitExposed(view)
    code_part, table_part = WIDE_REPLY.split("| option", 1)
    model.begin_assistant()
    model.append_text_delta(code_part)
    view.flush_now()
    widget = view.widget_for_row(0)
    qtbot.waitUntil(lambda: widget.wants_wide and widget._inset[0] > 0, timeout=WAIT_MS)
    left = widget._inset[0]
    model.append_text_delta("| option" + table_part)
    view.flush_now()
    document = widget.browser.document()
    qtbot.waitUntil(lambda: len(document.rootFrame().childFrames()) == 1, timeout=WAIT_MS)
    table = document.rootFrame().childFrames()[0]
    cell_margins = {QTextCursor(table.cellAt(0, column).firstCursorPosition()).blockFormat().leftMargin()
                    for column in range(table.columns())}
    assert table.format().leftMargin() == left  # the table starts where the prose starts
    assert cell_margins == {0.0}  # and its cells are not inset inside it
    prose = block_starting(document, "Here is the call")
    assert prose.blockFormat().leftMargin() == left


def test_a_message_in_the_column_is_never_taller_than_it_asks_to_be(qtbot):
    """The column can be given more room than its messages ask for for a layout pass (a reply's height
    drops before the scroll area has resized the column's container); a user bubble took a share of it
    (32 -> 54 px), and what the person had in sight moved."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QWidget

    from nanobot_desktop.gui.chat.model import UserMessage
    from nanobot_desktop.gui.chat.wide_blocks import ColumnLayout
    from nanobot_desktop.gui.chat.widgets import UserBubble

    container = QWidget()
    qtbot.addWidget(container)
    column = ColumnLayout()
    container.setLayout(column)
    bubbles = [UserBubble(UserMessage(f"message {n}")) for n in range(3)]
    for bubble in bubbles:
        column.addWidget(bubble)
    container.show()
    column.setGeometry(QRect(0, 0, 440, 600))  # far more than three short bubbles ask for
    assert [bubble.height() for bubble in bubbles] == [bubble.sizeHint().height() for bubble in bubbles]


def test_messages_keep_their_height_when_one_is_added_above_them(qtbot):
    """The column's container is never shorter than its messages ask. It was sized by what they could
    shrink to: a scroll area squeezes its content to avoid a scroll bar, and a message added above (older
    ones paged in as the person scrolls up) had the column laid out at the old height for a pass, every
    message that could shrink squeezed (a reply with tool steps 177 -> 148 px) and then given its height
    back: laid out and painted twice per page, mid-scroll. On the old code this fails at the first wait."""
    from PySide6.QtCore import QEvent, QObject, QSize
    from PySide6.QtWidgets import QWidget

    from nanobot_desktop.gui.chat.view import ChatView

    class Message(QWidget):
        def __init__(self, height: int) -> None:
            super().__init__()
            self.wanted = height

        def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
            return QSize(400, self.wanted)

        def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
            return QSize(100, 40)  # a message can shrink, as a reply's steps header and actions row can

    class Heights(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[int] = []

        def eventFilter(self, watched, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Resize:
                self.seen.append(event.size().height())
            return False

    view = ChatView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    view.empty_hint.hide()  # as with any message shown
    column = view._items_layout  # the column itself: pages of older messages come in through it
    shown = [Message(120) for _ in range(6)]
    for message in shown:
        column.addWidget(message)
    qtbot.waitUntil(lambda: all(message.height() == 120 for message in shown))
    heights = Heights()
    for message in shown:
        message.installEventFilter(heights)
    older = Message(300)
    column.insertWidget(0, older)
    qtbot.waitUntil(lambda: older.height() == 300)
    qtbot.waitUntil(lambda: view._container.height() >= 6 * 120 + 300)
    assert heights.seen == [] and all(message.height() == 120 for message in shown)
