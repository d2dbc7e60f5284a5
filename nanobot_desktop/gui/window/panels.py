"""The one table of the window's dock panels, and building them after the first paint.

Adding a panel is one `PanelSpec` in `PANELS`: its name (the window's attribute, `window.<name>`),
its objectName, title, place, shortcut, a label for error messages, and a factory that imports its
module on demand. The docks, the pages, the View and Agent menus' toggles, the build order, the
window's attribute and the shutdown all read the table. The place says where it goes (issue 26:
the conversation owns the centre): DRAWER, a dock of the right-hand drawer that is closed until
asked for; PAGE, a page in the window's centre in place of the chat (window/pages.py); AGENT, a
page of the one Agent area (window/agent_area.py), itself a centre page — never a dock over the chat.

Start-up cost: the docks are created first as empty shells, so the window can restore its saved
layout and paint at once; the panels, whose modules take ~0.2 s to import, are built into them right
after the first paint, one per event-loop turn (`LazyPanels`), or at once when something asks for
one. A panel nobody can see then (its dock hidden or a tab behind another, its page not the one
shown) is built when it is first shown instead: an empty window does not hold the widgets, models
and modules of panels the person has not opened (issue 17's memory budget). A panel that fails to
build is logged and replaced by a line saying why, with its error kept for the window to show: the
chat must keep working even if, say, the cron view cannot read a broken jobs.json.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Callable, NamedTuple, Protocol, TypeVar, runtime_checkable

from PySide6.QtCore import QT_TRANSLATE_NOOP, QObject, Qt
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QScrollArea, QWidget

from nanobot_desktop.gui.common.i18n import translate

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from PySide6.QtCore import SignalInstance

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge
    from nanobot_desktop.gui.window.tray import TrayController
    from nanobot_desktop.gui.workspace.sync import WorkspaceSync
    from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher

log = logging.getLogger(__name__)


# NamedTuples, not dataclasses: this module is imported before the first paint, and `dataclasses`
# (with `copy`, `inspect` work per class) costs ~1.5 ms there.
class PanelContext(NamedTuple):
    """What a panel factory may use: the engine, its Qt bridge and hot reload (WorkspaceSync, or None)."""

    engine: Engine
    bridge: EngineBridge
    sync: WorkspaceSync | None
    record: QObject | None = None
    """What the panel's `recorder` has kept since the window got its engine (see PanelSpec), or None."""


# What the window knows of a panel: it is a QWidget (`MainWindow.panel(name)`); what else it can do is
# a capability, checked with isinstance against these Protocols (never hasattr), so the wiring is typed.


@runtime_checkable
class FollowsSession(Protocol):
    """Shows something about the session in the chat: told each time another one is shown."""

    def set_session(self, key: str) -> None: ...


@runtime_checkable
class OpensSessions(Protocol):
    """Can ask the window to show a session (a heartbeat run, a job's last session)."""

    @property
    def open_session_requested(self) -> SignalInstance: ...


@runtime_checkable
class StartsChats(Protocol):
    """Can ask the window for a new chat."""

    @property
    def new_chat_requested(self) -> SignalInstance: ...


@runtime_checkable
class ShutsDown(Protocol):
    """Has work to stop when the app quits (a thread, a watcher, a task); awaited if it is a coroutine."""

    def shutdown(self) -> Awaitable[None] | None: ...


PanelT = TypeVar("PanelT", bound=QWidget)


class PageHolder(Protocol):
    """Where PAGE and AGENT panels go: the window's CentralPages and its AgentArea (a Protocol: both
    modules read this table)."""

    @property
    def page_changed(self) -> SignalInstance: ...

    def page_name(self) -> str: ...

    def set_page_widget(self, name: str, widget: QWidget) -> None: ...


DRAWER = "drawer"
"""A dock of the right-hand drawer: beside the chat, opened on demand."""
PAGE = "page"
"""A page in the window's centre, in place of the chat (it needs the chat's width)."""
AGENT = "agent"
"""A page of the Agent area (one centre page with a side list of pages)."""


class PanelSpec(NamedTuple):
    """One panel of the window (see the module docstring)."""

    name: str
    dock: str
    """The dock's objectName (for a page: the page's); also its toggle action's name."""
    title: str
    place: str
    """DRAWER, PAGE or AGENT."""
    shortcut: str
    label: str
    factory: Callable[[PanelContext], QWidget]
    recorder: Callable[[Engine, EngineBridge, QObject], QObject] | None = None
    """For a panel that shows what happened since the start (the inspector's timeline of this run's
    calls): makes, with the window's engine and before the first turn, what records it (parented to
    the window). The panel itself is built when first shown, like the others, and gets the record in
    its context: an empty window holds the record, not the panel's widgets and modules (1.3 MB)."""


