"""The Memory panel: MEMORY.md and HISTORY.md side by side, the versions of MEMORY.md, and a badge
while the agent consolidates.

MEMORY.md saves go through `MemoryStore.write_long_term(source="user")`, so the text a save replaces
is kept as a version; a version can be compared with the current file and restored (restoring keeps
the replaced text as a version too, so it can be undone the same way). The agent rewrites MEMORY.md
and appends to HISTORY.md while consolidating; the editors follow those writes like any outside
change, and never overwrite what the person is typing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QEvent, QItemSelection, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSplitter,
                               QTableView, QVBoxLayout, QWidget)

from nanobot_desktop.engine import ConsolidationFinished, ConsolidationStarted, MemoryVersion
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.engine_words import consolidation_failure_words
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.workspace.history_journal_pane import HistoryJournalPane
from nanobot_desktop.engine import atomic_write_text
from nanobot_desktop.gui.editor.code_edit import blend
from nanobot_desktop.gui.editor.diff_view import unified_diff
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.editor.file_io import BackgroundRunner
from nanobot_desktop.gui.workspace.history_search import HistorySearchPane
from nanobot_desktop.gui.workspace.memory_versions import MemoryVersionsModel, version_time
from nanobot_desktop.gui.common.design import RADII, SPACING

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge

class MemoryView(QWidget):
    """MEMORY.md | HISTORY.md editors, the MEMORY.md versions under the first, a consolidation badge."""

    panel_title = QT_TRANSLATE_NOOP("Panels", "Memory")  # the page's title (the window translates it)

    def __init__(self, engine: Engine, bridge: EngineBridge, sync: Any = None, parent: QWidget | None = None) -> None:
        """`sync` is the app's WorkspaceSync (hot reload); None leaves the editors unwatched."""
        super().__init__(parent)
        self.setObjectName("memoryView")
        self.engine = engine
        self.bridge = bridge
        self.memory = engine.memory
        self._runner = BackgroundRunner(self, "memory-view")
        self._consolidating: set[str] = set()
        self._diff_generation = 0
        self.status_topic = ""
        """What the status line reports, so it goes when that ends: "consolidation-failed" (until a
        consolidation succeeds), "restored" (until MEMORY.md changes again: a save, the agent, another
        program), "versions-error" (until a listing works), "restore-error" (until a restore works)."""

        self.memory_editor = MarkdownEditor(self, save_handler=self._save_memory)
        self.memory_editor.setObjectName("memoryEditor")
        journal = getattr(self.memory, "journal", None)
        # HISTORY.md is a Markdown editor with a search; a 0.3 workspace's history.jsonl is a list of entries.
        self.history_editor: MarkdownEditor | None = None
        self.history_search: HistorySearchPane | HistoryJournalPane
        if journal is not None:
            self.history_search = HistoryJournalPane(journal, self)
        else:
            self.history_editor = MarkdownEditor(self)
            self.history_editor.setObjectName("historyEditor")
            self.history_search = HistorySearchPane(self.memory, self.history_editor, self)

        self.consolidating_badge = QLabel(translate("Memory", "Consolidating…"), self)
        self.consolidating_badge.setObjectName("consolidatingBadge")
        self.consolidating_badge.setToolTip(translate("Memory", "The agent is folding older messages into MEMORY.md and HISTORY.md"))
        self.consolidating_badge.hide()
        self.status_label = QLabel(self)
        self.status_label.setObjectName("memoryStatus")
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.setWordWrap(True)
        self.status_label.hide()

        self.versions_model = MemoryVersionsModel(self)
        self.versions_table = QTableView(self)
        self.versions_table.setObjectName("memoryVersions")
        self.versions_table.setModel(self.versions_model)
        self.versions_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.versions_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.versions_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.versions_table.verticalHeader().hide()
        self.versions_table.setAlternatingRowColors(True)
        header = self.versions_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.versions_table.selectionModel().selectionChanged.connect(self._on_version_selected)
        self.restore_button = QPushButton(translate("Memory", "Restore this version"), self)
        self.restore_button.setEnabled(False)
        self.restore_button.setToolTip(translate("Memory", "Put this text back into MEMORY.md (the current text is kept as a version)"))
        self.restore_button.clicked.connect(self.restore_selected)
        self.versions_hint = QLabel(
            translate("Memory", "Versions of MEMORY.md in the workspace's git repository (Dream's edits and your saves): select "
                                "one to see what changed since.") if getattr(self.memory, "uses_git_versions", False) else
            translate("Memory", "Earlier versions of MEMORY.md: select one to see what changed since."), self)
        self.versions_hint.setWordWrap(True)
        self.versions_file_combo = QComboBox(self)
        self.versions_file_combo.setObjectName("versionsFile")
        for rel_path in ("memory/MEMORY.md", "SOUL.md", "USER.md"):  # what nanobot 0.3 keeps in git
            self.versions_file_combo.addItem(Path(rel_path).name, rel_path)
        self.versions_file_combo.setToolTip(translate("Memory", "Whose versions to list: Dream rewrites all three"))
        self.versions_file_combo.setVisible(getattr(self.memory, "uses_git_versions", False))
        self.versions_file_combo.currentIndexChanged.connect(lambda _index: self._versions_file_changed())

        self._build_layout()
        self._apply_badge_colors()
        bridge.subscribe({ConsolidationStarted: self._on_consolidation_started,
                          ConsolidationFinished: self._on_consolidation_finished}, self)
        if sync is not None:
            sync.register_editor(self.memory_editor)
            if self.history_editor is not None:
                sync.register_editor(self.history_editor)
            sync.memory_changed.connect(self._on_memory_files_changed)
        self.memory_editor.saved.connect(lambda _path: self._memory_changed())
        self.memory_editor.open_file(self.memory.memory_file)
        if self.history_editor is not None:
            self.history_editor.open_file(self.memory.history_file)
        self.refresh_versions()

    def _build_layout(self) -> None:
        versions_panel = QWidget(self)
        versions_layout = QVBoxLayout(versions_panel)
        versions_layout.setContentsMargins(4, 0, 4, 0)
        versions_layout.setSpacing(3)
        versions_layout.addWidget(self.versions_hint)
        versions_layout.addWidget(self.versions_file_combo)
        versions_layout.addWidget(self.versions_table, 1)
        button_row = QHBoxLayout()
        button_row.addStretch(1)
        button_row.addWidget(self.restore_button)
        versions_layout.addLayout(button_row)

        memory_column = QSplitter(Qt.Orientation.Vertical, self)
        memory_column.addWidget(self.memory_editor)
        memory_column.addWidget(versions_panel)
        memory_column.setStretchFactor(0, 3)
        memory_column.setStretchFactor(1, 1)
        memory_column.setChildrenCollapsible(False)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("memorySplitter")
        self.splitter.addWidget(memory_column)
        self.splitter.addWidget(self.history_search)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([1, 1])  # side by side, half each

        top = QHBoxLayout()
        top.setContentsMargins(4, 0, 4, 0)
        top.addWidget(self.status_label, 1)
        top.addStretch()  # keeps the badge small at the right while there is no status text
        top.addWidget(self.consolidating_badge)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)

    # ---- saving -------------------------------------------------------------------------------
    def _save_memory(self, path: Path, text: str) -> None:
        """The editor's save (on its worker thread): through the MemoryStore, which keeps a version."""
        if Path(path).resolve() == Path(self.memory.memory_file).resolve():
            self.memory.write_long_term(text, source="user")
        else:
            atomic_write_text(path, text)

    # ---- versions -----------------------------------------------------------------------------
    def refresh_versions(self) -> None:
        """Re-list the saved versions (off the GUI thread), keeping the selected one selected."""
        if getattr(self.memory, "uses_git_versions", False):
            rel_path, memory = self.versions_file_combo.currentData(), self.memory
            self._runner.submit(lambda: memory.file_versions(rel_path), self._on_versions_listed)
            return
        self._runner.submit(self.memory.list_versions, self._on_versions_listed)

    @property
    def versions_name(self) -> str:
        """The file whose versions are listed (MEMORY.md, or SOUL.md / USER.md in a 0.3 workspace)."""
        return Path(self.versions_file_combo.currentData()).name

    def _on_versions_listed(self, versions: list[MemoryVersion] | None, error: BaseException | None) -> None:
        if not shiboken6.isValid(self.versions_table):
            return  # the view was closed while the versions were read
        if error is not None or versions is None:
            self.set_status(translate("Memory", "Could not list the versions of {name}: {error}. The list is read again at the "
                                      "next change.").format(name=self.versions_name, error=error), "versions-error")
            return
        self.clear_status("versions-error")
        selected = self.selected_version()
        if not self.versions_model.set_versions(versions):
            return
        row = self.versions_model.row_of(selected.ident) if selected else -1
        if row >= 0:
            self.versions_table.selectRow(row)
        else:
            self.restore_button.setEnabled(False)

    def _versions_file_changed(self) -> None:
        self.versions_table.clearSelection()
        self.restore_button.setEnabled(False)
        tip = translate("Memory", "Put this text back into {name} (as a new commit)")
        self.restore_button.setToolTip(tip.format(name=self.versions_name))
        self.refresh_versions()

    def selected_version(self) -> MemoryVersion | None:
        rows = self.versions_table.selectionModel().selectedRows()
        return self.versions_model.version(rows[0].row()) if rows else None

    def _on_version_selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        version = self.selected_version()
        self.restore_button.setEnabled(version is not None)
        if version is not None:
            self.show_version_diff(version)

    def show_version_diff(self, version: MemoryVersion) -> None:
        """Show, under MEMORY.md, what changed from `version` to the file as it is now."""
        self._diff_generation += 1
        generation, memory = self._diff_generation, self.memory
        when = version_time(version)

        name = version.path.name if version.commit else "MEMORY.md"

        def build() -> str:
            current = version.path.read_text(encoding="utf-8", errors="replace") if version.commit and \
                version.path.exists() else memory.read_long_term()
            return unified_diff(memory.read_version(version), current, f"{name} ({when})", f"{name} (now)")

        def show(diff: str | None, error: BaseException | None) -> None:
            if generation != self._diff_generation or not shiboken6.isValid(self.memory_editor):
                return  # a newer diff is on its way, or the view was closed meanwhile
            text = diff if error is None else translate("Memory", "Could not compare the versions ({error}). Select the version "
                                                                  "again.").format(error=error)
            self.memory_editor.diff_view.show_diff(translate("Memory", "Version of {time} → current").format(time=when), text or "")

        self._runner.submit(build, show)

    def restore_selected(self) -> None:
        """Put the selected version back into MEMORY.md; the editor follows (or shows its conflict bar)."""
        version = self.selected_version()
        if version is None:
            return
        self.restore_button.setEnabled(False)
        unsaved = self.memory_editor.is_dirty

        self._runner.submit(lambda: self.memory.restore_version(version),
                            lambda _result, error: self._on_restored(version, unsaved, error))

    def _on_restored(self, version: MemoryVersion, unsaved: bool, error: BaseException | None) -> None:
        if not shiboken6.isValid(self.restore_button):
            return  # the view was closed while the version was put back
        self.restore_button.setEnabled(self.selected_version() is not None)
        when = version_time(version)
        if error is not None:
            self.set_status(translate("Memory", "Could not restore the version of {time}: {error}. Try again, or copy the text "
                                      "from the diff below.").format(time=when, error=error), "restore-error")
            return
        note = " " + translate("Memory", "Your unsaved edits are kept: the bar above them lets you choose.") if unsaved else ""
        name = version.path.name if version.commit else "MEMORY.md"
        self.set_status(translate("Memory", "Restored {name} as of {time}. The text it replaced is kept as a version.").format(
            name=name, time=when) + note, "restored")
        self.memory_editor.on_file_changed_on_disk()
        self.refresh_versions()
        self.show_version_diff(version)

    # ---- outside changes and engine events ----------------------------------------------------
    def _on_memory_files_changed(self, paths: list[Path]) -> None:
        versions_dir = Path(self.memory.versions_dir).resolve()
        if any(p == versions_dir or p.parent == versions_dir for p in paths) or (
                getattr(self.memory, "uses_git_versions", False)
                and Path(self.memory.memory_file).resolve() in paths):
            self.refresh_versions()  # (0.3: a Dream edit of MEMORY.md is a new commit)
        if Path(self.memory.memory_file).resolve() in paths:
            self._memory_changed(refresh_versions=False)
        if Path(self.memory.history_file).resolve() in paths:
            self.history_search.history_file_changed()

    def _on_consolidation_started(self, event: ConsolidationStarted) -> None:
        self._consolidating.add(event.session_key)
        self.consolidating_badge.show()

    def _on_consolidation_finished(self, event: ConsolidationFinished) -> None:
        self._consolidating.discard(event.session_key)
        self.consolidating_badge.setVisible(bool(self._consolidating))
        if not event.ok and event.error != "cancelled":
            self.set_status(consolidation_failure_words(), "consolidation-failed", detail=event.error or "")
        elif event.ok:
            self.clear_status("consolidation-failed")  # a later consolidation worked: the failure is over
        # Do not wait for the watcher: show the agent's writes now (a dirty editor gets its bar).
        self.memory_editor.on_file_changed_on_disk()
        if self.history_editor is not None:
            self.history_editor.on_file_changed_on_disk()
        self.history_search.history_file_changed()
        self._memory_changed()

    def _memory_changed(self, refresh_versions: bool = True) -> None:
        """MEMORY.md may have changed (saved here, written by the agent, edited elsewhere): list the
        versions again, compare the selected version with the new text, and end a "Restored" status
        once the file is no longer what the restore wrote."""
        if refresh_versions:
            self.refresh_versions()
        version = self.selected_version()
        if version is not None:
            self.show_version_diff(version)
        if self.status_topic == "restored" and not self.memory.restore_still_current():  # the engine's answer
            self.clear_status("restored")

    @property
    def is_consolidating(self) -> bool:
        return bool(self._consolidating)

    def set_status(self, text: str, topic: str = "", detail: str = "") -> None:
        """Show `text` under the versions (`detail`, the technical words, in its tooltip); `topic` says
        what ends it (see `status_topic`)."""
        self.status_topic = topic if text else ""
        self.status_label.setText(text)
        self.status_label.setToolTip(detail or text)
        self.status_label.setVisible(bool(text))

    def clear_status(self, topic: str) -> None:
        """The condition `topic` is over: hide its status, if that is what the line shows."""
        if self.status_topic == topic:
            self.set_status("")

    # ---- the main window's needs --------------------------------------------------------------
    def editors(self) -> list[MarkdownEditor]:
        return [editor for editor in (self.memory_editor, self.history_editor) if editor is not None]

    def has_unsaved_changes(self) -> bool:
        return any(editor.is_dirty for editor in self.editors())

    def shutdown(self) -> None:
        """Finish queued writes and stop the worker threads (the window owner calls this at exit)."""
        self.history_search.shutdown()
        for editor in self.editors():
            editor.shutdown()
        self._runner.shutdown()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_badge_colors()

    def _apply_badge_colors(self) -> None:
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Window)
        accent = palette.color(QPalette.ColorRole.Highlight)
        sheet = (f"QLabel#consolidatingBadge {{ background: {blend(base, accent, 0.25).name()};"
                 f" border: 1px solid {blend(base, accent, 0.7).name()}; border-radius: {RADII.card}px;"
                 f" padding: 1px {SPACING.m}px; color: {palette.color(QPalette.ColorRole.WindowText).name()}; }}")
        if self.consolidating_badge.styleSheet() != sheet:
            self.consolidating_badge.setStyleSheet(sheet)
