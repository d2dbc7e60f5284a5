"""The session list panel: search box, channel-grouped list, context menu, delete with undo, export.

The model (model.py) only shows what it is given; this panel decides when to look at the disk.
Listing and search go through the engine's session index (engine/sessions/index.py) in an executor
(the listing is arranged into groups and branches there too) and their results come back to the GUI
thread, so neither 20,000 session files nor a slow disk can freeze the window; after a listing the
index catches up on message text in the background. Refreshes are coalesced: a turn appends several
lines (one `SessionChanged` each) but causes one listing.

Only a person picks the chat: the list's current row changes when a filter hides rows or a listing
moves them, and those changes never open a session (`_quiet`).

(About 510 lines: every action of the list — refresh, search, rename, delete and undo, export — goes
through the one selection and engine hand-off here; split, each part would need all of it.)
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QT_TRANSLATE_NOOP, QModelIndex, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QFileDialog, QLineEdit, QMenu, QTreeView, QVBoxLayout, QWidget

from nanobot_desktop.engine import (ApprovalRequested, OutboundMessage, SessionChanged, SessionInfo, TurnCancelled,
                                    TurnFailed, TurnFinished, TurnStarted, atomic_write_text, continue_archived,
                                    list_archived)
from nanobot_desktop.gui.common.accessibility import name
from nanobot_desktop.gui.common.actions import ActionRegistry
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.notice_bar import NoticeBar, reason_of
from nanobot_desktop.gui.sessions.delegate import SessionDelegate
from nanobot_desktop.gui.sessions.filter import TextFolder, fold_listing
from nanobot_desktop.gui.sessions.model import FETCH_ROWS, InfoRole, IsGroupRole, SessionListModel, SessionRole
from nanobot_desktop.gui.sessions.rows import Arrangement, arrange_listing
from nanobot_desktop.gui.common.owned import OwnedWork

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge

__all__ = ["SessionDelegate", "SessionListModel", "SessionRole", "SessionsPanel"]

log = logging.getLogger(__name__)

_UNSAFE_NAME = re.compile(r'[<>:"/\\|?*\x00-\x1f]+')


class SessionsPanel(QWidget):
    """Every session of the workspace, grouped by channel; the main window docks it on the left."""

    panel_title = QT_TRANSLATE_NOOP("Panels", "Sessions")  # the dock's title (the window translates it)
    actions: ActionRegistry  # type: ignore[assignment]  # hides QWidget.actions(), which nothing here uses

    session_activated = Signal(str)
    """(key): the person picked a session in the list."""
    session_deleted = Signal(str)
    """(key): a session's file went to the trash."""
    session_restored = Signal(str)
    """(key): a deleted session came back."""
    session_renamed = Signal(str, str)
    """(key, title): a session got a new title."""
    refreshed = Signal()
    """A listing finished and the model shows it."""
    search_finished = Signal(str)
    """(query): the message-text search for `query` is shown."""
    export_finished = Signal(str)
    """(path): an export was written."""
    error = Signal(str)
    """A message for the person (a failed rename, delete, restore or export)."""

    REFRESH_DELAY_MS = 80
    SEARCH_DELAY_MS = 150

    def __init__(self, engine: Engine, bridge: EngineBridge, actions: ActionRegistry | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessions_panel")
        self.engine = engine
        self.actions = actions or ActionRegistry(self)
        self._current_key = ""
        self._selecting = False
        self._work = OwnedWork(self)
        self._refresh_task: asyncio.Task[Any] | None = None
        self._text_task: asyncio.Future[Any] | None = None
        self._checked = False  # a listing has compared every file with the index
        self._texts = TextFolder()  # the listings' searchable texts (used in their executor only: one at a time)
        self._refresh_again = False
        self._deleted: list[tuple[str, str, str]] = []  # (trash id, key, title), most recent last
        self.export_dialog: QFileDialog | None = None
        # Branches (Edit, Regenerate) are versions inside their conversation; this lists them as rows too.
        self.show_branches_action = QAction(translate("Sessions", "Show branches"), self)
        self.show_branches_action.setObjectName("show_branches")
        self.show_branches_action.setCheckable(True)
        self.show_branches_action.toggled.connect(lambda _on: self.refresh_now())

        self.model = SessionListModel(renamer=self._rename)
        self.model.rename_failed.connect(lambda _key, message: self.error.emit(message))

        self.search_box = QLineEdit()
        self.search_box.setObjectName("session_search")
        self.search_box.setPlaceholderText(translate("Sessions", "Search sessions  (Ctrl+K)"))
        name(self.search_box, translate("Sessions", "Search sessions"))
        self.search_box.setClearButtonEnabled(True)
        self.search_box.textChanged.connect(self._on_search_text)
        self.search_box.returnPressed.connect(self._open_first_match)
        clear_search = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.search_box)
        clear_search.setContext(Qt.ShortcutContext.WidgetShortcut)
        clear_search.activated.connect(self.search_box.clear)

        self.view = QTreeView()
        self.view.setObjectName("session_list")
        name(self.view, translate("Sessions", "Sessions"),
             translate("Sessions", "Enter opens a session; F2 renames, Delete moves it to the trash"))
        self.view.setModel(self.model)  # the model filters itself (filter.py): no proxy walks 20,000 rows
        self.view.setHeaderHidden(True)
        self.view.setRootIsDecorated(False)  # channel groups: headings, always open
        self.view.setItemsExpandable(True)  # a session with branches opens and closes (its arrow)
        self.view.setExpandsOnDoubleClick(False)
        self.view.setIndentation(14)
        self.view.setUniformRowHeights(True)  # the delegate gives every row one height: no per-row sizeHint
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.view.setItemDelegate(SessionDelegate(self.view))
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._show_context_menu)
        self.view.selectionModel().currentChanged.connect(self._on_current_changed)
        self.view.activated.connect(self._on_index_activated)
        self.model.rowsInserted.connect(self._expand_new_groups)
        # A group hands the view its sessions a few hundred at a time (model.FETCH_ROWS): more when its
        # last fetched row comes into view, however it got there (scrolling, the keyboard, a taller window).
        self.view.verticalScrollBar().valueChanged.connect(self._fetch_shown_ends)
        self.view.verticalScrollBar().rangeChanged.connect(self._fetch_shown_ends)
        self.model.modelReset.connect(self._expand)
        self.model.layoutChanged.connect(self._expand)

        self.undo_bar = NoticeBar(self)
        self.undo_bar.setObjectName("session_undo_bar")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.search_box)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.view, 1)

        for action in (self.actions.rename_session, self.actions.delete_session, self.actions.undo_delete):
            self.addAction(action)  # their shortcuts fire while the list (or the search box) has focus
        self.actions.rename_session.triggered.connect(self.rename_selected)
        self.actions.delete_session.triggered.connect(self.delete_selected)
        self.actions.undo_delete.triggered.connect(self.undo_delete)
        self.actions.export_markdown.triggered.connect(lambda: self.export_selected("markdown"))
        self.actions.export_json.triggered.connect(lambda: self.export_selected("json"))
        self.actions.reveal_file.triggered.connect(self.reveal_selected)
        self.actions.search_sessions.triggered.connect(self.focus_search)
        self._update_actions()

        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(self.REFRESH_DELAY_MS)
        self._refresh_timer.timeout.connect(self._start_refresh)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(self.SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._start_message_search)

        bridge.subscribe({SessionChanged: lambda _event: self.refresh(), TurnStarted: self._on_turn_started,
                          TurnFinished: self._on_turn_ended, TurnFailed: self._on_turn_ended,
                          TurnCancelled: self._on_turn_ended, OutboundMessage: self._on_news,
                          ApprovalRequested: self._on_news}, self)

    # --- what is shown ---------------------------------------------------------------------------

    @property
    def current_key(self) -> str:
        return self._current_key

    def set_current_key(self, key: str) -> None:
        """The session the chat shows: selected here, and no longer unread."""
        self._current_key = key
        self.model.set_unread(key, False)
        self._select(key)
        self._update_actions()

    def selected_key(self) -> str:
        """The session the list's actions apply to: the selected row, else the one shown in the chat
        (an archived conversation is not a session the actions could change)."""
        index = self.view.currentIndex()
        info = index.data(InfoRole) if index.isValid() else None
        key = info.key if isinstance(info, SessionInfo) and not info.archived else ""
        return key or (self._current_key if self.model.info(self._current_key) is not None else "")

    @contextmanager
    def _quiet(self) -> Iterator[None]:
        """Changes of the current row made by the panel itself (filtering, a listing, re-selecting the
        open chat) select nothing for the chat."""
        was, self._selecting = self._selecting, True
        try:
            yield
        finally:
            self._selecting = was

    def _select(self, key: str) -> None:
        index = self.model.index_of_key(key)
        with self._quiet():
            if index.isValid():
                self.view.setCurrentIndex(index)
                self.view.scrollTo(index)
            else:
                self.view.selectionModel().clearSelection()
                self.view.setCurrentIndex(QModelIndex())

    def focus_search(self) -> None:
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    # --- refreshing ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """List the sessions again soon (coalesced; the listing runs in an executor)."""
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def refresh_now(self) -> None:
        self._refresh_timer.stop()
        self._start_refresh()

    def _start_refresh(self) -> None:
        if self._refresh_task is not None and not self._refresh_task.done():
            self._refresh_again = True
            return
        self._refresh_task = self._spawn(self._refresh())

    async def _refresh(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            # The first listing shows the index as the app left it; the next one (at once) checks every file.
            check = self._checked
            listing = await loop.run_in_executor(None, self._list, check)
        except OSError as error:
            self.error.emit(translate("Sessions", "Could not list the sessions in {folder} ({reason}). "
                                      "Check that the folder exists and can be read.").format(
                folder=self.engine.sessions.sessions_dir, reason=reason_of(error)))
            return
        with self._quiet():
            self.model.set_sessions(listing)
        self._select(self._current_key)
        self._update_actions()
        if not check:
            self._checked = self._refresh_again = True
        self.refreshed.emit()
        if self._refresh_again:
            self._refresh_again = False
            self.refresh()  # after this task ends (started from inside it, it would only set the flag again)
        elif self._text_task is None or self._text_task.done():
            # An executor future, not a coroutine: one the loop never gets to run (the panel closed
            # at once) is then simply dropped, not reported at exit as "never awaited".
            self._text_task = asyncio.get_running_loop().run_in_executor(None, self._index_text)
            self._work.track(self._text_task)

    def _list(self, check: bool) -> Arrangement:
        """Every session and archived conversation, arranged as the list shows them (in an executor).
        The first listing is each channel's newest FETCH_ROWS, what the list shows before anyone
        scrolls, when the index has them (20,000 rows take longer to read); the next one, at once, has all."""
        index = self.engine.session_index
        infos = None if check else index.newest(FETCH_ROWS)
        if infos is None:
            infos = index.list_sessions(check)
        infos += list_archived(self.engine.sessions.archive_dir)
        listing = arrange_listing(infos, show_branches=self.show_branches_action.isChecked())
        return fold_listing(listing, self._texts) if not listing.branches else listing

    def _index_text(self) -> None:
        """(In an executor.) Let the index catch up on message text while nobody searches (the first
        search would wait)."""
        try:
            self.engine.session_index.update_text()
        except OSError as error:
            log.warning("could not index the session text: %s", error)

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        return self._work.spawn(coroutine)  # cancelled if the panel is deleted first

    async def shutdown(self) -> None:
        """Cancel listings, searches and exports still running (the main window's shutdown calls this)."""
        self._refresh_timer.stop()
        self._search_timer.stop()
        await self._work.shutdown()

    # --- engine events -----------------------------------------------------------------------------

    def _on_turn_started(self, event: TurnStarted) -> None:
        self.model.set_busy(event.session_key, True)

    def _on_turn_ended(self, event: TurnFinished | TurnFailed | TurnCancelled) -> None:
        self.model.set_busy(event.session_key, False)
        if event.session_key != self._current_key:
            self.model.set_unread(event.session_key, True)

    def _on_news(self, event: OutboundMessage | ApprovalRequested) -> None:
        """Something to read (a message, a question) in a session not shown: it is marked unread."""
        if event.session_key and event.session_key != self._current_key:
            self.model.set_unread(event.session_key, True)

    # --- search ------------------------------------------------------------------------------------

    def _on_search_text(self, text: str) -> None:
        with self._quiet():
            self.model.set_query(text)
        if text.strip():
            self._search_timer.start()
        else:
            self._search_timer.stop()
        self._select(self._current_key)

    def _start_message_search(self) -> None:
        self._spawn(self._search_messages(self.search_box.text()))

    async def _search_messages(self, query: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            hits = await loop.run_in_executor(None, self.engine.session_index.search, query)
        except OSError as error:
            self.error.emit(translate("Sessions", "Searching the sessions failed ({reason}). Try the search again.")
                            .format(reason=reason_of(error)))
            return
        if query != self.search_box.text():
            return  # the person typed on; a newer search is on its way
        with self._quiet():
            self.model.set_message_hits(query, hits)
        self._select(self._current_key)
        self.search_finished.emit(query)

    def _open_first_match(self) -> None:
        for group_row in range(self.model.rowCount()):
            first = self.model.index(0, 0, self.model.index(group_row, 0))
            if first.isValid():
                self.view.setCurrentIndex(first)  # Return in the search box: a person's pick
                self.view.setFocus()
                return

    # --- selection and activation --------------------------------------------------------------------

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._update_actions()
        if self._selecting or not current.isValid():
            return
        info = current.data(InfoRole)
        if isinstance(info, SessionInfo) and not info.archived and info.key != self.model.row_key(self._current_key):
            self.session_activated.emit(self.model.latest_version(info.key))

    def _on_index_activated(self, index: QModelIndex) -> None:
        info = index.data(InfoRole)
        if isinstance(info, SessionInfo) and info.archived:
            self.continue_archived(info.archived)
        elif isinstance(info, SessionInfo):  # the conversation shown stays at the version shown
            shown = info.key == self.model.row_key(self._current_key)
            self.session_activated.emit(self._current_key if shown else self.model.latest_version(info.key))

    def continue_archived(self, name: str) -> None:
        """Copy an archived conversation into a new session and open it (the archive stays as it is)."""
        try:
            key = continue_archived(self.engine.sessions, name, self.engine.new_session_key())
        except (OSError, ValueError) as error:
            self.error.emit(translate("Sessions", "Could not continue the archived conversation ({reason}). "
                                      "Its file is still in the sessions folder's .archive.").format(
                reason=reason_of(error)))
            return
        self.session_activated.emit(key)
        self.refresh()

    def _expand(self) -> None:
        """Open every channel group and every session with branches (not expandAll: that asks each of
        20,000 rows for children)."""
        for group_row in range(self.model.rowCount()):
            self.view.expand(self.model.index(group_row, 0))
        for origin in self.model.origins():
            index = self.model.index_of_key(origin, fetch=False)  # one not fetched yet opens when it is
            if index.isValid():
                self.view.expand(index)

    def _expand_new_groups(self, parent: QModelIndex, first: int, last: int) -> None:
        """A new group opens, and so does a session with branches among rows fetched or inserted."""
        if not parent.isValid():
            for row in range(first, last + 1):
                self.view.expand(self.model.index(row, 0))
        elif self.model.origins() and not parent.parent().isValid():
            for row in range(first, last + 1):
                index = self.model.index(row, 0, parent)
                if self.model.hasChildren(index):
                    self.view.expand(index)

    def _fetch_shown_ends(self, *_args: int) -> None:
        """Give a group its next sessions when its last fetched row is on screen or a page below it
        (Page Down must not jump past it into the next group)."""
        model, view = self.model, self.view
        height = 2 * view.viewport().height()
        for group_row in range(model.rowCount()):
            group = model.index(group_row, 0)
            if not model.has_more(group) or not view.isExpanded(group):
                continue
            rect = view.visualRect(model.index(model.rowCount(group) - 1, 0, group))
            if rect.isValid() and rect.top() < height and rect.bottom() >= 0:
                model.fetch_more(group)

    def _update_actions(self) -> None:
        has_target = bool(self.selected_key())
        for action in self.actions.session_actions:
            action.setEnabled(has_target)
        self.actions.undo_delete.setEnabled(bool(self._deleted))

    def _show_context_menu(self, position: Any) -> None:
        index = self.view.indexAt(position)
        if not index.isValid() or index.data(IsGroupRole):
            return
        self.view.setCurrentIndex(index)
        menu = QMenu(self)
        menu.setObjectName("session_context_menu")
        info = index.data(InfoRole)
        if isinstance(info, SessionInfo) and info.archived:
            name = info.archived
            menu.addAction(translate("Sessions", "Continue in a new chat"), lambda: self.continue_archived(name))
            menu.aboutToHide.connect(menu.deleteLater)
            self.context_menu = menu
            menu.popup(self.view.viewport().mapToGlobal(position))
            return
        menu.addAction(self.actions.rename_session)
        menu.addAction(self.actions.delete_session)
        menu.addSeparator()
        menu.addAction(self.actions.export_markdown)
        menu.addAction(self.actions.export_json)
        menu.addAction(self.actions.reveal_file)
        if self._deleted:
            menu.addSeparator()
            menu.addAction(self.actions.undo_delete)
        menu.addSeparator()
        menu.addAction(self.show_branches_action)
        menu.aboutToHide.connect(menu.deleteLater)
        self.context_menu = menu
        menu.popup(self.view.viewport().mapToGlobal(position))  # popup, not exec: never a nested loop

    # --- rename ------------------------------------------------------------------------------------

    def rename_selected(self) -> None:
        """Open the inline editor on the selected session (F2)."""
        key = self.selected_key()
        index = self.model.index_of_key(key)
        if not index.isValid():
            return
        self.view.setCurrentIndex(index)
        self.view.setFocus()
        self.view.edit(index)

    def _rename(self, key: str, title: str) -> SessionInfo | None:
        self.engine.sessions.rename(key, title)  # a 512-byte in-place write: fine on the GUI thread
        self.session_renamed.emit(key, title or key)
        self.refresh()
        return None

    # --- delete and undo ---------------------------------------------------------------------------

    def delete_selected(self) -> None:
        key = self.selected_key()
        if key:
            self.delete_session(key)

    def delete_session(self, key: str) -> None:
        """Move the session's file to the trash, and offer to undo that."""
        info = self.model.info(key)
        title = info.title if info is not None else key
        try:
            trash_id = self.engine.sessions.delete(key)
        except (OSError, ValueError) as error:
            self.error.emit(translate("Sessions", "Could not delete “{title}” ({reason}). "
                                      "Check that the sessions folder can be written.").format(
                title=title, reason=reason_of(error)))
            return
        self._deleted.append((trash_id, key, title))
        with self._quiet():
            self.model.set_sessions([i for i in self._listed() if i.key != key])
        # Lifetime: 30 s, Undo, or the next delete (Ctrl+Z in the list still undoes after that).
        self.undo_bar.show_notice(translate("Sessions", "Session “{title}” deleted.").format(title=title), "info",
                                  [(translate("Sessions", "Undo"), self.undo_delete)],
                                  timeout_ms=30_000, topic=f"deleted:{key}")
        self._update_actions()
        self.session_deleted.emit(key)
        self.refresh()

    def undo_delete(self) -> None:
        """Restore the session deleted last (Ctrl+Z in the list, or the bar's Undo)."""
        if not self._deleted:
            return
        trash_id, _key, title = self._deleted.pop()
        try:
            restored = self.engine.sessions.restore(trash_id)
        except (OSError, ValueError) as error:
            self.error.emit(translate("Sessions", "Could not restore “{title}” ({reason}). "
                                      "Its file is still in the sessions folder's .trash.").format(
                title=title, reason=reason_of(error)))
            self._update_actions()
            return
        self.undo_bar.dismiss()
        self._update_actions()
        self.session_restored.emit(restored)
        self.refresh_now()

    def _listed(self) -> list[SessionInfo]:
        return [info for key in self.model.keys() if (info := self.model.info(key)) is not None]

    # --- export and reveal ---------------------------------------------------------------------------

    def export_selected(self, fmt: str) -> None:
        key = self.selected_key()
        if key:
            self.export_session(key, fmt)

    def export_session(self, key: str, fmt: str) -> QFileDialog:
        """Ask where to save (non-modal dialog), then write the export atomically."""
        if fmt not in ("markdown", "json"):
            raise ValueError(f"unknown export format {fmt!r}; use 'markdown' or 'json'")
        info = self.model.info(key)
        title = info.title if info is not None else key
        suffix = ".md" if fmt == "markdown" else ".json"
        name = (_UNSAFE_NAME.sub("_", title).strip(" ._") or "session")[:80] + suffix
        caption = (translate("Sessions", "Export session as Markdown") if fmt == "markdown"
                   else translate("Sessions", "Export session as JSON"))
        dialog = QFileDialog(self, caption, str(Path.home() / name))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        dialog.setNameFilter(translate("Sessions", "Markdown (*.md)") if fmt == "markdown"
                             else translate("Sessions", "JSON (*.json)"))
        dialog.setDefaultSuffix(suffix[1:])
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda path: self._spawn(self._write_export(key, fmt, Path(path))))
        self.export_dialog = dialog
        dialog.open()
        return dialog

    async def _write_export(self, key: str, fmt: str, path: Path) -> None:
        loop = asyncio.get_running_loop()
        render: Callable[[str], str] = (self.engine.sessions.export_markdown if fmt == "markdown"
                                        else self.engine.sessions.export_json)
        try:
            text = await loop.run_in_executor(None, render, key)
            await loop.run_in_executor(None, atomic_write_text, path, text)
        except (OSError, ValueError) as error:
            self.error.emit(translate("Sessions", "Could not export to {path} ({reason}). Choose another folder.")
                            .format(path=path, reason=reason_of(error)))
            return
        self.export_finished.emit(str(path))

    def reveal_selected(self) -> None:
        key = self.selected_key()
        info = self.model.info(key) if key else None
        if info is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(info.path.parent)))
