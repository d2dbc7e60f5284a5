"""What the main window's parts are given: the frame (before the engine) and the chat's parts (with it).

MainWindow (main_window.py) is a QMainWindow that owns its parts, each a plain object given what it
needs rather than a mixin that reaches into the window: DockLayout (layout.py: widths, giving way,
pages, the drawer, saving and restoring), WindowLifetime (lifetime.py: the build after the first
paint, closing, the ordered shutdown, the window's tasks), WindowCommands (commands.py: Settings, the
heartbeat, the log folder, About, the status bar and its retry countdown), WindowAccess
(access.py: Tab, F6 regions, the approval shortcut, text size, announcements) and ChatNotices
(chat_notices.py: a failed turn's Retry, an interrupted turn's Continue, a sync conflict's Compare).

The frame paints before the engine exists (SPEC §5), so each part gets the `Frame` when the window
is made and the `ChatParts` in `attach(...)` once the engine has arrived.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QDockWidget, QMainWindow

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.chat.composer import Composer
    from nanobot_desktop.gui.chat.controller import ChatController
    from nanobot_desktop.gui.chat.view import ChatView
    from nanobot_desktop.gui.common.actions import ActionRegistry
    from nanobot_desktop.gui.common.bridge import EngineBridge
    from nanobot_desktop.gui.common.notice_bar import NoticeBar
    from nanobot_desktop.gui.sessions.panel import SessionsPanel
    from nanobot_desktop.gui.window.agent_area import AgentArea
    from nanobot_desktop.gui.window.pages import CentralPages


class WindowLifecycle(Protocol):
    """What the window needs of the app's lifecycle (shell/lifecycle.py's Lifecycle): a say in the
    ordered shutdown, and the one way to quit. A Protocol, so window/ does not import shell/."""

    @property
    def is_quitting(self) -> bool: ...

    def add_cleanup(self, callback: Callable[[], Awaitable[None]], *, name: str | None = None,
                    timeout_s: float | None = None) -> None: ...

    def request_quit(self) -> object: ...


# NamedTuples, not dataclasses: this module is imported before the first paint (see panels.py).
class Frame(NamedTuple):
    """The window as it paints before the engine: itself, its actions, docks, centre pages and settings."""

    window: QMainWindow
    actions: ActionRegistry
    docks: dict[str, QDockWidget]
    pages: CentralPages
    agent_area: AgentArea
    store: QSettings


class ChatParts(NamedTuple):
    """What the window builds around the engine when it arrives (MainWindow.attach_engine)."""

    engine: Engine
    lifecycle: WindowLifecycle
    bridge: EngineBridge
    notice_bar: NoticeBar
    chat: ChatController
    chat_view: ChatView
    composer: Composer
    sessions_panel: SessionsPanel
