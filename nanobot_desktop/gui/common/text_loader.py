"""Putting a big text into a QPlainTextEdit without freezing the window.

`setPlainText` of 20 MB blocks the GUI thread for over a second (measured here), and the Markdown
highlighter costs ~20 µs a line on top. So the text goes in as slices, cut at line breaks, on a
zero-delay timer with a time budget per tick: the event loop keeps running between slices, and the
highlighter (attached while the document is still empty) formats each slice as it lands.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QSyntaxHighlighter, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

SLICE_CHARS = 64 * 1024
SLICE_CHARS_HIGHLIGHTED = 16 * 1024
TICK_BUDGET_SECONDS = 0.025


class ChunkedTextLoader(QObject):
    """Replaces an editor's whole text, slice by slice; small texts finish inside `start`."""

    progress = Signal(int)
    """Percent of the text inserted so far (only emitted when loading takes more than one tick)."""
    finished = Signal()
    """The whole text is in the document (undo history empty, not modified)."""

    def __init__(self, edit: QPlainTextEdit, highlighter: QSyntaxHighlighter, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._edit = edit
        self._highlighter = highlighter
        self._text = ""
        self._offset = 0
        self._active = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)

    @property
    def active(self) -> bool:
        return self._active

    def start(self, text: str, *, highlight: bool) -> None:
        """Empty the editor and begin inserting `text` (cancels a load still running)."""
        self.cancel()
        document = self._edit.document()
        document.setUndoRedoEnabled(False)  # a load is not an edit the person could undo
        self._highlighter.setDocument(None)
        self._edit.setPlainText("")
        if highlight:
            self._highlighter.setDocument(document)
        self._text, self._offset, self._active = text, 0, True
        self._step()

    def cancel(self) -> None:
        self._timer.stop()
        self._active = False
        self._text = ""

    def _step(self) -> None:
        if not self._active:
            return
        cursor = QTextCursor(self._edit.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        text = self._text
        slice_chars = SLICE_CHARS_HIGHLIGHTED if self._highlighter.document() is not None else SLICE_CHARS
        deadline = time.perf_counter() + TICK_BUDGET_SECONDS
        while self._offset < len(text):
            end = min(len(text), self._offset + slice_chars)
            if end < len(text):
                newline = text.rfind("\n", self._offset, end)
                end = newline + 1 if newline > self._offset else end
            cursor.insertText(text[self._offset:end])
            self._offset = end
            if time.perf_counter() > deadline:
                break
        if self._offset < len(text):
            self.progress.emit(self._offset * 100 // len(text))
            self._timer.start()
            return
        self._active = False
        self._text = ""
        document = self._edit.document()
        document.setUndoRedoEnabled(True)
        document.setModified(False)
        self.finished.emit()
