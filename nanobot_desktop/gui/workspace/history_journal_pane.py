"""The HISTORY pane of a nanobot 0.3 workspace: the entries of memory/history.jsonl.

history.jsonl is not Markdown, so it is not shown in the text editor: each entry is a row (timestamp,
then its text), oldest first and newest last, as the file has them. Typing in the search field keeps
the rows holding every word. *Add entry* and *Edit* open a small text box under the list; saving goes
through the engine's journal (engine/memory/history_journal.py) on a worker thread, which keeps cursors and
every other line as they were. Reading also happens on the worker, so a large journal never blocks
the window.
"""

from __future__ import annotations

from typing import Any

import shiboken6
from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from nanobot_desktop.engine import HistoryEntry, HistoryJournal
from nanobot_desktop.gui.editor.file_io import BackgroundRunner
from nanobot_desktop.gui.common.i18n import format_number, translate

_Index = QModelIndex | QPersistentModelIndex


class HistoryEntriesModel(QAbstractListModel):
    """Rows of history entries; DisplayRole is `[timestamp] text` (the text's first 300 characters)."""

    EntryRole = Qt.ItemDataRole.UserRole + 1

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._entries: list[HistoryEntry] = []

    def set_entries(self, entries: list[HistoryEntry]) -> None:
        self.beginResetModel()
        self._entries = list(entries)
        self.endResetModel()

    def entry(self, row: int) -> HistoryEntry:
        return self._entries[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self._entries)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            text = entry.content if len(entry.content) <= 300 else entry.content[:299] + "…"
            return f"[{entry.timestamp}]  {text}"
        if role == Qt.ItemDataRole.ToolTipRole:
            head = (translate("Memory", "Entry {cursor}, {time} — from {session}") if entry.session_key
                    else translate("Memory", "Entry {cursor}, {time}"))
            head = head.format(cursor=entry.cursor, time=entry.timestamp, session=entry.session_key)
            return f"{head}\n\n{entry.content[:2000]}"
        if role == self.EntryRole:
            return entry
        return None


class HistoryJournalPane(QWidget):
    """Search, list, add and edit the entries of history.jsonl."""

    entries_loaded = Signal(int)
    """The number of entries shown after a (re)load or a search."""
    entry_saved = Signal(int)
    """The cursor of an entry just added or edited."""

    def __init__(self, journal: HistoryJournal, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("historyJournalPane")
        self.journal = journal
        self._runner = BackgroundRunner(self, "history-journal")
        self._editing: int | None = None  # the cursor being edited; None while adding
        self._generation = 0

        self.title = QLabel(translate("Memory", "History — memory/history.jsonl (newest last)"), self)
        self.field = QLineEdit(self)
        self.field.setObjectName("historyJournalSearch")
        self.field.setPlaceholderText(translate("Memory", "Search the history…"))
        self.field.setClearButtonEnabled(True)
        self.model = HistoryEntriesModel(self)
        self.list = QListView(self)
        self.list.setObjectName("historyJournalList")
        self.list.setModel(self.model)
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.setUniformItemSizes(False)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.add_button = QPushButton(translate("Memory", "Add entry"), self)
        self.edit_button = QPushButton(translate("Memory", "Edit"), self)
        self.edit_button.setEnabled(False)
        self.text_box = QPlainTextEdit(self)
        self.text_box.setObjectName("historyJournalText")
        self.text_box.setPlaceholderText(translate("Memory", "What happened (one entry; the time is added)"))
        self.text_box.setMaximumHeight(120)
        self.save_button = QPushButton(translate("Memory", "Save entry"), self)
        self.cancel_button = QPushButton(translate("Memory", "Cancel"), self)
        self._build_layout()
        self._show_editor(False)

        self.field.textChanged.connect(lambda _text: self.reload())
        self.list.selectionModel().selectionChanged.connect(
            lambda *_: self.edit_button.setEnabled(bool(self.list.selectionModel().selectedRows())))
        self.list.doubleClicked.connect(lambda _index: self.start_edit())
        self.add_button.clicked.connect(self.start_add)
        self.edit_button.clicked.connect(self.start_edit)
        self.save_button.clicked.connect(self.save)
        self.cancel_button.clicked.connect(lambda: self._show_editor(False))
        self.reload()

    def _build_layout(self) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.edit_button)
        buttons.addStretch(1)
        edit_row = QHBoxLayout()
        edit_row.addStretch(1)
        edit_row.addWidget(self.cancel_button)
        edit_row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.field)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        layout.addWidget(self.text_box)
        layout.addLayout(edit_row)

    # ---- reading ------------------------------------------------------------------------------
    def reload(self) -> None:
        """Read the entries (filtered by the search field) on the worker, then show them."""
        self._generation += 1
        generation, words, journal = self._generation, self.field.text(), self.journal
        self._runner.submit(lambda: journal.search(words) if words.strip() else journal.entries(),
                            lambda entries, error: self._show(generation, entries, error))

    def history_file_changed(self, *_args: object) -> None:
        """history.jsonl changed on disk (the CLI, consolidation, Dream's compaction): read it again."""
        self.reload()

    def _show(self, generation: int, entries: list[HistoryEntry] | None, error: BaseException | None) -> None:
        if generation != self._generation or not shiboken6.isValid(self.model):
            return  # a newer search or reload is on its way, or the pane is gone
        if error is not None or entries is None:
            self.status.setText(translate("Memory", "Could not read history.jsonl: {error}").format(error=error))
            return
        self.model.set_entries(entries)
        if entries:
            self.list.scrollToBottom()
        searching = bool(self.field.text().strip())
        if searching:
            count = len(entries)
            self.status.setText(translate("Memory", "1 matching entry") if count == 1
                                else translate("Memory", "{count} matching entries").format(count=format_number(count)))
        else:
            self.status.setText("" if entries else translate("Memory", "No history yet: consolidation and Dream add entries here."))
        self.entries_loaded.emit(len(entries))

    # ---- adding and editing --------------------------------------------------------------------
    def _show_editor(self, shown: bool) -> None:
        for widget in (self.text_box, self.save_button, self.cancel_button):
            widget.setVisible(shown)
        if shown:
            self.text_box.setFocus()

    def start_add(self) -> None:
        self._editing = None
        self.text_box.setPlainText("")
        self._show_editor(True)

    def start_edit(self) -> None:
        rows = self.list.selectionModel().selectedRows()
        if not rows:
            return
        entry = self.model.entry(rows[0].row())
        self._editing = entry.cursor
        self.text_box.setPlainText(entry.content)
        self._show_editor(True)

    def save(self) -> None:
        text = self.text_box.toPlainText()
        if not text.strip():
            self.status.setText(translate("Memory", "An entry needs some text."))
            return
        cursor, journal = self._editing, self.journal
        self.save_button.setEnabled(False)

        def work() -> HistoryEntry:
            return journal.append(text) if cursor is None else journal.edit(cursor, text)

        self._runner.submit(work, self._saved)

    def _saved(self, entry: HistoryEntry | None, error: BaseException | None) -> None:
        if not shiboken6.isValid(self.save_button):
            return  # the pane was closed while the entry was written
        self.save_button.setEnabled(True)
        if error is not None or entry is None:
            self.status.setText(translate("Memory", "Could not save the entry: {error}").format(error=error))
            return
        self._show_editor(False)
        self.reload()
        self.entry_saved.emit(entry.cursor)

    def shutdown(self) -> None:
        self._runner.shutdown()
