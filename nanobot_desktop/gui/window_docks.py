"""Building the main window's panels and docks, and the central chat pane.

Where things go: sessions on the left (full height); the inspector and the workspace editors
(Memory, Workspace with its Skills tab) tabbed on the right, beside the chat; the background work
(Heartbeat, Scheduled, Subagents) tabbed below the chat and hidden until asked for, so the chat
keeps its room. Every dock has a show/hide action in the registry (the View menu lists them).

A panel that fails to build is logged and left out, with its error kept for the window to show:
the chat must keep working even if, say, the cron view cannot read a broken jobs.json.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QDockWidget, QFrame, QMainWindow, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from nanobot_desktop.gui.actions import ActionRegistry
from nanobot_desktop.gui.chat_view import ChatView
from nanobot_desktop.gui.composer import Composer
from nanobot_desktop.gui.notice_bar import NoticeBar

log = logging.getLogger(__name__)

RIGHT_DOCKS = (("inspectorDock", "inspector", "Ctrl+2"), ("memoryDock", "memory_view", "Ctrl+3"),
               ("workspaceDock", "files_view", "Ctrl+4"))
BOTTOM_DOCKS = (("heartbeatDock", "heartbeat_view", "Ctrl+5"), ("scheduledDock", "cron_view", "Ctrl+6"),
                ("subagentsDock", "subagents_view", "Ctrl+7"))


class ChatPane(QWidget):
    """Notice bar, chat and composer; files dropped anywhere on it go to the composer."""

    def __init__(self, notice_bar: NoticeBar, chat_view: ChatView, composer: Composer) -> None:
        super().__init__()
        self.composer = composer
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        bar_holder = QVBoxLayout()
        bar_holder.setContentsMargins(8, 6, 8, 0)
        bar_holder.addWidget(notice_bar)
        layout.addLayout(bar_holder)
        layout.addWidget(chat_view, 1)
        layout.addWidget(composer)
        self.setAcceptDrops(True)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls() or event.mimeData().hasImage():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        if self.composer.add_mime_data(event.mimeData()):
            event.acceptProposedAction()


@dataclass
class Panels:
    """The optional panels (None when one could not be built) and every dock by objectName."""

    sync: Any = None
    inspector: Any = None
    memory_view: Any = None
    files_view: Any = None
    heartbeat_view: Any = None
    cron_view: Any = None
    subagents_view: Any = None
    docks: dict[str, QDockWidget] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    first_right_dock: QDockWidget | None = None


def build_panel(errors: list[str], label: str, factory: Callable[[], Any]) -> Any:
    try:
        return factory()
    except Exception as error:  # one broken panel must not take the chat with it
        log.exception("the %s panel could not be built", label)
        errors.append(f"{label}: {error}")
        return None


def build_panels(window: QMainWindow, engine: Any, bridge: Any, watcher: Any, actions: ActionRegistry,
                 sessions_panel: QWidget, show_skills: Callable[[], None]) -> Panels:
    """Create WorkspaceSync and the panels, and dock them (and the session list) into `window`."""
    from nanobot_desktop.gui.cron_view import CronView
    from nanobot_desktop.gui.files_view import WorkspaceFilesView
    from nanobot_desktop.gui.heartbeat_view import HeartbeatView
    from nanobot_desktop.gui.inspector import InspectorPanel
    from nanobot_desktop.gui.memory_view import MemoryView
    from nanobot_desktop.gui.subagents_view import SubagentsView
    from nanobot_desktop.gui.workspace_sync import WorkspaceSync

    panels = Panels()
    errors = panels.errors
    panels.sync = build_panel(errors, "workspace sync", lambda: WorkspaceSync(engine, watcher, window))
    panels.inspector = build_panel(errors, "inspector", lambda: InspectorPanel(engine, bridge))
    panels.memory_view = build_panel(errors, "memory", lambda: MemoryView(engine, bridge, panels.sync))
    panels.files_view = build_panel(errors, "workspace files", lambda: WorkspaceFilesView(engine, bridge, panels.sync))
    panels.heartbeat_view = build_panel(errors, "heartbeat", lambda: HeartbeatView(engine, bridge))
    panels.cron_view = build_panel(errors, "scheduled jobs", lambda: CronView(engine, bridge))
    panels.subagents_view = build_panel(errors, "subagents", lambda: SubagentsView(engine, bridge))

    panels.docks["sessionsDock"] = add_dock(window, actions, sessions_panel, "sessionsDock",
                                            Qt.DockWidgetArea.LeftDockWidgetArea, "Ctrl+1")
    window.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
    window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
    panels.first_right_dock = _add_tabbed(window, actions, panels, RIGHT_DOCKS, Qt.DockWidgetArea.RightDockWidgetArea)
    _add_tabbed(window, actions, panels, BOTTOM_DOCKS, Qt.DockWidgetArea.BottomDockWidgetArea)
    for name, _attribute, _shortcut in BOTTOM_DOCKS:
        if name in panels.docks:
            panels.docks[name].hide()
    for area in (Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea):
        window.setTabPosition(area, QTabWidget.TabPosition.North)
    window.setDockNestingEnabled(True)
    if panels.files_view is not None and hasattr(panels.files_view, "skills_view"):
        action = QAction("Skills", window)  # skills live in the Workspace panel's second tab
        action.setObjectName("action_show_skills")
        action.setToolTip("Show the skills manager (in the Workspace panel)")
        action.triggered.connect(show_skills)
        actions.add_dock_toggle("skills", action)
    return panels


def _add_tabbed(window: QMainWindow, actions: ActionRegistry, panels: Panels,
                specs: tuple[tuple[str, str, str], ...], area: Qt.DockWidgetArea) -> QDockWidget | None:
    first: QDockWidget | None = None
    for name, attribute, shortcut in specs:
        panel = getattr(panels, attribute)
        if panel is None:
            continue
        dock = add_dock(window, actions, panel, name, area, shortcut)
        panels.docks[name] = dock
        if first is None:
            first = dock
        else:
            window.tabifyDockWidget(first, dock)
    if first is not None:
        first.raise_()
    return first


def add_dock(window: QMainWindow, actions: ActionRegistry, panel: QWidget, name: str, area: Qt.DockWidgetArea,
             shortcut: str | None) -> QDockWidget:
    """Dock `panel` (titled by its `panel_title`) and register its show/hide action."""
    title = getattr(panel, "panel_title", name)
    dock = QDockWidget(title, window)
    dock.setObjectName(name)
    if area != Qt.DockWidgetArea.LeftDockWidgetArea:
        # Tabified docks share one size, which would be the largest panel's minimum: a scroll
        # area lets a wide panel scroll instead of squeezing the chat.
        holder = QScrollArea()
        holder.setObjectName(f"{name}Scroller")
        holder.setWidgetResizable(True)
        holder.setFrameShape(QFrame.Shape.NoFrame)
        holder.setWidget(panel)
        dock.setWidget(holder)
    else:
        dock.setWidget(panel)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable
                     | QDockWidget.DockWidgetFeature.DockWidgetMovable
                     | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
    window.addDockWidget(area, dock)
    toggle = dock.toggleViewAction()
    toggle.setText(title)
    toggle.setToolTip(f"Show or hide the {title} panel")
    actions.add_dock_toggle(name, toggle, shortcut)
    return dock
