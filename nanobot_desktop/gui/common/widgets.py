"""Small widgets and text helpers the features share: plain labels, monospace text, diff colours.

The chat's approval card and the inspector's call details show the same things (arguments, output,
a unified diff) the same way; these live here so neither feature imports the other.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import (QColor, QFont, QFontDatabase, QResizeEvent, QSyntaxHighlighter, QTextCharFormat, QTextDocument,
                           QTextOption)
from PySide6.QtWidgets import QLabel, QStackedWidget, QTextEdit, QWidget

from nanobot_desktop.gui.common.palette import PaletteColors
from nanobot_desktop.gui.common.design import theme_colors


def plain_label(text: str = "", *, selectable: bool = True) -> QLabel:
    """A QLabel that never interprets its text as HTML (chat text is untrusted)."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setText(text)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                      | Qt.TextInteractionFlag.TextSelectableByKeyboard)
    return label


class PageSizedStack(QStackedWidget):
    """A QStackedWidget that asks for the room of the page it shows, not of its largest page: the
    Scheduled panel's job details would otherwise never get smaller than its add/edit form, and a
    dock of ordinary height would hold the jobs table at one row behind a scroll bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.currentChanged.connect(lambda _index: self.updateGeometry())

    def sizeHint(self) -> QSize:  # noqa: N802
        page = self.currentWidget()
        return page.sizeHint() if page is not None else super().sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        page = self.currentWidget()
        return page.minimumSizeHint() if page is not None else super().minimumSizeHint()


def monospace_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class FitTextView(QTextEdit):
    """Read-only monospace text, as tall as its content up to `max_lines`, then scrollable."""

    def __init__(self, text: str, max_lines: int = 14, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.max_lines = max_lines
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setFont(monospace_font())
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setPlainText(text)
        self.document().documentLayout().documentSizeChanged.connect(self.fit_height)
        self.fit_height()

    def fit_height(self, *_: object) -> None:
        frame = 2 * self.frameWidth()
        limit = self.fontMetrics().lineSpacing() * self.max_lines + 2 * self.document().documentMargin()
        height = math.ceil(min(self.document().size().height(), limit)) + frame
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.fit_height()


class DiffHighlighter(QSyntaxHighlighter):
    """Colours unified-diff lines: additions, deletions, hunk headers."""

    def __init__(self, document: QTextDocument, colors: PaletteColors) -> None:
        super().__init__(document)
        self.set_colors(colors)

    def set_colors(self, colors: PaletteColors) -> None:
        def fmt(color: QColor, bold: bool = False) -> QTextCharFormat:
            text_format = QTextCharFormat()
            text_format.setForeground(color)
            if bold:
                text_format.setFontWeight(QFont.Weight.Bold)
            return text_format

        hunk = QColor(theme_colors(colors.dark).hunk)
        self._added, self._removed = fmt(colors.ok), fmt(colors.error)
        self._hunk, self._header = fmt(hunk), fmt(colors.muted, bold=True)
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802
        if text.startswith(("+++", "---")):
            self.setFormat(0, len(text), self._header)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self._added)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self._removed)
        elif text.startswith("@@"):
            self.setFormat(0, len(text), self._hunk)
