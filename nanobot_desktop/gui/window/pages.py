"""The window's centre: the chat, and the pages that need the room the chat has (Memory).

A page of PANELS with `area=None` is a tab next to the chat instead of a dock. Reading and editing
MEMORY.md and HISTORY.md side by side needs two columns of 80 characters, which no dock beside the
chat can give; while such a page is shown the side docks give way (they come back with the chat).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtWidgets import QTabWidget, QWidget

from nanobot_desktop.gui.common.i18n import translate

CHAT_PAGE = "chat"


class CentralPages(QTabWidget):
    """Chat | Memory | …: one tab per page, the chat first; a page's widget can arrive later."""

    page_changed = Signal(str)
    """The name of the page now shown (CHAT_PAGE for the chat)."""

    def __init__(self, chat: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("centralPages")
        self.setAccessibleName(translate("Panels", "Chat and pages"))
        self.setDocumentMode(True)
        self.setTabPosition(QTabWidget.TabPosition.North)
        self._names: list[str] = [CHAT_PAGE]
        self.addTab(chat, translate("Panels", "Chat"))
        self.setTabToolTip(0, translate("Panels", "The conversation"))
        self.currentChanged.connect(self._on_current_changed)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        """The page shown sets the minimum, not the widest page: the Memory page's two editors must not
        keep the chat from narrowing (the window hides the docks while a page is shown)."""
        page = self.currentWidget()
        hint = page.minimumSizeHint() if page is not None else QSize(0, 0)
        return QSize(hint.width(), hint.height() + self.tabBar().sizeHint().height())

    def _on_current_changed(self, index: int) -> None:
        self.updateGeometry()
        self.page_changed.emit(self.page_name(index))

    def page_name(self, index: int | None = None) -> str:
        """The name of the page at `index` (the current one by default)."""
        index = self.currentIndex() if index is None else index
        return self._names[index] if 0 <= index < len(self._names) else CHAT_PAGE

    def add_page(self, name: str, title: str, widget: QWidget, tooltip: str) -> None:
        self._names.append(name)
        index = self.addTab(widget, title)
        self.setTabToolTip(index, tooltip)

    def set_chat(self, chat: QWidget) -> None:
        """Put the real chat in place of the placeholder the frame painted with."""
        self._replace(0, chat)

    def set_page_widget(self, name: str, widget: QWidget) -> None:
        """Put a page's panel (built after the first paint) in place of its placeholder."""
        self._replace(self._names.index(name), widget)

    def page(self, name: str) -> QWidget | None:
        return self.widget(self._names.index(name)) if name in self._names else None

    def show_page(self, name: str) -> None:
        self.setCurrentIndex(self._names.index(name))

    def _replace(self, index: int, widget: QWidget) -> None:
        old = self.widget(index)
        title, tooltip, current = self.tabText(index), self.tabToolTip(index), self.currentIndex()
        self.blockSignals(True)  # the same page stays shown: no page_changed for the swap
        self.removeTab(index)
        self.insertTab(index, widget, title)
        self.setTabToolTip(index, tooltip)
        self.setCurrentIndex(current)
        self.blockSignals(False)
        if old is not None and old is not widget:
            old.deleteLater()
