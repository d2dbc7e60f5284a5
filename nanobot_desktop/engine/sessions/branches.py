"""Branches of a conversation: new session files that start with a copy of another session's first messages.

Editing an old message or regenerating a reply must never rewrite the session it came from (files are
append-only, and the nanobot CLI may have it open). So a branch is a NEW session file: its metadata
line's `metadata` holds `"branch_of": {"key": <origin key>, "at": <messages copied>}`, then come the
origin's messages `[0:at]` exactly as they were, then the new turn. To the CLI it is a plain linear
session; the app reads the pointer to show siblings ("‹ 2/3 ›") at the branch point.

Siblings at a branch point (origin O, position n) are O itself and every session whose `branch_of` is
(O, n), origin first, then the branches in the order they were made. Finding them reads only the
metadata line of each session file (one short read per file).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sessions.file import parse_header, read_first_line
from nanobot_desktop.engine.sync.names import parse_conflict_name

__all__ = ["BRANCH_FIELD", "BranchPoint", "BranchRecord", "branch_of", "branch_points", "read_branch_records"]

BRANCH_FIELD = "branch_of"


def branch_of(metadata: Any) -> tuple[str, int] | None:
    """(origin key, messages copied) when `metadata` (a session's `metadata` dict) marks a branch."""
    if not isinstance(metadata, dict):
        return None
    pointer = metadata.get(BRANCH_FIELD)
    if not isinstance(pointer, dict):
        return None
    key, at = pointer.get("key"), pointer.get("at")
    if not isinstance(key, str) or not key or isinstance(at, bool) or not isinstance(at, int) or at < 0:
        return None
    return key, at


@dataclass(frozen=True)
class BranchRecord:
    """One session file that is a branch: its key, where it came from, and when it was made."""

    key: str
    origin: str
    at: int
    created_at: str


@dataclass(frozen=True)
class BranchPoint:
    """Where a session's conversation forks: message `at` of the session shown differs between `keys`
    (origin first), and the session shown is `keys[index]`."""

    at: int
    keys: tuple[str, ...]
    index: int


def read_branch_records(files: Iterable[tuple[Path, str | None]]) -> list[BranchRecord]:
    """The branches among `files` ((path, key from its name) pairs), from their metadata lines only."""
    records: list[BranchRecord] = []
    for path, name_key in files:
        try:
            header = parse_header(read_first_line(path))
        except OSError:
            continue
        if header is None:
            continue
        pointer = branch_of(header.get("metadata"))
        if pointer is None:
            continue
        key = header.get("key") if isinstance(header.get("key"), str) else name_key
        if not key:
            continue
        created = header.get("created_at")
        records.append(BranchRecord(str(key), pointer[0], pointer[1], created if isinstance(created, str) else ""))
    return records


def branch_points(key: str, metadata: dict[str, Any], records: list[BranchRecord]) -> list[BranchPoint]:
    """The forks to show in session `key` (whose metadata is `metadata`), by position, oldest first.

    Three kinds: each point where other sessions branched off `key`; the point where `key` branched off
    its origin; and, up the line of origins, each earlier fork inside the messages `key` copied (there
    `key` stands in the place of the ancestor it descends from).
    """
    groups: dict[tuple[str, int], list[BranchRecord]] = {}
    by_key = {record.key: record for record in records}
    for record in records:
        groups.setdefault((record.origin, record.at), []).append(record)
    wanted: list[tuple[str, int, str]] = [(key, at, key) for (origin, at) in groups if origin == key]
    pointer, member, limit = branch_of(metadata), key, None
    seen = {key}
    while pointer is not None and (limit is None or pointer[1] < limit):
        wanted.append((pointer[0], pointer[1], member))  # `member` holds `key`'s place at this fork
        member, limit = pointer[0], pointer[1]
        if member in seen:
            break  # pointers that go round in a circle (edited by hand)
        seen.add(member)
        parent = by_key.get(member)
        pointer = (parent.origin, parent.at) if parent is not None else None
    points: dict[int, BranchPoint] = {}
    for origin, at, shown in wanted:
        members = sorted(groups.get((origin, at), []), key=lambda r: (r.created_at, r.key))
        keys = (origin, *[m.key for m in members])
        if shown in keys and len(keys) > 1 and at not in points:
            index = keys.index(shown)
            points[at] = BranchPoint(at, keys[:index] + (key,) + keys[index + 1:] if shown != key else keys, index)
    return [points[at] for at in sorted(points)]


def session_files(folder: Path) -> list[Path]:
    """The `*.jsonl` files directly in `folder` (none when it does not exist), a sync tool's conflict
    copies left out (they are merged into their session, engine/sync/sessions.py)."""
    if not folder.is_dir():
        return []
    with os.scandir(folder) as entries:
        files = [entry for entry in entries if entry.name.endswith(".jsonl") and entry.is_file()]
    names = {entry.name for entry in files}
    return [Path(entry.path) for entry in files if parse_conflict_name(entry.name, names) is None]
