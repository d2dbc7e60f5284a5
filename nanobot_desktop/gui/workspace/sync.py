"""Hot reload: routes "a file changed on disk" from the watcher to the engine, and its answer to the views.

The WorkspaceWatcher only says which paths changed; who changed them is the engine's to say
(`Engine.notice_files`, its change tracker in engine/changes.py). It publishes `SessionChanged` for
session files and `FileChanged` for the rest (re-reading a changed job store first), and returns the
files to follow: all but the echo of the app's own announced saves. Only those are routed here:
- an open editor of that file re-checks the disk (it follows a clean file, or shows its conflict bar);
- a change under `skills/` (or the built-in skills folder) → `skills_changed`;
- files under `memory/` → `memory_changed`; the job store → `cron_changed`; files directly in the
  workspace → `workspace_files_changed`.
No file signature or digest is kept here: the app's own saves are announced to the engine
(`Engine.expect_write`) before they are made, so they never come back to the editor that made them.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created, the editor's
    # (gui/editor/, ~0.5 MB resident) when the first page holding an editor is built
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.editor.editor import MarkdownEditor

log = logging.getLogger(__name__)

APPLIED_WINDOW_S = 5.0
"""An editor that reacts later than this after being told of a change is not reported as applying it."""


def _is_within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class WorkspaceSync(QObject):
    """Routes the watcher's batches to editors, the skills list, sessions and cron."""

    skills_changed = Signal()
    """Something under workspace/skills or the built-in skills folder changed (re-list the skills)."""
    cron_changed = Signal()
    """cron/jobs.json changed on disk (the engine has already re-read it)."""
    memory_changed = Signal(list)
    """list[Path]: files under workspace/memory changed (MEMORY.md, HISTORY.md, saved versions)."""
    workspace_files_changed = Signal(list)
    """list[Path]: files directly in the workspace folder changed (e.g. IDENTITY.md appeared)."""
    changed_applied = Signal(object)
    """Path: an open editor now shows an outside change (reloaded it, or raised its conflict bar).
    Emitted once per change and editor, so the time from a write to this signal is the hot-reload
    latency the benchmark measures."""

    def __init__(self, engine: Engine, watcher: WorkspaceWatcher, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.watcher = watcher
        self.watch_errors: list[str] = []
        """Folders that could not be watched, with the reason (hot reload is off for them)."""
        self._root = Path(engine.workspace.root).resolve()
        self._skills_dir = Path(engine.workspace.skills_dir).resolve()
        self._memory_dir = Path(engine.workspace.memory_dir).resolve()
        self._sessions_dir = Path(engine.sessions.sessions_dir).resolve()
        self._builtin_dir = Path(engine.skills.builtin_dir).resolve()
        self._cron_file = self._prepare_cron_folder(engine.cron.store_path)
        self._cron_files = {self._cron_file.with_name(path.name) for path in engine.cron.watched_files}
        self._editors: dict[int, MarkdownEditor] = {}
        self._awaiting: dict[int, tuple[Path, float]] = {}
        self._closed = False
        watcher.paths_changed.connect(self._on_paths_changed)
        self._watch_folders()

    # ---- setting up -------------------------------------------------------------------------------
    def _prepare_cron_folder(self, cron_file: Path) -> Path:
        folder = cron_file.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.watch_errors.append(f"{folder}: cannot create it ({exc.strerror or exc})")
        return folder.resolve() / cron_file.name

    def _watch_folders(self) -> None:
        wanted: list[tuple[Path, bool]] = [(self._root, True)]
        if self._builtin_dir.is_dir() and not _is_within(self._builtin_dir, self._root):
            wanted.append((self._builtin_dir, True))
        cron_folder = self._cron_file.parent
        if cron_folder.is_dir() and not _is_within(cron_folder, self._root):
            wanted.append((cron_folder, False))
        if not _is_within(self._sessions_dir, self._root):  # a nanobot 0.3 workspace keeps them beside the config
            try:
                self._sessions_dir.mkdir(parents=True, exist_ok=True)
                wanted.append((self._sessions_dir, False))
            except OSError as exc:
                self.watch_errors.append(f"{self._sessions_dir}: cannot create it ({exc.strerror or exc})")
        for folder, recursive in wanted:
            try:
                self.watcher.watch(folder, recursive=recursive)
            except (OSError, RuntimeError) as exc:
                self.watch_errors.append(f"{folder}: {exc}")
                log.warning("hot reload is off for %s: %s", folder, exc)

    def close(self) -> None:
        """Stop reacting (at shutdown, or before the workspace changes); the watcher is left running.

        Safe to call more than once, and after Qt has already deleted this object's children.
        """
        if self._closed:
            return
        self._closed = True
        self._editors.clear()
        self._awaiting.clear()
        try:
            self.watcher.paths_changed.disconnect(self._on_paths_changed)
        except (RuntimeError, TypeError):
            pass  # already deleted or disconnected

    # ---- editors ----------------------------------------------------------------------------------
    def register_editor(self, editor: MarkdownEditor) -> None:
        """Keep `editor` in step with the disk; its own saves are announced to the watcher."""
        key = id(editor)
        if key in self._editors:
            return
        self._editors[key] = editor
        editor.expect_write = self.engine.expect_write
        editor.loaded.connect(lambda path, key=key: self._editor_applied(key, path))
        editor.conflict_changed.connect(lambda shown, key=key: self._editor_applied(key, None) if shown else None)
        editor.destroyed.connect(lambda *_args, key=key: self._forget_editor(key))

    def unregister_editor(self, editor: MarkdownEditor) -> None:
        self._forget_editor(id(editor))

    def _forget_editor(self, key: int) -> None:
        self._editors.pop(key, None)
        self._awaiting.pop(key, None)

    def expect_own_write(self, path: Path, content: bytes | str) -> None:
        """For app writes that are not editor saves (a new skill from its template, ...)."""
        self.engine.expect_write(path, content)

    def _editor_applied(self, key: int, path: Path | None) -> None:
        awaited = self._awaiting.pop(key, None)
        if awaited is None:
            return
        awaited_path, since = awaited
        if time.monotonic() - since <= APPLIED_WINDOW_S:
            self.changed_applied.emit(path or awaited_path)

    # ---- the watcher's batches --------------------------------------------------------------------
    def _on_paths_changed(self, paths: list[Path]) -> None:
        if self._closed:
            return
        paths = self.engine.notice_files(paths)  # the engine says who changed what; the app's own saves stop here
        self._notify_editors(paths)
        skills = cron = False
        memory: list[Path] = []
        top_level: list[Path] = []
        for path in paths:  # session files are not among them: the engine published SessionChanged
            if _is_within(path, self._skills_dir) or _is_within(path, self._builtin_dir):
                skills = True
            elif path in self._cron_files:
                cron = True
            elif _is_within(path, self._memory_dir):
                memory.append(path)
            elif path.parent == self._root:
                top_level.append(path)
        if skills:
            self.skills_changed.emit()
        if cron:
            self.cron_changed.emit()
        if memory:
            self.memory_changed.emit(memory)
        if top_level:
            self.workspace_files_changed.emit(top_level)

    def _notify_editors(self, paths: list[Path]) -> None:
        if not self._editors:
            return
        changed = set(paths)
        for key, editor in list(self._editors.items()):
            if editor.path is None:
                continue
            target = Path(editor.path).resolve()
            if target in changed or any(folder in changed for folder in target.parents):
                self._awaiting[key] = (target, time.monotonic())
                editor.on_file_changed_on_disk()

    # ---- diagnostics ------------------------------------------------------------------------------
    def describe(self) -> str:
        """One line for logs: what is watched and what could not be."""
        folders = ", ".join(os.fspath(p) for p in self.watcher.watched_folders())
        problems = f"; not watched: {'; '.join(self.watch_errors)}" if self.watch_errors else ""
        return f"watching {folders}{problems}"