def _inspector_timeline(engine: Engine, bridge: EngineBridge, parent: QObject) -> QObject:
    from nanobot_desktop.gui.inspector.model import TimelineModel

    return TimelineModel.recording(bridge, parent)


def _inspector(context: PanelContext) -> QWidget:
    from nanobot_desktop.gui.inspector.model import TimelineModel
    from nanobot_desktop.gui.inspector.panel import InspectorPanel

    timeline = context.record if isinstance(context.record, TimelineModel) else None
    return InspectorPanel(context.engine, context.bridge, timeline=timeline)


def _memory(context: PanelContext) -> QWidget:
    from nanobot_desktop.gui.workspace.memory_view import MemoryView

    return MemoryView(context.engine, context.bridge, context.sync)


def _workspace_files(context: PanelContext) -> QWidget:
    from nanobot_desktop.gui.workspace.files_view import WorkspaceFilesView

    return WorkspaceFilesView(context.engine, context.bridge, context.sync)


def _heartbeat(context: PanelContext) -> QWidget:
    from nanobot_desktop.gui.background.heartbeat_view import HeartbeatView

    return HeartbeatView(context.engine, context.bridge)


def _cron(context: PanelContext) -> QWidget:
    from nanobot_desktop.gui.background.cron_view import CronView

    return CronView(context.engine, context.bridge)


def _subagents(context: PanelContext) -> QWidget:
    from nanobot_desktop.gui.background.subagents_view import SubagentsView

    return SubagentsView(context.engine, context.bridge)


def _mcp(context: PanelContext) -> QWidget:
    from nanobot_desktop.gui.background.mcp_view import McpView

    return McpView(context.engine, context.bridge)


def _usage(context: PanelContext) -> QWidget:
    from nanobot_desktop.gui.background.usage_view import UsageView

    return UsageView(context.engine, context.bridge)


# In build order after the first paint (a panel nobody can see is set aside until it is shown). The
# drawer's docks are tabbed together in this order; the Agent area lists its pages in this order.
# The session list (left, Ctrl+1) is not in the table: it is part of the window's frame and built
# with the engine. Adding a page to the Agent area (Usage) is one line here.
def _title(marked: object) -> str:
    """A panel's English title, marked for lupdate; shown as `translate("Panels", title)` (docks, pages, View menu)."""
    return str(marked)


PANELS: tuple[PanelSpec, ...] = (
    PanelSpec("inspector", "inspectorDock", _title(QT_TRANSLATE_NOOP("Panels", "Inspector")), DRAWER, "Ctrl+2", "inspector", _inspector,
              recorder=_inspector_timeline),
    PanelSpec("memory_view", "memoryPage", _title(QT_TRANSLATE_NOOP("Panels", "Memory")), PAGE, "Ctrl+3", "memory", _memory),
    PanelSpec("files_view", "workspaceDock", _title(QT_TRANSLATE_NOOP("Panels", "Workspace")), DRAWER, "Ctrl+4", "workspace files",
              _workspace_files),
    PanelSpec("heartbeat_view", "heartbeatPage", _title(QT_TRANSLATE_NOOP("Panels", "Heartbeat")), AGENT, "Ctrl+5", "heartbeat",
              _heartbeat),
    PanelSpec("cron_view", "scheduledPage", _title(QT_TRANSLATE_NOOP("Panels", "Scheduled")), AGENT, "Ctrl+6", "scheduled jobs", _cron),
    PanelSpec("subagents_view", "subagentsPage", _title(QT_TRANSLATE_NOOP("Panels", "Subagents")), AGENT, "Ctrl+7", "subagents",
              _subagents),
    PanelSpec("mcp_view", "mcpPage", "MCP", AGENT, "Ctrl+8", "MCP servers", _mcp),
    PanelSpec("usage_view", "usagePage", _title(QT_TRANSLATE_NOOP("Panels", "Usage")), AGENT, "Ctrl+9", "usage", _usage),
)
PANELS_BY_NAME = {spec.name: spec for spec in PANELS}
DRAWER_PANELS = tuple(spec for spec in PANELS if spec.place == DRAWER)
"""The panels of the right-hand drawer (docks, tabbed together, closed at first start), in tab order."""
PAGES = tuple(spec for spec in PANELS if spec.place == PAGE)
"""The panels shown as pages in the window's centre, beside the chat (in tab order)."""
AGENT_PAGES = tuple(spec for spec in PANELS if spec.place == AGENT)
"""The pages of the Agent area (in its side list's order)."""
SESSIONS_DOCK = "sessionsDock"
AGENT_AREA = "agent"
"""The centre page that holds the Agent area (CentralPages' name for it)."""
AGENT_TITLE = _title(QT_TRANSLATE_NOOP("Panels", "Agent"))
DOCK_TITLES = {SESSIONS_DOCK: _title(QT_TRANSLATE_NOOP("Panels", "Sessions")),
               **{spec.dock: spec.title for spec in DRAWER_PANELS}}
