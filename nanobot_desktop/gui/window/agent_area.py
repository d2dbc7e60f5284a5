"""The Agent area: Heartbeat, Scheduled, Subagents, MCP (and whatever PANELS places in AGENT) as the
pages of one centre page, a side list beside a page stack.

Why not docks: as bottom docks they left the chat ~280 px tall and were clipped themselves (a Save
button read "Sa"). A page of the centre gets the chat's whole width and height while it is shown,
and the chat comes back as it was (window/layout.py). Each page sits in a scroll area, so a page
that needs more room than a small window has scrolls instead of squeezing its buttons.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QListWidget, QListWidgetItem, QScrollArea, QStackedWidget, QWidget

from nanobot_desktop.gui.common.design import SPACING
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.panels import AGENT_PAGES


class AgentArea(QWidget):
    """A side list of the Agent pages and the page shown; a page's widget can arrive later."""

    page_changed = Signal(str)
    """The name (PanelSpec.name) of the page now shown."""

    def __init__(self, placeholder: type[QWidget] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agentArea")
        self._names = [spec.name for spec in AGENT_PAGES]
        self.side_list = QListWidget()
        self.side_list.setObjectName("agentPageList")
        self.side_list.setFrameShape(QFrame.Shape.NoFrame)
        self.side_list.setAccessibleName(translate("Panels", "Agent pages"))
        self.stack = QStackedWidget()
        self.stack.setObjectName("agentPageStack")
        for spec in AGENT_PAGES:
            title = translate("Panels", spec.title)
            item = QListWidgetItem(title)
            item.setSizeHint(QSize(0, self.side_list.fontMetrics().height() + 2 * SPACING.m))  # a row to aim at
            item.setToolTip(translate("Panels", "The {title} page ({shortcut})").format(title=title, shortcut=spec.shortcut))
            self.side_list.addItem(item)
            scroller = QScrollArea()
            scroller.setObjectName(f"{spec.dock}Scroller")
            scroller.setWidgetResizable(True)
            scroller.setFrameShape(QFrame.Shape.NoFrame)
            scroller.setWidget(placeholder() if placeholder is not None else QWidget())
            self.stack.addWidget(scroller)
        width = max((self.side_list.fontMetrics().horizontalAdvance(self.side_list.item(row).text())
                     for row in range(self.side_list.count())), default=0)
        self.side_list.setFixedWidth(width + 2 * SPACING.xl + SPACING.m)
        self.side_list.setSpacing(SPACING.xs)
        self.side_list.setContentsMargins(SPACING.s, SPACING.s, SPACING.s, SPACING.s)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.side_list)
        layout.addWidget(self.stack, 1)
        self.side_list.setCurrentRow(0)
        self.side_list.currentRowChanged.connect(self._on_row_changed)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.side_list.width() + 200, 200)

    def page_name(self) -> str:
        """The name of the page shown."""
        row = self.stack.currentIndex()
        return self._names[row] if 0 <= row < len(self._names) else ""

    def show_page(self, name: str) -> None:
        self.side_list.setCurrentRow(self._names.index(name))

    def page(self, name: str) -> QWidget | None:
        """The page's widget (its panel once built), without the scroll area around it."""
        scroller = self.stack.widget(self._names.index(name))
        return scroller.widget() if isinstance(scroller, QScrollArea) else None

    def set_page_widget(self, name: str, widget: QWidget) -> None:
        """Put a page's panel (built when first shown) in place of its placeholder."""
        scroller = self.stack.widget(self._names.index(name))
        assert isinstance(scroller, QScrollArea)
        scroller.setWidget(widget)  # deletes the placeholder

    def _on_row_changed(self, row: int) -> None:
        self.stack.setCurrentIndex(row)
        self.page_changed.emit(self.page_name())

    def titles(self) -> list[str]:
        """The side list's entries, in order (what a person reads there)."""
        return [self.side_list.item(row).text() for row in range(self.side_list.count())]
