"""The session list as a tree: channel groups, each holding its sessions newest first, and under a
session the branches made from it (`SessionInfo.branch_of`; see rows.arrange).

Why a tree and an in-place sync: the list is refreshed after every turn (the engine appends a few
lines, a file's `updated_at` moves), and a reset would lose the selection, the scroll position and
an open rename editor. `set_sessions` therefore compares the new listing with what is shown and
emits the smallest changes it can: one `dataChanged` for a session whose preview changed, one row
move when it jumps to the top of its group, inserts and removes for files that came or went.

The model never reads the disk itself: the panel lists sessions in an executor and hands the result
over (2,000 files must not block the window).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any, Callable

from PySide6.QtCore import QAbstractItemModel, QByteArray, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal

from nanobot_desktop.engine import SessionInfo
from nanobot_desktop.gui.common.engine_words import session_title
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.notice_bar import reason_of
from nanobot_desktop.gui.sessions.rows import (MAX_MOVES, arrange, format_when, group_rank,
                                               group_title, moves_needed)

_Index = QModelIndex | QPersistentModelIndex

class SessionRole(IntEnum):
    KeyRole = Qt.ItemDataRole.UserRole + 1  # session key ("" for a group row)
    ChannelRole = Qt.ItemDataRole.UserRole + 2  # the channel (group rows too)
    TitleRole = Qt.ItemDataRole.UserRole + 3
    UpdatedAtRole = Qt.ItemDataRole.UserRole + 4  # ISO text, as stored
    PreviewRole = Qt.ItemDataRole.UserRole + 5  # last message preview, or the search snippet in the proxy
    MessageCountRole = Qt.ItemDataRole.UserRole + 6
    PathRole = Qt.ItemDataRole.UserRole + 7  # str path of the .jsonl file
    IsGroupRole = Qt.ItemDataRole.UserRole + 8
    BusyRole = Qt.ItemDataRole.UserRole + 9  # a turn runs in this session
    UnreadRole = Qt.ItemDataRole.UserRole + 10  # something happened while another session was shown
    InfoRole = Qt.ItemDataRole.UserRole + 11  # the SessionInfo (read it, don't mutate it)


KeyRole = SessionRole.KeyRole
ChannelRole = SessionRole.ChannelRole
TitleRole = SessionRole.TitleRole
UpdatedAtRole = SessionRole.UpdatedAtRole
PreviewRole = SessionRole.PreviewRole
MessageCountRole = SessionRole.MessageCountRole
PathRole = SessionRole.PathRole
IsGroupRole = SessionRole.IsGroupRole
BusyRole = SessionRole.BusyRole
UnreadRole = SessionRole.UnreadRole
InfoRole = SessionRole.InfoRole

_ROLE_NAMES = {KeyRole: b"key", ChannelRole: b"channel", TitleRole: b"title", UpdatedAtRole: b"updatedAt",
               PreviewRole: b"preview", MessageCountRole: b"messageCount", PathRole: b"path",
               IsGroupRole: b"isGroup", BusyRole: b"busy", UnreadRole: b"unread", InfoRole: b"info"}

_group_ids = itertools.count(1)


@dataclass(eq=False)
class _Group:
    channel: str
    rows: list[SessionInfo] = field(default_factory=list)
    uid: int = field(default_factory=lambda: next(_group_ids))
    branches: dict[str, list[SessionInfo]] = field(default_factory=dict)  # origin key → its branches


def _same_row(a: SessionInfo, b: SessionInfo) -> bool:
    return (a.title, a.updated_at, a.preview, a.message_count, a.path, a.created_at) == \
        (b.title, b.updated_at, b.preview, b.message_count, b.path, b.created_at)


Renamer = Callable[[str, str], SessionInfo | None]

# Precomputed: Qt asks for every row's flags when it lays out 20,000 rows, and enum arithmetic is slow.
_NO_FLAGS = Qt.ItemFlag.NoItemFlags
_GROUP_FLAGS = Qt.ItemFlag.ItemIsEnabled
_EDITABLE = Qt.ItemFlag.ItemIsEditable
_ORIGIN_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | _EDITABLE
_SESSION_FLAGS = _ORIGIN_FLAGS | Qt.ItemFlag.ItemNeverHasChildren


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

    # --- Qt model interface ----------------------------------------------------------------------

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:
        if column != 0 or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, 0, 0) if row < len(self._groups) else QModelIndex()
        if parent.internalId() != 0:
            origin = self._info_at(parent)
            if origin is None or parent.internalId() in self._uid_origins:
                return QModelIndex()
            count = len(self._branches_of(origin.key))
            return self.createIndex(row, 0, self._origin_uid(origin.key)) if row < count else QModelIndex()
        if not 0 <= parent.row() < len(self._groups):
            return QModelIndex()
        group = self._groups[parent.row()]
        return self.createIndex(row, 0, group.uid) if row < len(group.rows) else QModelIndex()

    def parent(self, child: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not child.isValid() or child.internalId() == 0:
            return QModelIndex()
        origin = self._uid_origins.get(child.internalId())
        if origin is not None:
            return self.index_of_key(origin)
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

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return _NO_FLAGS
        uid = index.internalId()
        if uid == 0:
            return _GROUP_FLAGS
        if self._origin_keys and uid not in self._uid_origins:  # a session has children when it has branches
            info = self._info_at(index)
            if info is not None and info.key in self._origin_keys:
                return _ORIGIN_FLAGS if self._renamer is not None else _ORIGIN_FLAGS & ~_EDITABLE
        return _SESSION_FLAGS if self._renamer is not None else _SESSION_FLAGS & ~_EDITABLE

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            return self._group_data(self._groups[index.row()], role) if index.row() < len(self._groups) else None
        info = self._info_at(index)
        return None if info is None else self._session_data(info, role)

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
        self._rows_of(index)[index.row()] = updated if updated is not None else _retitled(info, title or info.key)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, TitleRole,
                                             InfoRole])
        return True

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names.update({int(role): QByteArray(name) for role, name in _ROLE_NAMES.items()})
        return names

    def _group_data(self, group: _Group, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, TitleRole):
            return group_title(group.channel)
        if role == ChannelRole:
            return group.channel
        if role == IsGroupRole:
            return True
        if role == KeyRole:
            return ""
        if role == MessageCountRole:
            return len(group.rows)
        if role == Qt.ItemDataRole.ToolTipRole:
            count = len(group.rows)
            return translate("Sessions", "%n session(s) of the “{channel}” channel", None, count).format(
                channel=group.channel)
        return None

    def _session_data(self, info: SessionInfo, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, TitleRole):
            return session_title(info.title, info.message_count)
        if role == Qt.ItemDataRole.EditRole:
            return "" if info.title == info.key else info.title
        if role == KeyRole:
            return info.key
        if role == ChannelRole:
            return info.channel
        if role == UpdatedAtRole:
            return info.updated_at
        if role == PreviewRole:
            return info.preview
        if role == MessageCountRole:
            return info.message_count
        if role == PathRole:
            return str(info.path)
        if role == IsGroupRole:
            return False
        if role == BusyRole:
            return info.key in self._busy
        if role == UnreadRole:
            return info.key in self._unread
        if role == InfoRole:
            return info
        if role == Qt.ItemDataRole.ToolTipRole and info.archived:
            return translate("Sessions", "This conversation was put aside by /new. "
                                         "Double-click it to continue it in a new chat.")
        if role == Qt.ItemDataRole.ToolTipRole:
            count = info.message_count
            return translate("Sessions", "{title}\n{key} · %n message(s)\nupdated {when} · {file}", None, count).format(
                title=session_title(info.title, count), key=info.key, when=format_when(info.updated_at),
                file=info.path.name)
        return None

    # --- reading ---------------------------------------------------------------------------------

    def keys(self) -> list[str]:
        """Every session key, in display order (groups in order, newest first inside each, each
        session's branches right after it)."""
        return [key for group in self._groups for info in group.rows
                for key in [info.key, *(branch.key for branch in group.branches.get(info.key, []))]]

    def info(self, key: str) -> SessionInfo | None:
        index = self.index_of_key(key)
        return self._info_at(index) if index.isValid() else None

    def index_of_key(self, key: str) -> QModelIndex:
        for group in self._groups:
            for row, info in enumerate(group.rows):
                if info.key == key:
                    return self.createIndex(row, 0, group.uid)
            for origin, branches in group.branches.items():
                for row, info in enumerate(branches):
                    if info.key == key:
                        return self.createIndex(row, 0, self._origin_uid(origin))
        return QModelIndex()

    def touch(self, keys: set[str]) -> None:
        """Tell the views (and a filter proxy: it re-judges exactly these rows) that the rows of `keys`
        changed, with their groups and origins first so a hidden group can show. One pass over the
        rows, so a search's 200 hits do not cost 200 scans of 20,000 rows."""
        if not keys:
            return
        parents: list[QModelIndex] = []
        rows: list[QModelIndex] = []
        for group_row, group in enumerate(self._groups):
            group_index = self.createIndex(group_row, 0, 0)
            hit_group = False
            for row, info in enumerate(group.rows):
                branches = group.branches.get(info.key, []) if group.branches else []
                hit_branches = [position for position, branch in enumerate(branches) if branch.key in keys]
                if info.key in keys or hit_branches:
                    hit_group = True
                    rows.append(self.createIndex(row, 0, group.uid))
                    uid = self._origin_uid(info.key) if hit_branches else 0
                    rows += [self.createIndex(position, 0, uid) for position in hit_branches]
            if hit_group:
                parents.append(group_index)
        for index in parents + rows:
            self.dataChanged.emit(index, index, [])

    def branch_origin(self, key: str) -> str:
        """The key of the row a branch is shown under ("" for a top-level row)."""
        index = self.index_of_key(key)
        return self._uid_origins.get(index.internalId(), "") if index.isValid() else ""

    def channels(self) -> list[str]:
        return [group.channel for group in self._groups]

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
        index = self.index_of_key(key)
        if index.isValid():
            self.dataChanged.emit(index, index, [role])

    # --- syncing with a new listing ----------------------------------------------------------------

    def set_sessions(self, infos: list[SessionInfo]) -> None:
        """Show `infos` (newest first), changing only what differs from what is shown."""
        wanted: dict[str, list[SessionInfo]] = {}
        # Two files mapping to one key (post4's name collisions): `arrange` shows the newest.
        top, branches = arrange(infos)
        for info in top:
            wanted.setdefault(info.channel, []).append(info)
        shown_branches = {origin: [b.key for b in rows] for group in self._groups for origin, rows in group.branches.items()}
        if shown_branches != {origin: [b.key for b in rows] for origin, rows in branches.items()} or any(
                moves_needed([i.key for i in group.rows], [i.key for i in wanted.get(group.channel, [])])
                > MAX_MOVES for group in self._groups):
            # A big reshuffle (a clock change, a restored backup) or a new branch: one reset beats
            # thousands of moves, and branches come and go rarely.
            self.beginResetModel()
            self._groups = [_Group(channel, list(wanted[channel])) for channel in sorted(wanted, key=group_rank)]
            for group in self._groups:
                group.branches = {info.key: branches[info.key] for info in group.rows if info.key in branches}
            self._lists = {}
            self._origin_keys = set(branches)
            self.endResetModel()
            return
        for row in range(len(self._groups) - 1, -1, -1):
            if self._groups[row].channel not in wanted:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._groups[row]
                self.endRemoveRows()
        for row, channel in enumerate(sorted(wanted, key=group_rank)):
            if row < len(self._groups) and self._groups[row].channel == channel:
                continue
            self.beginInsertRows(QModelIndex(), row, row)
            self._groups.insert(row, _Group(channel))
            self.endInsertRows()
        for row, group in enumerate(self._groups):
            self._sync_group(row, group, wanted[group.channel])
            for origin, rows in group.branches.items():  # the same branches (else the reset above)
                parent = self.index_of_key(origin)
                for position, info in enumerate(branches[origin]):
                    if not _same_row(rows[position], info):
                        rows[position] = info
                        index = self.index(position, 0, parent)
                        self.dataChanged.emit(index, index, [])
        # Busy and unread marks are kept even for keys not listed (yet): a new session's turn runs,
        # and may ask for approval, before its file shows up in a listing.

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

    def branches_of(self, origin: str) -> list[SessionInfo]:
        """The branches shown under `origin` (empty for most sessions)."""
        return self._branches_of(origin)

    def group_rows(self, group: _Index) -> list[SessionInfo]:
        """The top-level sessions of a group row."""
        return self._groups[group.row()].rows if group.isValid() and 0 <= group.row() < len(self._groups) else []

    def origins(self) -> list[str]:
        """Keys of the sessions that have branches (their rows open to show them)."""
        return [origin for group in self._groups for origin in group.branches]

    def info_at(self, index: _Index) -> SessionInfo | None:
        """The session an index of this model shows (None for a group row): no Qt data() round trip."""
        return self._info_at(index) if index.isValid() and index.internalId() != 0 else None

    def _info_at(self, index: _Index) -> SessionInfo | None:
        rows = self._rows_of(index)
        return rows[index.row()] if 0 <= index.row() < len(rows) else None


def _retitled(info: SessionInfo, title: str) -> SessionInfo:
    return replace(info, title=title)
