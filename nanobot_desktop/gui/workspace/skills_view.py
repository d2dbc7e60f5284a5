"""The skills manager: every skill with its availability, enable/disable, create and edit SKILL.md.

The list is re-read from disk whenever anything under `skills/` changes (WorkspaceSync), so a skill
the agent or another program writes appears at once, and a broken one shows its error. Each opened
SKILL.md keeps its own editor, so switching skills never drops unsaved edits. Built-in skills ship
with the app and are shown read-only; "Copy to workspace" makes an editable copy that overrides it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton,
                               QSplitter, QStackedWidget, QTableView, QVBoxLayout, QWidget)

from nanobot_desktop.engine import (SKILL_FILE, ConfigChanged, ConfigError, SkillInfo, atomic_write_text,
                                    check_frontmatter)
from nanobot_desktop.gui.editor.conflict_bar import BarKind
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.workspace.new_skill import new_skill_name_problem, new_skill_text
from nanobot_desktop.gui.workspace.skills_model import SkillsModel
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.palette import error_color

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge

_PROBLEM_PREFIX = QT_TRANSLATE_NOOP("Skills", "This skill cannot be used until its header is fixed: ")
_VALIDATOR_PREFIX = QT_TRANSLATE_NOOP("Skills", "the SKILL.md header is broken — ")  # both translated where used
_LINE = re.compile(r"\bline (\d+)", re.IGNORECASE)


class _ReadOnlyBuiltin(PermissionError):
    pass


class SkillsView(QWidget):
    """Skills table on the left, the selected skill's SKILL.md on the right (below it when narrow)."""

    STACK_BELOW_CHARS = 110
    """Narrower than this many characters (in the drawer beside the chat), the editor goes below the
    list: side by side the names were cut to "weat" and the editor was cramped (issue 26)."""

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        narrow = event.size().width() < self.STACK_BELOW_CHARS * self.fontMetrics().averageCharWidth()
        wanted = Qt.Orientation.Vertical if narrow else Qt.Orientation.Horizontal
        if self.splitter.orientation() != wanted:
            self.splitter.setOrientation(wanted)

    panel_title = QT_TRANSLATE_NOOP("Panels", "Skills")

    def __init__(self, engine: Engine, bridge: EngineBridge | None = None, sync: Any = None, parent: QWidget | None = None) -> None:
        """`sync` is the app's WorkspaceSync: it re-lists on `skills_changed` and keeps editors live."""
        super().__init__(parent)
        self.setObjectName("skillsView")
        self.engine = engine
        self.bridge = bridge
        self._sync = sync
        self._editors: dict[Path, MarkdownEditor] = {}
        self._builtin_dir = Path(engine.skills.builtin_dir).resolve()
        if bridge is not None:  # disabled skills saved elsewhere (another window, Settings) show here too
            bridge.subscribe({ConfigChanged: self._on_config_changed}, self)

        self.model = SkillsModel(self)
        self.model.enable_requested.connect(self.set_skill_enabled)
        self.table = QTableView(self)
        self.table.setObjectName("skillsTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        for column, mode in ((SkillsModel.ON, QHeaderView.ResizeMode.ResizeToContents),
                             (SkillsModel.NAME, QHeaderView.ResizeMode.ResizeToContents),
                             (SkillsModel.STATUS, QHeaderView.ResizeMode.Stretch),
                             (SkillsModel.SOURCE, QHeaderView.ResizeMode.ResizeToContents),
                             (SkillsModel.ALWAYS, QHeaderView.ResizeMode.ResizeToContents)):
            header.setSectionResizeMode(column, mode)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._open_selected())

        self.new_button = QPushButton(translate("Skills", "New skill…"), self)
        self.new_button.setToolTip(translate("Skills", "Create skills/<name>/SKILL.md from a template"))
        self.new_button.clicked.connect(self.start_new_skill)
        self.copy_button = QPushButton(translate("Skills", "Copy to workspace"), self)
        self.copy_button.setToolTip(translate("Skills", "Make an editable copy of this built-in skill; the copy overrides it"))
        self.copy_button.clicked.connect(self.copy_selected_to_workspace)
        self.copy_button.hide()
        self.status_label = QLabel(self)
        self.status_label.setObjectName("skillsStatus")
        self.status_label.setWordWrap(True)
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.hide()

        self.name_field = QLineEdit(self)
        self.name_field.setObjectName("newSkillName")
        self.name_field.setPlaceholderText(translate("Skills", "skill-name (folder name)"))
        self.name_field.installEventFilter(self)
        self.name_field.textChanged.connect(self._on_name_edited)
        self.name_field.returnPressed.connect(self.create_from_field)
        self.create_button = QPushButton(translate("Skills", "Create"), self)
        self.create_button.clicked.connect(self.create_from_field)
        self.cancel_button = QPushButton(translate("Skills", "Cancel"), self)
        self.cancel_button.clicked.connect(self.cancel_new_skill)
        self.name_hint = QLabel(self)
        self.name_hint.setObjectName("newSkillHint")
        self.name_hint.setTextFormat(Qt.TextFormat.PlainText)
        self.name_hint.setWordWrap(True)
        self.new_row = QWidget(self)

        self.placeholder = QLabel(translate("Skills", "Select a skill to read or edit its SKILL.md."), self)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.editor_stack = QStackedWidget(self)
        self.editor_stack.addWidget(self.placeholder)
        self._build_layout()

        if sync is not None:
            sync.skills_changed.connect(self.refresh)
        self.refresh()

    def _build_layout(self) -> None:
        new_layout = QVBoxLayout(self.new_row)
        new_layout.setContentsMargins(0, 0, 0, 0)
        new_layout.setSpacing(2)
        # The field has a row of its own (the buttons go below it): beside them, in a narrow pane,
        # it was left ~30 px wide. It always fits its placeholder, a typical name.
        field_row = QHBoxLayout()
        field_row.addWidget(QLabel(translate("Skills", "Name:"), self.new_row))
        field_row.addWidget(self.name_field, 1)
        metrics = self.name_field.fontMetrics()
        self.name_field.setMinimumWidth(metrics.horizontalAdvance(self.name_field.placeholderText()) + 4 * metrics.averageCharWidth())
        button_row = QHBoxLayout()
        button_row.addStretch(1)
        button_row.addWidget(self.create_button)
        button_row.addWidget(self.cancel_button)
        new_layout.addLayout(field_row)
        new_layout.addLayout(button_row)
        new_layout.addWidget(self.name_hint)
        self.new_row.hide()

        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.copy_button)
        buttons.addStretch(1)
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(4)
        left_layout.addLayout(buttons)
        left_layout.addWidget(self.new_row)
        left_layout.addWidget(self.status_label)
        left_layout.addWidget(self.table, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.editor_stack)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([600, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.splitter)

    # ---- the list -----------------------------------------------------------------------------
    def refresh(self) -> None:
        """Re-list the skills from disk, keeping the selected one selected."""
        selected = self.selected_skill()
        try:
            skills = self.engine.skills.list_skills()
        except OSError as exc:
            self.set_status(translate("Skills", "Could not list the skills ({error}). The list is read again at the next "
                                      "change.").format(error=exc),
                            "list-error")
            return
        self.clear_status("list-error")  # listing works again: that status is over
        self.model.set_skills(skills)
        if selected is not None:
            self.select_skill(selected.name)
        self._update_buttons()

    def selected_skill(self) -> SkillInfo | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.skill(rows[0].row()) if rows else None

    def select_skill(self, name: str) -> bool:
        row = self.model.row_of(name)
        if row < 0:
            return False
        if self.table.selectionModel().selectedRows() != [self.model.index(row, 0)]:
            self.table.selectRow(row)
        else:
            self._open_selected()
        return True

    def _update_buttons(self) -> None:
        skill = self.selected_skill()
        self.copy_button.setVisible(skill is not None and skill.source == "builtin")

    def set_status(self, text: str, topic: str = "") -> None:
        """Show `text`; `topic` names the condition whose end hides it again (`clear_status`)."""
        self._status_topic = topic if text else ""
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    def clear_status(self, topic: str) -> None:
        if getattr(self, "_status_topic", "") == topic:
            self.set_status("")

    def _on_config_changed(self, event: ConfigChanged) -> None:
        if event.touches("app.disabledSkills"):
            self.refresh()

    # ---- enable / disable ---------------------------------------------------------------------
    def set_skill_enabled(self, name: str, enabled: bool) -> bool:
        """Save the app's disabled skills (desktop.json; the next turn's prompt follows it); False on failure."""
        before = list(self.engine.app_settings.disabled_skills)
        disabled = [n for n in before if n != name] + ([] if enabled else [name])
        try:
            self.engine.update_config({"app.disabledSkills": disabled})
        except (OSError, ConfigError, ValueError) as exc:
            self.set_status(translate("Skills", "Could not save the setting for '{name}' ({error}). Check that desktop.json "
                                      "beside the config can be written, then try again.").format(name=name, error=exc))
            self.refresh()
            return False
        self.set_status("")
        self.refresh()
        return True

    # ---- editing ------------------------------------------------------------------------------
    def _open_selected(self) -> None:
        self._update_buttons()
        skill = self.selected_skill()
        if skill is None:
            self.editor_stack.setCurrentWidget(self.placeholder)
            return
        editor = self.editor_for(skill)
        self.editor_stack.setCurrentWidget(editor)

    def editor_for(self, skill: SkillInfo) -> MarkdownEditor:
        """The editor of this skill's SKILL.md (made and opened the first time it is asked for)."""
        path = Path(skill.path)
        editor = self._editors.get(path)
        if editor is not None:
            return editor
        editor = MarkdownEditor(self.editor_stack, save_handler=self._save_skill,
                                validator=self._header_problem)
        editor.setObjectName(f"skillEditor:{skill.name}")
        editor.loaded.connect(lambda _path, editor=editor: self._show_header_problem(editor))
        editor.saved.connect(lambda _path: self.refresh())
        editor.dirty_changed.connect(lambda dirty, path=path: self.model.set_dirty(path, dirty))
        if self._sync is not None:
            self._sync.register_editor(editor)
        self._editors[path] = editor
        self.editor_stack.addWidget(editor)
        editor.open_file(path)
        return editor

    def current_editor(self) -> MarkdownEditor | None:
        widget = self.editor_stack.currentWidget()
        return widget if isinstance(widget, MarkdownEditor) else None

    def _is_builtin(self, path: Path) -> bool:
        resolved = Path(path).resolve()
        return resolved == self._builtin_dir or self._builtin_dir in resolved.parents

    def _save_skill(self, path: Path, text: str) -> None:
        """Runs on the editor's worker; built-in skills are part of the app and stay as shipped."""
        if self._is_builtin(path):
            raise _ReadOnlyBuiltin(translate("Skills", "built-in skills are read-only here; use “Copy to workspace” to change one"))
        atomic_write_text(path, text)

    @staticmethod
    def _header_problem(text: str) -> str | None:
        problem = check_frontmatter(text)
        return f"{translate('Skills', _VALIDATOR_PREFIX)}{problem}" if problem else None

    def _show_header_problem(self, editor: MarkdownEditor) -> None:
        """A broken header is shown in the editor as soon as the file loads, pointing at its line."""
        problem = check_frontmatter(editor.text())
        if problem is None:
            shown = editor.error_bar.text
            if editor.error_bar.isVisibleTo(editor) and (translate("Skills", _PROBLEM_PREFIX) in shown
                                                         or translate("Skills", _VALIDATOR_PREFIX) in shown):
                editor.error_bar.clear()
                editor.text_edit.mark_line(None)
            return
        found = _LINE.search(problem)
        actions = []
        if found:
            line = int(found.group(1))
            editor.text_edit.mark_line(line)
            actions.append((translate("Skills", "Go to line {line}").format(line=line), lambda: self._go_to_line(editor, line)))
        editor.error_bar.show_message(BarKind.ERROR, translate("Skills", _PROBLEM_PREFIX) + problem, actions)

    @staticmethod
    def _go_to_line(editor: MarkdownEditor, line: int) -> None:
        editor.set_preview_visible(False)
        editor.text_edit.go_to_line(line)
        editor.text_edit.setFocus()

    # ---- creating -----------------------------------------------------------------------------
    def start_new_skill(self) -> None:
        """Show the inline name field (non-modal: the rest of the window stays usable)."""
        self.new_row.show()
        self.name_field.clear()
        self._on_name_edited("")
        self.name_field.setFocus()

    def cancel_new_skill(self) -> None:
        self.new_row.hide()
        self.name_field.clear()

    def _on_name_edited(self, text: str) -> None:
        name = text.strip()
        problem = new_skill_name_problem(name, self.engine.workspace.skills_dir)
        self.create_button.setEnabled(problem is None)
        if problem is None and any(s.name == name and s.source == "builtin" for s in self.model.skills()):
            self._set_hint(translate("Skills", "This will override the built-in skill '{name}'.").format(name=name), error=False)
        elif problem is None:
            self._set_hint(translate("Skills", "Creates skills/{name}/{file} from the template.").format(name=name, file=SKILL_FILE),
                           error=False)
        else:
            self._set_hint(problem, error=bool(name))

    def _set_hint(self, text: str, *, error: bool) -> None:
        self.name_hint.setText(text)
        self.name_hint.setProperty("error", error)
        self.name_hint.setStyleSheet(f"QLabel#newSkillHint {{ color: {error_color(self.palette()).name()}; }}" if error else "")

    def create_from_field(self) -> Path | None:
        return self.create_skill(self.name_field.text().strip())

    def create_skill(self, name: str, text: str | None = None) -> Path | None:
        """Create skills/<name>/SKILL.md (from the template unless `text`), select it and open it."""
        skills_dir = Path(self.engine.workspace.skills_dir)
        problem = new_skill_name_problem(name, skills_dir)
        if problem is not None:
            self._set_hint(problem, error=True)
            return None
        folder = skills_dir / name
        target = folder / SKILL_FILE
        try:
            content = new_skill_text(name) if text is None else text
            folder.mkdir(parents=True)  # not exist_ok: never write into a folder that appeared meanwhile
            if self._sync is not None:
                self._sync.expect_own_write(target, content)
            atomic_write_text(target, content)
        except OSError as exc:
            self._set_hint(translate("Skills", "Could not create skills/{name}: {error}").format(name=name, error=exc.strerror or exc),
                           error=True)
            return None
        self.cancel_new_skill()
        self.set_status("")
        self.refresh()
        self.select_skill(name)
        editor = self.current_editor()
        if editor is not None:
            editor.text_edit.setFocus()
        return target

    def copy_selected_to_workspace(self) -> Path | None:
        """An editable workspace copy of the selected built-in skill (which it then overrides)."""
        skill = self.selected_skill()
        if skill is None or skill.source != "builtin":
            return None
        try:
            text = Path(skill.path).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.set_status(translate("Skills", "Could not read the built-in skill '{name}': {error}").format(name=skill.name, error=exc))
            return None
        created = self.create_skill(skill.name, text)
        if created is None:
            self.set_status(self.name_hint.text())
        return created

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.name_field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) \
                and event.key() == Qt.Key.Key_Escape:
            self.cancel_new_skill()
            return True
        return super().eventFilter(watched, event)

    # ---- the main window's needs --------------------------------------------------------------
    def editors(self) -> list[MarkdownEditor]:
        return list(self._editors.values())

    def has_unsaved_changes(self) -> bool:
        return any(editor.is_dirty for editor in self._editors.values())

    def shutdown(self) -> None:
        for editor in self._editors.values():
            editor.shutdown()
