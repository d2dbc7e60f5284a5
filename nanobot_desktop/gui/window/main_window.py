"""The main window: chat in the centre, sessions on the left, the inspector and the workspace panels
docked on the right, menus built from the one action registry.

The window holds no agent logic. It builds the pieces, connects their signals, and remembers its
geometry, dock layout and last session (QSettings); window/lifetime.py has the layout, the build
after the first paint and the ordered shutdown, window/commands.py the menu commands, and
window/panels.py the one table of dock panels.

Start-up (SPEC §5: start to first painted window): `MainWindow()` without an engine is the frame —
menus, status bar and every dock in its saved place, nothing that needs the engine, pydantic or
asyncio — so it can paint before they are imported. `attach_engine` then builds the chat, the
composer and the session list; the dock panels, hot reload and the tray follow after the next
paint. Given an engine and a lifecycle, the constructor attaches at once (what tests do).
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QSettings, QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from nanobot_desktop.gui.common.engine_words import session_title
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.access import WindowAccess
from nanobot_desktop.gui.window.actions import ActionRegistry, build_menus
from nanobot_desktop.gui.window.agent_area import AgentArea
from nanobot_desktop.gui.window.commands import WindowCommands
from nanobot_desktop.gui.window.docks import PanelPlaceholder, build_dock_shells
from nanobot_desktop.gui.window.layout import AGENT_SHORTCUT
from nanobot_desktop.gui.window.lifetime import SESSION_KEY, WindowLifetime
from nanobot_desktop.gui.window.pages import CentralPages
from nanobot_desktop.gui.window.toolbar import WindowToolBar
from nanobot_desktop.gui.window.panels import (
    AGENT_AREA, AGENT_TITLE, PAGES, PANELS_BY_NAME, SESSIONS_DOCK, LazyPanels, set_dock_panel,
)

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is attached
    import asyncio

    from PySide6.QtWidgets import QMessageBox  # created by About, after the frame has painted

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher

APP_TITLE = "nanobot"
NEW_CHAT_TITLE = str(QT_TRANSLATE_NOOP("Window", "New chat"))  # the window title of an unsaved chat


class MainWindow(WindowAccess, WindowLifetime, WindowCommands, QMainWindow):
    """The app's window around one Engine (which may arrive after the window has painted)."""

    def __init__(self, engine: Engine | None = None, lifecycle: Lifecycle | None = None,
                 parent: QWidget | None = None, *,
                 settings: QSettings | None = None, watcher: WorkspaceWatcher | None = None,
                 start_services: bool = True, log_folder: Path | None = None, use_tray: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle(APP_TITLE)
        self.engine = None  # type: ignore[assignment]  # the frame paints before the engine exists (attach_engine)
        self.lifecycle: Lifecycle | None = None
        self.settings_store = settings if settings is not None else QSettings()
        self.log_folder: Path | None = log_folder
        self.settings_dialog: Any = None
        self.about_box: QMessageBox | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self._quitting = False
        self._shown_once = False
        self._build_scheduled = False
        self._services_pending = start_services
        self._use_tray = use_tray
        self._watcher_given = watcher
        self._owns_watcher = watcher is None
        self._panels: LazyPanels | None = None

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
        self._build_status_bar()
        self._init_layout()
        self.menus = build_menus(self.menuBar(), self.actions)
        self.toolbar = WindowToolBar(
            [(self.actions.dock_toggles[SESSIONS_DOCK], "sidebar"), (self.actions.new_chat, "new-chat")],
            [(self._page_actions[AGENT_AREA], "agent"), (self.drawer_action, "drawer")], self)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.toolbar)
        self.menus["agent"].aboutToShow.connect(self._update_heartbeat_actions)
        self._restore_window_state()
        if engine is not None and lifecycle is not None:
            self.attach_engine(engine, lifecycle, log_folder=log_folder)

    def attach_engine(self, engine: Engine, lifecycle: Lifecycle, *, log_folder: Path | None = None) -> None:
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
        self.engine = engine
        self.lifecycle = lifecycle
        self.actions.load_icons()  # before the panels and the tray, whose buttons show them
        self.toolbar.load_icons()
        if log_folder is not None or self.log_folder is None:
            from nanobot_desktop.engine import logs_dir

            self.log_folder = log_folder or logs_dir(Path(engine.config_path))
        self.bridge = EngineBridge(engine, self)
        self.text_conflict_dialog: QWidget | None = None  # the open choice between two machines' versions
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
        self._panels = LazyPanels(self, engine, self.bridge, self.watcher, self.docks,
                                  self._make_tray if self._use_tray else None, self._wire_panel, self._all_panels_built,
                                  pages=self.pages, agent=self.agent_area)
        self._connect()
        from nanobot_desktop.gui.window.approval_drawer import ApprovalDrawer

        self.approval_drawer = ApprovalDrawer(self, self.bridge, self)  # an approval that needs the drawer opens it
        self._init_access()
        lifecycle.add_cleanup(self.shutdown, name="main window", timeout_s=20.0)
        self._update_status()
        self.refresh_sync_status()  # then every 30 s (in a thread: Syncthing's API, if any)
        self._show_initial_session()
        self._check_config()
        self.sessions_panel.refresh_now()
        if self._shown_once:  # the frame painted already: focus the composer, build the rest next
            self.composer.focus_input()
            self.update()

    def __getattr__(self, name: str) -> Any:
        """`window.inspector`, `window.cron_view`, … (PANELS), `window.sync` and `window.tray`: the panel,
        built now if it is still pending; None if it could not be built."""
        if name in PANELS_BY_NAME or name in ("sync", "tray"):
            panels = self.__dict__.get("_panels")
            return panels.get(name) if panels is not None else None
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def panel_errors(self) -> list[str]:
        """Panels that could not be built, with why (the window still works without them)."""
        if self._panels is None:
            return []
        self._panels.build_all()
        return self._panels.errors

    def _wire_panel(self, name: str, panel: Any) -> None:
        if hasattr(panel, "set_session") and self.current_key:
            panel.set_session(self.current_key)
        if hasattr(panel, "open_session_requested"):
            panel.open_session_requested.connect(self.show_and_open_session)
        if hasattr(panel, "new_chat_requested"):
            panel.new_chat_requested.connect(self.new_chat)

    def _make_tray(self) -> Any:
        from nanobot_desktop.gui.window.tray import TrayController

        shared = {"toggle_window": self.actions.show_hide, "new_chat": self.actions.new_chat,
                  "heartbeat_run": self.actions.run_heartbeat, "heartbeat_pause": self.actions.pause_heartbeat,
                  "quit": self.actions.quit}
        tray = TrayController(self.engine, self.bridge, self, self, actions=shared, settings=self.settings_store)
        tray.approvals.card_answerer = self.chat.answer_approval  # a tray/notification answer settles the card
        return tray

    def _connect(self) -> None:
        from nanobot_desktop.gui.shell.single_instance import apply_instance_command

        a = self.actions
        a.new_chat.triggered.connect(self.new_chat)
        a.stop.triggered.connect(self.stop_current)
        a.settings.triggered.connect(self.open_settings)
        a.run_heartbeat.triggered.connect(self.run_heartbeat_now)
        a.pause_heartbeat.triggered.connect(self.toggle_heartbeat_pause)
        a.show_hide.triggered.connect(lambda: apply_instance_command(self, "toggle"))
        a.quit.triggered.connect(self.quit)
        a.open_log_folder.triggered.connect(self.open_log_folder)
        a.about.triggered.connect(self.show_about)

        self.composer.send_requested.connect(self.send_message)
        self.composer.edit.textChanged.connect(self.rendering_warm_up.start)
        self.composer.stop_requested.connect(self.stop_current)
        self.composer.attachment_failed.connect(
            lambda message: self.notice_bar.show_notice(message, "warning", timeout_ms=10_000, topic="attachment"))
        if self.composer.model_switcher is not None:
            switcher = self.composer.model_switcher
            switcher.failed.connect(lambda message: self.notice_bar.show_notice(message, "error", topic="model-choice"))
            switcher.model_changed.connect(lambda _key, _model: self.notice_bar.clear("model-choice"))
            switcher.shown.connect(lambda _model: self._update_status())
        self.chat.busy_changed.connect(self._on_busy_changed)
        self.chat.turn_failed.connect(self._on_turn_failed)
        self.chat.lines_lost.connect(lambda key, text: self.notice_bar.show_notice(
            text, "warning", [(translate("Window", "Put back in a new chat"), lambda: self.chat.put_back_lost(key))],
            topic=f"lost:{key}"))
        self.chat.message_returned.connect(self._on_message_returned)
        self.chat.waiting_changed.connect(self._on_waiting_changed)
        self.chat.context_fill_changed.connect(self._on_context_fill_changed)
        self.chat.retry_changed.connect(self._on_retry_changed)
        self.chat.save_retried.connect(self._on_save_retried)
        self.chat.session_loaded.connect(lambda _key: self._update_title())
        self.chat.session_loaded.connect(self.chat.check_interrupted)
        self.chat.interrupted_found.connect(self._offer_interrupted)
        self.chat_view.tool_card_clicked.connect(self.show_tool_call)
        self.branches.open_requested.connect(self.open_session)
        self.chat.continued.connect(lambda old, new: self.open_session(new) if old == self.current_key else None)
        self.branches.failed.connect(lambda message: self.notice_bar.show_notice(message, "error"))
        self.bridge.engine_event.connect(self._on_engine_notice)
        for notice in self.engine.start_notices:
            self._on_engine_notice(notice)

        self.bridge.engine_event.connect(self._on_sync_copy)

        panel = self.sessions_panel
        panel.session_activated.connect(self.open_session)
        panel.session_deleted.connect(self._on_session_deleted)
        panel.session_restored.connect(self.open_session)
        panel.session_renamed.connect(lambda _key, _title: self._update_title())
        panel.refreshed.connect(self._update_title)
        panel.error.connect(lambda message: self.notice_bar.show_notice(message, "error"))
        panel.export_finished.connect(lambda path: self.statusBar().showMessage(
            translate("Window", "Exported to {path}").format(path=path), 5000))

    def _on_sync_copy(self, event: object) -> None:
        """A sync tool's conflict copy was merged into a session (or set aside): said once, briefly."""
        from nanobot_desktop.engine import events

        if isinstance(event, events.SyncCopyMerged):
            severity = "info" if event.outcome in ("merged", "orphaned") else "warning"
            self.notice_bar.show_notice(sync_copy_sentence(event), severity,
                                        timeout_ms=10_000 if severity == "info" else 0, topic=f"sync-copy:{event.copy_name}")
        elif isinstance(event, events.SyncTextConflict):
            device = event.device or event.tool
            text = translate("Window", "{file} was changed on two machines (the other version is from {device}); "
                             "nothing was overwritten.").format(
                file=event.file_name, device=device)
            compare = translate("Window", "Compare and choose…")
            self.notice_bar.show_notice(text, "warning", [(compare, lambda: self.open_text_conflict(event.copy_name))],
                                        topic=f"sync-text:{event.copy_name}")

    def open_text_conflict(self, copy_name: str) -> None:
        """Show both machines' versions of a text file; not modal, so the agent keeps working meanwhile."""
        from nanobot_desktop.gui.workspace.text_conflict import TextConflictDialog

        try:
            dialog = TextConflictDialog(self.engine, copy_name, self)
        except FileNotFoundError:
            return  # already decided (on this machine or, synced, on the other)
        dialog.failed.connect(lambda message: self.notice_bar.show_notice(message, "error"))
        dialog.resolved.connect(lambda _file: self.notice_bar.clear(f"sync-text:{copy_name}"))
        dialog.setModal(False)
        dialog.show()
        self.text_conflict_dialog = dialog

    # --- sessions ----------------------------------------------------------------------------------

    def open_session(self, key: str) -> None:
        """Show a session in the chat, the list and the inspector, and remember it for the next start."""
        if not key:
            return
        self.chat.show_session(key)
        self.composer.set_session(key)
        self.sessions_panel.set_current_key(key)
        built = self._panels.built if self._panels is not None else {}
        for panel in built.values():  # one built later gets the current session then (_wire_panel)
            if panel is not None and hasattr(panel, "set_session"):
                panel.set_session(key)
        self.settings_store.setValue(SESSION_KEY, key)
        self._clear_chat_notices(keep_key=key)
        self._update_title()
        self._on_busy_changed(self.chat.is_busy(key))

    def show_and_open_session(self, key: str) -> None:
        from nanobot_desktop.gui.shell.single_instance import apply_instance_command

        apply_instance_command(self, "show")
        self.open_session(key)

    def new_chat(self) -> None:
        """A fresh desktop session; it appears in the list once its first message is saved."""
        key = self.current_key
        if key and not self.engine.sessions.path_for(key).exists() and not self.chat.is_busy(key) \
                and self.chat.model.rowCount() == 0:
            self.composer.focus_input()  # the current chat is still empty: no need for another one
            return
        self.open_session(self.engine.new_session_key())
        self.composer.focus_input()

    def _show_initial_session(self) -> None:
        remembered = self.settings_store.value(SESSION_KEY, "", type=str)
        try:
            exists = bool(remembered) and self.engine.sessions.path_for(str(remembered)).exists()
        except ValueError:
            exists = False
        self.open_session(str(remembered) if exists else self.engine.new_session_key())

    def _on_session_deleted(self, key: str) -> None:
        if key == self.current_key:
            self.open_session(self.engine.new_session_key())
        self.chat.forget_session(key)

    def _update_title(self) -> None:
        key = self.current_key
        info = self.sessions_panel.model.info(key) if key else None
        title = session_title(info.title, info.message_count) if info is not None else translate("Window", NEW_CHAT_TITLE)
        self.setWindowTitle(f"{APP_TITLE} — {title}")

    # --- chatting ----------------------------------------------------------------------------------

    def send_message(self, text: str, media: list[str]) -> None:
        if not self.current_key:
            self.open_session(self.engine.new_session_key())
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
        self._raise_dock(PANELS_BY_NAME["inspector"].dock)
        if self.inspector is not None:
            self.inspector.show_call(call_id)

    def show_skills(self) -> None:
        if self.engine is None:
            return
        self._raise_dock(PANELS_BY_NAME["files_view"].dock)
        if self.files_view is not None:
            self.files_view.tabs.setCurrentWidget(self.files_view.skills_view)

    def _raise_dock(self, name: str) -> None:
        dock = self.docks.get(name)
        if dock is not None:
            dock.show()
            dock.raise_()

    def _on_engine_notice(self, event: object) -> None:
        """The engine's notices (a workspace file linked out of it, a setting refused on load), one per topic."""
        from nanobot_desktop.engine import events

        if isinstance(event, events.Notice):
            self.notice_bar.show_notice(event.text, "warning", topic=event.topic)

    def _on_busy_changed(self, busy: bool) -> None:
        if busy:  # a new turn (sent, retried, regenerated): the last one's failure is over
            self.notice_bar.clear(f"turn-failed:{self.current_key}")
        self.composer.set_busy(busy)
        self.actions.stop.setEnabled(busy)
        self._update_status()

    def _offer_interrupted(self, key: str, text: str, can_continue: bool) -> None:
        """Continue / Dismiss for a turn nanobot 0.3.5 left unfinished in the session shown."""
        if key != self.current_key:
            return
        actions: list[tuple[str, Callable[[], object]]] = []
        if can_continue:
            actions.append((translate("Window", "Continue"), lambda: self.chat.resolve_interrupted(key, True)))
        actions.append((translate("Window", "Dismiss"), lambda: self.chat.resolve_interrupted(key, False)))
        self.notice_bar.show_notice(text, "info", actions, topic=f"interrupted:{key}")

    def _on_turn_failed(self, key: str, message: str, kind: str) -> None:
        from nanobot_desktop.gui.chat.failures import needs_settings

        if key != self.current_key:
            return  # a background run's failure: its session is marked in the list, the tray tells
        actions = [(translate("Window", "Open Settings"), self.open_settings)] if needs_settings(kind) else []
        if kind == "storage" and self.engine.loop.has_unsaved(key):
            actions.append((translate("Window", "Retry save"), lambda: self.chat.retry_save(key)))
        elif kind == "new_blocked":  # /new could not save the conversation to memory: never a dead end
            actions = [(translate("Window", "Start anyway"), self.new_chat),
                       (translate("Window", "Try again"), lambda: self._send_to(key, "/new"))]
        elif kind not in ("storage", "session"):  # the message is saved: send it again, not a copy of it
            actions.append((translate("Window", "Retry"), lambda: self._send_to(key, None)))
        self.notice_bar.show_notice(message, "error", actions, topic=f"turn-failed:{key}")

    def _send_to(self, key: str, text: str | None) -> None:
        """Send `text` into session `key` (None: answer its last saved message again), if it is still shown."""
        if key == self.current_key and not self.chat.is_busy(key):
            self.chat.send(text) if text is not None else self.chat.resend(key)

    def _on_message_returned(self, key: str, text: str) -> None:
        """The message could not be saved, so it was not sent: it goes back where it was typed."""
        if key == self.current_key and not self.composer.text().strip():
            self.composer.set_text(text)

    def _on_save_retried(self, key: str, ok: bool, message: str) -> None:
        if key != self.current_key:
            return
        if ok:
            self.notice_bar.show_notice(message, "info", timeout_ms=6000, topic=f"save:{key}")
        else:
            self.notice_bar.show_notice(message, "error", [(translate("Window", "Retry save"), lambda: self.chat.retry_save(key))],
                                        topic=f"save:{key}")


