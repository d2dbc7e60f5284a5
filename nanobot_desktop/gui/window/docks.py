"""Building the main window's panels and docks, and the central chat pane.

Where things go: sessions on the left (full height); the inspector and the workspace editors
(Memory, Workspace with its Skills tab) tabbed on the right, beside the chat; the background work
(Heartbeat, Scheduled, Subagents) tabbed below the chat and hidden until asked for, so the chat
keeps its room. Every dock has a show/hide action in the registry (the View menu lists them).

Start-up cost: the docks are created first as empty shells (objectName, title, View-menu toggle,
place), so the window can restore its saved layout and paint at once; the panels, whose modules
take ~0.2 s to import, are built into them right after the first paint, one per event-loop turn
(`LazyPanels`, driven by MainWindow._build_next_panel), or at once when something asks for one.

A panel that fails to build is logged and replaced by a line saying why, with its error kept for the
window to show: the chat must keep working even if, say, the cron view cannot read a broken jobs.json.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (QDockWidget, QFrame, QLabel, QMainWindow, QScrollArea, QTabWidget, QVBoxLayout,
                               QWidget)

from nanobot_desktop.gui.window.actions import ActionRegistry
from nanobot_desktop.gui.chat.view import ChatView
from nanobot_desktop.gui.chat.composer import Composer
from nanobot_desktop.gui.common.notice_bar import NoticeBar

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

log = logging.getLogger(__name__)

RIGHT_DOCKS = (("inspectorDock", "inspector", "Ctrl+2"), ("memoryDock", "memory_view", "Ctrl+3"),
               ("workspaceDock", "files_view", "Ctrl+4"))
BOTTOM_DOCKS = (("heartbeatDock", "heartbeat_view", "Ctrl+5"), ("scheduledDock", "cron_view", "Ctrl+6"),
                ("subagentsDock", "subagents_view", "Ctrl+7"), ("mcpDock", "mcp_view", "Ctrl+8"))
# The panels' `panel_title`s, known before their modules are imported (tests check they agree).
DOCK_TITLES = {"sessionsDock": "Sessions", "inspectorDock": "Inspector", "memoryDock": "Memory",
               "workspaceDock": "Workspace", "heartbeatDock": "Heartbeat", "scheduledDock": "Scheduled",
               "subagentsDock": "Subagents", "mcpDock": "MCP"}
# attribute -> (dock objectName, label in error messages), in the order they are built after the
# first paint: what a default layout shows first; the hidden bottom docks last.
PANEL_DOCKS = {"inspector": ("inspectorDock", "inspector"), "memory_view": ("memoryDock", "memory"),
               "files_view": ("workspaceDock", "workspace files"), "heartbeat_view": ("heartbeatDock", "heartbeat"),
               "cron_view": ("scheduledDock", "scheduled jobs"), "subagents_view": ("subagentsDock", "subagents"),
               "mcp_view": ("mcpDock", "MCP servers")}


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
    """The docks by objectName, built up front; the panels in them arrive later (see build_panel_for)."""

    docks: dict[str, QDockWidget] = field(default_factory=dict)
    first_right_dock: QDockWidget | None = None


def build_panel(errors: list[str], label: str, factory: Callable[[], Any]) -> Any:
    try:
        return factory()
    except Exception as error:  # one broken panel must not take the chat with it
        log.exception("the %s panel could not be built", label)
        errors.append(f"{label}: {error}")
        return None


def build_dock_shells(window: QMainWindow, actions: ActionRegistry, sessions_panel: QWidget,
                      show_skills: Callable[[], None]) -> Panels:
    """Dock the session list and create every other dock empty, in its place, with its toggle action."""
    panels = Panels()
    panels.docks["sessionsDock"] = add_dock(window, actions, sessions_panel, "sessionsDock",
                                            Qt.DockWidgetArea.LeftDockWidgetArea, "Ctrl+1")
    window.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
    window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
    panels.first_right_dock = _add_tabbed(window, actions, panels, RIGHT_DOCKS, Qt.DockWidgetArea.RightDockWidgetArea)
    _add_tabbed(window, actions, panels, BOTTOM_DOCKS, Qt.DockWidgetArea.BottomDockWidgetArea)
    for name, _attribute, _shortcut in BOTTOM_DOCKS:
        panels.docks[name].hide()
    for area in (Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea):
        window.setTabPosition(area, QTabWidget.TabPosition.North)
    window.setDockNestingEnabled(True)
    action = QAction("Skills", window)  # skills live in the Workspace panel's second tab
    action.setObjectName("action_show_skills")
    action.setToolTip("Show the skills manager (in the Workspace panel)")
    action.triggered.connect(show_skills)
    actions.add_dock_toggle("skills", action)
    return panels


def make_sync(window: QMainWindow, engine: Engine, watcher: Any) -> Any:
    """WorkspaceSync (hot reload for the editors and the session list); starts the watcher's thread."""
    from nanobot_desktop.gui.workspace.sync import WorkspaceSync

    return WorkspaceSync(engine, watcher, window)


