"""The text area of the Markdown editor: a QPlainTextEdit with a line-number gutter.

QPlainTextEdit (not QTextEdit) because it lays out only what is visible, which keeps multi-MB
HISTORY.md files usable. The gutter paints only the visible blocks for the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPaintEvent, QPalette, QResizeEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget
from nanobot_desktop.gui.common.design import ACCENTS


def blend(base: QColor, accent: QColor, amount: float) -> QColor:
    """`amount` of `accent` over `base`: tints that work on both light and dark palettes."""
    return QColor(
        round(base.red() + (accent.red() - base.red()) * amount),
        round(base.green() + (accent.green() - base.green()) * amount),
        round(base.blue() + (accent.blue() - base.blue()) * amount),
    )


@dataclass(frozen=True)
class ViewState:
    """Where the person was: selection and scroll position, to be put back after a reload."""

    position: int
    anchor: int
    vertical: int
    horizontal: int


class _LineNumberGutter(QWidget):
    def __init__(self, editor: "CodeEdit") -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(self._editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        self._editor.paint_gutter(event)


class CodeEdit(QPlainTextEdit):
    """Monospace plain-text editing with line numbers and a way to point at a line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setTabStopDistance(4 * self.fontMetrics().horizontalAdvance(" "))
        self._gutter = _LineNumberGutter(self)
        self._marked_line: int | None = None
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self._update_gutter_width()

    # ---- gutter -------------------------------------------------------------------------------
    def gutter_width(self) -> int:
        digits = max(3, len(str(max(1, self.blockCount()))))
        return 10 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_gutter_width(self, _count: int = 0) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _update_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._update_gutter_width()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        area = self.contentsRect()
        self._gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def paint_gutter(self, event: QPaintEvent) -> None:
        palette = self.palette()
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), blend(palette.color(QPalette.ColorRole.Base),
                                             palette.color(QPalette.ColorRole.Text), 0.06))
        number_color = blend(palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.5)
        current_line = self.textCursor().blockNumber()
        painter.setFont(self.font())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        line_height = self.fontMetrics().height()
        width = self._gutter.width() - 5
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                number = block.blockNumber()
                painter.setPen(palette.color(QPalette.ColorRole.Text) if number == current_line else number_color)
                painter.drawText(0, top, width, line_height, Qt.AlignmentFlag.AlignRight, str(number + 1))
            block = block.next()
            top = bottom
        painter.end()

    # ---- keeping the place across reloads ------------------------------------------------------
    def view_state(self) -> ViewState:
        cursor = self.textCursor()
        return ViewState(cursor.position(), cursor.anchor(), self.verticalScrollBar().value(),
                         self.horizontalScrollBar().value())

    def restore_view_state(self, state: ViewState) -> None:
        """Put selection and scroll back, clamped to the (possibly shorter) new text."""
        last = max(0, self.document().characterCount() - 1)
        cursor = self.textCursor()
        cursor.setPosition(min(state.anchor, last))
        cursor.setPosition(min(state.position, last), QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cursor)
        self.verticalScrollBar().setValue(state.vertical)
        self.horizontalScrollBar().setValue(state.horizontal)

    # ---- pointing at a line (validation errors) ------------------------------------------------
    def go_to_line(self, line: int) -> None:
        """Put the cursor at the start of 1-based `line` and scroll it into view."""
        block = self.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            block = self.document().lastBlock()
        cursor = QTextCursor(block)
        self.setTextCursor(cursor)
        self.centerCursor()

    def mark_line(self, line: int | None) -> None:
        """Tint a 1-based line (the one a validation error points at); None removes the tint."""
        self._marked_line = line
        selections: list[QTextEdit.ExtraSelection] = []
        if line is not None:
            block = self.document().findBlockByNumber(max(0, line - 1))
            if block.isValid():
                selection = QTextEdit.ExtraSelection()
                selection.format.setBackground(blend(self.palette().color(QPalette.ColorRole.Base),
                                                     QColor(ACCENTS.removed), 0.22))
                selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                selection.cursor = QTextCursor(block)
                selections.append(selection)
        self.setExtraSelections(selections)

    @property
    def marked_line(self) -> int | None:
        return self._marked_line