async def create_main_window(lifecycle: Lifecycle, frame: MainWindow | None = None) -> MainWindow | None:
    """`run_gui`'s default window factory: first-run setup if needed, then the Engine, into `frame`
    (the window already painted without one) or a new window.

    Returns None (and the app quits) when the person cancels the first-run setup or the config
    cannot be loaded (they are told why first).
    """
    from nanobot_desktop.gui.shell.startup import open_engine_for_gui

    opened = await open_engine_for_gui(lifecycle.options.config, lifecycle.options.workspace)
    if opened is None:
        return None
    engine, log_folder = opened
    window = frame if frame is not None else MainWindow()
    window.attach_engine(engine, lifecycle, log_folder=log_folder)
    return window


def sync_copy_sentence(event: Any) -> str:
    """What became of a sync tool's conflict copy (engine `SyncCopyMerged`), in the UI language."""
    where = (translate("Window", "{device} ({tool})").format(device=event.device, tool=event.tool) if event.device
             else translate("Window", "another device ({tool})").format(tool=event.tool))
    if event.outcome == "merged" and event.added:
        return translate("Window", "Added %n message(s) from {device} that were missing here (a sync conflict).",
                         n=event.added).format(device=where)
    if event.outcome == "merged":
        return translate("Window", "A copy of this conversation from {device} had nothing new; it was moved to the trash.").format(
            device=where)
    if event.outcome == "orphaned":
        return translate("Window", "A copy of a deleted conversation came from {device}; it is in the trash ({file}), "
                         "where it can be restored.").format(device=where, file=event.copy_name)
    return event.sentence  # too large or unreadable: the engine's sentence carries the detail

