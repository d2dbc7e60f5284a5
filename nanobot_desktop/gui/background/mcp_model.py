"""The MCP panel's table model: one row per configured server (the engine's snapshots are the truth)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QApplication

from nanobot_desktop.engine import ServerStatus
from nanobot_desktop.gui.common.palette import error_color, ok_color
from nanobot_desktop.gui.common.i18n import translate

Index = QModelIndex | QPersistentModelIndex


def state_text(status: ServerStatus) -> str:
    if not status.enabled:
        return translate("MCP", "disabled")
    return translate("MCP", "failed") if status.state == "failed" else status.summary


class McpServersModel(QAbstractTableModel):
    """One row per configured server: name and state (where it runs is in the details)."""

    COLUMNS = (QT_TRANSLATE_NOOP("MCP", "Server"), QT_TRANSLATE_NOOP("MCP", "State"))  # translated in headerData
    NAME, STATE = range(2)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.statuses: list[ServerStatus] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.statuses)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802 - Qt override
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 2:
            return translate("MCP", self.COLUMNS[section])
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.statuses):
            return None
        status, column = self.statuses[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (status.name, state_text(status))[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return status.error or status.target
        if role == Qt.ItemDataRole.ForegroundRole and column == self.STATE and status.enabled:
            palette = QApplication.palette()
            if status.state == "ready":
                return ok_color(palette)
            if status.state == "failed":
                return error_color(palette)
        return None

    def set_statuses(self, statuses: list[ServerStatus]) -> None:
        if [s.name for s in statuses] != [s.name for s in self.statuses]:
            self.beginResetModel()
            self.statuses = list(statuses)
            self.endResetModel()
            return
        self.statuses = list(statuses)
        if statuses:
            self.dataChanged.emit(self.index(0, 0), self.index(len(statuses) - 1, len(self.COLUMNS) - 1))

    def row_of(self, name: str) -> int:
        return next((row for row, s in enumerate(self.statuses) if s.name == name), -1)
