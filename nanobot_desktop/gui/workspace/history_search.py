"""Search over HISTORY.md by entry: typing filters the log down to the entries that match.

HISTORY.md is a list of paragraphs (entries start with `[YYYY-MM-DD HH:MM]`, separated by a blank
line), so a match is shown as the whole entry, not as a line torn out of it. Every word typed must
appear in an entry (any case). The file is split and searched on a worker thread and the split is
cached until HISTORY.md changes, so a multi-MB log filters as you type without freezing the window.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPalette, QTextCursor
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QStackedWidget, QTextEdit,
                               QVBoxLayout, QWidget)

from nanobot_desktop.engine import split_history_entries
from nanobot_desktop.gui.editor.code_edit import blend
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.editor.file_io import BackgroundRunner
from nanobot_desktop.gui.common.i18n import format_number, translate
from nanobot_desktop.gui.common.design import ACCENTS

SHOWN_MATCHES_LIMIT = 500
"""More matches than this are counted but not all shown: the reader narrows the search instead."""
HIGHLIGHTS_LIMIT = 2000
SEARCH_DELAY_MS = 120


def matching_entries(entries_lower: list[str], words: list[str]) -> list[int]:
    """Indexes of the entries that contain every word (words already lower-case)."""
    return [index for index, entry in enumerate(entries_lower) if all(word in entry for word in words)]


class _EntryIndex:
    """HISTORY.md split into entries; rebuilt only when the file's generation changes (worker only)."""

    def __init__(self) -> None:
        self.generation = -1
        self.entries: list[str] = []
        self.lowered: list[str] = []

    def search(self, read_text: Any, generation: int, words: list[str]) -> tuple[list[str], int, int]:
        if generation != self.generation:
            self.entries = split_history_entries(read_text())
            self.lowered = [entry.lower() for entry in self.entries]
            self.generation = generation
        hits = matching_entries(self.lowered, words)
        return [self.entries[i] for i in hits[:SHOWN_MATCHES_LIMIT]], len(hits), len(self.entries)


