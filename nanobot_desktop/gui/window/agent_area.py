"""The Agent area: Heartbeat, Scheduled, Subagents, MCP (and whatever PANELS places in AGENT) as the
pages of one centre page, a side list beside a page stack.

Why not docks: as bottom docks they left the chat ~280 px tall and were clipped themselves (a Save
button read "Sa"). A page of the centre gets the chat's whole width and height while it is shown,
and the chat comes back as it was (window/layout.py). Each page sits in a scroll area, so a page
that needs more room than a small window has scrolls instead of squeezing its buttons.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QWidget

from nanobot_desktop.gui.common.design import SPACING
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.panels import AGENT_PAGES

if TYPE_CHECKING:
    from PySide6.QtWidgets import QListWidget, QStackedWidget


class AgentArea(QWidget):
    """A side list of the Agent pages and the page shown; a page's widget can arrive later.

    The list and the page stack are made the first time the area is shown or asked for a page, not
    with the window's frame: the frame paints before them (the chat is the page shown at start), and
    a list view's Qt types alone cost ~14 M instructions of the first paint (bench/startup.py)."""

    page_changed = Signal(str)
    """The name (PanelSpec.name) of the page now shown."""

    def __init__(self, placeholder: type[QWidget] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agentArea")
        self._names = [spec.name for spec in AGENT_PAGES]
        self._placeholder = placeholder
        self._row = 0  # the page shown, kept here until the list exists
        self._list: QListWidget | None = None
        self._stack: QStackedWidget | None = None
        self._box = QHBoxLayout(self)
        self._box.setContentsMargins(0, 0, 0, 0)
        self._box.setSpacing(0)

    @property
    def side_list(self) -> QListWidget:
        self._build()
        assert self._list is not None
        return self._list

    @property
    def stack(self) -> QStackedWidget:
        self._build()
        assert self._stack is not None
        return self._stack

    def _build(self) -> None:
        if self._list is not None:
            return
        from PySide6.QtWidgets import QFrame, QListWidget, QListWidgetItem, QScrollArea, QStackedWidget

        side_list = QListWidget()
        side_list.setObjectName("agentPageList")
        side_list.setFrameShape(QFrame.Shape.NoFrame)
        side_list.setAccessibleName(translate("Panels", "Agent pages"))
        stack = QStackedWidget()
        stack.setObjectName("agentPageStack")
        for spec in AGENT_PAGES:
            title = translate("Panels", spec.title)
            item = QListWidgetItem(title)
            item.setSizeHint(QSize(0, side_list.fontMetrics().height() + 2 * SPACING.m))  # a row to aim at
            item.setToolTip(translate("Panels", "The {title} page ({shortcut})").format(title=title, shortcut=spec.shortcut))
            side_list.addItem(item)
            scroller = QScrollArea()
            scroller.setObjectName(f"{spec.dock}Scroller")
            scroller.setWidgetResizable(True)
            scroller.setFrameShape(QFrame.Shape.NoFrame)
            scroller.setWidget(self._placeholder() if self._placeholder is not None else QWidget())
            stack.addWidget(scroller)
        side_list.setFixedWidth(self._list_width())
        side_list.setSpacing(SPACING.xs)
        side_list.setContentsMargins(SPACING.s, SPACING.s, SPACING.s, SPACING.s)
        self._box.addWidget(side_list)
        self._box.addWidget(stack, 1)
        self._list, self._stack = side_list, stack
        side_list.setCurrentRow(self._row)
        stack.setCurrentIndex(self._row)
        side_list.currentRowChanged.connect(self._on_row_changed)

    def _list_width(self) -> int:
        """The side list's width: its longest title and the room around it (known before the list is made)."""
        metrics = self.fontMetrics()
        width = max((metrics.horizontalAdvance(translate("Panels", spec.title)) for spec in AGENT_PAGES), default=0)
        return width + 2 * SPACING.xl + SPACING.m

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        self._build()
        super().showEvent(event)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(self._list_width() + 200, 200)

    def page_name(self) -> str:
        """The name of the page shown."""
        row = self._stack.currentIndex() if self._stack is not None else self._row
        return self._names[row] if 0 <= row < len(self._names) else ""

    def show_page(self, name: str) -> None:
        row = self._names.index(name)
        if self._list is not None:
            self._list.setCurrentRow(row)
        elif row != self._row:
            self._row = row
            self.page_changed.emit(name)

    def page(self, name: str) -> QWidget | None:
        """The page's widget (its panel once built), without the scroll area around it."""
        from PySide6.QtWidgets import QScrollArea

        scroller = self.stack.widget(self._names.index(name))
        return scroller.widget() if isinstance(scroller, QScrollArea) else None

    def set_page_widget(self, name: str, widget: QWidget) -> None:
        """Put a page's panel (built when first shown) in place of its placeholder."""
        from PySide6.QtWidgets import QScrollArea

        scroller = self.stack.widget(self._names.index(name))
        assert isinstance(scroller, QScrollArea)
        scroller.setWidget(widget)  # deletes the placeholder

    def _on_row_changed(self, row: int) -> None:
        self._row = row
        self.stack.setCurrentIndex(row)
        self.page_changed.emit(self.page_name())

    def titles(self) -> list[str]:
        """The side list's entries, in order (what a person reads there)."""
        return [self.side_list.item(row).text() for row in range(self.side_list.count())]
