"""The window's layout: the chat keeps a usable width and the docks give way first; a saved layout is
checked against the screen it is restored on; View → Reset layout; the centre's pages; the drawer.

A part MainWindow owns (window/base.py says what each part is given).

- **Docks give way.** Below the width where the session list, the right-hand panels and a usable chat
  all fit, the right-hand panels are hidden, then the session list; they come back when the window
  is wide enough again. Above it, a chat narrower than its usable width takes room from the docks,
  down to their own usable widths. Widths are in characters of the window's font, so they hold at
  any scale.
- **Restored layouts are checked.** Qt restores dock sizes as saved: a layout saved on a small or
  scaled screen (QT_SCALE_FACTOR=2 leaves a 70 px session list) would come back unusable. Docks
  below their usable width get their first-start width again, and a layout saved at another scale
  keeps which docks are shown and where, but not their sizes.
- **Pages.** While a page (Memory, the Agent area) is shown, every docked panel steps aside so the
  page has the whole width; going back to the chat brings the layout back as it was. Each Agent page
  (Heartbeat, Scheduled, …) has its own toggle, which opens the Agent area at that page.
- **The drawer.** The right-hand docks (inspector, workspace) are closed on a first start; the drawer
  toggle (toolbar, Ctrl+Shift+D) opens the one shown last, or closes whichever are open.
- **Older layouts.** Layouts saved before the drawer and the Agent area (state version 1: bottom
  docks, an open inspector) are not restored: the window starts from the new first-start layout,
  keeping only its geometry, checked against the screen.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMainWindow

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.actions import text_action
from nanobot_desktop.gui.window.base import Frame
from nanobot_desktop.gui.window.pages import CHAT_PAGE
from nanobot_desktop.gui.window.panels import (
    AGENT_AREA, AGENT_PAGES, AGENT_TITLE, DRAWER_PANELS, PAGES, PANELS_BY_NAME, SESSIONS_DOCK,
)

GEOMETRY_KEY = "mainWindow/geometry"
STATE_KEY = "mainWindow/state"
SCALE_KEY = "mainWindow/scale"
GIVEN_WAY_KEY = "mainWindow/givenWay"
STATE_VERSION = 2
"""1: before issue 26 (bottom docks, inspector open); 2: drawer closed at first start, the Agent area."""
AGENT_SHORTCUT = "Ctrl+Shift+G"  # Ctrl+Shift+A is "go to the waiting approval" (window/access.py)
DRAWER_SHORTCUT = "Ctrl+Shift+D"

# Widths in average characters of the window's font (6–7 px each at 1x).
CHAT_MIN_CHARS = 70  # a readable line of chat
SESSIONS_MIN_CHARS = 30  # a session title and its time
RIGHT_MIN_CHARS = 60  # the inspector's columns without their headers split mid-word
SESSIONS_DEFAULT_CHARS = 42  # the first-start widths
RIGHT_DEFAULT_CHARS = 68
DEFAULT_SIZE = (1200, 780)

Area = Qt.DockWidgetArea


class DockLayout:
    """Dock widths, giving way, restoring and resetting, the pages and the drawer of one window."""

    def __init__(self, frame: Frame, first_right_dock: QDockWidget | None) -> None:
        """Call once the docks exist, before the saved layout is restored (`restore_layout`)."""
        self._window: QMainWindow = frame.window
        self._docks = frame.docks
        self._pages = frame.pages
        self._agent_area = frame.agent_area
        self._actions = frame.actions
        self._store = frame.store
        self._first_right_dock = first_right_dock
        self._default_state: QByteArray = self._window.saveState(STATE_VERSION)
        self._given_way: list[QDockWidget] = []
        self._page_state: QByteArray | None = None
        self.page_actions: dict[str, QAction] = {}
        """The checkable toggle of each page and Agent page, and of the Agent area itself."""
        pages = [(spec.name, spec.dock, spec.title, spec.shortcut) for spec in (*PAGES, *AGENT_PAGES)]
        for name, object_name, title, shortcut in [*pages, (AGENT_AREA, "agentPage", AGENT_TITLE, AGENT_SHORTCUT)]:
            shown_title = translate("Panels", title)
            action = text_action(shown_title, self._window)
            action.setObjectName(f"action_page_{name}")
            action.setCheckable(True)
            action.setToolTip(translate("Panels", "Show the {title} page in place of the chat (again: back to the chat)")
                              .format(title=shown_title))
            action.toggled.connect(lambda on, name=name: self.show_page(name if on else CHAT_PAGE))
            self._actions.add_dock_toggle(object_name, action, shortcut)
            self.page_actions[name] = action
        self._last_drawer = DRAWER_PANELS[0].dock
        self.drawer_action = text_action(translate("Panels", "Drawer"), self._window)
        self.drawer_action.setObjectName("action_toggle_drawer")
        self.drawer_action.setCheckable(True)
        self.drawer_action.setToolTip(translate("Panels", "Open or close the drawer: inspector, files and skills ({shortcut})")
                                      .format(shortcut=DRAWER_SHORTCUT))
        self.drawer_action.triggered.connect(self.toggle_drawer)
        self._actions.add_dock_toggle("drawer", self.drawer_action, DRAWER_SHORTCUT)
        self._pages.page_changed.connect(self._on_page_changed)
        self._agent_area.page_changed.connect(lambda _name: self._on_page_changed(self._pages.page_name()))
        self._actions.reset_layout.triggered.connect(self.reset_layout)
        for dock in self._docks.values():  # a dock shown from the View menu must not squeeze the chat either
            dock.visibilityChanged.connect(self.schedule_balance)
        for spec in DRAWER_PANELS:
            self._docks[spec.dock].visibilityChanged.connect(self._on_drawer_visibility)

    # --- the drawer ----------------------------------------------------------------------------------

    def _drawer_docks(self) -> list[QDockWidget]:
        return [self._docks[spec.dock] for spec in DRAWER_PANELS]

    def drawer_open(self) -> bool:
        """Whether any of the drawer's docks is open (docked or floating)."""
        return any(not dock.isHidden() for dock in self._drawer_docks())

    def toggle_drawer(self) -> None:
        """Close the drawer's open docks, or open the one shown last (the inspector at first)."""
        if self.drawer_open():
            for dock in self._drawer_docks():
                if not dock.isHidden():
                    dock.hide()
        else:
            self.open_drawer(self._last_drawer)

    def open_drawer(self, dock_name: str) -> None:
        """Open the drawer at `dock_name` (a chat page comes back first: the drawer sits beside the chat)."""
        if self._pages.page_name() != CHAT_PAGE:
            self.show_page(CHAT_PAGE)
        dock = self._docks[dock_name]
        dock.show()
        dock.raise_()

    def _on_drawer_visibility(self, _visible: bool) -> None:
        for dock in self._drawer_docks():
            if not dock.isHidden() and not dock.visibleRegion().isEmpty():
                self._last_drawer = dock.objectName()
        self.drawer_action.blockSignals(True)
        self.drawer_action.setChecked(self.drawer_open())
        self.drawer_action.blockSignals(False)

    def schedule_balance(self, visible: bool = True) -> None:
        if visible and self._window.isVisible():
            QTimer.singleShot(0, self._window, self.balance_docks)

    # --- measures ----------------------------------------------------------------------------------

    def _chars(self, count: int) -> int:
        return count * self._window.fontMetrics().averageCharWidth()

    @property
    def chat_min_width(self) -> int:
        """The narrowest the chat gets while docks can still give way."""
        return self._chars(CHAT_MIN_CHARS)

    def usable_width(self, dock: QDockWidget) -> int:
        return self._chars(SESSIONS_MIN_CHARS if dock.objectName() == SESSIONS_DOCK else RIGHT_MIN_CHARS)

    def default_width(self, dock: QDockWidget) -> int:
        return self._chars(SESSIONS_DEFAULT_CHARS if dock.objectName() == SESSIONS_DOCK else RIGHT_DEFAULT_CHARS)

    def _side_groups(self) -> list[QDockWidget]:
        """One shown dock per side group (tabbed docks share a width): the session list, then the right."""
        groups: list[QDockWidget] = []
        for area in (Area.LeftDockWidgetArea, Area.RightDockWidgetArea):
            shown = [dock for dock in self._docks.values()
                     if self._window.dockWidgetArea(dock) == area and dock.isVisible() and not dock.isFloating()]
            # A tab that is not the current one counts as visible but sits outside the window, unsized.
            current = [dock for dock in shown if not dock.visibleRegion().isEmpty()]
            if current or shown:
                groups.append((current or shown)[0])
        return groups

    def _docked(self, area: Area) -> list[QDockWidget]:
        return [dock for dock in self._docks.values()
                if self._window.dockWidgetArea(dock) == area and not dock.isHidden() and not dock.isFloating()]

    # --- giving way --------------------------------------------------------------------------------

    def fit_docks_to_width(self, width: int | None = None) -> None:
        """Hide or bring back docks for a window `width` wide (now by default), so the chat stays usable."""
        if self._page_state is not None:
            return  # a page has the whole width; the layout comes back with the chat
        width = self._window.width() if width is None else width
        sessions = self._docks[SESSIONS_DOCK]
        chat = self.chat_min_width
        sessions_needs = self._chars(SESSIONS_MIN_CHARS) if (not sessions.isHidden() or sessions in self._given_way) else 0
        right_needs = self._chars(RIGHT_MIN_CHARS)
        right = self._docked(Area.RightDockWidgetArea)
        if right and width < sessions_needs + right_needs + chat:
            self._give_way(right)
        if not sessions.isHidden() and not sessions.isFloating() and width < sessions_needs + chat:
            self._give_way([sessions])
        if sessions in self._given_way and width >= sessions_needs + chat:
            self._come_back([sessions])
        waiting = [dock for dock in self._given_way if self._window.dockWidgetArea(dock) == Area.RightDockWidgetArea]
        if waiting and width >= sessions_needs + right_needs + chat:
            self._come_back(waiting)

    def _give_way(self, docks: list[QDockWidget]) -> None:
        # The tab in front first: it is the one raised when they come back.
        for dock in sorted(docks, key=lambda dock: dock.visibleRegion().isEmpty()):
            if dock not in self._given_way:
                self._given_way.append(dock)
            dock.hide()

    def _come_back(self, docks: list[QDockWidget]) -> None:
        for dock in docks:
            self._given_way.remove(dock)
            dock.show()
        for dock in docks[:1]:
            dock.raise_()

    def balance_docks(self) -> None:
        """After a layout pass: docks below their usable width get their first-start width, then a chat
        narrower than its usable width takes room from the docks (down to their usable widths)."""
        if self._page_state is not None or not self._window.isVisible():
            return
        groups = self._side_groups()
        widths = [dock.width() for dock in groups]
        for index, dock in enumerate(groups):
            if widths[index] < self.usable_width(dock):
                widths[index] = self.default_width(dock)
        chat_after = self._pages.width() + sum(dock.width() - width for dock, width in zip(groups, widths, strict=True))
        deficit = self.chat_min_width - chat_after
        for index in reversed(range(len(groups))):  # the right-hand panels give first
            if deficit <= 0:
                break
            spare = max(0, widths[index] - self.usable_width(groups[index]))
            taken = min(spare, deficit)
            widths[index] -= taken
            deficit -= taken
        sessions = self._docks[SESSIONS_DOCK]
        if deficit > 0 and len(groups) > 1 and groups[0] is sessions:
            # Even at their usable widths both sides leave the chat too little (a panel was opened in a
            # narrow window): the session list gives way to the panel just asked for.
            self._give_way([sessions])
            return
        if groups and widths != [dock.width() for dock in groups]:
            self._window.resizeDocks(groups, widths, Qt.Orientation.Horizontal)

    # --- saving, restoring, resetting ----------------------------------------------------------------

    def _screen_scale(self) -> float:
        screen = self._window.screen()
        return round(screen.devicePixelRatio(), 2) if screen is not None else 1.0

    def save_layout(self) -> None:
        """Geometry, dock state (as on the chat page, given-way docks shown) and the scale they were made at."""
        store = self._store
        store.setValue(GEOMETRY_KEY, self._window.saveGeometry())
        store.setValue(STATE_KEY, self._page_state if self._page_state is not None else self._window.saveState(STATE_VERSION))
        store.setValue(GIVEN_WAY_KEY, [dock.objectName() for dock in self._given_way])
        store.setValue(SCALE_KEY, self._screen_scale())

    def restore_layout(self) -> None:
        """The saved geometry and docks, checked: see the module docstring."""
        store = self._store
        geometry, state = store.value(GEOMETRY_KEY), store.value(STATE_KEY)
        if isinstance(geometry, QByteArray) and not geometry.isEmpty() and self._window.restoreGeometry(geometry):
            self._fit_geometry_to_screen()  # saved on a larger screen, or at a smaller scale
        else:
            self._window.resize(*self._first_start_size())
        restored = isinstance(state, QByteArray) and not state.isEmpty() and self._window.restoreState(state, STATE_VERSION)
        if not restored:
            self._apply_default_widths()
            return
        given_way = store.value(GIVEN_WAY_KEY, [], type=list)
        names = [str(name) for name in given_way] if isinstance(given_way, list) else []
        self._given_way = [self._docks[name] for name in names if name in self._docks and self._docks[name].isHidden()]
        try:
            saved_scale = float(str(store.value(SCALE_KEY, self._screen_scale())))
        except (TypeError, ValueError):
            saved_scale = 0.0
        if abs(saved_scale - self._screen_scale()) > 0.01:
            self._apply_default_widths()  # sizes made for another scale: keep where the docks are, not how wide

    def _first_start_size(self) -> tuple[int, int]:
        """DEFAULT_SIZE, or 90 % of a screen too small for it (QT_SCALE_FACTOR=2 on 1920×1080 leaves 960×540)."""
        screen = self._window.screen()
        if screen is None:
            return DEFAULT_SIZE
        available = screen.availableGeometry()
        return (min(DEFAULT_SIZE[0], int(available.width() * 0.9)), min(DEFAULT_SIZE[1], int(available.height() * 0.9)))

    def _fit_geometry_to_screen(self) -> None:
        screen = self._window.screen()
        if screen is None:
            return
        available = screen.availableGeometry()
        frame = self._window.frameGeometry()
        if frame.width() > available.width() or frame.height() > available.height():
            self._window.resize(min(self._window.width(), available.width()), min(self._window.height(), available.height()))
        if not available.intersects(self._window.frameGeometry()):
            self._window.move(available.topLeft())

    def _apply_default_widths(self) -> None:
        groups = [dock for dock in (self._docks[SESSIONS_DOCK], self._first_right_dock) if dock is not None]
        self._window.resizeDocks(groups, [self.default_width(dock) for dock in groups], Qt.Orientation.Horizontal)

    def reset_layout(self) -> None:
        """View → Reset layout: the chat page, every dock where and as wide as on a first start."""
        self.show_page(CHAT_PAGE)
        self._given_way = []
        self._window.restoreState(self._default_state, STATE_VERSION)
        self._apply_default_widths()
        self.fit_docks_to_width()

    # --- pages ----------------------------------------------------------------------------------------

    def show_page(self, name: str) -> None:
        """Show the chat, a page (Memory), the Agent area or one of its pages (Heartbeat) in the centre."""
        if name in PANELS_BY_NAME and PANELS_BY_NAME[name] in AGENT_PAGES:
            self._agent_area.show_page(name)
            name = AGENT_AREA
        self._pages.show_page(name)

    def _on_page_changed(self, name: str) -> None:
        shown = {name} | ({self._agent_area.page_name()} if name == AGENT_AREA else set())
        for page, action in self.page_actions.items():
            action.blockSignals(True)
            action.setChecked(page in shown)
            action.blockSignals(False)
        if name != CHAT_PAGE and self._page_state is None:
            self._page_state = self._window.saveState(STATE_VERSION)
            for dock in self._docks.values():
                if not dock.isFloating() and not dock.isHidden():
                    dock.hide()
        elif name == CHAT_PAGE and self._page_state is not None:
            state, self._page_state = self._page_state, None
            self._window.restoreState(state, STATE_VERSION)
            self.fit_docks_to_width()
