"""The window's docks as shells (placed before any panel exists), and the central chat pane.

Where things go (window/panels.py's table says which panel goes where): sessions on the left (full
height, collapsible); the drawer on the right: the inspector and the workspace (Files with its
Skills tab) tabbed together, closed until asked for (the toolbar's drawer button, Ctrl+Shift+D, a
click on a tool card), so the conversation owns the centre. Nothing docks below the chat. Every
dock has a show/hide action in the registry (the View menu lists them).

The docks are created empty (objectName, title, View-menu toggle, place), so the window can restore
its saved layout and paint before the engine and the panels exist; panels.py's `set_dock_panel`
fills one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QResizeEvent
from PySide6.QtWidgets import QDockWidget, QFrame, QHBoxLayout, QMainWindow, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from nanobot_desktop.gui.common.design import SPACING
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.actions import ActionRegistry, text_action
from nanobot_desktop.gui.window.dock_title import DockTitleBar
from nanobot_desktop.gui.window.panels import DOCK_TITLES, DRAWER_PANELS, SESSIONS_DOCK

if TYPE_CHECKING:
    from nanobot_desktop.gui.chat.composer import Composer
    from nanobot_desktop.gui.chat.view import ChatView
    from nanobot_desktop.gui.common.notice_bar import NoticeBar


class ChatPane(QWidget):
    """Notice bar, chat and composer; files dropped anywhere on it go to the composer.

    The composer keeps to the chat's reading column (centred, at most its width), so what a person
    reads and what they type line up at every window width.
    """

    def __init__(self, notice_bar: NoticeBar, chat_view: ChatView, composer: Composer) -> None:
        super().__init__()
        self.composer = composer
        self.chat_view = chat_view
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        bar_holder = QVBoxLayout()
        bar_holder.setContentsMargins(SPACING.m, SPACING.s, SPACING.m, 0)
        bar_holder.addWidget(notice_bar)
        layout.addLayout(bar_holder)
        layout.addWidget(chat_view, 1)
        # The composer grows up to the column's width (its maximum), the stretches either side take the rest.
        composer_row = QHBoxLayout()
        composer_row.setContentsMargins(0, 0, 0, 0)
        composer_row.addStretch(1)
        composer_row.addWidget(composer, 1000)
        composer_row.addStretch(1)
        layout.addLayout(composer_row)
        self.setAcceptDrops(True)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.composer.setMaximumWidth(self.chat_view.reading_width() + 2 * SPACING.l)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls() or event.mimeData().hasImage():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        if self.composer.add_mime_data(event.mimeData()):
            event.acceptProposedAction()


class Panels:
    """The docks by objectName, built up front; the panels in them arrive later (see panels.set_dock_panel)."""

    def __init__(self) -> None:
        self.docks: dict[str, QDockWidget] = {}
        self.first_right_dock: QDockWidget | None = None


def build_dock_shells(window: QMainWindow, actions: ActionRegistry, show_skills: Callable[[], None]) -> Panels:
    """Create every dock empty, in its place, with its toggle action (the session list's included)."""
    panels = Panels()
    panels.docks[SESSIONS_DOCK] = add_dock(window, actions, None, SESSIONS_DOCK, Qt.DockWidgetArea.LeftDockWidgetArea,
                                           "Ctrl+1")
    window.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
    window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
    panels.first_right_dock = _add_drawer(window, actions, panels)
    window.setTabPosition(Qt.DockWidgetArea.RightDockWidgetArea, QTabWidget.TabPosition.North)
    window.setDockNestingEnabled(True)
    action = text_action(translate("Panels", "Skills"), window)  # skills live in the Workspace panel's second tab
    action.setObjectName("action_show_skills")
    action.setToolTip(translate("Panels", "Show the skills manager (in the Workspace panel)"))
    action.triggered.connect(show_skills)
    actions.add_dock_toggle("skills", action)
    return panels


def _add_drawer(window: QMainWindow, actions: ActionRegistry, panels: Panels) -> QDockWidget | None:
    """The drawer's docks, tabbed on the right, closed (the first start's layout)."""
    first: QDockWidget | None = None
    for spec in DRAWER_PANELS:
        dock = add_dock(window, actions, None, spec.dock, Qt.DockWidgetArea.RightDockWidgetArea, spec.shortcut)
        dock.hide()  # before tabifying: a group hidden afterwards leaves its tab bar on screen
        panels.docks[spec.dock] = dock
        if first is None:
            first = dock
        else:
            window.tabifyDockWidget(first, dock)
    if first is not None:
        first.raise_()
    return first


class PanelPlaceholder(QWidget):
    """Stands in for a panel (or the chat) until it is built: a blank pane, for a moment after the
    first paint, that asks for the room its panel will ask for, so the layout does not jump.

    The default size hint is larger than a scroll area passes on, so a dock asks for the same size
    as it does with any real panel in it: a hidden dock area remembers the size it was laid out
    with, and an empty shell would otherwise open later as a thin strip.
    """

    def __init__(self, size_hint: QSize | None = None, name: str = "panelPlaceholder") -> None:
        super().__init__()
        self.setObjectName(name)
        self._size_hint = size_hint or QSize(420, 2000)
        self.setAutoFillBackground(True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self._size_hint


def add_dock(window: QMainWindow, actions: ActionRegistry, panel: QWidget | None, name: str,
             area: Qt.DockWidgetArea, shortcut: str | None) -> QDockWidget:
    """A dock titled DOCK_TITLES[name] (known before any panel's module is imported), holding `panel`,
    or a PanelPlaceholder until panels.set_dock_panel, with its show/hide action registered."""
    title = translate("Panels", DOCK_TITLES[name])
    dock = QDockWidget(title, window)
    dock.setObjectName(name)
    if area != Qt.DockWidgetArea.LeftDockWidgetArea:
        # Tabified docks share one size, which would be the largest panel's minimum: a scroll
        # area lets a wide panel scroll instead of squeezing the chat.
        holder = QScrollArea()
        holder.setObjectName(f"{name}Scroller")
        holder.setAccessibleName(title)
        holder.setWidgetResizable(True)
        holder.setFrameShape(QFrame.Shape.NoFrame)
        holder.setWidget(panel if panel is not None else PanelPlaceholder())
        dock.setWidget(holder)
    else:  # the session list: no scroll area, and the width it gets on a first start
        dock.setWidget(panel if panel is not None else PanelPlaceholder(QSize(260, 400)))
    # Movable and closable, not floatable: a floating panel is easily lost behind the window, and no
    # peer floats its side panels. The title bar is the app's own (dock_title.py): it grows with the text.
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable | QDockWidget.DockWidgetFeature.DockWidgetMovable)
    dock.setTitleBarWidget(DockTitleBar(dock))
    window.addDockWidget(area, dock)
    toggle = dock.toggleViewAction()
    # Turned on from the View menu or its shortcut, a dock tabbed with others comes to the front:
    # the person asked to see it, not to add a tab behind the one already shown.
    toggle.triggered.connect(lambda checked: dock.raise_() if checked else None)
    toggle.setText(title)
    toggle.setToolTip(translate("Panels", "Show or hide the {title} panel").format(title=title))
    actions.add_dock_toggle(name, toggle, shortcut)
    return dock
