"""The skills table: one row per skill (workspace first, then built-ins) with what decides its use.

Each row says at a glance whether the agent can use the skill: a coloured mark that also differs in
shape (a check, a dash, a cross) so colour is not the only cue, what is missing
("CLI: gh, ENV: GH_TOKEN"), a broken header in red, the always-on and "overrides built-in" markers,
and an "On" check box that enables or disables it (saved as `agents.defaults.disabledSkills`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QPointF, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QWidget

from nanobot_desktop.engine import SkillInfo
from nanobot_desktop.gui.editor.code_edit import blend
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.design import ACCENTS as DESIGN_ACCENTS

ModelIndex = QModelIndex | QPersistentModelIndex

ACCENTS = {"available": DESIGN_ACCENTS.added, "missing": DESIGN_ACCENTS.warning, "broken": DESIGN_ACCENTS.removed}


def skill_state(skill: SkillInfo) -> str:
    """"broken" (its SKILL.md cannot be read), "missing" (requirements not met) or "available"."""
    if skill.error:
        return "broken"
    return "available" if skill.available else "missing"


def status_text(skill: SkillInfo) -> str:
    state = skill_state(skill)
    if state == "broken":
        return translate("Skills", "Broken: {error}").format(error=skill.error)
    if state == "missing":
        return (translate("Skills", "Missing {requirements}").format(requirements=skill.missing_text) if skill.missing_text
                else translate("Skills", "Unavailable"))
    return translate("Skills", "Available")


def source_text(skill: SkillInfo) -> str:
    if skill.source == "builtin":
        return translate("Skills", "Built-in")
    return translate("Skills", "Workspace (overrides built-in)") if skill.shadows_builtin else translate("Skills", "Workspace")


@cache
def status_icon(state: str) -> QIcon:
    """A filled circle with a check (available), a dash (missing) or a cross (broken)."""
    size = 16
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(ACCENTS[state]))
    painter.drawEllipse(1, 1, size - 2, size - 2)
    pen = QPen(QColor("white"), 2.0)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    if state == "available":
        painter.drawPolyline([QPointF(4.5, 8.5), QPointF(7, 11), QPointF(11.5, 5.5)])
    elif state == "missing":
        painter.drawLine(QPointF(4.5, 8), QPointF(11.5, 8))
    else:
        painter.drawLine(QPointF(5, 5), QPointF(11, 11))
        painter.drawLine(QPointF(11, 5), QPointF(5, 11))
    painter.end()
    return QIcon(pixmap)


class SkillsModel(QAbstractTableModel):
    """Skills as rows; toggling "On" asks for the change through `enable_requested`."""

    enable_requested = Signal(str, bool)
    """(skill name, enabled): the person ticked or cleared the "On" box."""

    SkillRole = Qt.ItemDataRole.UserRole + 1
    """The row's SkillInfo."""
    StateRole = Qt.ItemDataRole.UserRole + 2
    """"available", "missing" or "broken"."""
    HEADERS = (QT_TRANSLATE_NOOP("Skills", "On"), QT_TRANSLATE_NOOP("Skills", "Skill"), QT_TRANSLATE_NOOP("Skills", "Status"),
               QT_TRANSLATE_NOOP("Skills", "Source"), QT_TRANSLATE_NOOP("Skills", "Always on"))  # translated in headerData
    ON, NAME, STATUS, SOURCE, ALWAYS = range(5)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._skills: list[SkillInfo] = []
        self._dirty_paths: set[Path] = set()

    # ---- content ------------------------------------------------------------------------------
    def set_skills(self, skills: list[SkillInfo]) -> None:
        """Show `skills`; the same rows in the same order are updated in place (selection survives)."""
        if [(s.name, s.path) for s in skills] == [(s.name, s.path) for s in self._skills]:
            self._skills = list(skills)
            if skills:
                self.dataChanged.emit(self.index(0, 0), self.index(len(skills) - 1, len(self.HEADERS) - 1))
            return
        self.beginResetModel()
        self._skills = list(skills)
        self.endResetModel()

    def skill(self, row: int) -> SkillInfo:
        return self._skills[row]

    def skills(self) -> list[SkillInfo]:
        return list(self._skills)

    def row_of(self, name: str, path: Path | None = None) -> int:
        for row, skill in enumerate(self._skills):
            if skill.name == name and (path is None or skill.path == path):
                return row
        return -1

    def set_dirty(self, path: Path, dirty: bool) -> None:
        """Mark the skill whose SKILL.md has unsaved edits (a dot after its name)."""
        if dirty == (path in self._dirty_paths):
            return
        (self._dirty_paths.add if dirty else self._dirty_paths.discard)(path)
        for row, skill in enumerate(self._skills):
            if skill.path == path:
                index = self.index(row, self.NAME)
                self.dataChanged.emit(index, index)

    # ---- Qt model -----------------------------------------------------------------------------
    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self._skills)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.HEADERS)

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == self.ON:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._skills):
            return None
        skill = self._skills[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(skill, column)
        if role == Qt.ItemDataRole.CheckStateRole and column == self.ON:
            return Qt.CheckState.Checked if skill.enabled else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.AccessibleTextRole and column in (self.ON, self.ALWAYS):
            # what a screen reader says for a cell that shows only a check box or nothing
            if column == self.ON:
                return translate("Skills", "On") if skill.enabled else translate("Skills", "Off")
            return self._display(skill, column) or translate("Skills", "Not always on")
        if role == Qt.ItemDataRole.DecorationRole and column == self.NAME:
            return status_icon(skill_state(skill))
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._foreground(skill, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(skill, column)
        if role == self.SkillRole:
            return skill
        if role == self.StateRole:
            return skill_state(skill)
        return None

    def _display(self, skill: SkillInfo, column: int) -> str | None:
        if column == self.NAME:
            # No emoji here: without an emoji font (common on Linux) it would be an empty box.
            return f"{skill.name} •" if skill.path in self._dirty_paths else skill.name
        if column == self.STATUS:
            return status_text(skill)
        if column == self.SOURCE:
            return source_text(skill)
        if column == self.ALWAYS:
            return translate("Skills", "Always on") if skill.always else ""
        return None

    def _foreground(self, skill: SkillInfo, column: int) -> QColor | None:
        palette = QApplication.palette()
        text = palette.color(QPalette.ColorRole.Text)
        state = skill_state(skill)
        if state == "broken" and column in (self.NAME, self.STATUS):
            return blend(text, QColor(ACCENTS["broken"]), 0.85)
        if not skill.enabled:
            return palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        if state == "missing" and column == self.STATUS:
            return blend(text, QColor(ACCENTS["missing"]), 0.8)
        return None

    def _tooltip(self, skill: SkillInfo, column: int) -> str:
        if column == self.ON:
            return (translate("Skills", "Enabled: the agent is told about this skill") if skill.enabled
                    else translate("Skills", "Disabled: left out of the agent's prompt"))
        if column == self.STATUS:
            return status_text(skill)
        if column == self.ALWAYS and skill.always:
            return translate("Skills", "Its instructions are put into every conversation (when available and enabled)")
        lines = [skill.description, str(skill.path)]
        if skill.path in self._dirty_paths:
            lines.append(translate("Skills", "Unsaved edits"))
        return "\n".join(lines)

    def setData(self, index: ModelIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid() or index.column() != self.ON or role != Qt.ItemDataRole.CheckStateRole:
            return False
        enabled = Qt.CheckState(value) == Qt.CheckState.Checked if not isinstance(value, bool) else value
        skill = self._skills[index.row()]
        if skill.enabled == enabled:
            return True
        skill.enabled = enabled  # shown at once; the view re-lists from disk after saving the config
        self.dataChanged.emit(index, self.index(index.row(), len(self.HEADERS) - 1))
        self.enable_requested.emit(skill.name, enabled)
        return True

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 (Qt override)
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal \
                and 0 <= section < len(self.HEADERS):
            return translate("Skills", str(self.HEADERS[section]))
        return None
