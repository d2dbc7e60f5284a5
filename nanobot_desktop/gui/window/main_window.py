"""The main window: chat in the centre, sessions on the left, the inspector and the workspace panels
docked on the right, menus built from the one action registry, and the app's shutdown wiring.

The window holds no agent logic. It builds the pieces, connects their signals, remembers its
geometry, dock layout and last session (QSettings), and registers one cleanup with the lifecycle
that stops the engine, the watcher and every panel in order.

Start-up: what the first paint shows (chat, composer, session list, menus, status bar, every dock's
frame in its saved place) is built in the constructor; the dock panels, hot reload and the tray are
built right after the first paint, one per event-loop turn, and the engine's services start after
them (SPEC §5: start to first painted window). Asking for a panel (`window.inspector`, ...) before
then builds them all at once, so callers never see a missing panel that should be there.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import QCloseEvent, QDesktopServices, QPaintEvent, QShowEvent
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMessageBox, QWidget

from nanobot_desktop.engine import ConfigError, logs_dir, resolve_provider
from nanobot_desktop.gui.window.actions import ActionRegistry, build_menus
from nanobot_desktop.gui.shell.single_instance import apply_instance_command
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.chat.controller import ChatController
from nanobot_desktop.gui.chat.failures import needs_settings
from nanobot_desktop.gui.chat.model import ChatModel
from nanobot_desktop.gui.chat.view import ChatView
from nanobot_desktop.gui.chat.composer import Composer
from nanobot_desktop.gui.shell.lifecycle import Lifecycle
from nanobot_desktop.gui.common.notice_bar import NoticeBar
from nanobot_desktop.gui.sessions.panel import SessionsPanel
from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher
from nanobot_desktop.gui.window.docks import PANEL_DOCKS, ChatPane, LazyPanels, build_dock_shells

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

log = logging.getLogger(__name__)

APP_TITLE = "nanobot"
GEOMETRY_KEY = "mainWindow/geometry"
STATE_KEY = "mainWindow/state"
SESSION_KEY = "mainWindow/currentSession"
STATE_VERSION = 1
NEW_CHAT_TITLE = "New chat"
BUILD_PANELS_ANYWAY_MS = 1000  # if no paint comes after showing (e.g. minimised), build the panels then


class MainWindow(QMainWindow):
    """The app's window around one Engine."""

    actions: ActionRegistry  # type: ignore[assignment]  # hides QWidget.actions(), which nothing here uses

    def __init__(self, engine: Engine, lifecycle: Lifecycle, parent: QWidget | None = None, *,
                 settings: QSettings | None = None, watcher: WorkspaceWatcher | None = None,
                 start_services: bool = True, log_folder: Path | None = None, use_tray: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.engine = engine
        self.lifecycle = lifecycle
        self.settings_store = settings if settings is not None else QSettings()
        self.log_folder = log_folder or logs_dir(Path(engine.config_path))
        self.settings_dialog: Any = None
        self.about_box: QMessageBox | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self._quitting = False
        self._shown_once = False
        self._state_restored = False

        self.bridge = EngineBridge(engine, self)
        self.actions = ActionRegistry(self)

        self.notice_bar = NoticeBar()
        self.chat_model = ChatModel(self)
        self.chat_view = ChatView(self.chat_model)
        self.chat_view.setObjectName("chatView")
        self.composer = Composer(Path(engine.workspace.root))
        self.setCentralWidget(ChatPane(self.notice_bar, self.chat_view, self.composer))
        self.chat = ChatController(engine, self.bridge, self.chat_model, self.chat_view, self)

        self._owns_watcher = watcher is None
        self.watcher = watcher if watcher is not None else WorkspaceWatcher(self)
        self.sessions_panel = SessionsPanel(engine, self.bridge, self.actions)
        shells = build_dock_shells(self, self.actions, self.sessions_panel, self.show_skills)
        self.docks: dict[str, QDockWidget] = shells.docks
        self.sessions_dock = shells.docks["sessionsDock"]
        self._first_right_dock = shells.first_right_dock
        # Built after the first paint (see _build_next_panel); the properties below build them on demand.
        self._panels = LazyPanels(self, engine, self.bridge, self.watcher, self.docks,
                                  self._make_tray if use_tray else None, self._wire_panel, self._all_panels_built)
        self._build_scheduled = False
        self._services_pending = start_services

        self._build_status_bar()
        self.menus = build_menus(self.menuBar(), self.actions)
        self.menus["agent"].aboutToShow.connect(self._update_heartbeat_actions)
        self._connect()
        self._restore_window_state()
        self.lifecycle.add_cleanup(self.shutdown, name="main window", timeout_s=20.0)
        self._show_initial_session()
        self._check_config()
        self.sessions_panel.refresh_now()

    # --- building ----------------------------------------------------------------------------------

    @property
    def panel_errors(self) -> list[str]:
        """Panels that could not be built, with why (the window still works without them)."""
        self._panels.build_all()
        return self._panels.errors

    @property
    def sync(self) -> Any:
        return self._panels.get("sync")

    @property
    def inspector(self) -> Any:
        return self._panels.get("inspector")

    @property
    def memory_view(self) -> Any:
        return self._panels.get("memory_view")

    @property
    def files_view(self) -> Any:
        return self._panels.get("files_view")

    @property
    def heartbeat_view(self) -> Any:
        return self._panels.get("heartbeat_view")

    @property
    def cron_view(self) -> Any:
        return self._panels.get("cron_view")

    @property
    def subagents_view(self) -> Any:
        return self._panels.get("subagents_view")

    @property
    def mcp_view(self) -> Any:
        return self._panels.get("mcp_view")

    @property
    def tray(self) -> Any:
        return self._panels.get("tray")

    def _build_next_panel(self) -> None:
        """One pending panel per event-loop turn, so the window stays responsive while they arrive."""
        if self._quitting or self.lifecycle.is_quitting:
            return
        self._panels.build_next()
        if self._panels.pending:
            QTimer.singleShot(0, self, self._build_next_panel)

    def _wire_panel(self, name: str, panel: Any) -> None:
        if name == "inspector" and self.current_key:
            panel.set_session(self.current_key)
        if name in ("heartbeat_view", "cron_view", "subagents_view", "tray") \
                and hasattr(panel, "open_session_requested"):
            panel.open_session_requested.connect(self.show_and_open_session)
        if name == "tray" and hasattr(panel, "new_chat_requested"):
            panel.new_chat_requested.connect(self.new_chat)

    def _all_panels_built(self) -> None:
        errors = self._panels.errors
        if errors:
            self.notice_bar.show_notice("Some panels could not be loaded: " + "; ".join(errors), "error")
        QTimer.singleShot(0, self, self._warm_up_rendering)  # then Markdown, before any reply streams in
        if self._services_pending:  # after the panels, so they see the services' first events
            self._services_pending = False
            self._spawn(self._start_services())

    def _make_tray(self) -> Any:
        from nanobot_desktop.gui.window.tray import TrayController

        shared = {"toggle_window": self.actions.show_hide, "new_chat": self.actions.new_chat,
                  "heartbeat_run": self.actions.run_heartbeat, "heartbeat_pause": self.actions.pause_heartbeat,
                  "quit": self.actions.quit}
        tray = TrayController(self.engine, self.bridge, self, self, actions=shared, settings=self.settings_store)
        tray.approvals.card_answerer = self.chat.answer_approval  # a tray/notification answer settles the card
        return tray

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.busy_label = QLabel()
        self.busy_label.setObjectName("busyIndicator")
        self.model_label = QLabel()
        self.model_label.setObjectName("modelLabel")
        self.workspace_label = QLabel()
        self.workspace_label.setObjectName("workspaceLabel")
        self.workspace_label.setTextFormat(Qt.TextFormat.PlainText)
        bar.addWidget(self.busy_label)
        self.layout_label = QLabel()
        self.layout_label.setObjectName("layoutLabel")
        bar.addPermanentWidget(self.model_label)
        bar.addPermanentWidget(self.workspace_label)
        bar.addPermanentWidget(self.layout_label)
        self._update_status()

    def _connect(self) -> None:
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
        self.composer.stop_requested.connect(self.stop_current)
        self.composer.attachment_failed.connect(lambda message: self.notice_bar.show_notice(message, "warning"))
        self.chat.busy_changed.connect(self._on_busy_changed)
        self.chat.turn_failed.connect(self._on_turn_failed)
        self.chat.message_returned.connect(self._on_message_returned)
        self.chat.waiting_changed.connect(self._on_waiting_changed)
        self.chat.save_retried.connect(self._on_save_retried)
        self.chat.session_loaded.connect(lambda _key: self._update_title())
        self.chat_view.tool_card_clicked.connect(self.show_tool_call)

        panel = self.sessions_panel
        panel.session_activated.connect(self.open_session)
        panel.session_deleted.connect(self._on_session_deleted)
        panel.session_restored.connect(self.open_session)
        panel.session_renamed.connect(lambda _key, _title: self._update_title())
        panel.refreshed.connect(self._update_title)
        panel.error.connect(lambda message: self.notice_bar.show_notice(message, "error"))
        panel.export_finished.connect(lambda path: self.statusBar().showMessage(f"Exported to {path}", 5000))

    # --- sessions ----------------------------------------------------------------------------------

    @property
    def current_key(self) -> str:
        return self.chat.current_key

    def open_session(self, key: str) -> None:
        """Show a session in the chat, the list and the inspector, and remember it for the next start."""
        if not key:
            return
        self.chat.show_session(key)
        self.sessions_panel.set_current_key(key)
        inspector = self._panels.built.get("inspector")  # one built later gets the current session then
        if inspector is not None:
            inspector.set_session(key)
        self.settings_store.setValue(SESSION_KEY, key)
        self._update_title()
        self._on_busy_changed(self.chat.is_busy(key))

    def show_and_open_session(self, key: str) -> None:
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
        title = info.title if info is not None else NEW_CHAT_TITLE
        self.setWindowTitle(f"{APP_TITLE} — {title}")

    # --- chatting ----------------------------------------------------------------------------------

    def send_message(self, text: str, media: list[str]) -> None:
        if not self.current_key:
            self.open_session(self.engine.new_session_key())
        if not media and self.chat.warn_before_sending(self.current_key):
            self.composer.edit.setPlainText(text)  # kept: the next Send goes through
            return
        self.chat.send(text, media)

    def stop_current(self) -> None:
        if self.chat.is_busy(self.current_key):
            self.chat.stop_current()

    def show_tool_call(self, call_id: str) -> None:
        if self.inspector is None:
            return
        dock = self.docks.get("inspectorDock")
        if dock is not None:
            dock.show()
            dock.raise_()
        self.inspector.show_call(call_id)

    def show_skills(self) -> None:
        dock = self.docks.get("workspaceDock")
        if dock is None or self.files_view is None:
            return
        dock.show()
        dock.raise_()
        self.files_view.tabs.setCurrentWidget(self.files_view.skills_view)

    def _on_busy_changed(self, busy: bool) -> None:
        self.composer.set_busy(busy)
        self.actions.stop.setEnabled(busy)
        self._update_status()

    def _on_turn_failed(self, key: str, message: str, kind: str) -> None:
        if key != self.current_key:
            return  # a background run's failure: its session is marked in the list, the tray tells
        actions = [("Open Settings", self.open_settings)] if needs_settings(kind) else []
        if kind == "storage" and self.engine.loop.has_unsaved(key):
            actions.append(("Retry save", lambda: self.chat.retry_save(key)))
        self.notice_bar.show_notice(message, "error", actions)

    def _on_message_returned(self, key: str, text: str) -> None:
        """The message could not be saved, so it was not sent: it goes back where it was typed."""
        if key == self.current_key and not self.composer.text().strip():
            self.composer.set_text(text)

    def _on_save_retried(self, key: str, ok: bool, message: str) -> None:
        if key != self.current_key:
            return
        if ok:
            self.notice_bar.show_notice(message, "info")
        else:
            self.notice_bar.show_notice(message, "error", [("Retry save", lambda: self.chat.retry_save(key))])

    def _on_waiting_changed(self, key: str, text: str) -> None:
        if key == self.current_key:
            self.busy_label.setText(f"● {text}  (Esc to stop)" if text else "")
            if not text:
                self._update_status()

    # --- status ------------------------------------------------------------------------------------

    def _update_status(self) -> None:
        busy = self.chat.is_busy(self.current_key) if self.current_key else False
        self.busy_label.setText("● Working…  (Esc to stop)" if busy else "")
        model = self.engine.settings().model or "no model configured"
        self.model_label.setText(f"Model: {model}")
        root = str(self.engine.workspace.root)
        self.workspace_label.setText(f"Workspace: {root}")
        self.workspace_label.setToolTip(root)
        layout = getattr(self.engine, "layout", None)  # which nanobot's files these are (engine/layout.py)
        self.layout_label.setText(layout.label if layout is not None else "")
        self.layout_label.setToolTip(f"Read and written in this layout because {layout.reason}" if layout else "")

    def _check_config(self) -> bool:
        """A missing provider is the first thing a new user meets: say so, with the way out."""
        try:
            resolve_provider(self.engine.config)
        except ConfigError as error:
            self.notice_bar.show_notice(f"No model is configured yet — open Settings. ({error})", "warning",
                                        [("Open Settings", self.open_settings)])
            return False
        return True

    # --- commands ----------------------------------------------------------------------------------

    def open_settings(self) -> Any:
        """The non-modal Settings dialog (one at a time)."""
        if self.settings_dialog is not None and self.settings_dialog.isVisible():
            self.settings_dialog.raise_()
            self.settings_dialog.activateWindow()
            return self.settings_dialog
        try:
            from nanobot_desktop.gui.settings.dialog import SettingsDialog
        except ImportError as error:
            self.notice_bar.show_notice(f"Settings are not available: {error}", "error")
            return None
        dialog = SettingsDialog(self.engine, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.applied.connect(self._on_settings_applied)
        dialog.destroyed.connect(lambda *_: setattr(self, "settings_dialog", None))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _on_settings_applied(self, config: Any) -> None:
        try:
            from nanobot_desktop.gui.shell.logging_setup import update_secrets

            update_secrets(config)
        except ImportError:
            pass
        self._update_status()
        if self._check_config() and self.notice_bar.level == "warning":
            self.notice_bar.dismiss()

    def run_heartbeat_now(self) -> None:
        if self.tray is not None:
            self.tray.run_heartbeat_now()
            return
        self._spawn(self.engine.heartbeat.trigger_now())

    def toggle_heartbeat_pause(self) -> None:
        if self.tray is not None:
            self.tray.toggle_heartbeat_pause()
        elif self.engine.heartbeat.paused:
            self.engine.heartbeat.resume()
        else:
            self.engine.heartbeat.pause()
        self._update_heartbeat_actions()

    def _update_heartbeat_actions(self) -> None:
        heartbeat = self.engine.heartbeat
        self.actions.pause_heartbeat.setText("&Resume heartbeat" if heartbeat.paused else "&Pause heartbeat")
        self.actions.run_heartbeat.setEnabled(not heartbeat.ticking)

    def open_log_folder(self) -> None:
        self.log_folder.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_folder)))

    def show_about(self) -> None:
        from nanobot_desktop import __version__ as version

        box = QMessageBox(self)
        box.setWindowTitle("About nanobot Desktop")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(f"nanobot Desktop {version}\n\nA desktop app for the nanobot personal AI agent.\n"
                    f"Workspace: {self.engine.workspace.root}\nConfig: {self.engine.config_path}")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.about_box = box
        box.open()

    def quit(self) -> None:
        self._quitting = True
        self.lifecycle.request_quit()

    # --- window state ------------------------------------------------------------------------------

    def save_window_state(self) -> None:
        self.settings_store.setValue(GEOMETRY_KEY, self.saveGeometry())
        self.settings_store.setValue(STATE_KEY, self.saveState(STATE_VERSION))
        if self.current_key:
            self.settings_store.setValue(SESSION_KEY, self.current_key)
        self.settings_store.sync()

    def _restore_window_state(self) -> None:
        geometry = self.settings_store.value(GEOMETRY_KEY)
        state = self.settings_store.value(STATE_KEY)
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            self.resize(1200, 780)
        if isinstance(state, QByteArray) and not state.isEmpty():
            self._state_restored = self.restoreState(state, STATE_VERSION)
        if not self._state_restored:  # first start: the chat gets the most room
            docks = [self.sessions_dock] + ([self._first_right_dock] if self._first_right_dock else [])
            self.resizeDocks(docks, [260, 420][:len(docks)], Qt.Orientation.Horizontal)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            self.composer.focus_input()
            QTimer.singleShot(0, self, self.composer.focus_input)  # after the docks took their focus
            QTimer.singleShot(BUILD_PANELS_ANYWAY_MS, self, self._schedule_panels)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        super().paintEvent(event)
        if not self._build_scheduled:
            self._schedule_panels()  # the window is on screen: now the rest

    def _schedule_panels(self) -> None:
        if self._build_scheduled:
            return
        self._build_scheduled = True
        QTimer.singleShot(0, self, self._build_next_panel)

    def _warm_up_rendering(self) -> None:
        """Markdown and Pygments get loaded after the first paint, before any reply streams in."""
        self.chat_view.renderer.warm_up()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self._quitting or self.lifecycle.is_quitting:
            event.accept()
            return
        self.save_window_state()
        if self.tray is not None and self.tray.should_close_to_tray():
            event.ignore()
            self.hide()
            self.tray.note_closed_to_tray()
            return
        event.accept()
        self.quit()

    # --- background work and shutdown ---------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> "asyncio.Future[Any]":
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: "asyncio.Future[Any]") -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work of the main window failed", exc_info=task.exception())

    async def _start_services(self) -> None:
        try:
            await self.engine.start_services()
        except (ConfigError, OSError, ValueError) as error:
            self.notice_bar.show_notice(f"Heartbeat and scheduled jobs did not start: {error}", "error")

    async def shutdown(self) -> None:
        """Save the layout, stop the engine, then the panels and the watcher (the lifecycle calls this)."""
        self._quitting = True
        try:
            self.save_window_state()
        except RuntimeError:  # the window is already gone (interpreter teardown)
            pass
        self._panels.cancel()  # nothing more is built once shutting down
        for task in [t for t in self._tasks if not t.done()]:
            task.cancel()
        await self._await_step("engine", self.engine.shutdown())
        await self._await_step("chat", self.chat.shutdown())
        self.bridge.detach()
        await self._await_step("sessions panel", self.sessions_panel.shutdown())
        await self._await_step("composer", self.composer.shutdown())
        for name in ("tray", *PANEL_DOCKS):
            shutdown = getattr(self._panels.built.get(name), "shutdown", None)
            if shutdown is not None:
                try:
                    result = shutdown()
                    if asyncio.iscoroutine(result):
                        await result
                except Exception:
                    log.exception("shutting down %s failed", name)
        sync = self._panels.built.get("sync")
        if sync is not None:
            sync.close()
        if self._owns_watcher:
            self.watcher.stop()

    @staticmethod
    async def _await_step(name: str, awaitable: Any) -> None:
        try:
            await awaitable
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("shutdown step %s failed", name)


async def create_main_window(lifecycle: Lifecycle) -> MainWindow | None:
    """`run_gui`'s default window factory: first-run setup if needed, then the Engine and the window.

    Returns None (and the app quits) when the person cancels the first-run setup or the config
    cannot be loaded (they are told why first).
    """
    from nanobot_desktop.gui.shell.startup import open_engine_for_gui

    opened = await open_engine_for_gui(lifecycle.options.config, lifecycle.options.workspace)
    if opened is None:
        return None
    engine, log_folder = opened
    return MainWindow(engine, lifecycle, log_folder=log_folder)