class HistorySearchPane(QWidget):
    """A search field over the HISTORY.md editor; while it holds text, the matches replace the editor."""

    results_shown = Signal(int)
    """A search finished: how many entries matched (the results page is showing)."""

    def __init__(self, memory: Any, editor: MarkdownEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._memory = memory
        self.editor = editor
        self._runner = BackgroundRunner(self, "history-search")
        self._index = _EntryIndex()
        self._file_generation = 0
        self._search_generation = 0
        self._shown_words: list[str] = []

        self.field = QLineEdit(self)
        self.field.setObjectName("historySearch")
        self.field.setPlaceholderText(translate("Memory", "Search history: every word, any case"))
        self.field.setClearButtonEnabled(True)
        self.field.setToolTip(translate("Memory", "Shows only the HISTORY.md entries containing all the words (Esc clears)"))
        self.field.installEventFilter(self)
        self.count_label = QLabel(self)
        self.count_label.setTextFormat(Qt.TextFormat.PlainText)
        self.results = QPlainTextEdit(self)
        self.results.setObjectName("historyResults")
        self.results.setReadOnly(True)
        self.results.setToolTip(translate("Memory", "Double-click an entry to show it in HISTORY.md"))
        self.results.viewport().installEventFilter(self)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(editor)
        self.pages.addWidget(self.results)

        search_row = QHBoxLayout()
        search_row.setContentsMargins(4, 0, 4, 0)
        search_row.addWidget(self.field, 1)
        search_row.addWidget(self.count_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addLayout(search_row)
        layout.addWidget(self.pages, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DELAY_MS)
        self._timer.timeout.connect(self.run_search)
        self.field.textChanged.connect(self._on_text_changed)
        editor.loaded.connect(self.history_file_changed)
        editor.saved.connect(self.history_file_changed)

    # ---- public ---------------------------------------------------------------------------------
    @property
    def showing_results(self) -> bool:
        return self.pages.currentWidget() is self.results

    def history_file_changed(self, *_args: object) -> None:
        """HISTORY.md changed on disk: forget the split and refresh a search that is showing."""
        self._file_generation += 1
        if self.field.text().strip():
            self._timer.start()

    def clear(self) -> None:
        self.field.clear()

    def shutdown(self) -> None:
        self._timer.stop()
        self._runner.shutdown()

    # ---- searching ------------------------------------------------------------------------------
    def _on_text_changed(self, text: str) -> None:
        if text.strip():
            self._timer.start()
            return
        self._timer.stop()
        self._search_generation += 1  # a search still running must not bring the results back
        self.count_label.clear()
        self.pages.setCurrentWidget(self.editor)

    def run_search(self) -> None:
        """Search now (the typing timer calls this)."""
        words = self.field.text().lower().split()
        if not words:
            return
        self._search_generation += 1
        search_generation, file_generation = self._search_generation, self._file_generation
        index, read = self._index, self._memory.read_history
        self._runner.submit(lambda: index.search(read, file_generation, words),
                            lambda result, error: self._show(search_generation, words, result, error))

    def _show(self, generation: int, words: list[str], result: tuple[list[str], int, int] | None,
              error: BaseException | None) -> None:
        if generation != self._search_generation:
            return
        self._shown_words = words
        if error is not None or result is None:
            self.count_label.setText(translate("Memory", "Search failed"))
            self.results.setPlainText(translate("Memory", "Could not search HISTORY.md: {error}").format(error=error))
        else:
            shown, matched, total = result
            self.count_label.setText(self._count_text(len(shown), matched, total))
            if matched:
                self.results.setPlainText("\n\n".join(shown))
            else:
                self.results.setPlainText(translate("Memory", "No entry of HISTORY.md contains {words}.").format(
                    words=translate("Memory", " and ").join(map(repr, words))))
            self._highlight(words if matched else [])
        self.pages.setCurrentWidget(self.results)
        self.results_shown.emit(result[1] if result else 0)

    @staticmethod
    def _count_text(shown: int, matched: int, total: int) -> str:
        if matched > shown:
            return translate("Memory", "{matched} of {total} entries match (first {shown} shown)").format(
                matched=format_number(matched), total=format_number(total), shown=format_number(shown))
        if total == 1:
            return translate("Memory", "{matched} of 1 entry match").format(matched=matched)
        return translate("Memory", "{matched} of {total} entries match").format(matched=format_number(matched),
                                                                              total=format_number(total))

    def _highlight(self, words: list[str]) -> None:
        document = self.results.document()
        tint = blend(self.results.palette().color(QPalette.ColorRole.Base), QColor(ACCENTS.warning), 0.45)
        selections: list[QTextEdit.ExtraSelection] = []
        for word in words:
            cursor = QTextCursor(document)
            while len(selections) < HIGHLIGHTS_LIMIT:
                cursor = document.find(word, cursor)  # no flags: any case, like the filter
                if cursor.isNull():
                    break
                selection = QTextEdit.ExtraSelection()
                selection.format.setBackground(tint)
                selection.cursor = cursor
                selections.append(selection)
        self.results.setExtraSelections(selections)

    def highlighted_count(self) -> int:
        return len(self.results.extraSelections())

    # ---- jumping to an entry ----------------------------------------------------------------------
    def show_entry_at(self, position: int) -> bool:
        """Leave the search and put the editor's cursor on the entry shown at `position` of the results."""
        block = self.results.document().findBlock(position)
        while block.isValid() and block.previous().isValid() and block.previous().text().strip():
            block = block.previous()  # back to the entry's first line
        first_line = block.text().strip() if block.isValid() else ""
        if not first_line or not self._shown_words:
            return False
        self.clear()
        found = self.editor.text_edit.document().find(first_line)
        if found.isNull():
            return False
        found.clearSelection()
        self.editor.set_preview_visible(False)
        self.editor.text_edit.setTextCursor(found)
        self.editor.text_edit.centerCursor()
        self.editor.text_edit.setFocus()
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() == Qt.Key.Key_Escape and self.field.text():
                self.clear()
                return True
        if watched is self.results.viewport() and event.type() == QEvent.Type.MouseButtonDblClick:
            position = self.results.cursorForPosition(event.position().toPoint()).position()  # type: ignore[attr-defined]
            if self.show_entry_at(position):
                return True
        return super().eventFilter(watched, event)