def make_panel(attribute: str, engine: Engine, bridge: Any, sync: Any) -> QWidget:
    """The panel that goes into PANEL_DOCKS[attribute]'s dock (its module is imported here, on demand)."""
    if attribute == "inspector":
        from nanobot_desktop.gui.inspector.panel import InspectorPanel

        return InspectorPanel(engine, bridge)
    if attribute == "memory_view":
        from nanobot_desktop.gui.workspace.memory_view import MemoryView

        return MemoryView(engine, bridge, sync)
    if attribute == "files_view":
        from nanobot_desktop.gui.workspace.files_view import WorkspaceFilesView

        return WorkspaceFilesView(engine, bridge, sync)
    if attribute == "heartbeat_view":
        from nanobot_desktop.gui.background.heartbeat_view import HeartbeatView

        return HeartbeatView(engine, bridge)
    if attribute == "cron_view":
        from nanobot_desktop.gui.background.cron_view import CronView

        return CronView(engine, bridge)
    if attribute == "subagents_view":
        from nanobot_desktop.gui.background.subagents_view import SubagentsView

        return SubagentsView(engine, bridge)
    if attribute == "mcp_view":
        from nanobot_desktop.gui.background.mcp_view import McpView

        return McpView(engine, bridge)
    raise KeyError(attribute)


def build_panel_for(attribute: str, docks: dict[str, QDockWidget], errors: list[str], engine: Engine, bridge: Any,
                    sync: Any) -> Any:
    """Build one panel into its (already placed) dock; None, and a line saying why in the dock, if it failed."""
    name, label = PANEL_DOCKS[attribute]
    panel = build_panel(errors, label, lambda: make_panel(attribute, engine, bridge, sync))
    dock = docks[name]
    if panel is None:
        failure = QLabel(f"The {dock.windowTitle()} panel could not be loaded: {errors[-1].split(': ', 1)[-1]}")
        failure.setObjectName(f"{name}Error")
        failure.setWordWrap(True)
        failure.setTextFormat(Qt.TextFormat.PlainText)
        failure.setContentsMargins(8, 8, 8, 8)
        failure.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        set_dock_panel(dock, failure)
    else:
        set_dock_panel(dock, panel)
    return panel


