"""A read-only unified diff panel (disk → mine) with +/- colouring.

Used by the editor's conflict bar ("Compare") and usable by the memory view for versions.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.design import ACCENTS
from nanobot_desktop.gui.editor.code_edit import blend


def unified_diff(old_text: str, new_text: str, old_name: str, new_name: str, context: int = 3) -> str:
    """Unified diff of two texts; every line ends with a newline so the output reads cleanly."""
    import difflib  # the editor is part of the empty window, a diff only of a conflict (~0.3 MB resident)

    old_lines = [line if line.endswith("\n") else line + "\n" for line in old_text.splitlines(keepends=True)]
    new_lines = [line if line.endswith("\n") else line + "\n" for line in new_text.splitlines(keepends=True)]
    return "".join(difflib.unified_diff(old_lines, new_lines, fromfile=old_name, tofile=new_name, n=context))


_KIND_ACCENTS = {"+": (ACCENTS.added, 0.22), "-": (ACCENTS.removed, 0.22), "@": (ACCENTS.info, 0.18),
                 "header": (ACCENTS.neutral, 0.12)}
COLOURED_LINES_LIMIT = 20000
"""Tinting is a Python loop over lines; a diff longer than this stays plain rather than freezing."""


def diff_line_kind(line: str, line_number: int) -> str | None:
    """Which tint a line of a unified diff gets ("+", "-", "@", "header"), or None for context."""
    if line_number < 2 and line.startswith(("+++", "---")):
        return "header"
    return line[:1] if line[:1] in ("+", "-", "@") else None


def diff_tint(kind: str, palette: QPalette) -> QColor:
    """Background of a diff line: an accent blended into the palette's base (light or dark)."""
    accent, amount = _KIND_ACCENTS[kind]
    return blend(palette.color(QPalette.ColorRole.Base), QColor(accent), amount)


class DiffView(QFrame):
    """A titled, closable panel showing a diff; empty diffs say so instead of showing nothing."""

    close_requested = Signal()
    """The person closed the panel."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip(translate("Editor", "Close the comparison"))
        close.setAccessibleName(close.toolTip())  # a glyph is no name for a screen reader
        close.clicked.connect(self.close_requested)
        header = QHBoxLayout()
        header.setContentsMargins(6, 3, 3, 0)
        header.addWidget(self.title, 1)
        header.addWidget(close)
        self.text_view = QPlainTextEdit(self)
        self.text_view.setReadOnly(True)
        self.text_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.text_view, 1)

    def show_diff(self, title: str, diff_text: str) -> None:
        self.title.setText(title)
        self.text_view.setPlainText(diff_text if diff_text else translate("Editor", "(no differences)"))
        self._tint_lines()
        self.show()

    def _tint_lines(self) -> None:
        """Full-width line backgrounds (block formats), which a syntax highlighter cannot paint."""
        document = self.text_view.document()
        if document.blockCount() > COLOURED_LINES_LIMIT:
            return
        document.setUndoRedoEnabled(False)
        palette = self.palette()
        cursor = QTextCursor(document)
        block = document.firstBlock()
        while block.isValid():
            kind = diff_line_kind(block.text(), block.blockNumber())
            block_format = QTextBlockFormat()
            if kind is not None:
                block_format.setBackground(diff_tint(kind, palette))
            cursor.setPosition(block.position())
            cursor.setBlockFormat(block_format)
            if kind == "header":
                bold = QTextCharFormat()
                bold.setFontWeight(QFont.Weight.Bold)
                cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(bold)
            block = block.next()

    def diff_text(self) -> str:
        return self.text_view.toPlainText()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._tint_lines()
