"""The main window: chat in the centre, sessions on the left, the inspector and the workspace panels
docked on the right, menus built from the one action registry.

The window holds no agent logic. It builds the pieces, connects their signals, and remembers its
geometry, dock layout and last session (QSettings). It owns its parts, each a plain object given
what it needs (window/base.py): `docking` (layout.py: widths, pages, the drawer, saved layouts),
`lifetime` (lifetime.py: the build after the first paint, closing, tasks, the ordered shutdown),
`commands` (commands.py: Settings, heartbeat, log folder, About, the status bar and its notices) and
`access` (access.py: Tab, F6, the approval shortcut, text size) and `notices` (chat_notices.py: the
chat's offers and warnings); window/panels.py is the one table of dock panels.

Start-up (SPEC §5: start to first painted window): `MainWindow()` without an engine is the frame —
menus, status bar and every dock in its saved place, nothing that needs the engine, pydantic or
asyncio — so it can paint before they are imported. `attach_engine` then builds the chat, the
composer and the session list; the dock panels, hot reload and the tray follow after the next
paint. Given an engine and a lifecycle, the constructor attaches at once (what tests do).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QObject, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from nanobot_desktop.gui.common.engine_words import session_title
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.access import WindowAccess
from nanobot_desktop.gui.window.base import ChatParts, Frame
from nanobot_desktop.gui.common.actions import ActionRegistry, build_menus
from nanobot_desktop.gui.window.agent_area import AgentArea
from nanobot_desktop.gui.window.commands import WindowCommands
from nanobot_desktop.gui.window.docks import PanelPlaceholder, build_dock_shells
from nanobot_desktop.gui.window.layout import AGENT_SHORTCUT, DockLayout
from nanobot_desktop.gui.window.lifetime import SESSION_KEY, WindowLifetime
from nanobot_desktop.gui.window.pages import CentralPages
from nanobot_desktop.gui.window.raising import bring_forward, toggle_shown
from nanobot_desktop.gui.window.toolbar import WindowToolBar
from nanobot_desktop.gui.window.panels import (
    AGENT_AREA, AGENT_PAGES, AGENT_TITLE, PAGES, PANELS_BY_NAME, SESSIONS_DOCK, FollowsSession, LazyPanels, OpensSessions,
    StartsChats, set_dock_panel,
)

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is attached
    from PySide6.QtCore import QChildEvent
    from PySide6.QtGui import QCloseEvent, QPaintEvent, QResizeEvent, QShowEvent

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.chat.branching import BranchActions
    from nanobot_desktop.gui.chat.composer import Composer
    from nanobot_desktop.gui.chat.controller import ChatController
    from nanobot_desktop.gui.chat.model import ChatModel
    from nanobot_desktop.gui.chat.view import ChatView
    from nanobot_desktop.gui.chat.warm_up import RenderingWarmUp
    from nanobot_desktop.gui.common.bridge import EngineBridge
    from nanobot_desktop.gui.common.notice_bar import NoticeBar
    from nanobot_desktop.gui.sessions.panel import SessionsPanel
    from nanobot_desktop.gui.window.base import WindowLifecycle
    from nanobot_desktop.gui.common.heap import IdleHeapTrim
    from nanobot_desktop.gui.window.chat_notices import ChatNotices
    from nanobot_desktop.gui.window.tray import TrayController
    from nanobot_desktop.gui.workspace.sync import WorkspaceSync
    from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher

APP_TITLE = "nanobot"
NEW_CHAT_TITLE = str(QT_TRANSLATE_NOOP("Window", "New chat"))  # the window title of an unsaved chat


class MainWindow(QMainWindow):
    """The app's window around one Engine (which may arrive after the window has painted)."""

    settings_applied = Signal(object)
    """Settings saved a new config (the engine's Config): shell/ updates the log's secrets from it."""

    actions: ActionRegistry  # type: ignore[assignment]  # hides QWidget.actions(), which nothing here uses
    # Built with the engine (attach_engine); reading one before it has arrived is a bug.
    bridge: EngineBridge
    notice_bar: NoticeBar
    chat: ChatController
    chat_view: ChatView
    composer: Composer
    branches: BranchActions  # Edit and resend, Regenerate, the "‹ 2/3 ›" switcher
    rendering_warm_up: RenderingWarmUp  # Markdown and Pygments loaded on first use
    heap_trim: IdleHeapTrim  # free heap pages go back to the system once turns end (common/heap.py)
    sessions_panel: SessionsPanel
    chat_model: ChatModel
    watcher: WorkspaceWatcher
    notices: ChatNotices  # the chat's offers and warnings (chat_notices.py)
    _access_ready: WindowAccess | None = None
    """`access` once it exists: QMainWindow's constructor already sends childEvent and focus events."""

    def __init__(self, engine: Engine | None = None, lifecycle: WindowLifecycle | None = None,
                 parent: QWidget | None = None, *,
                 settings: QSettings | None = None, watcher: WorkspaceWatcher | None = None,
                 start_services: bool = True, log_folder: Path | None = None, use_tray: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle(APP_TITLE)
        self.engine: Engine | None = None  # the frame paints before the engine exists (attach_engine)
        self.lifecycle: WindowLifecycle | None = None
        self.settings_store = settings if settings is not None else QSettings()
        self._parts: ChatParts | None = None
        self._use_tray = use_tray
        self._watcher_given = watcher
        self._log_folder_given = log_folder

        self.actions = ActionRegistry(self, icons=False)  # icons with the engine: the frame's menus show none
        chat_placeholder = PanelPlaceholder(QSize(640, 480), "chatPlaceholder")  # the chat's place
        self.pages = CentralPages(chat_placeholder)
        for spec in PAGES:
            title = translate("Panels", spec.title)
            self.pages.add_page(spec.name, title, PanelPlaceholder(QSize(640, 480), f"{spec.dock}Placeholder"),
                                translate("Panels", "The {title} page ({shortcut})").format(title=title, shortcut=spec.shortcut))
        self.agent_area = AgentArea(PanelPlaceholder)
        self.pages.add_page(AGENT_AREA, translate("Panels", AGENT_TITLE), self.agent_area,
                            translate("Panels", "Heartbeat, scheduled jobs, subagents and MCP servers ({shortcut})")
                            .format(shortcut=AGENT_SHORTCUT))
        self.setCentralWidget(self.pages)
        shells = build_dock_shells(self, self.actions, self.show_skills)
        self.docks: dict[str, QDockWidget] = shells.docks
        self.sessions_dock = shells.docks[SESSIONS_DOCK]
        self._first_right_dock = shells.first_right_dock
        frame = Frame(self, self.actions, self.docks, self.pages, self.agent_area, self.settings_store)
        self.docking = DockLayout(frame, shells.first_right_dock)
        self.lifetime = WindowLifetime(frame, self.docking, lambda: self.current_key, start_services=start_services)
        self.commands = WindowCommands(frame, lambda: self.current_key, lambda: self.tray, self.lifetime.spawn,
                                       self.settings_applied)
        self.access = self._access_ready = WindowAccess(frame, self.docking)
        self.menus = build_menus(self.menuBar(), self.actions, ["agentPage", *(spec.dock for spec in AGENT_PAGES)])
        self.toolbar = WindowToolBar(
            [(self.actions.dock_toggles[SESSIONS_DOCK], "sidebar"), (self.actions.new_chat, "new-chat")],
            [(self.docking.page_actions[AGENT_AREA], "agent"), (self.docking.drawer_action, "drawer")], self)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.toolbar)
        self.menus["agent"].aboutToShow.connect(self.commands.update_heartbeat_actions)
        self.docking.restore_layout()
        if engine is not None and lifecycle is not None:
            self.attach_engine(engine, lifecycle, log_folder=log_folder)

    def attach_engine(self, engine: Engine, lifecycle: WindowLifecycle, *, log_folder: Path | None = None) -> None:
        """Build what needs the engine: chat, composer, session list; then the panels after a paint."""
        from nanobot_desktop.gui.chat.branching import BranchActions
        from nanobot_desktop.gui.chat.composer import Composer
        from nanobot_desktop.gui.chat.controller import ChatController
        from nanobot_desktop.gui.chat.model import ChatModel
        from nanobot_desktop.gui.chat.view import ChatView
        from nanobot_desktop.gui.chat.warm_up import RenderingWarmUp
        from nanobot_desktop.gui.common.bridge import EngineBridge
        from nanobot_desktop.gui.common.notice_bar import NoticeBar
        from nanobot_desktop.gui.sessions.panel import SessionsPanel
        from nanobot_desktop.gui.window.docks import ChatPane
        from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher

        assert self.engine is None, "a window has one engine"
        from nanobot_desktop.gui.common.heap import IdleHeapTrim, keep_large_blocks_mapped
        from nanobot_desktop.gui.common.process_setup import prepare_gui_process

        keep_large_blocks_mapped()  # before sessions are read: the heap keeps no large buffer's room
        prepare_gui_process()  # before the engine's executor threads are made (the app's start calls it earlier too)
        self.engine = engine
        self.lifecycle = lifecycle
        self.actions.load_icons()  # before the panels and the tray, whose buttons show them
        self.toolbar.load_icons()
        log_folder = log_folder or self._log_folder_given
        if log_folder is None:
            from nanobot_desktop.engine import logs_dir

            log_folder = logs_dir(Path(engine.config_path))
        self.bridge = EngineBridge(engine, self)
        self.heap_trim = IdleHeapTrim(self.bridge, self)
        self.notice_bar = NoticeBar()
        self.chat_model = ChatModel(self)
        self.chat_view = ChatView(self.chat_model)
        self.chat_view.setObjectName("chatView")
        self.composer = Composer(Path(engine.workspace.root), engine=engine)
        self.rendering_warm_up = RenderingWarmUp(lambda: self.chat_view.renderer, self)  # Markdown: on first use
        side_docks = [dock for dock in (self.sessions_dock, self._first_right_dock) if dock is not None]
        widths = [dock.width() for dock in side_docks]  # as laid out (and maybe painted) around the placeholder
        self.pages.set_chat(ChatPane(self.notice_bar, self.chat_view, self.composer))
        self.chat = ChatController(engine, self.bridge, self.chat_model, self.chat_view, self)
        self.branches = BranchActions(engine, self.chat, self.chat_view, self)
        self.watcher = self._watcher_given if self._watcher_given is not None else WorkspaceWatcher(self)
        self.sessions_panel = SessionsPanel(engine, self.bridge, self.actions)
        set_dock_panel(self.sessions_dock, self.sessions_panel)
        if self.isVisible():  # the real widgets' size hints must not move what the person already sees
            QTimer.singleShot(0, self, lambda: self.resizeDocks(side_docks, widths, Qt.Orientation.Horizontal))
        parts = self._parts = ChatParts(engine, lifecycle, self.bridge, self.notice_bar, self.chat, self.chat_view,
                                        self.composer, self.sessions_panel)
        panels = LazyPanels(self, engine, self.bridge, self.watcher, self.docks,
                            self._make_tray if self._use_tray else None, self._wire_panel, self.lifetime.all_panels_built,
                            pages=self.pages, agent=self.agent_area)
        self.lifetime.attach(parts, panels, self.watcher, owns_watcher=self._watcher_given is None)
        self.commands.attach(parts, log_folder)
        from nanobot_desktop.gui.window.updates import UpdateChecks

        self.updates = UpdateChecks(self, self.settings_store, lambda: bool(engine.app_settings.check_for_updates),
                                    lambda text: self.notice_bar.show_notice(text, "info", topic="update"))
        self._connect()
        self.access.attach(parts, self.open_session)
        from nanobot_desktop.gui.window.approval_drawer import ApprovalDrawer

        # an approval that needs the drawer opens it
        self.approval_drawer = ApprovalDrawer(lambda: self.current_key, self.docking, self.show_tool_call,
                                              self.bridge, self)
        self.commands.update_status()
        self.commands.refresh_sync_status()  # then every 30 s (in a thread: Syncthing's API, if any)
        self._show_initial_session()
        self.commands.check_config()
        self.sessions_panel.refresh_now()
        if self.lifetime.shown_once:  # the frame painted already: focus the composer, build the rest next
            self.composer.focus_input()
            self.update()

    def panel(self, name: str) -> QWidget | None:
        """The panel `name` of the table (window/panels.py), built now if it is still to come; None before
        the engine arrives or if it could not be built. Its capabilities: the Protocols in panels.py."""
        if name not in PANELS_BY_NAME:
            raise KeyError(f"no panel {name!r} (window/panels.py lists them)")
        panels = self.lifetime.panels
        return panels.get(name) if panels is not None else None

    @property
    def workspace_sync(self) -> WorkspaceSync | None:
        """Hot reload (built now if it is still to come); None before the engine, or if it failed."""
        panels = self.lifetime.panels
        return panels.get_sync() if panels is not None else None

    @property
    def tray(self) -> TrayController | None:
        """The tray icon (built now if it is still to come); None without one, or before the engine."""
        panels = self.lifetime.panels
        return panels.get_tray() if panels is not None else None

    @property
    def panel_errors(self) -> list[str]:
        """Panels that could not be built, with why (the window still works without them)."""
        panels = self.lifetime.panels
        if panels is None:
            return []
        panels.build_all()
        return panels.errors

    @property
    def current_key(self) -> str:
        """The session the chat shows ("" before the engine has arrived)."""
        return self._parts.chat.current_key if self._parts is not None else ""

    @property
    def log_folder(self) -> Path | None:
        return self.commands.log_folder

    @property
    def _p(self) -> ChatParts:
        assert self._parts is not None, "the engine has not arrived yet"
        return self._parts

    # --- Qt's events: each part does its share ------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """Docks give way before the chat is squeezed (window/layout.py); then the widths are balanced."""
        self.docking.fit_docks_to_width(event.size().width())
        super().resizeEvent(event)
        self.lifetime.resized()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self.lifetime.shown()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        super().paintEvent(event)
        self.lifetime.painted()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self.lifetime.may_close():
            event.accept()
        else:
            event.ignore()

    def childEvent(self, event: QChildEvent) -> None:  # noqa: N802 - Qt override
        super().childEvent(event)
        if event.added() and self._access_ready is not None:
            self._access_ready.child_added()

    def focusNextPrevChild(self, forward: bool) -> bool:  # noqa: N802 - Qt override: Tab and Shift+Tab
        access = self._access_ready
        return (access is not None and access.focus_next(forward)) or super().focusNextPrevChild(forward)

    def quit(self) -> None:
        self.lifetime.quit()

    def _wire_panel(self, name: str, panel: QObject) -> None:
        if isinstance(panel, FollowsSession) and self.current_key:
            panel.set_session(self.current_key)
        if isinstance(panel, OpensSessions):
            panel.open_session_requested.connect(self.show_and_open_session)
        if isinstance(panel, StartsChats):
            panel.new_chat_requested.connect(self.new_chat)

    def _make_tray(self) -> TrayController:
        from nanobot_desktop.gui.window.tray import TrayController

        shared = {"toggle_window": self.actions.show_hide, "new_chat": self.actions.new_chat,
                  "heartbeat_run": self.actions.run_heartbeat, "heartbeat_pause": self.actions.pause_heartbeat,
                  "quit": self.actions.quit}
        tray = TrayController(self._p.engine, self.bridge, self, self, actions=shared, settings=self.settings_store)
        return tray

    def _connect(self) -> None:
        a = self.actions
        a.new_chat.triggered.connect(self.new_chat)
        a.stop.triggered.connect(self.stop_current)
        c = self.commands
        a.settings.triggered.connect(c.open_settings)
        a.run_heartbeat.triggered.connect(c.run_heartbeat_now)
        a.pause_heartbeat.triggered.connect(c.toggle_heartbeat_pause)
        a.show_hide.triggered.connect(lambda: toggle_shown(self))
        a.quit.triggered.connect(self.quit)
        a.open_log_folder.triggered.connect(c.open_log_folder)
        a.about.triggered.connect(c.show_about)
        a.check_updates.triggered.connect(lambda: self.updates.check_now())
        a.roll_back.triggered.connect(lambda: self.updates.roll_back())

        self.composer.send_requested.connect(self.send_message)
        self.composer.edit.textChanged.connect(self.rendering_warm_up.start)
        self.composer.stop_requested.connect(self.stop_current)
        self.composer.attachment_failed.connect(
            lambda message: self.notice_bar.show_notice(message, "warning", timeout_ms=10_000, topic="attachment"))
        if self.composer.model_switcher is not None:
            switcher = self.composer.model_switcher
            switcher.failed.connect(lambda message: self.notice_bar.show_notice(message, "error", topic="model-choice"))
            switcher.model_changed.connect(lambda _key, _model: self.notice_bar.clear("model-choice"))
            switcher.shown.connect(lambda _model: c.update_status())
        self.chat.busy_changed.connect(self._on_busy_changed)
        self.chat.lines_lost.connect(lambda key, text: self.notice_bar.show_notice(
            text, "warning", [(translate("Window", "Put back in a new chat"), lambda: self.chat.put_back_lost(key))],
            topic=f"lost:{key}"))
        self.chat.waiting_changed.connect(c.on_waiting_changed)
        self.chat.context_fill_changed.connect(c.on_context_fill_changed)
        self.chat.retry_changed.connect(c.on_retry_changed)
        self.chat.session_loaded.connect(lambda _key: self._update_title())
        self.chat.session_loaded.connect(self.chat.check_interrupted)
        self.chat_view.tool_card_clicked.connect(self.show_tool_call)
        self.branches.open_requested.connect(self.open_session)
        self.chat.continued.connect(lambda old, new: self.open_session(new) if old == self.current_key else None)
        self.branches.failed.connect(lambda message: self.notice_bar.show_notice(message, "error"))
        from nanobot_desktop.engine import events
        from nanobot_desktop.gui.window.chat_notices import ChatNotices

        notices = self.notices = ChatNotices(self, self._p, lambda: self.current_key, self.commands.open_settings,
                                             self.new_chat)
        self.bridge.subscribe({events.Notice: notices.on_engine_notice, events.SyncCopyMerged: notices.on_sync_copy,
                               events.SyncTextConflict: notices.on_sync_text_conflict}, self)
        for notice in self._p.engine.start_notices:
            notices.on_engine_notice(notice)

        panel = self.sessions_panel
        panel.session_activated.connect(self.open_session)
        panel.session_deleted.connect(self._on_session_deleted)
        panel.session_restored.connect(self.open_session)
        panel.session_renamed.connect(lambda _key, _title: self._update_title())
        panel.refreshed.connect(self._update_title)
        panel.error.connect(lambda message: self.notice_bar.show_notice(message, "error"))
        panel.export_finished.connect(lambda path: self.statusBar().showMessage(
            translate("Window", "Exported to {path}").format(path=path), 5000))

    # --- sessions ----------------------------------------------------------------------------------

    def open_session(self, key: str) -> None:
        """Show a session in the chat, the list and the inspector, and remember it for the next start."""
        if not key:
            return
        self.chat.show_session(key)
        self.composer.set_session(key)
        self.sessions_panel.set_current_key(key)
        panels = self.lifetime.panels
        built = panels.built if panels is not None else {}
        for panel in built.values():  # one built later gets the current session then (_wire_panel)
            if isinstance(panel, FollowsSession):
                panel.set_session(key)
        self.settings_store.setValue(SESSION_KEY, key)
        self.commands.clear_chat_notices(keep_key=key)
        self._update_title()
        self._on_busy_changed(self.chat.is_busy(key))

    def show_and_open_session(self, key: str) -> None:
        bring_forward(self)
        self.open_session(key)

    def new_chat(self) -> None:
        """A fresh desktop session; it appears in the list once its first message is saved."""
        key = self.current_key
        if key and not self._p.engine.sessions.path_for(key).exists() and not self.chat.is_busy(key) \
                and self.chat.model.rowCount() == 0:
            self.composer.focus_input()  # the current chat is still empty: no need for another one
            return
        self.open_session(self._p.engine.new_session_key())
        self.composer.focus_input()

    def _show_initial_session(self) -> None:
        remembered = self.settings_store.value(SESSION_KEY, "", type=str)
        try:
            exists = bool(remembered) and self._p.engine.sessions.path_for(str(remembered)).exists()
        except ValueError:
            exists = False
        self.open_session(str(remembered) if exists else self._p.engine.new_session_key())

    def _on_session_deleted(self, key: str) -> None:
        if key == self.current_key:
            self.open_session(self._p.engine.new_session_key())
        self.chat.forget_session(key)

    def _update_title(self) -> None:
        key = self.current_key
        info = self.sessions_panel.model.info(key) if key else None
        title = session_title(info.title, info.message_count) if info is not None else translate("Window", NEW_CHAT_TITLE)
        self.setWindowTitle(f"{APP_TITLE} — {title}")

    # --- chatting ----------------------------------------------------------------------------------

    def send_message(self, text: str, media: list[str]) -> None:
        if not self.current_key:
            self.open_session(self._p.engine.new_session_key())
        if not media and self.chat.warn_before_sending(self.current_key):
            self.composer.edit.setPlainText(text)  # kept: the next Send goes through
            return
        self.notice_bar.clear("attachment")
        self.notice_bar.clear(f"turn-failed:{self.current_key}")
        self.rendering_warm_up.finish_now()  # before the request, not in the middle of the reply
        self.chat.send(text, media)

    def stop_current(self) -> None:
        if self.chat.is_busy(self.current_key):
            self.chat.stop_current()

    def show_tool_call(self, call_id: str) -> None:
        """A tool card was clicked: the drawer opens on the inspector, at that call."""
        from nanobot_desktop.gui.inspector.panel import InspectorPanel

        self._raise_dock(PANELS_BY_NAME["inspector"].dock)
        inspector = self.lifetime.panels.get_as("inspector", InspectorPanel) if self.lifetime.panels is not None else None
        if inspector is not None:
            inspector.show_call(call_id)

    def show_skills(self) -> None:
        if self._parts is None:
            return
        from nanobot_desktop.gui.workspace.files_view import WorkspaceFilesView

        self._raise_dock(PANELS_BY_NAME["files_view"].dock)
        files = self.lifetime.panels.get_as("files_view", WorkspaceFilesView) if self.lifetime.panels is not None else None
        if files is not None:
            files.tabs.setCurrentWidget(files.skills_view)

    def _raise_dock(self, name: str) -> None:
        dock = self.docks.get(name)
        if dock is not None:
            dock.show()
            dock.raise_()

    def _on_busy_changed(self, busy: bool) -> None:
        if busy:  # a new turn (sent, retried, regenerated): the last one's failure is over
            self.notice_bar.clear(f"turn-failed:{self.current_key}")
        self.composer.set_busy(busy)
        self.actions.stop.setEnabled(busy)
        self.commands.update_status()
