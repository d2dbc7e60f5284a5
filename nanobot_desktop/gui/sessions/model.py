"""The session list as a two-level item model: channel groups, each holding its sessions newest first.

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
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum
from typing import Any, Callable

from PySide6.QtCore import QAbstractItemModel, QByteArray, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal

from nanobot_desktop.engine import SessionInfo
from nanobot_desktop.gui.common.notice_bar import reason_of

_Index = QModelIndex | QPersistentModelIndex

GROUP_ORDER = ("desktop", "cli", "heartbeat", "cron", "subagent", "system")
GROUP_TITLES = {"desktop": "Desktop", "cli": "Command line", "heartbeat": "Heartbeat", "cron": "Scheduled",
                "subagent": "Subagents", "system": "System"}


def group_title(channel: str) -> str:
    """Heading of a channel's group; channels the nanobot CLI writes (telegram, slack, ...) get their name."""
    return GROUP_TITLES.get(channel) or (channel[:1].upper() + channel[1:] if channel else "Other")


def _group_rank(channel: str) -> tuple[int, str]:
    return (GROUP_ORDER.index(channel) if channel in GROUP_ORDER else len(GROUP_ORDER), channel)


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
MAX_MOVES = 2
"""More row moves than this in one listing and the model resets instead: through the filter proxy a
move re-lays out the whole view (about 60 ms at 2,000 sessions), a reset costs about two moves."""


@dataclass(eq=False)
class _Group:
    channel: str
    rows: list[SessionInfo] = field(default_factory=list)
    uid: int = field(default_factory=lambda: next(_group_ids))


def _same_row(a: SessionInfo, b: SessionInfo) -> bool:
    return (a.title, a.updated_at, a.preview, a.message_count, a.path, a.created_at) == \
        (b.title, b.updated_at, b.preview, b.message_count, b.path, b.created_at)


def format_when(stamp: str, now: datetime | None = None) -> str:
    """"14:05" today, "Mon 14:05" this week, "2026-03-08" before (for the list's right column)."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone().replace(tzinfo=None)
    now = now or datetime.now()
    if moment.date() == now.date():
        return moment.strftime("%H:%M")
    if 0 < (now.date() - moment.date()).days < 7:
        return moment.strftime("%a %H:%M")
    return moment.strftime("%Y-%m-%d")


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

    # --- Qt model interface ----------------------------------------------------------------------

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:
        if column != 0 or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, 0, 0) if row < len(self._groups) else QModelIndex()
        if parent.internalId() != 0 or not 0 <= parent.row() < len(self._groups):
            return QModelIndex()
        group = self._groups[parent.row()]
        return self.createIndex(row, 0, group.uid) if row < len(group.rows) else QModelIndex()

    def parent(self, child: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not child.isValid() or child.internalId() == 0:
            return QModelIndex()
        row = self._group_row_by_uid(child.internalId())
        return self.createIndex(row, 0, 0) if row >= 0 else QModelIndex()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        if not parent.isValid():
            return len(self._groups)
        if parent.column() != 0 or parent.internalId() != 0 or not 0 <= parent.row() < len(self._groups):
            return 0
        return len(self._groups[parent.row()].rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 1

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:  # noqa: N802
        return self.rowCount(parent) > 0

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if index.internalId() == 0:
            return Qt.ItemFlag.ItemIsEnabled
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
        if self._renamer is not None:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

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
        if info is None:
            return False
        title = str(value or "").strip()
        try:
            updated = self._renamer(info.key, title)
        except (OSError, ValueError) as error:
            self.rename_failed.emit(info.key, f"Could not rename “{info.title}” ({reason_of(error)}). "
                                              "Try another name.")
            return False
        group = self._groups[self._group_row_by_uid(index.internalId())]
        group.rows[index.row()] = updated if updated is not None else _retitled(info, title or info.key)
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
            return f"{len(group.rows)} session(s) of the “{group.channel}” channel"
        return None

    def _session_data(self, info: SessionInfo, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, TitleRole):
            return info.title
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
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"{info.title}\n{info.key} · {info.message_count} message(s)\n"
                    f"updated {format_when(info.updated_at)} · {info.path.name}")
        return None

    # --- reading ---------------------------------------------------------------------------------

    def keys(self) -> list[str]:
        """Every session key, in display order (groups in order, newest first inside each)."""
        return [info.key for group in self._groups for info in group.rows]

    def info(self, key: str) -> SessionInfo | None:
        for group in self._groups:
            for info in group.rows:
                if info.key == key:
                    return info
        return None

    def index_of_key(self, key: str) -> QModelIndex:
        for group in self._groups:
            for row, info in enumerate(group.rows):
                if info.key == key:
                    return self.createIndex(row, 0, group.uid)
        return QModelIndex()

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
        seen: set[str] = set()
        for info in infos:
            if info.key in seen:  # two files mapping to one key (post4's name collisions): show the newest
                continue
            seen.add(info.key)
            wanted.setdefault(info.channel, []).append(info)
        if any(_moves_needed([i.key for i in group.rows], [i.key for i in wanted.get(group.channel, [])])
               > MAX_MOVES for group in self._groups):
            # A big reshuffle (a clock change, a restored backup): one reset beats thousands of moves.
            self.beginResetModel()
            self._groups = [_Group(channel, list(wanted[channel])) for channel in sorted(wanted, key=_group_rank)]
            self.endResetModel()
            return
        for row in range(len(self._groups) - 1, -1, -1):
            if self._groups[row].channel not in wanted:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._groups[row]
                self.endRemoveRows()
        for row, channel in enumerate(sorted(wanted, key=_group_rank)):
            if row < len(self._groups) and self._groups[row].channel == channel:
                continue
            self.beginInsertRows(QModelIndex(), row, row)
            self._groups.insert(row, _Group(channel))
            self.endInsertRows()
        for row, group in enumerate(self._groups):
            self._sync_group(row, group, wanted[group.channel])
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

    def _info_at(self, index: _Index) -> SessionInfo | None:
        group_row = self._group_row_by_uid(index.internalId())
        if group_row < 0:
            return None
        rows = self._groups[group_row].rows
        return rows[index.row()] if 0 <= index.row() < len(rows) else None


def _moves_needed(shown: list[str], wanted: list[str], limit: int = MAX_MOVES) -> int:
    """How many row moves the in-place sync would make (counting stops just past `limit`)."""
    if not shown:
        return 0
    wanted_keys = set(wanted)
    rows = [key for key in shown if key in wanted_keys]
    present = set(rows)
    moves = 0
    for position, key in enumerate(wanted):
        if key not in present:
            rows.insert(position, key)
        elif rows[position] != key:
            rows.insert(position, rows.pop(rows.index(key, position + 1)))
            moves += 1
            if moves > limit:
                break
    return moves


def _retitled(info: SessionInfo, title: str) -> SessionInfo:
    return SessionInfo(key=info.key, path=info.path, title=title, channel=info.channel, created_at=info.created_at,
                       updated_at=info.updated_at, message_count=info.message_count, preview=info.preview)
