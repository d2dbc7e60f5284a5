"""Code blocks and tables wider than the reading column, prose still at the reading width (issue 26).

The chat's column is READING_CHARS wide; a code line or a table row is often longer, and wrapping it
at 76 characters makes it hard to read. As Claude Desktop does, a reply that holds code or a table is
given more of the window (up to WIDE_CHARS, centred on the column) by the column's layout
(`ColumnLayout`), and its prose paragraphs are inset by the same amount (`hold_prose`), so body text
keeps the column's width and left edge while code and tables use the extra room.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QTextBlockFormat, QTextCursor, QTextDocument, QTextFormat, QTextTable
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget, QWidgetItem

_BASE_LEFT = QTextFormat.Property.UserProperty + 261  # a block's own margins, before any inset
_BASE_RIGHT = QTextFormat.Property.UserProperty + 262
_NO_ALIGNMENT = Qt.AlignmentFlag(0)


def hold_prose(document: QTextDocument, left: int, right: int, start: int = 0) -> None:
    """Inset every paragraph outside code blocks and tables by (left, right) pixels, over its own
    margins (a quote keeps its indent); code keeps the full width, a table starts at the prose's left
    edge and may grow into the room on the right. One edit, one layout. Only the blocks from `start`
    on are looked at: a streamed reply holds its finished blocks once, not on every flush."""
    root = document.rootFrame()
    cursor: QTextCursor | None = None
    tables: dict[int, QTextTable] = {}  # the tables met on the way (by first position)
    block = document.findBlock(start) if start > 0 else document.begin()
    while block.isValid():
        form = block.blockFormat()
        if not form.hasProperty(_BASE_LEFT):
            form.setProperty(_BASE_LEFT, form.leftMargin())
            form.setProperty(_BASE_RIGHT, form.rightMargin())
        frame = document.frameAt(block.position())
        if isinstance(frame, QTextTable):
            tables.setdefault(frame.firstPosition(), frame)
        prose = not form.hasProperty(QTextFormat.Property.BackgroundBrush) and frame is root
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
    for table in tables.values():  # a table starts where the prose starts, and may use the room on the right
        table_format = table.format()
        if not table_format.hasProperty(_BASE_LEFT):
            table_format.setProperty(_BASE_LEFT, table_format.leftMargin())
        want = table_format.doubleProperty(_BASE_LEFT) + left
        if table_format.leftMargin() != want:
            if cursor is None:
                cursor = QTextCursor(document)
                cursor.beginEditBlock()
            table_format.setLeftMargin(want)
            table.setFormat(table_format)
    if cursor is not None:
        cursor.endEditBlock()


class _ReplyItem(QWidgetItem):
    """A reply's place in the column: the column's rect, or the widened one. Placed once per layout
    pass (a reply laid out narrow and then widened would lay its whole document out twice)."""

    def __init__(self, widget: QWidget, column: "ColumnLayout") -> None:
        super().__init__(widget)
        self._column = column

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802  (Qt override)
        widget = self.widget()
        super().setGeometry(self._column.place(widget, rect) if widget is not None else rect)


def keep_to_hint(widget: QWidget) -> None:
    """A message in the column is never taller than it asks to be: when a reply's height drops between two
    layout passes, the column gets more room than its items ask for until the next one, and a widget that
    may grow took its share (user bubbles 32 -> 54 px for a pass, moving what the person had in sight)."""
    policy = widget.sizePolicy()
    if policy.verticalPolicy() == QSizePolicy.Policy.Preferred:
        policy.setVerticalPolicy(QSizePolicy.Policy.Maximum)
        widget.setSizePolicy(policy)


class ColumnLayout(QVBoxLayout):
    """The messages' column: every item at the column's width, except items whose `wants_wide` is
    true (a reply with code or a table), widened to `wide_width` centred on the column (as much as
    the pane allows, `least_margin` kept at each side) and told their inset (`set_prose_inset`).
    Replies get a layout item of their own (`_ReplyItem`), held here while they are in the column."""

    def __init__(self) -> None:
        super().__init__()
        self.wide_width = 0
        self.least_margin = 0
        self._replies: dict[QWidget, _ReplyItem] = {}

    def insertWidget(self, index: int, widget: QWidget, stretch: int | None = 0,  # noqa: N802  (Qt override)
                     alignment: Qt.AlignmentFlag = _NO_ALIGNMENT) -> None:
        if not hasattr(widget, "set_prose_inset"):
            keep_to_hint(widget)
            super().insertWidget(index, widget, stretch or 0, alignment)
            return
        self.addChildWidget(widget)
        item = _ReplyItem(widget, self)
        self._replies[widget] = item
        self.insertItem(index, item)

    def addWidget(self, widget: QWidget, stretch: int | None = 0,  # noqa: N802  (Qt override)
                  alignment: Qt.AlignmentFlag = _NO_ALIGNMENT) -> None:
        self.insertWidget(-1, widget, stretch, alignment)

    def removeWidget(self, widget: QWidget) -> None:  # noqa: N802  (Qt override)
        if widget not in self._replies:
            super().removeWidget(widget)
            return
        index = self.indexOf(widget)
        if index >= 0:
            self.takeAt(index)  # the layout lets go of the item first; then Python drops it
        del self._replies[widget]

    def minimumSize(self) -> QSize:  # noqa: N802  (Qt override)
        """As tall as its messages ask: with the container's layout at SetMinimumSize, the container
        grows before the column is laid out, instead of the column squeezing every message to fit the
        old height for one pass and giving them their height back in the next."""
        least = super().minimumSize()
        return QSize(least.width(), max(least.height(), self.sizeHint().height()))

    def place(self, widget: QWidget, rect: QRect) -> QRect:
        """Where a reply goes in a column laid out at `rect`, and its prose inset."""
        owner = self.parentWidget()
        room = (owner.width() if owner is not None else rect.width()) - 2 * self.least_margin
        width = max(rect.width(), min(self.wide_width, room))
        if getattr(widget, "wants_wide", False) and width > rect.width():
            left = max(self.least_margin, rect.left() + (rect.width() - width) // 2)
            widget.set_prose_inset(rect.left() - left, left + width - rect.left() - rect.width())  # type: ignore[attr-defined]
            return QRect(left, rect.top(), width, rect.height())
        widget.set_prose_inset(0, 0)  # type: ignore[attr-defined]
        return rect
