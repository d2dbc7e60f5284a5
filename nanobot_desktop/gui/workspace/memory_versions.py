"""The versions of MEMORY.md as a table for the Memory panel (memory_view.py): when, what replaced them, how big.

A version is either a copy in `memory/.versions/` (nanobot 0.1.4's layout: its `source` says what
replaced the kept text) or a commit of the workspace's git repository (nanobot 0.3: its message says it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QWidget

from nanobot_desktop.engine import MemoryVersion
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.editor.file_io import file_size_label

ModelIndex = QModelIndex | QPersistentModelIndex

REPLACED_BY = {"user": QT_TRANSLATE_NOOP("Memory", "your save"), "consolidation": QT_TRANSLATE_NOOP("Memory", "consolidation"),
               "restore": QT_TRANSLATE_NOOP("Memory", "a restore")}
"""How a version's `source` reads in the list: it names what replaced the kept text (see `replaced_by`)."""


def replaced_by(source: str) -> str:
    return translate("Memory", str(REPLACED_BY.get(source, source)))


def version_time(version: MemoryVersion) -> str:
    return version.saved_at.strftime("%Y-%m-%d %H:%M:%S")


class MemoryVersionsModel(QAbstractTableModel):
    """Saved copies of MEMORY.md, newest first: when, what replaced them, how big."""

    VersionRole = Qt.ItemDataRole.UserRole + 1
    """The MemoryVersion of a row."""
    SourceRole = Qt.ItemDataRole.UserRole + 2
    """The raw `source` of a row ("user", "consolidation", "restore", ...)."""
    HEADERS = (QT_TRANSLATE_NOOP("Memory", "Saved"), QT_TRANSLATE_NOOP("Memory", "Replaced by"), QT_TRANSLATE_NOOP("Memory", "Size"))
    GIT_HEADERS = (QT_TRANSLATE_NOOP("Memory", "Committed"), QT_TRANSLATE_NOOP("Memory", "Change"), QT_TRANSLATE_NOOP("Memory", "Size"))

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._versions: list[MemoryVersion] = []

    def set_versions(self, versions: list[MemoryVersion]) -> bool:
        """Replace the rows (only when they differ, so a selection survives a no-op refresh)."""
        if [v.ident for v in versions] == [v.ident for v in self._versions]:
            return False
        self.beginResetModel()
        self._versions = list(versions)
        self.endResetModel()
        return True

    def version(self, row: int) -> MemoryVersion:
        return self._versions[row]

    def row_of(self, key: Path | str) -> int:
        """The row of a version given by its copy's path or its `ident` (a commit), else -1."""
        return next((row for row, v in enumerate(self._versions) if v.path == key or v.ident == key), -1)

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self._versions)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._versions):
            return None
        version = self._versions[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return version_time(version)
            if column == 1:
                return version.message.splitlines()[0] if version.commit else replaced_by(version.source)
            return file_size_label(version.size)
        if role == Qt.ItemDataRole.ToolTipRole and version.commit:
            return translate("Memory", "MEMORY.md as committed on {time} ({commit})\n\n{message}").format(
                time=version_time(version), commit=version.commit[:8], message=version.message)
        if role == Qt.ItemDataRole.ToolTipRole:
            return translate("Memory", "MEMORY.md as it was on {time}, kept when {replacer} replaced it\n{path}").format(
                time=version_time(version), replacer=replaced_by(version.source), path=version.path)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == self.VersionRole:
            return version
        if role == self.SourceRole:
            return version.source
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 (Qt override)
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal \
                and 0 <= section < len(self.HEADERS):
            if self._versions and self._versions[0].commit:  # versions from git (a nanobot 0.3 workspace)
                return translate("Memory", str(self.GIT_HEADERS[section]))
            return translate("Memory", str(self.HEADERS[section]))
        return None
