"""Conversations `/new` archived (`sessions/.archive/`): listed, and continued as a new session.

An archived file keeps the key of the session it was (the live file of that key starts over), so it
cannot be opened under its key. It is listed with the key `archived:<file name>` (channel
`archived`, `SessionInfo.archived` its file name), and *continuing* it copies its messages into a new
session of the same channel — appended through the store like any turn, titled as the conversation
was — while the archived file itself stays as it is.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from nanobot_desktop.engine.sessions.export import derive_title
from nanobot_desktop.engine.sessions.file import parse_session_bytes
from nanobot_desktop.engine.sessions.key import SessionKey
from nanobot_desktop.engine.sessions.listing import SessionInfo, channel_of, custom_title, sort_time, summarize
from nanobot_desktop.engine.sessions.trash import SessionNotFoundError

if TYPE_CHECKING:
    from nanobot_desktop.engine.sessions.store import SessionStore

log = logging.getLogger(__name__)

ARCHIVED_CHANNEL = "archived"


def list_archived(archive_dir: Path) -> list[SessionInfo]:
    """The archived conversations, most recently active first (unreadable files are left out)."""
    infos: list[SessionInfo] = []
    if not archive_dir.is_dir():
        return infos
    for path in archive_dir.glob("*.jsonl"):
        try:
            info = summarize(path)
        except OSError as error:
            log.warning("cannot read archived session %s: %s", path, error)
            continue
        if info.message_count:
            infos.append(replace(info, key=f"{ARCHIVED_CHANNEL}:{path.name}", channel=ARCHIVED_CHANNEL,
                                 archived=path.name, branch_of=""))
    infos.sort(key=lambda info: (sort_time(info.updated_at), info.key), reverse=True)
    return infos


def continue_archived(store: SessionStore, name: str, new_key: str) -> str:
    """Copy the archived conversation `name` into the new session `new_key`; returns `new_key`.

    `new_key`'s channel is replaced by the archived session's own (a Telegram chat stays Telegram)."""
    path = store.archive_dir / name
    if Path(name).name != name or not name.endswith(".jsonl") or not path.is_file():
        raise SessionNotFoundError(f"no archived conversation {name!r}")
    parsed = parse_session_bytes(path.read_bytes(), name)
    original = parsed.header.get("key") if parsed.header else None
    if isinstance(original, str) and original:
        new_key = str(SessionKey.found(new_key).moved_to(channel_of(original)))
    if store.path_for(new_key).exists():
        raise FileExistsError(f"a session {new_key!r} already exists")
    session = store.get_or_create(new_key)
    store.append(session, parsed.messages)
    title = custom_title(parsed.header) or derive_title(parsed.messages)
    store.update_metadata(session, title=title or None, continued_from=name)
    return new_key