"""Every dock's title, known before any panel module is imported (a test checks they agree)."""


# The names of the two parts built like panels that have no dock, for "Some panels could not be loaded".
_HOT_RELOAD = QT_TRANSLATE_NOOP("Panels", "Hot reload")
_TRAY_ICON = QT_TRANSLATE_NOOP("Panels", "Tray icon")


BuiltT = TypeVar("BuiltT")


def build_panel(errors: list[str], label: str, factory: Callable[[], BuiltT], shown_as: str) -> tuple[BuiltT | None, str]:
    """(`factory()`, ""), or (None, why) with "<shown_as>: why" appended to `errors` (one broken panel must
    not take the chat). `shown_as` is the panel's name as the window shows it, in the UI language; the log
    says `label`."""
    try:
        return factory(), ""
    except Exception as error:
        log.exception("the %s panel could not be built", label)
        errors.append(translate("Panels", "{name}: {why}").format(name=shown_as, why=error))
        return None, str(error)


def set_dock_panel(dock: QDockWidget, panel: QWidget) -> None:
    """Put `panel` into `dock`, in place of its placeholder (inside the dock's scroll area, if it has one)."""
    holder = dock.widget()
    if isinstance(holder, QScrollArea):
        holder.setWidget(panel)  # deletes the placeholder
    else:
        dock.setWidget(panel)


def failure_label(title: str, object_name: str, why: str) -> QLabel:
    """What a dock or page shows instead of a panel that could not be built."""
    failure = QLabel(translate("Panels", "The {title} panel could not be loaded: {why}").format(
        title=translate("Panels", title), why=why))
    failure.setObjectName(f"{object_name}Error")
    failure.setWordWrap(True)
    failure.setTextFormat(Qt.TextFormat.PlainText)
    failure.setContentsMargins(8, 8, 8, 8)
    failure.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    return failure


