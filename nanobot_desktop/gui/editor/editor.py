"""The one Markdown editor widget: MEMORY/HISTORY, the bootstrap files and SKILL.md all use it.

Its promise is that nothing a person typed is lost and nothing on disk is overwritten by surprise:
- it remembers the digest of the bytes it last loaded or saved (the "baseline"), so a watcher event
  caused by its own save is recognised and ignored, and a real change from outside is told apart;
- a clean editor follows the disk (reload, keeping cursor and scroll); a dirty one shows a conflict
  bar (Reload / Keep mine / Compare) and even a save re-checks the disk before writing;
- files that cannot be written back exactly (not UTF-8, unreadable) are shown read-only.
Disk I/O runs on a worker thread and large texts are inserted in timed slices, so a 20 MB
HISTORY.md never freezes the window. No asyncio needed: Qt signals and timers only.
(Over 400 lines in one class: the baseline, the conflict bar's states and the sliced loading are one
state machine of "what is on disk versus what is typed"; file I/O, the find bar and the bars are modules of their own.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QWidget

from nanobot_desktop.engine import StorageError, atomic_write_text
from nanobot_desktop.gui.common.engine_words import storage_problem
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.editor.code_edit import ViewState
from nanobot_desktop.gui.editor.conflict_bar import BarKind
from nanobot_desktop.gui.editor.diff_view import unified_diff
from nanobot_desktop.gui.editor.frame import EditorFrame
from nanobot_desktop.gui.editor.file_io import (HIGHLIGHT_LIMIT_BYTES, BackgroundRunner, DiskSnapshot, content_digest,
                                           display_name, file_notices, read_snapshot)
from nanobot_desktop.gui.common.text_loader import ChunkedTextLoader

SaveHandler = Callable[[Path, str], None]
Validator = Callable[[str], "str | None"]

__all__ = ["HIGHLIGHT_LIMIT_BYTES", "MarkdownEditor", "SaveHandler", "Validator"]

_LINE_IN_MESSAGE = re.compile(r"\bline (\d+)", re.IGNORECASE)
_BAR_KIND = {"info": BarKind.INFO, "warning": BarKind.WARNING, "error": BarKind.ERROR}


class MarkdownEditor(EditorFrame):
    """Edit one workspace Markdown file with highlighting, find, preview, and safe saving."""

    dirty_changed = Signal(bool)
    """True when the text differs from what was last loaded/saved (or the file vanished)."""
    loaded = Signal(object)
    """A file (Path) finished loading or reloading into the editor."""
    saved = Signal(object)
    """A save (Path) reached the disk."""
    save_failed = Signal(str)
    """A save did not happen; the text says why (also shown in the editor's bar)."""
    conflict_changed = Signal(bool)
    """The conflict bar appeared (True) or went away (False)."""

    def __init__(self, parent: QWidget | None = None, *, save_handler: SaveHandler | None = None,
                 validator: Validator | None = None) -> None:
        super().__init__(parent)
        self.save_handler: SaveHandler = save_handler or atomic_write_text
        """Writes (path, text); route MEMORY.md through the engine's MemoryStore to keep versions."""
        self.validator: Validator | None = validator
        """Returns an error message (mentioning "line N" to point at it) or None; runs before a save."""
        self.expect_write: Callable[[Path, bytes], None] | None = None
        """Told the exact bytes just before a save (Engine.expect_write fits: the engine then knows the save is the app's own)."""
        self._runner = BackgroundRunner(self)
        self._path: Path | None = None
        self._snapshot: DiskSnapshot | None = None
        self._disk_digest: str | None = None
        self._generation = 0
        self._loading = False
        self._restore_after_load: ViewState | None = None
        self._saving = False
        self._save_again = False
        self._checking = False
        self._check_pending = False
        self._conflict_digest: str | None = None
        self._deleted_revision: int | None = None
        self._last_dirty = False
        self._wire()

    def _wire(self) -> None:
        self._loader = ChunkedTextLoader(self.text_edit, self.highlighter, self)
        self._loader.progress.connect(self._on_load_progress)
        self._loader.finished.connect(self._finish_load)
        self._slow_load_timer = QTimer(self)
        self._slow_load_timer.setSingleShot(True)
        self._slow_load_timer.setInterval(150)
        self._slow_load_timer.timeout.connect(self._show_pages)
        self.text_edit.modificationChanged.connect(self._on_modification_changed)
        self._refresh_chrome()

    # ---- public state ---------------------------------------------------------------------------
    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def is_dirty(self) -> bool:
        """Unsaved edits exist (a dirty editor is never overwritten by a change on disk)."""
        return not self._loading and self.text_edit.document().isModified()

    @property
    def is_loading(self) -> bool:
        return self._loading

    @property
    def is_read_only(self) -> bool:
        """Saving is disabled (not UTF-8, unreadable): the file on disk is never written."""
        snap = self._snapshot
        return snap is not None and (not snap.utf8 or snap.error is not None)

    @property
    def has_conflict(self) -> bool:
        return self._conflict_digest is not None

    def text(self) -> str:
        return self.text_edit.toPlainText()

    def replace_all_text(self, text: str) -> None:
        """Replace the whole text as one undoable edit (e.g. restoring an older MEMORY version)."""
        cursor = QTextCursor(self.text_edit.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(text)

    # ---- opening and loading ------------------------------------------------------------------
    def open_file(self, path: Path) -> None:
        """Show `path` (read on a worker). Unsaved edits of the previous file are dropped: ask first."""
        self._path = Path(path)
        self._snapshot = None
        self._disk_digest = None
        self._deleted_revision = None
        self._set_conflict(None)
        self.diff_view.hide()
        self.error_bar.clear()
        self.notice_bar.clear()
        self.text_edit.mark_line(None)
        self._start_read(restore=None)

    def reload(self) -> None:
        """Re-read the file from disk, discarding edits, keeping the cursor and scroll position."""
        if self._path is None:
            return
        self._set_conflict(None)
        self.diff_view.hide()
        self._start_read(restore=self.text_edit.view_state())

    def _start_read(self, restore: ViewState | None) -> None:
        path = self._path
        assert path is not None
        generation = self._begin_load()
        self._runner.submit(lambda: read_snapshot(path),
                            lambda snap, error: self._on_read(generation, snap, error, restore))

    def _begin_load(self) -> int:
        self._generation += 1
        self._loading = True
        self._loader.cancel()
        self.text_edit.setReadOnly(True)
        self._slow_load_timer.start()
        self._refresh_chrome()
        return self._generation

    def _on_read(self, generation: int, snap: DiskSnapshot | None, error: BaseException | None,
                 restore: ViewState | None) -> None:
        if generation != self._generation:
            return
        if error is not None or snap is None:
            reason = translate("Editor", "cannot read the file: {error}").format(error=error)
            snap = DiskSnapshot(path=self._path or Path(), exists=True, error=reason)
        self._apply_snapshot(snap, restore)

    def _apply_snapshot(self, snap: DiskSnapshot, restore: ViewState | None) -> None:
        self._snapshot = snap
        self._disk_digest = snap.digest
        self._deleted_revision = None
        self._restore_after_load = restore
        self._show_notices()
        self._loader.start(snap.text, highlight=snap.size <= HIGHLIGHT_LIMIT_BYTES)

    def _on_load_progress(self, percent: int) -> None:
        self.show_loading_page(translate("Editor", "Loading {name}… {percent}%").format(
            name=display_name(self._path or Path()), percent=percent))

    def _finish_load(self) -> None:
        self._loading = False
        self._slow_load_timer.stop()
        self.text_edit.setReadOnly(self.is_read_only)
        self._show_pages()
        restore, self._restore_after_load = self._restore_after_load, None
        if restore is not None:
            self.text_edit.restore_view_state(restore)
        self._refresh_chrome()
        self._emit_dirty_if_changed()
        if self._path is not None:
            self.loaded.emit(self._path)
        self._run_pending_check()

    # ---- saving ---------------------------------------------------------------------------------
    def save(self) -> bool:
        """Validate and write on the worker; False when nothing will be written (the bar says why)."""
        path, snap = self._path, self._snapshot
        if path is None or self._loading or snap is None:
            return False
        if self.is_read_only:
            reason = snap.error or translate("Editor", "{name} is not UTF-8").format(name=display_name(path))
            self.error_bar.show_message(BarKind.ERROR, translate("Editor", "Saving is disabled: {reason}.").format(reason=reason))
            return False
        if self._saving:
            self._save_again = True
            return True
        text = self.text_edit.toPlainText()
        if not self._validate(text):
            return False
        disk_text = snap.disk_text(text)
        data = disk_text.encode("utf-8")
        new_digest = content_digest(data)
        expected_digest = self._disk_digest
        handler = self.save_handler
        revision = self.text_edit.document().revision()
        generation = self._generation
        if self.expect_write is not None:
            self.expect_write(path, data)
        self._saving = True

        def write() -> tuple[str, str | None]:
            current = read_snapshot(path)
            if current.error:
                raise OSError(current.error)
            if current.digest != expected_digest:
                return "conflict", current.digest
            handler(path, disk_text)
            return "saved", new_digest

        self._runner.submit(write, lambda result, error: self._on_saved(generation, path, result, error, revision))
        self._refresh_chrome()
        return True

    def _validate(self, text: str) -> bool:
        self.text_edit.mark_line(None)
        if self.validator is None:
            self.error_bar.clear()
            return True
        try:
            problem = self.validator(text)
        except Exception as exc:  # noqa: BLE001 - a broken validator must not eat the save silently
            problem = translate("Editor", "the check before saving failed: {error}").format(error=exc)
        if not problem:
            self.error_bar.clear()
            return True
        found = _LINE_IN_MESSAGE.search(problem)
        actions: list[tuple[str, Callable[[], None]]] = []
        if found:
            line = int(found.group(1))
            self.text_edit.mark_line(line)
            actions.append((translate("Editor", "Go to line {line}").format(line=line), lambda: self._go_to_line(line)))
        self.error_bar.show_message(BarKind.ERROR, translate("Editor", "Not saved: {problem}").format(problem=problem), actions)
        self.save_failed.emit(problem)
        return False

    def _go_to_line(self, line: int) -> None:
        self.set_preview_visible(False)
        self.text_edit.go_to_line(line)
        self.text_edit.setFocus()

    def _on_saved(self, generation: int, path: Path, result: tuple[str, str | None] | None,
                  error: BaseException | None, revision: int) -> None:
        self._saving = False
        if generation == self._generation and self._snapshot is not None:
            if error is not None or result is None:
                reason = translate("Editor", "{problem} Nothing on disk changed, and your text stays here.").format(
                    problem=storage_problem(error)) if isinstance(error, StorageError) else f"{error}"
                message = translate("Editor", "Could not save {name}: {reason}").format(name=display_name(path), reason=reason)
                self.error_bar.show_message(BarKind.ERROR, message)
                self.save_failed.emit(message)
            elif result[0] == "conflict":
                self._set_conflict(result[1], saving=True)
                self.save_failed.emit(translate("Editor", "{name} changed on disk; not saved").format(name=display_name(path)))
            else:
                self._snapshot = replace(self._snapshot, exists=True, digest=result[1])
                self._disk_digest = result[1]
                self._deleted_revision = None
                self._set_conflict(None)
                self.error_bar.clear()
                self._show_notices()
                if self.text_edit.document().revision() == revision:
                    self.text_edit.document().setModified(False)
                self.saved.emit(path)
        elif error is None and result is not None and result[0] == "saved":
            self.saved.emit(path)
        self._refresh_chrome()
        self._emit_dirty_if_changed()
        if self._save_again:
            self._save_again = False
            if self.is_dirty:
                self.save()
                return
        self._run_pending_check()

    def flush_pending(self, timeout: float | None = 5.0) -> bool:
        """Block until queued reads/writes ran (call before quitting); True if all finished."""
        return self._runner.wait_idle(timeout)

    def shutdown(self) -> None:
        """Finish queued writes and stop the worker thread (the window owner calls this at exit)."""
        self._loader.cancel()
        self._runner.shutdown()

    # ---- changes on disk ------------------------------------------------------------------------
    def on_file_changed_on_disk(self) -> None:
        """The watcher saw this file change: follow it if clean, show the conflict bar if dirty."""
        if self._path is None:
            return
        if self._loading or self._saving or self._checking:
            self._check_pending = True
            return
        self._checking = True
        path, generation = self._path, self._generation
        self._runner.submit(lambda: read_snapshot(path),
                            lambda snap, error: self._on_disk_checked(generation, snap, error))

    def _run_pending_check(self) -> None:
        if self._check_pending:
            self._check_pending = False
            self.on_file_changed_on_disk()

    def _on_disk_checked(self, generation: int, snap: DiskSnapshot | None, error: BaseException | None) -> None:
        self._checking = False
        if generation != self._generation or self._loading:
            self._run_pending_check()
            return
        if error is not None or snap is None or snap.error:
            reason = snap.error if snap is not None and snap.error else str(error)
            self.error_bar.show_message(BarKind.ERROR, translate("Editor", "The file changed on disk but cannot be read: {reason}").format(
                reason=reason))
        elif not snap.exists:
            self._on_deleted_on_disk()
        elif snap.digest != self._disk_digest:
            self._on_changed_on_disk(snap)
        self._run_pending_check()

    def _on_deleted_on_disk(self) -> None:
        if self._disk_digest is None:
            return  # already known to be missing
        self._disk_digest = None
        document = self.text_edit.document()
        if not document.isModified():
            document.setModified(True)  # the text now exists only here
            self._deleted_revision = document.revision()
        self._set_conflict(None)
        self._show_notices(deleted=True)
        self._refresh_chrome()

    def _on_changed_on_disk(self, snap: DiskSnapshot) -> None:
        document = self.text_edit.document()
        only_dirty_from_deletion = self._deleted_revision is not None and document.revision() == self._deleted_revision
        if not document.isModified() or only_dirty_from_deletion:
            self._set_conflict(None)
            self._begin_load()
            self._apply_snapshot(snap, self.text_edit.view_state())
            return
        if snap.utf8 and snap.text == self.text_edit.toPlainText():
            self._snapshot = snap
            self._disk_digest = snap.digest
            self._deleted_revision = None
            self._set_conflict(None)
            self._show_notices()
            document.setModified(False)
            return
        self._show_notices()  # a "deleted on disk" notice no longer holds
        self._set_conflict(snap.digest)

    def _set_conflict(self, disk_digest: str | None, *, saving: bool = False) -> None:
        had_conflict = self._conflict_digest is not None
        self._conflict_digest = disk_digest
        if disk_digest is None:
            self.conflict_bar.clear()
        else:
            if saving:
                text = translate("Editor", "Not saved: this file changed on disk. You have unsaved edits in {name}.")
            else:
                text = translate("Editor", "This file changed on disk. You have unsaved edits in {name}.")
            reload, keep, compare = (translate("Editor", "Reload"), translate("Editor", "Keep mine"),
                                     translate("Editor", "Compare"))
            self.conflict_bar.show_message(
                BarKind.WARNING, text.format(name=display_name(self._path or Path())),
                [(reload, self.reload), (keep, self.keep_mine), (compare, self.compare_with_disk)])
            self.conflict_bar.button(reload).setToolTip(translate("Editor", "Load the version on disk and discard my edits"))
            self.conflict_bar.button(keep).setToolTip(translate("Editor", "Keep my text; the next save overwrites the file"))
            self.conflict_bar.button(compare).setToolTip(translate("Editor", "Show what differs between the disk and my text"))
        if had_conflict != (disk_digest is not None):
            self.conflict_changed.emit(disk_digest is not None)

    def keep_mine(self) -> None:
        """Accept the disk's version as the new baseline, so the next save overwrites it."""
        if self._conflict_digest is not None:
            self._disk_digest = self._conflict_digest
        self._set_conflict(None)
        self.diff_view.hide()

    def compare_with_disk(self) -> None:
        """Show a unified diff from the file on disk to the editor's text (computed on the worker)."""
        if self._path is None:
            return
        path, mine, generation = self._path, self.text_edit.toPlainText(), self._generation
        name = display_name(path)

        def build() -> str:
            snap = read_snapshot(path)
            disk = snap.text if snap.exists and not snap.error else ""
            return unified_diff(disk, mine, translate("Editor", "{name} (on disk)").format(name=name),
                                translate("Editor", "{name} (yours, unsaved)").format(name=name))

        def show(diff: str | None, error: BaseException | None) -> None:
            if generation != self._generation:
                return
            text = diff if error is None else translate("Editor", "Could not compare: {error}").format(error=error)
            self.diff_view.show_diff(translate("Editor", "Changes from the file on disk to your unsaved text — {name}").format(name=name),
                                    text or "")

        self._runner.submit(build, show)

    # ---- view helpers ---------------------------------------------------------------------------
    def _show_pages(self) -> None:
        if not self._loading:
            self.show_content_page()
        elif not self._slow_load_timer.isActive():
            if self.pages.currentWidget() is not self.loading_label:
                self.show_loading_page(translate("Editor", "Loading {name}…").format(name=display_name(self._path or Path())))
        # else: a quick load keeps the current page, so a hot reload does not flicker

    def _show_notices(self, *, deleted: bool = False) -> None:
        severity, notes = file_notices(self._snapshot, deleted=deleted) if self._snapshot else ("info", [])
        if notes:
            self.notice_bar.show_message(_BAR_KIND[severity], "\n".join(notes))
        else:
            self.notice_bar.clear()

    def _refresh_chrome(self) -> None:
        name = display_name(self._path) if self._path else translate("Editor", "No file")
        dirty = self.is_dirty
        self.set_title(name, dirty=dirty, tooltip=str(self._path) if self._path else "")
        ready = self._path is not None and not self._loading
        missing = self._snapshot is not None and not self._snapshot.exists
        self.save_button.setEnabled(ready and not self.is_read_only and (dirty or missing))
        self.find_button.setEnabled(ready)

    def _on_modification_changed(self, _modified: bool) -> None:
        if not self._loading:
            self._emit_dirty_if_changed()
            self._refresh_chrome()

    def _emit_dirty_if_changed(self) -> None:
        dirty = self.is_dirty
        if dirty != self._last_dirty:
            self._last_dirty = dirty
            self._refresh_chrome()
            self.dirty_changed.emit(dirty)
