"""The inspector's turn selector rows: the shown session's turns, read from the timeline when asked.

A combo box filled item by item keeps a Qt item, its label and its id for every turn since the app
started, and was cleared and filled again several times a turn: its memory and its work grew with
every turn of the run. This model copies nothing per turn but a reference to the turn's id; the
selector asks for the few labels it shows.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from nanobot_desktop.gui.inspector.model import TimelineModel


class TurnListModel(QAbstractListModel):
    """One row per turn of the timeline's session, oldest first; the id is the row's UserRole."""

    def __init__(self, timeline: TimelineModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timeline = timeline
        self._session_key = ""
        self._turn_ids: list[str] = []

    def refresh(self) -> None:
        """Follow the timeline: new turns of the same session are inserted after the others, and every
        row's label is asked for again (a turn's status may have changed); anything else resets."""
        key = self._timeline.session_key
        turn_ids = self._timeline.turn_ids(key)
        known = len(self._turn_ids)
        if key != self._session_key or turn_ids[:known] != self._turn_ids:
            self.beginResetModel()
            self._session_key, self._turn_ids = key, turn_ids
            self.endResetModel()
            return
        if len(turn_ids) > known:
            self.beginInsertRows(QModelIndex(), known, len(turn_ids) - 1)
            self._turn_ids = turn_ids
            self.endInsertRows()
        if known:
            self.dataChanged.emit(self.index(0), self.index(known - 1), [Qt.ItemDataRole.DisplayRole])

    def row_of(self, turn_id: str) -> int:
        """The turn's row, or -1 (the shown turn is nearly always the newest: looked for from the end)."""
        for row in range(len(self._turn_ids) - 1, -1, -1):
            if self._turn_ids[row] == turn_id:
                return row
        return -1

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._turn_ids)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._turn_ids):
            return None
        turn_id = self._turn_ids[index.row()]
        if role == Qt.ItemDataRole.UserRole:
            return turn_id
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            turn = self._timeline.turn(self._session_key, turn_id)
            return turn.label() if turn is not None else ""
        return None
