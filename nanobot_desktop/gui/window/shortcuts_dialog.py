"""Help → Keyboard shortcuts: every shortcut of the app, read from the action registry, searchable.

Read from the registry (common/actions.py), never a list kept by hand, so a shortcut added or changed
there shows here at once. Non-modal, like Settings. The table is filtered as the person types (a
word of the action, its description or its keys: "ctrl+k", "approval").
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLineEdit, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from nanobot_desktop.gui.common.accessibility import name
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.actions import ActionRegistry


def shortcut_rows(actions: ActionRegistry) -> list[tuple[str, str, str]]:
    """(action, keys, what it does) for every action with a shortcut, in the registry's order."""
    rows = []
    for action in actions.all().values():
        keys = [key.toString(QKeySequence.SequenceFormat.NativeText) for key in action.shortcuts()]
        if keys:
            rows.append((action.text().replace("&", ""), ", ".join(keys), action.toolTip()))
    return rows


class ShortcutsDialog(QDialog):
    """A search field over a table of (action, keys, description)."""

    def __init__(self, actions: ActionRegistry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle(translate("Shortcuts", "Keyboard shortcuts"))
        self.search = QLineEdit(self)
        self.search.setObjectName("shortcutSearch")
        self.search.setPlaceholderText(translate("Shortcuts", "Search shortcuts (an action or a key)"))
        self.search.setClearButtonEnabled(True)
        name(self.search, translate("Shortcuts", "Search shortcuts"))
        self.table = QTableWidget(self)
        self.table.setObjectName("shortcutTable")
        name(self.table, translate("Shortcuts", "Keyboard shortcuts"))
        self.table.setColumnCount(3)
        self.table.setHorizontalHeaderLabels([translate("Shortcuts", "Action"), translate("Shortcuts", "Keys"),
                                              translate("Shortcuts", "What it does")])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        rows = shortcut_rows(actions)
        self.table.setRowCount(len(rows))
        for row, values in enumerate(rows):
            for column, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                self.table.setItem(row, column, item)
        self.table.resizeRowsToContents()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.search.textChanged.connect(self._filter)
        self.resize(self.fontMetrics().averageCharWidth() * 110, self.fontMetrics().height() * 30)

    def visible_rows(self) -> list[str]:
        """The actions shown now (the filter's result), by name."""
        return [self._text(row, 0) for row in range(self.table.rowCount()) if not self.table.isRowHidden(row)]

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def _filter(self, text: str) -> None:
        words = text.casefold().split()
        for row in range(self.table.rowCount()):
            haystack = " ".join(self._text(row, column) for column in range(3)).casefold()
            self.table.setRowHidden(row, not all(word in haystack for word in words))
