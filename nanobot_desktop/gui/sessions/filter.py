"""Filtering the session list while the person types: titles at once, message text when the search
(run by the panel in an executor) comes back."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from nanobot_desktop.gui.sessions.model import KeyRole, PreviewRole, TitleRole

_Index = QModelIndex | QPersistentModelIndex


class SessionFilterProxy(QSortFilterProxyModel):
    """Live filter: a session shows when its title/preview/key contains the query, or when the
    message-text search (run by the panel in an executor) found the query in it; the match then
    replaces the preview line. A group shows while any of its sessions does."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setDynamicSortFilter(True)
        self._query = ""
        self._hits: dict[str, str] = {}

    @property
    def query(self) -> str:
        return self._query

    def set_query(self, text: str) -> None:
        """Filter by titles at once; message hits from an earlier query are dropped."""
        query = text.strip().casefold()
        if query == self._query:
            return
        had_hits = bool(self._hits)
        self.beginFilterChange()
        self._query = query
        self._hits = {}
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        if had_hits:
            self._previews_changed()

    def set_message_hits(self, query: str, hits: list[tuple[str, str]]) -> None:
        """(key, snippet) pairs found for `query`; ignored when the query has changed since."""
        if query.strip().casefold() != self._query:
            return
        found: dict[str, str] = {}
        for key, snippet in hits:
            found.setdefault(key, snippet)
        self.beginFilterChange()
        self._hits = found
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        self._previews_changed()

    def _previews_changed(self) -> None:
        """Rows that stay visible still swap preview and snippet: tell the view to repaint them."""
        for group_row in range(self.rowCount()):
            parent = self.index(group_row, 0)
            count = self.rowCount(parent)
            if count:
                self.dataChanged.emit(self.index(0, 0, parent), self.index(count - 1, 0, parent), [PreviewRole])

    def message_hits(self) -> dict[str, str]:
        return dict(self._hits)

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:  # noqa: N802
        if not self._query:
            return True
        if not source_parent.isValid():
            return False  # a group is shown through its matching sessions (recursive filtering)
        model = self.sourceModel()
        index = model.index(source_row, 0, source_parent)
        key = model.data(index, KeyRole) or ""
        if key in self._hits:
            return True
        text = " ".join(str(model.data(index, role) or "") for role in (TitleRole, PreviewRole, KeyRole))
        return self._query in text.casefold()

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == PreviewRole and self._hits and index.isValid():
            snippet = self._hits.get(super().data(index, KeyRole) or "")
            if snippet:
                return snippet
        return super().data(index, role)
