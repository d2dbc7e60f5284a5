"""The session list as a tree: channel groups, each holding its sessions newest first, and under a
session the branches made from it (`SessionInfo.branch_of`; see rows.arrange).

Why a tree and an in-place sync: the list is refreshed after every turn (the engine appends a few
lines, a file's `updated_at` moves), and a reset would lose the selection, the scroll position and
an open rename editor. `set_sessions` therefore compares the new listing with what is shown and
emits the smallest changes it can: one `dataChanged` for a session whose preview changed, one row
move when it jumps to the top of its group, inserts and removes for files that came or went.

The model never reads the disk itself: the panel lists sessions in an executor, arranges them there
(rows.arrange_listing) and hands the result over (20,000 files must not block the window). The
search filters inside the model (filter.py): it holds the whole listing and shows the part that
matches, so no proxy model walks every row through Qt at each listing.

Rows are handed to the view incrementally: a channel group shows its newest FETCH_ROWS sessions, and
the next ones when the panel asks (`fetch_more`: the group's last fetched row nears the screen); a
session asked for by key (`index_of_key`: the open chat, a search's pick) is fetched on demand. Why:
after a reset the view lays out every row the model has — one index() and two flags() calls into Python
each, about 0.3 s of the GUI thread for 20,000 sessions — although only ~30 of them are on screen.
Not through Qt's canFetchMore/fetchMore: QTreeView fetches once more for every open group at each
relayout (any row inserted, moved or removed: every turn), so after a few dozen turns it would hold the
whole list again.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from PySide6.QtCore import QAbstractItemModel, QByteArray, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal

from nanobot_desktop.engine import SessionInfo
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.notice_bar import reason_of
from nanobot_desktop.gui.sessions.filter import SessionFilter
from nanobot_desktop.gui.sessions.roles import (EDITABLE, GROUP_FLAGS, NO_FLAGS, ORIGIN_FLAGS, ROLE_NAMES,
                                                SESSION_FLAGS, BusyRole, ChannelRole, InfoRole, IsGroupRole,
                                                KeyRole, MessageCountRole, PathRole, PreviewRole, SessionRole,
                                                TitleRole, UnreadRole, UpdatedAtRole, group_data, session_data)
from nanobot_desktop.gui.sessions.rows import MAX_MOVES, Arrangement, arrange_listing, format_when, group_title, moves_needed

__all__ = ["BusyRole", "ChannelRole", "InfoRole", "IsGroupRole", "KeyRole", "MessageCountRole", "PathRole", "PreviewRole",
           "SessionListModel", "SessionRole", "TitleRole", "UnreadRole", "UpdatedAtRole", "format_when", "group_title"]

_Index = QModelIndex | QPersistentModelIndex

_group_ids = itertools.count(1)

FETCH_ROWS = 200
"""Sessions a group hands to the view at first, and at each fetch after that (a screen shows ~30)."""


@dataclass(eq=False)
class _Group:
    channel: str
    rows: list[SessionInfo] = field(default_factory=list)  # the rows the view has (fetched), newest first
    more: list[SessionInfo] = field(default_factory=list)  # the group's older sessions, not fetched yet
    uid: int = field(default_factory=lambda: next(_group_ids))
    branches: dict[str, list[SessionInfo]] = field(default_factory=dict)  # origin key → its branches


def _same_row(a: SessionInfo, b: SessionInfo) -> bool:
    return a is b or (a.title, a.updated_at, a.preview, a.message_count, a.path, a.created_at) == \
        (b.title, b.updated_at, b.preview, b.message_count, b.path, b.created_at)


Renamer = Callable[[str, str], SessionInfo | None]

class SessionListModel(QAbstractItemModel):
    """Channel groups (top level) with their sessions (children), newest first in each group."""

    rename_failed = Signal(str, str)
    """(key, message): an inline rename could not be saved."""

    def __init__(self, renamer: Renamer | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._groups: list[_Group] = []
        self._renamer = renamer
        self._busy: set[str] = set()
        self._unread: set[str] = set()
        self._origin_uids: dict[str, int] = {}  # origin key → the internal id of its branch rows
        self._uid_origins: dict[int, str] = {}
        self._origin_keys: set[str] = set()  # sessions shown with branches under them
        self._lists: dict[int, list[SessionInfo]] = {}  # internal id → the list its rows index (Qt asks often)
        self._listing = Arrangement()  # every session listed; the groups show the part the filter lets through
        self._filter = SessionFilter()
        self._filtered = False  # what is shown is a part of the listing (a search; it may be an earlier one's)
        self._where: dict[str, tuple[int, int]] | None = None  # key → (internal id, row) of the shown rows
        self._listed: dict[str, SessionInfo] | None = None  # key → info of every listed session
        self._flags = SESSION_FLAGS if renamer is not None else SESSION_FLAGS & ~EDITABLE
        self._origin_flags = ORIGIN_FLAGS if renamer is not None else ORIGIN_FLAGS & ~EDITABLE

    # --- Qt model interface ----------------------------------------------------------------------

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:
        # The view calls this once per shown row when it lays out: the common case (a session of a
        # group) comes first.
        if parent.isValid():
            uid = parent.internalId()
            if uid == 0:
                group_row = parent.row()
                groups = self._groups
                if column == 0 and row >= 0 and group_row < len(groups) and row < len(groups[group_row].rows):
                    return self.createIndex(row, 0, groups[group_row].uid)
                return QModelIndex()
            origin = self._info_at(parent)
            if column != 0 or row < 0 or origin is None or uid in self._uid_origins:
                return QModelIndex()
            count = len(self._branches_of(origin.key))
            return self.createIndex(row, 0, self._origin_uid(origin.key)) if row < count else QModelIndex()
        if column != 0 or row < 0:
            return QModelIndex()
        return self.createIndex(row, 0, 0) if row < len(self._groups) else QModelIndex()

    def parent(self, child: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not child.isValid() or child.internalId() == 0:
            return QModelIndex()
        origin = self._uid_origins.get(child.internalId())
        if origin is not None:
            return self.index_of_key(origin, fetch=False)
        row = self._group_row_by_uid(child.internalId())
        return self.createIndex(row, 0, 0) if row >= 0 else QModelIndex()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        if not parent.isValid():
            return len(self._groups)
        if parent.column() != 0:
            return 0
        if parent.internalId() != 0:
            if parent.internalId() in self._uid_origins:
                return 0
            origin = self._info_at(parent)
            return len(self._branches_of(origin.key)) if origin is not None else 0
        if not 0 <= parent.row() < len(self._groups):
            return 0
        return len(self._groups[parent.row()].rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 1

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:  # noqa: N802
        return self.rowCount(parent) > 0

    def has_more(self, group: _Index) -> bool:
        """A channel group has sessions the view has not been given yet."""
        return group.isValid() and group.internalId() == 0 and 0 <= group.row() < len(self._groups) \
            and bool(self._groups[group.row()].more)

    def fetch_more(self, group: _Index) -> None:
        """Hand the view the group's next FETCH_ROWS sessions."""
        if self.has_more(group):
            self._fetch(group.row(), FETCH_ROWS)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        uid = index.internalId()  # the view asks once per shown row: no enum arithmetic here
        if uid == 0:
            return GROUP_FLAGS if index.isValid() else NO_FLAGS
        if self._origin_keys and uid not in self._uid_origins:  # a session has children when it has branches
            info = self._info_at(index)
            if info is not None and info.key in self._origin_keys:
                return self._origin_flags
        return self._flags

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            if index.row() >= len(self._groups):
                return None
            group = self._groups[index.row()]
            return group_data(group.channel, len(group.rows) + len(group.more), role)
        info = self._info_at(index)
        if info is None:
            return None
        key = info.key
        return session_data(info, role, self._filter.hits.get(key, "") if self._filter.hits else "", key in self._busy,
                            key in self._unread)

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        """Inline rename: saves the title through the renamer (the engine), then shows it."""
        if role != Qt.ItemDataRole.EditRole or self._renamer is None or not index.isValid() \
                or index.internalId() == 0:
            return False
        info = self._info_at(index)
        if info is None or info.archived:  # an archived conversation is not a session to rename
            return False
        title = str(value or "").strip()
        try:
            updated = self._renamer(info.key, title)
        except (OSError, ValueError) as error:
            self.rename_failed.emit(info.key, translate("Sessions", "Could not rename “{title}” ({reason}). "
                                              "Try another name.").format(title=info.title, reason=reason_of(error)))
            return False
        renamed = updated if updated is not None else _retitled(info, title or info.key)
        self._rows_of(index)[index.row()] = renamed
        for rows in itertools.chain((rows for _channel, rows in self._listing.groups), self._listing.branches.values()):
            if info in rows:  # the listing the search filters shows the new title too
                rows[rows.index(info)] = renamed
        self._listed = None
        self._filter.rows_changed(self._listing)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, TitleRole,
                                             InfoRole])
        return True

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names.update({int(role): QByteArray(name) for role, name in ROLE_NAMES.items()})
        return names

    # --- reading ---------------------------------------------------------------------------------

    def keys(self) -> list[str]:
        """Every listed session key, shown or filtered out, in display order (groups in order, newest
        first inside each, each session's branches right after it)."""
        branches = self._listing.branches
        if not branches:
            return [info.key for _channel, rows in self._listing.groups for info in rows]
        return [key for _channel, rows in self._listing.groups for info in rows
                for key in [info.key, *(branch.key for branch in branches.get(info.key, []))]]

    def info(self, key: str) -> SessionInfo | None:
        """The listed session `key`, whether the search shows it or not; for a version without a row
        of its own (a hidden branch), the row of its conversation."""
        if not key:
            return None
        if self._listed is None:  # keys are unique in a listing (rows.arrange): plain dict builds
            self._listed = {info.key: info for rows in itertools.chain(
                (rows for _channel, rows in self._listing.groups), self._listing.branches.values()) for info in rows}
        return self._listed.get(key) or self._listed.get(self.row_key(key))

    def row_key(self, key: str) -> str:
        """The key of the row that shows session `key`: its conversation's when it is a hidden branch."""
        return self._listing.versions.get(key, key)

    def latest_version(self, key: str) -> str:
        """The session a row opens: the most recently active version of its conversation."""
        return self._listing.latest.get(key, key)

    def index_of_key(self, key: str, fetch: bool = True) -> QModelIndex:
        """The row showing session `key` (invalid when it is not listed or the search hides it); a
        hidden branch is shown by its conversation's row. A row not fetched yet is fetched (with the
        rows above it) unless `fetch` is False."""
        key = self.row_key(key)
        if not key:
            return QModelIndex()
        found = self._fetched_rows().get(key)
        if found is None and fetch and self._fetch_key(key):
            found = self._fetched_rows().get(key)
        return self.createIndex(found[1], 0, found[0]) if found is not None else QModelIndex()

    def _fetched_rows(self) -> dict[str, tuple[int, int]]:
        """key → (internal id, row) of every row the view has (a branch's only when its origin's row is fetched)."""
        if self._where is None:
            where: dict[str, tuple[int, int]] = {}
            for group in self._groups:
                uid = group.uid
                where.update({info.key: (uid, row) for row, info in enumerate(group.rows)})
                for origin, branches in group.branches.items():
                    if origin in where:
                        uid = self._origin_uid(origin)
                        where.update({info.key: (uid, row) for row, info in enumerate(branches)})
            self._where = where
        return self._where

    def _fetch_key(self, key: str) -> bool:
        """Fetch a group's rows down to session `key` (to its origin's row for a branch); False when
        no group holds it unfetched."""
        row_key = self._origin_holding(key) or key
        for group_row, group in enumerate(self._groups):
            position = next((position for position, info in enumerate(group.more) if info.key == row_key), -1)
            if position >= 0:
                self._fetch(group_row, position + 1)
                return True
        return False

    def _fetch(self, group_row: int, count: int) -> None:
        """Hand the view the next `count` sessions of a group."""
        group = self._groups[group_row]
        count = min(count, len(group.more))
        if count <= 0:
            return
        first = len(group.rows)
        self.beginInsertRows(self.createIndex(group_row, 0, 0), first, first + count - 1)
        group.rows.extend(group.more[:count])
        del group.more[:count]
        self._where = None
        self.endInsertRows()

    def branch_origin(self, key: str) -> str:
        """The key of the row a branch is shown under ("" for a top-level row)."""
        index = self.index_of_key(key, fetch=False)
        return self._uid_origins.get(index.internalId(), "") if index.isValid() else self._origin_holding(key)

    def _origin_holding(self, key: str) -> str:
        """The conversation whose branches include session `key`, fetched or not ("" when none does)."""
        return next((origin for group in self._groups for origin, branches in group.branches.items()
                     if any(branch.key == key for branch in branches)), "")

    def channels(self) -> list[str]:
        return [group.channel for group in self._groups]

    # --- the search ------------------------------------------------------------------------------

    @property
    def query(self) -> str:
        return self._filter.query

    def set_query(self, text: str) -> None:
        """Show the sessions whose title, preview or key holds `text` (at once; a one- or two-character
        query waits for `set_message_hits`); message hits of an earlier query are dropped."""
        had_hits = bool(self._filter.hits)
        if self._filter.set_query(text) and (self._filter.active or self._filtered):
            self._show(self._filter.apply(self._listing), reset=True)
        elif had_hits:
            self._previews_changed()

    def set_message_hits(self, query: str, hits: list[tuple[str, str]]) -> None:
        """(key, snippet) pairs the message search found for `query` show too, each with its snippet
        as the preview line; ignored when the query has changed since."""
        if self._filter.set_hits(query, hits):
            self._show(self._filter.apply(self._listing), reset=True)

    def message_hits(self) -> dict[str, str]:
        return dict(self._filter.hits)

    def _previews_changed(self) -> None:
        """Rows that stay shown swap snippet and preview: the views repaint them."""
        for group_row, group in enumerate(self._groups):
            if group.rows:
                parent = self.createIndex(group_row, 0, 0)
                self.dataChanged.emit(self.index(0, 0, parent), self.index(len(group.rows) - 1, 0, parent),
                                      [PreviewRole])

    # --- busy / unread marks ---------------------------------------------------------------------

    def set_busy(self, key: str, busy: bool) -> None:
        self._set_mark(self._busy, key, busy, BusyRole)

    def set_unread(self, key: str, unread: bool) -> None:
        self._set_mark(self._unread, key, unread, UnreadRole)

    def is_busy(self, key: str) -> bool:
        return key in self._busy

    def is_unread(self, key: str) -> bool:
        return key in self._unread

    def _set_mark(self, marks: set[str], key: str, on: bool, role: int) -> None:
        if (key in marks) == on:
            return
        if on:
            marks.add(key)
        else:
            marks.discard(key)
        index = self.index_of_key(key, fetch=False)  # a row not fetched yet shows its mark when it is
        if index.isValid():
            self.dataChanged.emit(index, index, [role])

    # --- syncing with a new listing ----------------------------------------------------------------

    def set_sessions(self, listing: list[SessionInfo] | Arrangement) -> None:
        """Show `listing` (sessions newest first, or already arranged by rows.arrange_listing: the
        panel does that in its executor), changing only what differs from what is shown."""
        self._listing = listing if isinstance(listing, Arrangement) else arrange_listing(listing)
        self._listed = None
        self._show(self._filter.apply(self._listing))

    def _show(self, shown: Arrangement, reset: bool = False) -> None:
        self._where = None
        self._filtered = shown is not self._listing  # the search hides some rows
        branches = shown.branches
        wanted = {channel: self._fetched_part(channel, rows) for channel, rows in shown.groups}
        shown_branches = {origin: [b.key for b in rows] for group in self._groups for origin, rows in group.branches.items()}
        if reset or not self._groups or shown_branches != {origin: [b.key for b in rows] for origin, rows in branches.items()} \
                or any(group.rows != (fetched := wanted.get(group.channel, ([], []))[0]) and moves_needed(
                    [i.key for i in group.rows], [i.key for i in fetched]) > MAX_MOVES
                    for group in self._groups):
            # The first listing, a new search, a big reshuffle (a clock change, a restored backup) or a
            # new branch: one reset beats thousands of moves, and branches come and go rarely.
            self.beginResetModel()
            self._groups = [_Group(channel, rows[:FETCH_ROWS], rows[FETCH_ROWS:],
                                   branches={info.key: branches[info.key] for info in rows if info.key in branches}
                                   if branches else {})
                            for channel, rows in shown.groups]
            self._lists = {}
            self._origin_keys = set(branches)
            self.endResetModel()
            return
        for row in range(len(self._groups) - 1, -1, -1):
            if self._groups[row].channel not in wanted:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._groups[row]
                self.endRemoveRows()
        for row, channel in enumerate(wanted):
            if row < len(self._groups) and self._groups[row].channel == channel:
                continue
            self.beginInsertRows(QModelIndex(), row, row)
            self._groups.insert(row, _Group(channel))
            self.endInsertRows()
        for row, group in enumerate(self._groups):
            fetched, group.more = wanted[group.channel]
            if group.rows != fetched:  # the same objects when nothing changed: a C loop
                self._sync_group(row, group, fetched)
                self._where = None
            for origin, rows in group.branches.items():  # the same branches (else the reset above)
                parent = self.index_of_key(origin, fetch=False)
                if not parent.isValid():
                    rows[:] = branches[origin]  # not fetched: nothing shown to change
                    continue
                for position, info in enumerate(branches[origin]):
                    if not _same_row(rows[position], info):
                        rows[position] = info
                        index = self.index(position, 0, parent)
                        self.dataChanged.emit(index, index, [])
        # Busy and unread marks are kept even for keys not listed (yet): a new session's turn runs,
        # and may ask for approval, before its file shows up in a listing.

    def _fetched_part(self, channel: str, rows: list[SessionInfo]) -> tuple[list[SessionInfo], list[SessionInfo]]:
        """(the rows the view keeps, the rest) of a group's new listing: as many as it had fetched (the
        first FETCH_ROWS at least; all of them when it had fetched them all), so a listing never takes
        rows away from under a person scrolling. (A group of exactly FETCH_ROWS rows may have come from
        a first listing of each channel's newest: it is not taken for fully fetched.)"""
        group = next((group for group in self._groups if group.channel == channel), None)
        if group is None:
            count = FETCH_ROWS
        elif not group.more and len(group.rows) > FETCH_ROWS:
            count = len(rows)
        else:
            count = max(len(group.rows), FETCH_ROWS)
        return (rows, []) if count >= len(rows) else (rows[:count], rows[count:])

    def _sync_group(self, group_row: int, group: _Group, wanted: list[SessionInfo]) -> None:
        parent = self.createIndex(group_row, 0, 0)
        wanted_keys = {info.key for info in wanted}
        row = len(group.rows) - 1
        while row >= 0:  # remove vanished sessions, a contiguous run at a time
            if group.rows[row].key in wanted_keys:
                row -= 1
                continue
            last = row
            while row - 1 >= 0 and group.rows[row - 1].key not in wanted_keys:
                row -= 1
            self.beginRemoveRows(parent, row, last)
            del group.rows[row:last + 1]
            self.endRemoveRows()
            row -= 1
        shown = {info.key for info in group.rows}
        position = 0
        while position < len(wanted):
            info = wanted[position]
            if position < len(group.rows) and group.rows[position].key == info.key:
                self._update_row(parent, group, position, info)
                position += 1
                continue
            if info.key in shown:
                source = next(r for r in range(position + 1, len(group.rows)) if group.rows[r].key == info.key)
                self.beginMoveRows(parent, source, source, parent, position)
                group.rows.insert(position, group.rows.pop(source))
                self.endMoveRows()
                self._update_row(parent, group, position, info)
                position += 1
                continue
            end = position + 1  # a run of new sessions goes in as one insert
            while end < len(wanted) and wanted[end].key not in shown:
                end += 1
            self.beginInsertRows(parent, position, end - 1)
            group.rows[position:position] = wanted[position:end]
            self.endInsertRows()
            shown.update(info.key for info in wanted[position:end])
            position = end

    def _update_row(self, parent: QModelIndex, group: _Group, row: int, info: SessionInfo) -> None:
        if _same_row(group.rows[row], info):
            return
        group.rows[row] = info
        index = self.index(row, 0, parent)
        self.dataChanged.emit(index, index, [])

    # --- internals -------------------------------------------------------------------------------

    def _group_row_by_uid(self, uid: int) -> int:
        for row, group in enumerate(self._groups):
            if group.uid == uid:
                return row
        return -1

    def _origin_uid(self, origin: str) -> int:
        uid = self._origin_uids.get(origin)
        if uid is None:
            uid = self._origin_uids[origin] = next(_group_ids)
            self._uid_origins[uid] = origin
        return uid

    def _branches_of(self, origin: str) -> list[SessionInfo]:
        for group in self._groups:
            if group.branches and origin in group.branches:
                return group.branches[origin]
        return []

    def _rows_of(self, index: _Index) -> list[SessionInfo]:
        """The list a session index points into: its group's rows, or its origin's branches."""
        uid = index.internalId()
        rows = self._lists.get(uid)
        if rows is None:
            origin = self._uid_origins.get(uid)
            if origin is not None:
                rows = self._branches_of(origin)
            else:
                group_row = self._group_row_by_uid(uid)
                rows = self._groups[group_row].rows if group_row >= 0 else []
            if rows:  # the same list object for the life of its group or branch set (a reset drops them all)
                self._lists[uid] = rows
        return rows

    def origins(self) -> list[str]:
        """Keys of the sessions that have branches (their rows open to show them)."""
        return [origin for group in self._groups for origin in group.branches]

    def _info_at(self, index: _Index) -> SessionInfo | None:
        rows = self._rows_of(index)
        return rows[index.row()] if 0 <= index.row() < len(rows) else None


def _retitled(info: SessionInfo, title: str) -> SessionInfo:
    return replace(info, title=title)
