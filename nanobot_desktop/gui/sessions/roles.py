"""The session list's item roles, row flags and what each row answers for a role (split from
model.py, which keeps the tree and its syncing)."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt

from nanobot_desktop.engine import SessionInfo
from nanobot_desktop.gui.common.engine_words import session_title
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.sessions.rows import format_when, group_title


class SessionRole(IntEnum):
    """What the delegate, the panel and the tests ask a row for besides Qt's own roles."""

    KeyRole = Qt.ItemDataRole.UserRole + 1  # session key ("" for a group row)
    ChannelRole = Qt.ItemDataRole.UserRole + 2  # the channel (group rows too)
    TitleRole = Qt.ItemDataRole.UserRole + 3
    UpdatedAtRole = Qt.ItemDataRole.UserRole + 4  # ISO text, as stored
    PreviewRole = Qt.ItemDataRole.UserRole + 5  # last message preview, or the search's snippet
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

ROLE_NAMES = {KeyRole: b"key", ChannelRole: b"channel", TitleRole: b"title", UpdatedAtRole: b"updatedAt",
              PreviewRole: b"preview", MessageCountRole: b"messageCount", PathRole: b"path",
              IsGroupRole: b"isGroup", BusyRole: b"busy", UnreadRole: b"unread", InfoRole: b"info"}

# Precomputed: Qt asks for every row's flags when it lays out 20,000 rows, and enum arithmetic is slow.
NO_FLAGS = Qt.ItemFlag.NoItemFlags
GROUP_FLAGS = Qt.ItemFlag.ItemIsEnabled
EDITABLE = Qt.ItemFlag.ItemIsEditable
ORIGIN_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | EDITABLE
SESSION_FLAGS = ORIGIN_FLAGS | Qt.ItemFlag.ItemNeverHasChildren


def group_data(channel: str, count: int, role: int) -> Any:
    """What a channel group's row answers for `role` (`count`: its sessions shown)."""
    if role in (Qt.ItemDataRole.DisplayRole, TitleRole):
        return group_title(channel)
    if role == ChannelRole:
        return channel
    if role == IsGroupRole:
        return True
    if role == KeyRole:
        return ""
    if role == MessageCountRole:
        return count
    if role == Qt.ItemDataRole.ToolTipRole:
        return translate("Sessions", "%n session(s) of the “{channel}” channel", None, count).format(
            channel=channel)
    return None


def session_data(info: SessionInfo, role: int, snippet: str, busy: bool, unread: bool) -> Any:
    """What a session's row answers for `role` (`snippet`: the search's match, shown as the preview)."""
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
        return snippet or info.preview
    if role == MessageCountRole:
        return info.message_count
    if role == PathRole:
        return str(info.path)
    if role == IsGroupRole:
        return False
    if role == BusyRole:
        return busy
    if role == UnreadRole:
        return unread
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
