"""The table-with-details panel: records with a key (a job id, a task id), a table that keeps its selection, details below.

The background panels list what an engine service holds (scheduled jobs, subagents) and re-read the
whole list on an event or a timer. The rows are found by key, not position: after a refresh the same
key stays selected, and a list with the same keys in the same order is updated in place (no reset,
so the selection and the scroll position stay). A subclass names its columns and says what a cell shows.
`table_over_details` lays out the list and the selected row's details as the background panels show them.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from PySide6.QtCore import QAbstractTableModel, QByteArray, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QLayout, QSplitter, QTableView, QVBoxLayout, QWidget

from nanobot_desktop.gui.common.i18n import translate

Index = QModelIndex | QPersistentModelIndex


class KeyedTableModel(QAbstractTableModel):
    """Rows of records found by key; `cell` (in the subclass) says what a column shows in a role."""

    COLUMNS: tuple[object, ...] = ()
    """The column titles, marked with QT_TRANSLATE_NOOP in `CONTEXT` (translated in headerData)."""
    CONTEXT = ""
    """The translation context of the panel the table is in."""
    ROLE_NAMES: tuple[bytes, bytes] = (b"record", b"key")
    """The names of RecordRole and KeyRole (for roleNames)."""
    RecordRole = Qt.ItemDataRole.UserRole + 1
    KeyRole = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._records: list[Any] = []

    def key_of(self, record: Any) -> str:
        """The record's key (unique in the table)."""
        raise NotImplementedError

    def cell(self, record: Any, column: int, role: int) -> Any:
        """What `column` of `record`'s row shows in `role` (None for nothing)."""
        raise NotImplementedError

    def changed_rows(self, records: list[Any]) -> Iterable[int] | None:
        """Rows to redraw when `records` has the same keys in the same order as before; None: all of them."""
        return None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._records)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(self.COLUMNS):
            return translate(self.CONTEXT, self.COLUMNS[section])
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._records):
            return None
        record = self._records[index.row()]
        if role == self.RecordRole:
            return record
        if role == self.KeyRole:
            return self.key_of(record)
        return self.cell(record, index.column(), role)

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names[self.RecordRole] = QByteArray(self.ROLE_NAMES[0])
        names[self.KeyRole] = QByteArray(self.ROLE_NAMES[1])
        return names

    def record_at(self, row: int) -> Any:
        return self._records[row]

    def row_of(self, key: str) -> int:
        """The row of the record with `key`, or -1."""
        return next((row for row, record in enumerate(self._records) if self.key_of(record) == key), -1)

    def set_records(self, records: list[Any]) -> None:
        """Same keys in the same order: redraw the changed rows in place; otherwise reset (the view
        selects the same key again)."""
        if [self.key_of(r) for r in records] != [self.key_of(r) for r in self._records]:
            self.beginResetModel()
            self._records = list(records)
            self.endResetModel()
            return
        self._records = list(records)
        rows = self.changed_rows(records)
        if rows is None:
            if records:
                self.dataChanged.emit(self.index(0, 0), self.index(len(records) - 1, len(self.COLUMNS) - 1))
            return
        for row in rows:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))


class KeyedTableView(QTableView):
    """Whole rows, one at a time, no row numbers; the selection is a key and outlives a refresh."""

    def __init__(self, model: KeyedTableModel, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setModel(model)
        self.keyed_model = model
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.verticalHeader().hide()
        self.setWordWrap(False)

    def selected_key(self) -> str | None:
        rows = self.selectionModel().selectedRows()
        return self.keyed_model.key_of(self.keyed_model.record_at(rows[0].row())) if rows else None

    def select_key(self, key: str) -> None:
        row = self.keyed_model.row_of(key)
        if row >= 0:
            self.selectRow(row)

    def show_records(self, records: list[Any]) -> None:
        """Put `records` in the table; the row selected before stays selected if it is still there."""
        selected = self.selected_key()
        self.keyed_model.set_records(records)
        if selected is not None and self.selected_key() != selected:
            self.select_key(selected)


def table_over_details(items: Sequence[QWidget | QLayout], grow: QWidget, details: QWidget,
                       stretch: tuple[int, int] = (3, 2)) -> QSplitter:
    """`items` stacked (notes, a toolbar, the list `grow`, which takes the spare height) over `details`,
    in a vertical splitter neither side collapses in; `stretch` shares the height between the two."""
    top = QWidget()
    top_layout = QVBoxLayout(top)
    top_layout.setContentsMargins(0, 0, 0, 0)
    for item in items:
        if isinstance(item, QLayout):
            top_layout.addLayout(item)
        else:
            top_layout.addWidget(item, 1 if item is grow else 0)
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.setChildrenCollapsible(False)
    splitter.addWidget(top)
    splitter.addWidget(details)
    splitter.setStretchFactor(0, stretch[0])
    splitter.setStretchFactor(1, stretch[1])
    return splitter
