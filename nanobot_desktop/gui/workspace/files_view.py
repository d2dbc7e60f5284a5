"""The Workspace panel: the bootstrap files (AGENTS, SOUL, USER, TOOLS, HEARTBEAT, IDENTITY if present)
in editors, and the skills manager in a second tab.

Every file keeps its own editor once opened, so moving between files never drops unsaved edits; the
list marks files with unsaved edits with a dot. The agent reads these files from disk at each turn,
so a save here is what the next turn sees.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QLabel, QListWidget, QListWidgetItem, QSplitter, QStackedWidget, QTabWidget,
                               QVBoxLayout, QWidget)

from nanobot_desktop.gui.editor.editor import MarkdownEditor
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.workspace.skills_view import SkillsView

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge

WORKSPACE_FILES: tuple[tuple[str, str], ...] = (
    ("AGENTS.md", str(QT_TRANSLATE_NOOP("Workspace", "How the agent should work: instructions and rules"))),
    ("SOUL.md", str(QT_TRANSLATE_NOOP("Workspace", "Personality, tone and values"))),
    ("USER.md", str(QT_TRANSLATE_NOOP("Workspace", "What the agent knows about you"))),
    ("TOOLS.md", str(QT_TRANSLATE_NOOP("Workspace", "Notes on the tools and how to use them"))),
    ("HEARTBEAT.md", str(QT_TRANSLATE_NOOP("Workspace", "Tasks the heartbeat checks periodically"))),
    ("IDENTITY.md", str(QT_TRANSLATE_NOOP("Workspace", "Identity (read when present, as older nanobot versions did)"))),
)
OPTIONAL_FILES = frozenset({"IDENTITY.md"})
GIT_TRACKED = frozenset({"SOUL.md", "USER.md"})
"""Files a nanobot 0.3 workspace versions in its git repository (with memory/MEMORY.md)."""
"""Listed only when the file exists."""

PathRole = Qt.ItemDataRole.UserRole + 1
AboutRole = Qt.ItemDataRole.UserRole + 2


class WorkspaceFilesView(QWidget):
    """Tabs: "Files" (bootstrap files in editors) and "Skills" (the skills manager)."""

    panel_title = QT_TRANSLATE_NOOP("Panels", "Workspace")  # the dock's title (the window translates it)

    def __init__(self, engine: Engine, bridge: EngineBridge | None = None, sync: Any = None, parent: QWidget | None = None) -> None:
        """`sync` is the app's WorkspaceSync (hot reload); None leaves the editors unwatched."""
        super().__init__(parent)
        self.setObjectName("workspaceFilesView")
        self.engine = engine
        self.bridge = bridge
        self._sync = sync
        self._root = Path(engine.workspace.root)
        self._editors: dict[str, MarkdownEditor] = {}

        self.file_list = QListWidget(self)
        self.file_list.setObjectName("workspaceFileList")
        self.file_list.setAccessibleName(translate("Workspace", "Workspace files"))
        self.file_list.setWordWrap(True)
        self.file_list.setSpacing(3)
        self.file_list.currentItemChanged.connect(lambda current, _previous: self._open_item(current))
        self.placeholder = QLabel(translate("Workspace", "Select a file to edit it."), self)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.editor_stack = QStackedWidget(self)
        self.editor_stack.addWidget(self.placeholder)
        self.skills_view = SkillsView(engine, bridge, sync, self)

        files_page = QSplitter(Qt.Orientation.Horizontal, self)
        files_page.addWidget(self.file_list)
        files_page.addWidget(self.editor_stack)
        files_page.setStretchFactor(0, 0)
        files_page.setStretchFactor(1, 1)
        files_page.setChildrenCollapsible(False)
        files_page.setSizes([220, 780])
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName(translate("Workspace", "Workspace"))
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(files_page, translate("Workspace", "Files"))
        self.tabs.addTab(self.skills_view, translate("Workspace", "Skills"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        if sync is not None:
            sync.workspace_files_changed.connect(self._on_workspace_files_changed)
        self.refresh_file_list()
        if self.file_list.count():
            self.file_list.setCurrentRow(0)

    # ---- the list -----------------------------------------------------------------------------
    def listed_files(self) -> list[str]:
        return [self.file_list.item(row).data(PathRole).name for row in range(self.file_list.count())]

    def refresh_file_list(self) -> None:
        """List the bootstrap files; an optional one appears when it exists (or is open here)."""
        layout = getattr(self.engine, "layout", None)
        loaded = set(layout.bootstrap_files) | {"HEARTBEAT.md"} if layout is not None and layout.is_v03 else None
        optional = OPTIONAL_FILES | ({"TOOLS.md"} if loaded is not None else set())
        wanted = [(name, translate("Workspace", about) if loaded is None or name in loaded
                   else translate("Workspace", "{about} (nanobot 0.3 does not load it)").format(about=translate("Workspace", about)))
                  for name, about in WORKSPACE_FILES
                  if name not in optional or (self._root / name).exists() or name in self._editors]
        if [name for name, _ in wanted] == self.listed_files():
            return
        current = self.file_list.currentItem()
        current_name = current.data(PathRole).name if current is not None else None
        self.file_list.blockSignals(True)
        self.file_list.clear()
        for name, about in wanted:
            item = QListWidgetItem(name)
            item.setData(PathRole, self._root / name)
            item.setData(AboutRole, about)
            item.setToolTip(f"{about}\n{self._root / name}")
            self.file_list.addItem(item)
            self._update_item(name)
        if current_name in dict(wanted):
            self.file_list.setCurrentRow([name for name, _ in wanted].index(current_name))
        self.file_list.blockSignals(False)

    def _on_workspace_files_changed(self, _paths: list[Path]) -> None:
        self.refresh_file_list()

    def _item(self, name: str) -> QListWidgetItem | None:
        for row in range(self.file_list.count()):
            item = self.file_list.item(row)
            if item.data(PathRole).name == name:
                return item
        return None

    def _update_item(self, name: str) -> None:
        item = self._item(name)
        editor = self._editors.get(name)
        if item is not None:
            title = f"{name} •" if editor is not None and editor.is_dirty else name
            item.setText(f"{title}\n{item.data(AboutRole)}")

    # ---- editors ------------------------------------------------------------------------------
    def open_file(self, name: str) -> MarkdownEditor:
        """Show the editor of a workspace file (AGENTS.md, ...), selecting it in the list."""
        item = self._item(name)
        if item is not None and self.file_list.currentItem() is not item:
            self.file_list.setCurrentItem(item)  # opens it through currentItemChanged
        editor = self.editor_for(name)
        self.editor_stack.setCurrentWidget(editor)
        self.tabs.setCurrentIndex(0)
        return editor

    def _open_item(self, item: QListWidgetItem | None) -> None:
        if item is None:
            self.editor_stack.setCurrentWidget(self.placeholder)
            return
        self.editor_stack.setCurrentWidget(self.editor_for(item.data(PathRole).name))

    def editor_for(self, name: str) -> MarkdownEditor:
        editor = self._editors.get(name)
        if editor is not None:
            return editor
        memory = getattr(self.engine, "memory", None)
        if memory is not None and name in GIT_TRACKED and getattr(memory, "uses_git_versions", False):
            # nanobot 0.3 keeps Dream's versions of these in git: the user's save is a commit too
            editor = MarkdownEditor(self.editor_stack, save_handler=memory.save_tracked)
        else:
            editor = MarkdownEditor(self.editor_stack)
        editor.setObjectName(f"workspaceEditor:{name}")
        editor.dirty_changed.connect(lambda _dirty, name=name: self._update_item(name))
        if self._sync is not None:
            self._sync.register_editor(editor)
        self._editors[name] = editor
        self.editor_stack.addWidget(editor)
        editor.open_file(self._root / name)
        return editor

    def current_editor(self) -> MarkdownEditor | None:
        widget = self.editor_stack.currentWidget()
        return widget if isinstance(widget, MarkdownEditor) else None

    # ---- the main window's needs --------------------------------------------------------------
    def editors(self) -> list[MarkdownEditor]:
        return [*self._editors.values(), *self.skills_view.editors()]

    def has_unsaved_changes(self) -> bool:
        return any(editor.is_dirty for editor in self.editors())

    def shutdown(self) -> None:
        for editor in self._editors.values():
            editor.shutdown()
        self.skills_view.shutdown()
