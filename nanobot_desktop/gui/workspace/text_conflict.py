"""Choosing between two machines' versions of a text file (a sync tool's conflict copy).

Both versions side by side, with the last saved version before the conflict where the file keeps one,
and below them the text that will be kept: it starts as this machine's and can be taken from the other
machine's, from the earlier version, or edited by hand. Nothing is written until *Keep this text*; the
other machine's version then goes to the app's trash in the workspace. The dialog is not modal: the
agent and the rest of the window keep working while it is open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QGridLayout, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget,
)

from nanobot_desktop.gui.common.i18n import translate

if TYPE_CHECKING:
    from nanobot_desktop.engine import Engine


def _pane(text: str, parent: QWidget) -> QPlainTextEdit:
    pane = QPlainTextEdit(parent)
    pane.setPlainText(text)
    pane.setReadOnly(True)
    pane.setMinimumHeight(120)
    return pane


class TextConflictDialog(QDialog):
    resolved = Signal(str)
    """The person kept a text: the file's workspace name (the conflict is gone)."""
    failed = Signal(str)
    """Keeping the text did not work: the sentence to show (the file and the copy are as they were)."""

    def __init__(self, engine: Engine, copy_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.copy_name = copy_name
        conflict = next((c for c in engine.text_conflicts() if c.copy.name == copy_name), None)
        if conflict is None:
            raise FileNotFoundError(copy_name)
        device = conflict.conflict.describe_device()
        self.setWindowTitle(translate("TextConflict", "{file} was changed on two machines").format(file=conflict.name))
        layout = QVBoxLayout(self)
        intro = QLabel(translate(
            "TextConflict",
            "{file} was changed on two machines before they could sync; the sync tool kept one version under the "
            "file's name and the other, from {device}, beside it. Nothing has been overwritten: choose what to "
            "keep. The other version then goes to the trash in the workspace.").format(
                file=conflict.name, device=device), self)
        intro.setWordWrap(True)
        layout.addWidget(intro)

        grid = QGridLayout()
        self.ours = _pane(conflict.ours(), self)
        self.theirs = _pane(conflict.theirs(), self)
        columns: list[tuple[str, QPlainTextEdit]] = [
            (translate("TextConflict", "{file} as it is now").format(file=conflict.original.name), self.ours),
            (translate("TextConflict", "The other version, from {device}").format(device=device), self.theirs)]
        self.base: QPlainTextEdit | None = None
        if conflict.base_text is not None:
            self.base = _pane(conflict.base_text, self)
            columns.append((translate("TextConflict", "Before the conflict ({which})").format(which=conflict.base_label),
                            self.base))
        for column, (title, pane) in enumerate(columns):
            heading = QLabel(title, self)
            heading.setWordWrap(True)
            heading.setBuddy(pane)
            pane.setAccessibleName(title)
            grid.addWidget(heading, 0, column, Qt.AlignmentFlag.AlignBottom)
            grid.addWidget(pane, 1, column)
        layout.addLayout(grid, 2)
        if conflict.base_text is None:
            note = QLabel(translate("TextConflict", "No version from before the conflict: {why}.").format(
                why=conflict.base_label), self)
            note.setWordWrap(True)
            layout.addWidget(note)

        kept = QLabel(translate("TextConflict", "Text to keep (edit it if you want parts of both):"), self)
        self.kept_text = QPlainTextEdit(self)
        self.kept_text.setPlainText(conflict.ours())
        self.kept_text.setAccessibleName(translate("TextConflict", "Text to keep"))
        kept.setBuddy(self.kept_text)
        layout.addWidget(kept)
        layout.addWidget(self.kept_text, 2)

        row = QHBoxLayout()
        buttons = QDialogButtonBox(self)
        self.use_ours = QPushButton(translate("TextConflict", "Start from the file as it is"), self)
        self.use_theirs = QPushButton(translate("TextConflict", "Start from the other version"), self)
        self.keep = QPushButton(translate("TextConflict", "Keep this text"), self)
        self.later = QPushButton(translate("TextConflict", "Decide later"), self)
        self.keep.setDefault(True)
        row.addWidget(self.use_ours)  # what to start from, on the left; the decision on the right
        row.addWidget(self.use_theirs)
        row.addStretch(1)
        buttons.addButton(self.later, QDialogButtonBox.ButtonRole.RejectRole)
        buttons.addButton(self.keep, QDialogButtonBox.ButtonRole.AcceptRole)
        row.addWidget(buttons)
        self.use_ours.clicked.connect(lambda: self.kept_text.setPlainText(self.ours.toPlainText()))
        self.use_theirs.clicked.connect(lambda: self.kept_text.setPlainText(self.theirs.toPlainText()))
        self.keep.clicked.connect(self._keep)
        self.later.clicked.connect(self.reject)
        layout.addLayout(row)
        self._file = conflict.name
        self.resize(960, 640)

    def _keep(self) -> None:
        try:
            self.engine.resolve_text_conflict(self.copy_name, self.kept_text.toPlainText())
        except OSError as error:
            self.failed.emit(translate("TextConflict", "Could not keep the text of {file}: {error}").format(
                file=self._file, error=error.strerror or str(error)))
            return
        self.resolved.emit(self._file)
        self.accept()