class LazyPanels:
    """The panels built after the first paint: hot reload (WorkspaceSync), the dock panels, the tray.

    `build_next()` builds one (the window calls it once per event-loop turn after its first paint),
    or sets it aside while it cannot be seen; a set-aside panel is built when its dock or page is
    shown. `get(name)` returns one, building it (and every start-up one) first, so a caller never
    sees a panel that is still to come as missing. `on_built(name, panel)` runs for each panel that
    was built, and `on_all_built()` once, after the start-up ones.
    """

    def __init__(self, window: QMainWindow, engine: Engine, bridge: EngineBridge, watcher: WorkspaceWatcher,
                 docks: dict[str, QDockWidget], make_tray: Callable[[], TrayController] | None,
                 on_built: Callable[[str, QObject], None], on_all_built: Callable[[], None],
                 pages: PageHolder | None = None, agent: PageHolder | None = None) -> None:
        """`pages` is the window's CentralPages, where the PAGE panels go; `agent` its AgentArea (AGENT panels)."""
        self.built: dict[str, QWidget | None] = {}
        """Name -> panel of PANELS (None if it failed) for what has been built so far; see `get` for the rest."""
        self.sync: WorkspaceSync | None = None
        """Hot reload, once built (None before, or if it failed)."""
        self.tray: TrayController | None = None
        """The tray icon, once built (None before, without a tray, or if it failed)."""
        self.errors: list[str] = []
        """Panels that could not be built, with why (the window still works without them)."""
        self.records: dict[str, QObject] = {spec.name: spec.recorder(engine, bridge, window)
                                            for spec in PANELS if spec.recorder is not None}
        """Name -> what a panel with a `recorder` keeps until (and after) it is built."""
        self._window, self._engine, self._bridge, self._watcher, self._docks = window, engine, bridge, watcher, docks
        self._pages = pages
        self._agent = agent
        self._make_tray = make_tray
        self._on_built = on_built
        self._on_all_built = on_all_built
        # The first panel (the pane a default layout shows), then hot reload, which the memory and
        # workspace panels need, then the rest.
        names = [spec.name for spec in PANELS]
        self._pending = names[:1] + ["sync"] + names[1:] + (["tray"] if make_tray is not None else [])
        self._unseen: list[str] = []
        """Panels set aside because nobody could see them; each is built when first shown."""
        for spec in DRAWER_PANELS:
            docks[spec.dock].visibilityChanged.connect(
                lambda visible, name=spec.name: self._build_unseen(name) if visible else None)
        if pages is not None:
            pages.page_changed.connect(self._on_page_changed)
        if agent is not None:
            agent.page_changed.connect(self._on_page_changed)

    @property
    def pending(self) -> bool:
        """Whether start-up building is still going on (panels set aside until shown do not count)."""
        return bool(self._pending)

    def get(self, name: str) -> QWidget | None:
        """The panel of PANELS called `name`, built now if it is still to come; None if it failed."""
        self._ensure(name)
        return self.built.get(name)

    def get_as(self, name: str, kind: type[PanelT]) -> PanelT | None:
        """`get(name)` when it is a `kind` (the panel's own class, for calling what only it has)."""
        panel = self.get(name)
        return panel if isinstance(panel, kind) else None

    def get_tray(self) -> TrayController | None:
        self._ensure("tray")
        return self.tray

    def get_sync(self) -> WorkspaceSync | None:
        self._ensure("sync")
        return self.sync

    def _ensure(self, name: str) -> None:
        if name in self._pending:
            self._build_startup()
        self._build_unseen(name)

    def build_all(self) -> None:
        """Every panel, the set-aside ones too."""
        self._build_startup()
        for name in list(self._unseen):
            self._build_unseen(name)

    def _build_startup(self) -> None:
        while self._pending:
            self.build_next()

    def cancel(self) -> None:
        """Build nothing more (shutting down)."""
        self._pending.clear()
        self._unseen.clear()

    def build_next(self) -> None:
        if not self._pending:
            return
        name = self._pending.pop(0)
        if name in PANELS_BY_NAME and not self._can_be_seen(PANELS_BY_NAME[name]):
            self._unseen.append(name)
        else:
            self._build(name)
        if not self._pending:
            self._on_all_built()

    def _can_be_seen(self, spec: PanelSpec) -> bool:
        """Whether the person can see the panel's place now (a tabbed dock behind another is not visible)."""
        if not self._window.isVisible():
            return True  # not on screen (minimised, started hidden): nothing to judge by, build as before
        if spec.place == PAGE:
            return self._pages is None or self._pages.page_name() == spec.name
        if spec.place == AGENT:
            return self._pages is None or self._agent is None or (
                self._pages.page_name() == AGENT_AREA and self._agent.page_name() == spec.name)
        return self._docks[spec.dock].isVisible()

    def _on_page_changed(self, name: str) -> None:
        if name == AGENT_AREA and self._agent is not None:
            name = self._agent.page_name()
        elif name in PANELS_BY_NAME and PANELS_BY_NAME[name].place == AGENT and self._pages is not None \
                and self._pages.page_name() != AGENT_AREA:
            return  # the Agent area's page changed while the area is not shown
        self._build_unseen(name)

    def _build_unseen(self, name: str) -> None:
        if name in self._unseen:
            self._unseen.remove(name)
            self._build(name)

    def _build(self, name: str) -> None:
        if name == "sync":
            self.sync, _why = build_panel(self.errors, "workspace sync", self._make_sync, translate("Panels", _HOT_RELOAD))
            return
        if name == "tray":
            assert self._make_tray is not None
            self.tray, _why = build_panel(self.errors, "tray", self._make_tray, translate("Panels", _TRAY_ICON))
            if self.tray is not None:
                self._on_built(name, self.tray)
            return
        panel = self._build_into_dock(PANELS_BY_NAME[name])
        self.built[name] = panel
        if panel is not None:
            self._on_built(name, panel)

    def _make_sync(self) -> WorkspaceSync:
        """WorkspaceSync (hot reload for the editors and the session list); starts the watcher's thread."""
        from nanobot_desktop.gui.workspace.sync import WorkspaceSync

        return WorkspaceSync(self._engine, self._watcher, self._window)

    def _build_into_dock(self, spec: PanelSpec) -> QWidget | None:
        context = PanelContext(self._engine, self._bridge, self.sync, self.records.get(spec.name))
        panel, why = build_panel(self.errors, spec.label, lambda: spec.factory(context), translate("Panels", spec.title))
        shown = panel if panel is not None else failure_label(spec.title, spec.dock, why)
        if spec.place == PAGE and self._pages is not None:
            self._pages.set_page_widget(spec.name, shown)
        elif spec.place == AGENT and self._agent is not None:
            self._agent.set_page_widget(spec.name, shown)
        else:
            set_dock_panel(self._docks[spec.dock], shown)
        return panel
