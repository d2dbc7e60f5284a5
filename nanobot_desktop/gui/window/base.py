"""What the parts of the main window share: the attributes MainWindow sets, declared once, and its
background tasks.

MainWindow (main_window.py) is assembled from WindowLifetime (lifetime.py) and WindowCommands
(commands.py); both build on this class, which is a QMainWindow for the type checker and a plain
class at run time (the one Qt base is MainWindow's own).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QDockWidget, QMainWindow, QMessageBox

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge
    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.common.actions import ActionRegistry
    from nanobot_desktop.gui.window.panels import LazyPanels

    _QtBase = QMainWindow
else:
    _QtBase = object

log = logging.getLogger(__name__)


class WindowBase(_QtBase):
    """The main window's shared state (set by MainWindow.__init__ and attach_engine)."""

    engine: Engine  # None only before attach_engine (the frame paints without it)
    lifecycle: Lifecycle | None
    settings_store: QSettings
    log_folder: Path | None
    settings_dialog: Any
    about_box: QMessageBox | None
    actions: ActionRegistry  # type: ignore[assignment]  # hides QWidget.actions(), which nothing here uses
    docks: dict[str, QDockWidget]
    notice_bar: Any
    bridge: EngineBridge
    chat: Any
    branches: Any  # gui/chat/branching.py: Edit and resend, Regenerate, the "‹ 2/3 ›" switcher
    chat_view: Any
    composer: Any
    rendering_warm_up: Any  # gui/chat/warm_up.py: Markdown and Pygments loaded on first use
    sessions_panel: Any
    watcher: Any
    tray: Any  # a panel: MainWindow.__getattr__ builds it on demand
    _tasks: set[asyncio.Future[Any]]
    _panels: LazyPanels | None
    _first_right_dock: QDockWidget | None
    _owns_watcher: bool
    _quitting: bool
    _shown_once: bool
    _build_scheduled: bool
    _services_pending: bool

    @property
    def current_key(self) -> str:
        """The session the chat shows ("" before the engine has arrived)."""
        chat = self.__dict__.get("chat")
        return str(chat.current_key) if chat is not None else ""

    def _spawn(self, coroutine: Any) -> asyncio.Future[Any]:
        """Run `coroutine` as the window's task; cancelled at shutdown, its failure logged."""
        import asyncio  # not before the first paint (see shell/app.py)

        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work of the main window failed", exc_info=task.exception())
