"""What the parts of the main window share: the attributes MainWindow sets, declared once, and its
background tasks.

MainWindow (main_window.py) is assembled from WindowLifetime (lifetime.py) and WindowCommands
(commands.py); both build on this class, which is a QMainWindow for the type checker and a plain
class at run time (the one Qt base is MainWindow's own).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtCore import QSettings, SignalInstance
    from PySide6.QtWidgets import QDockWidget, QMainWindow, QMessageBox

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.chat.branching import BranchActions
    from nanobot_desktop.gui.chat.composer import Composer
    from nanobot_desktop.gui.chat.controller import ChatController
    from nanobot_desktop.gui.chat.view import ChatView
    from nanobot_desktop.gui.chat.warm_up import RenderingWarmUp
    from nanobot_desktop.gui.common.actions import ActionRegistry
    from nanobot_desktop.gui.common.bridge import EngineBridge
    from nanobot_desktop.gui.common.notice_bar import NoticeBar
    from nanobot_desktop.gui.sessions.panel import SessionsPanel
    from nanobot_desktop.gui.settings.dialog import SettingsDialog
    from nanobot_desktop.gui.window.panels import LazyPanels
    from nanobot_desktop.gui.window.tray import TrayController
    from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher

    _QtBase = QMainWindow
else:
    _QtBase = object

log = logging.getLogger(__name__)


class WindowLifecycle(Protocol):
    """What the window needs of the app's lifecycle (shell/lifecycle.py's Lifecycle): a say in the
    ordered shutdown, and the one way to quit. A Protocol, so window/ does not import shell/."""

    @property
    def is_quitting(self) -> bool: ...

    def add_cleanup(self, callback: Callable[[], Awaitable[None]], *, name: str | None = None,
                    timeout_s: float | None = None) -> None: ...

    def request_quit(self) -> object: ...


class WindowBase(_QtBase):
    """The main window's shared state (set by MainWindow.__init__ and attach_engine)."""

    engine: Engine  # None only before attach_engine (the frame paints without it)
    lifecycle: WindowLifecycle | None
    settings_store: QSettings
    log_folder: Path | None
    settings_dialog: SettingsDialog | None
    settings_applied: SignalInstance
    about_box: QMessageBox | None
    actions: ActionRegistry  # type: ignore[assignment]  # hides QWidget.actions(), which nothing here uses
    docks: dict[str, QDockWidget]
    notice_bar: NoticeBar
    bridge: EngineBridge
    chat: ChatController
    branches: BranchActions  # Edit and resend, Regenerate, the "‹ 2/3 ›" switcher
    chat_view: ChatView
    composer: Composer
    rendering_warm_up: RenderingWarmUp  # Markdown and Pygments loaded on first use
    sessions_panel: SessionsPanel
    watcher: WorkspaceWatcher
    _tasks: set[asyncio.Future[object]]
    _panels: LazyPanels | None
    _first_right_dock: QDockWidget | None
    _owns_watcher: bool
    _quitting: bool
    _shown_once: bool
    _build_scheduled: bool
    _services_pending: bool

    @property
    def tray(self) -> TrayController | None:
        """The tray icon (built now if it is still to come); None without one, or before the engine."""
        return self._panels.get_tray() if self._panels is not None else None

    @property
    def current_key(self) -> str:
        """The session the chat shows ("" before the engine has arrived)."""
        chat = self.__dict__.get("chat")
        return str(chat.current_key) if chat is not None else ""

    def _spawn(self, coroutine: Coroutine[Any, Any, object]) -> asyncio.Future[object]:
        """Run `coroutine` as the window's task; cancelled at shutdown, its failure logged."""
        import asyncio  # not before the first paint (see shell/app.py)

        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Future[object]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work of the main window failed", exc_info=task.exception())
