"""Filtering the session list while the person types: titles at once, message text when the search
(run by the panel in an executor) comes back.

Built for 20,000 sessions: a row is judged from the SessionInfo the model holds (no data() round
trips), and a group or a session with branches is judged by looking at its children directly rather
than through Qt's recursive filtering, which walks every row's children through the Qt interface.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from nanobot_desktop.engine import SessionInfo
from nanobot_desktop.gui.sessions.model import KeyRole, PreviewRole, SessionListModel

_Index = QModelIndex | QPersistentModelIndex


class SessionFilterProxy(QSortFilterProxyModel):
    """Live filter: a session shows when its title/preview/key contains the query, or when the
    message-text search (run by the panel in an executor) found the query in it; the match then
    replaces the preview line. A group shows while any of its sessions does."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(False)  # groups and origins look at their children themselves
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
        model = self.sourceModel()
        index = model.index(source_row, 0, source_parent)
        if not isinstance(model, SessionListModel):
            return True
        info = model.info_at(index)
        if info is None:  # a group: shown while any of its sessions (or their branches) is
            return any(self._matches(row) or any(self._matches(b) for b in model.branches_of(row.key))
                       for row in model.group_rows(index))
        return self._matches(info) or any(self._matches(branch) for branch in model.branches_of(info.key))

    def _matches(self, info: SessionInfo) -> bool:
        return info.key in self._hits or self._query in f"{info.title}\n{info.preview}\n{info.key}".casefold()

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == PreviewRole and self._hits and index.isValid():
            snippet = self._hits.get(super().data(index, KeyRole) or "")
            if snippet:
                return snippet
        return super().data(index, role)
