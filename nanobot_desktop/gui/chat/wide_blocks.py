"""Code blocks and tables wider than the reading column, prose still at the reading width (issue 26).

The chat's column is READING_CHARS wide; a code line or a table row is often longer, and wrapping it
at 76 characters makes it hard to read. As Claude Desktop does, a reply that holds code or a table is
given more of the window (up to WIDE_CHARS, centred on the column) by the column's layout
(`ColumnLayout`), and its prose paragraphs are inset by the same amount (`hold_prose`), so body text
keeps the column's width and left edge while code and tables use the extra room.
"""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QTextBlockFormat, QTextCursor, QTextDocument, QTextFormat, QTextTable
from PySide6.QtWidgets import QVBoxLayout

_BASE_LEFT = QTextFormat.Property.UserProperty + 261  # a block's own margins, before any inset
_BASE_RIGHT = QTextFormat.Property.UserProperty + 262


def hold_prose(document: QTextDocument, left: int, right: int) -> None:
    """Inset every paragraph outside code blocks and tables by (left, right) pixels, over its own
    margins (a quote keeps its indent); code keeps the full width, a table starts at the prose's left
    edge and may grow into the room on the right. One edit, one layout."""
    root = document.rootFrame()
    cursor: QTextCursor | None = None
    block = document.begin()
    while block.isValid():
        form = block.blockFormat()
        if not form.hasProperty(_BASE_LEFT):
            form.setProperty(_BASE_LEFT, form.leftMargin())
            form.setProperty(_BASE_RIGHT, form.rightMargin())
        prose = not form.hasProperty(QTextFormat.Property.BackgroundBrush) and document.frameAt(block.position()) is root
        want_left = form.doubleProperty(_BASE_LEFT) + (left if prose else 0)
        want_right = form.doubleProperty(_BASE_RIGHT) + (right if prose else 0)
        if form.leftMargin() != want_left or form.rightMargin() != want_right:
            if cursor is None:
                cursor = QTextCursor(document)
                cursor.beginEditBlock()
            form.setLeftMargin(want_left)
            form.setRightMargin(want_right)
            QTextCursor(block).setBlockFormat(QTextBlockFormat(form))
        block = block.next()
    for frame in root.childFrames():  # a table starts where the prose starts, and may use the room on the right
        if isinstance(frame, QTextTable):
            table_format = frame.format()
            if not table_format.hasProperty(_BASE_LEFT):
                table_format.setProperty(_BASE_LEFT, table_format.leftMargin())
            want = table_format.doubleProperty(_BASE_LEFT) + left
            if table_format.leftMargin() != want:
                if cursor is None:
                    cursor = QTextCursor(document)
                    cursor.beginEditBlock()
                table_format.setLeftMargin(want)
                frame.setFormat(table_format)
    if cursor is not None:
        cursor.endEditBlock()


class ColumnLayout(QVBoxLayout):
    """The messages' column: every item at the column's width, except items whose `wants_wide` is
    true (a reply with code or a table), widened to `wide_width` centred on the column (as much as
    the pane allows, `least_margin` kept at each side) and told their inset (`set_prose_inset`)."""

    def __init__(self) -> None:
        super().__init__()
        self.wide_width = 0
        self.least_margin = 0

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802  (Qt override)
        super().setGeometry(rect)
        owner = self.parentWidget()
        room = (owner.width() if owner is not None else rect.width()) - 2 * self.least_margin
        width = max(rect.width(), min(self.wide_width, room))
        left = max(self.least_margin, rect.left() + (rect.width() - width) // 2)
        for index in range(self.count()):
            item = self.itemAt(index)
            widget = item.widget() if item is not None else None
            if widget is None or not hasattr(widget, "set_prose_inset"):
                continue
            if getattr(widget, "wants_wide", False) and width > rect.width():
                place = widget.geometry()
                widget.setGeometry(left, place.y(), width, place.height())
                widget.set_prose_inset(rect.left() - left, left + width - rect.left() - rect.width())
            else:
                widget.set_prose_inset(0, 0)