class LazyPanels:
    """The panels built after the first paint: hot reload (WorkspaceSync), the six dock panels, the tray.

    `build_next()` builds one (the window calls it once per event-loop turn after its first paint);
    `get(name)` returns one, building every pending one first, so a caller never sees a panel that
    is still to come as missing. `on_built(name, panel)` runs for each panel that was built, and
    `on_all_built()` once, after the last.
    """

    def __init__(self, window: QMainWindow, engine: Engine, bridge: Any, watcher: Any, docks: dict[str, QDockWidget],
                 make_tray: Callable[[], Any] | None, on_built: Callable[[str, Any], None],
                 on_all_built: Callable[[], None]) -> None:
        self.built: dict[str, Any] = {}
        """Name -> panel (None if it failed) for what has been built so far; see `get` for the rest."""
        self.errors: list[str] = []
        """Panels that could not be built, with why (the window still works without them)."""
        self._window, self._engine, self._bridge, self._watcher, self._docks = window, engine, bridge, watcher, docks
        self._make_tray = make_tray
        self._on_built = on_built
        self._on_all_built = on_all_built
        # The inspector first (the pane a default layout shows), then hot reload, which the memory
        # and workspace panels need, then the rest.
        panels = list(PANEL_DOCKS)
        self._pending = panels[:1] + ["sync"] + panels[1:] + (["tray"] if make_tray is not None else [])

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def get(self, name: str) -> Any:
        if name in self._pending:
            self.build_all()
        return self.built.get(name)

    def build_all(self) -> None:
        while self._pending:
            self.build_next()

    def cancel(self) -> None:
        """Build nothing more (shutting down)."""
        self._pending.clear()

    def build_next(self) -> None:
        if not self._pending:
            return
        name = self._pending.pop(0)
        if name == "sync":
            panel = build_panel(self.errors, "workspace sync",
                                lambda: make_sync(self._window, self._engine, self._watcher))
        elif name == "tray":
            assert self._make_tray is not None
            panel = build_panel(self.errors, "tray", self._make_tray)
        else:
            panel = build_panel_for(name, self._docks, self.errors, self._engine, self._bridge, self.built.get("sync"))
        self.built[name] = panel
        if panel is not None:
            self._on_built(name, panel)
        if not self._pending:
            self._on_all_built()


def _add_tabbed(window: QMainWindow, actions: ActionRegistry, panels: Panels,
                specs: tuple[tuple[str, str, str], ...], area: Qt.DockWidgetArea) -> QDockWidget | None:
    first: QDockWidget | None = None
    for name, _attribute, shortcut in specs:
        dock = add_dock(window, actions, None, name, area, shortcut)
        panels.docks[name] = dock
        if first is None:
            first = dock
        else:
            window.tabifyDockWidget(first, dock)
    if first is not None:
        first.raise_()
    return first


class PanelPlaceholder(QWidget):
    """Stands in for a panel until it is built (a blank pane, for a moment after the first paint).

    Its size hint is larger than a scroll area passes on, so the dock asks for the same size as it
    does with any real panel in it: a hidden dock area remembers the size it was laid out with, and
    an empty shell would otherwise open later as a thin strip.
    """

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(420, 2000)


def set_dock_panel(dock: QDockWidget, panel: QWidget) -> None:
    """Put `panel` into `dock`, in place of its placeholder (inside the dock's scroll area, if it has one)."""
    holder = dock.widget()
    if isinstance(holder, QScrollArea):
        holder.setWidget(panel)  # deletes the placeholder
    else:
        dock.setWidget(panel)


def add_dock(window: QMainWindow, actions: ActionRegistry, panel: QWidget | None, name: str,
             area: Qt.DockWidgetArea, shortcut: str | None) -> QDockWidget:
    """A dock titled DOCK_TITLES[name] (else the panel's `panel_title`), holding `panel`, or a
    PanelPlaceholder until `set_dock_panel`, with its show/hide action registered."""
    title = DOCK_TITLES.get(name) or str(getattr(panel, "panel_title", name))
    dock = QDockWidget(title, window)
    dock.setObjectName(name)
    if area != Qt.DockWidgetArea.LeftDockWidgetArea:
        # Tabified docks share one size, which would be the largest panel's minimum: a scroll
        # area lets a wide panel scroll instead of squeezing the chat.
        holder = QScrollArea()
        holder.setObjectName(f"{name}Scroller")
        holder.setWidgetResizable(True)
        holder.setFrameShape(QFrame.Shape.NoFrame)
        holder.setWidget(panel if panel is not None else PanelPlaceholder())
        dock.setWidget(holder)
    elif panel is not None:
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
