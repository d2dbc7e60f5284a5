"""Moving session files aside instead of deleting them: `.trash/` (restorable) and `.archive/` (`/new`).

Both folders sit inside `sessions/`, so a move is a same-disk rename (instant, atomic), and the
original's `sessions/*.jsonl` listing never sees them. A trashed file is named
`<safe_key>~<YYYYmmdd-HHMMSS>[-n].jsonl`; that file name is the trash id.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from nanobot_desktop.engine.sessions.file import parse_header, read_first_line
from nanobot_desktop.engine.sessions.listing import key_from_stem, mtime_iso, summarize

log = logging.getLogger(__name__)

TRASH_SEPARATOR = "~"
ARCHIVE_SEPARATOR = "-"
_STAMP_FORMAT = "%Y%m%d-%H%M%S"


class SessionNotFoundError(FileNotFoundError):
    """The session (or trash entry) asked for has no file."""


@dataclass
class TrashEntry:
    """A deleted session waiting in `sessions/.trash/`; `trash_id` is what `restore` takes."""

    trash_id: str
    key: str
    title: str
    deleted_at: str
    path: Path
    message_count: int


def move_aside(path: Path, folder: Path, separator: str, stem: str = "") -> Path:
    """Rename `path` to `<folder>/<stem><separator><YYYYmmdd-HHMMSS>[-n].jsonl`, never overwriting;
    `stem` defaults to the file's own (a restore puts the file back under that name)."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime(_STAMP_FORMAT)
    stem = stem or path.stem
    target = folder / f"{stem}{separator}{stamp}.jsonl"
    counter = 2
    while target.exists():
        target = folder / f"{stem}{separator}{stamp}-{counter}.jsonl"
        counter += 1
    os.replace(path, target)
    return target


def trash_entries(trash_dir: Path) -> list[TrashEntry]:
    """Deleted sessions, most recently deleted first."""
    entries: list[TrashEntry] = []
    if not trash_dir.is_dir():
        return entries
    for path in trash_dir.glob("*.jsonl"):
        stem, _, stamp = path.stem.rpartition(TRASH_SEPARATOR)
        try:
            deleted_at = datetime.strptime(stamp[:15], _STAMP_FORMAT).isoformat()
        except ValueError:
            deleted_at = mtime_iso(path)
        try:
            info = summarize(path, fallback_key=key_from_stem(stem or path.stem))
        except OSError as error:
            log.warning("cannot read trashed session %s: %s", path, error)
            continue
        entries.append(TrashEntry(trash_id=path.name, key=info.key, title=info.title, deleted_at=deleted_at,
                                  path=path, message_count=info.message_count))
    entries.sort(key=lambda entry: (entry.deleted_at, entry.trash_id), reverse=True)
    return entries


def restore_from_trash(trash_dir: Path, sessions_dir: Path, trash_id: str) -> str:
    """Move a trashed file back to `sessions_dir` under its old name; returns the session key."""
    if not trash_id or Path(trash_id).name != trash_id or not trash_id.endswith(".jsonl"):
        raise ValueError(f"not a trash id: {trash_id!r}")
    source = trash_dir / trash_id
    if not source.is_file():
        raise SessionNotFoundError(f"nothing in the trash with id {trash_id!r}")
    stem = source.stem.rpartition(TRASH_SEPARATOR)[0] or source.stem
    target = sessions_dir / f"{stem}.jsonl"
    if target.exists():
        raise FileExistsError(f"cannot restore {trash_id}: a session file {target.name} already exists; "
                              "rename or delete that session first")
    header = parse_header(read_first_line(source))
    key = header.get("key") if header else None
    os.replace(source, target)
    return key if isinstance(key, str) else key_from_stem(stem)
