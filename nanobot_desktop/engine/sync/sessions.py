"""Merging a sync tool's conflict copy of a session file back into the session, never losing a line.

Two machines that append to one session between two syncs leave two versions: the sync tool keeps one
under the session's name and renames the other (sync/names.py). Both start with the same lines (the
conversation before the split) and then differ. The merge appends to the session every message of the
copy that the session lacks, in the copy's time order; the session's own lines and its metadata line
stay as they are (append-only, as every write of a session), and the copy goes to `.trash/` (restorable),
where any line that could not be read stays too. A message counts as present when the session holds the
same JSON object (the same message copied by both machines is one message, however it was spaced).

What is not merged is said, and the copy is left where it is: a copy larger than the limit, or one with
no session line in it. A copy whose session no longer exists goes to the trash unmerged (the person had
deleted the session on one machine; the other machine's lines are kept there, restorable).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nanobot_desktop.engine.sessions.file import parse_session_bytes
from nanobot_desktop.engine.sessions.trash import TRASH_SEPARATOR, move_aside
from nanobot_desktop.engine.sync.names import ConflictName, conflict_copies

if TYPE_CHECKING:
    from nanobot_desktop.engine.sessions.store import SessionStore

log = logging.getLogger(__name__)

# A session copy larger than this is not read into memory to be merged (a session of 100,000 messages is
# ~40 MB); it stays where it is, with a notice, for the person to look at.
MAX_COPY_BYTES = 64 << 20

MERGED = "merged"
ORPHANED = "orphaned"  # the session it is a copy of is gone: the copy went to the trash
TOO_LARGE = "too-large"
UNREADABLE = "unreadable"


@dataclass(frozen=True)
class CopyMerge:
    """What became of one conflict copy: `outcome` is MERGED, ORPHANED, TOO_LARGE or UNREADABLE."""

    copy: Path
    conflict: ConflictName
    session_key: str
    outcome: str
    added: int = 0
    skipped_lines: int = 0
    detail: str = ""

    def sentence(self) -> str:
        """One line a person reads in the notice bar or a log."""
        device = self.conflict.describe_device()
        if self.outcome == MERGED:
            if not self.added:
                return f"A copy of this conversation from {device} had nothing new; it was moved to the trash."
            noun = "message" if self.added == 1 else "messages"
            return f"Added {self.added} {noun} from {device} that were missing here (a sync conflict)."
        if self.outcome == ORPHANED:
            return (f"A copy of a deleted conversation came from {device}; it is in the trash "
                    f"({self.copy.name}), where it can be restored.")
        if self.outcome == TOO_LARGE:
            return f"A sync conflict copy from {device} is too large to merge ({self.detail}); it was left as it is: {self.copy.name}."
        return f"A sync conflict copy from {device} could not be read ({self.detail}); it was left as it is: {self.copy.name}."


def session_conflict_copies(folder: Path) -> list[tuple[Path, ConflictName]]:
    """The conflict copies among a sessions folder's `*.jsonl` files, oldest first."""
    return [(path, name) for path, name in conflict_copies(folder, ".jsonl") if name.original_name.endswith(".jsonl")]


def merge_session_copies(store: SessionStore) -> list[CopyMerge]:
    """Merge every conflict copy in the store's sessions folder; one `CopyMerge` each, oldest copy first."""
    return [merge_one(store, path, name) for path, name in session_conflict_copies(store.sessions_dir)]


def merge_one(store: SessionStore, copy: Path, conflict: ConflictName) -> CopyMerge:
    original = copy.with_name(conflict.original_name)
    key = store.key_for_file(original)
    try:
        size = os.stat(copy).st_size
    except OSError as error:
        return CopyMerge(copy, conflict, key, UNREADABLE, detail=error.strerror or str(error))
    if size > MAX_COPY_BYTES:
        result = CopyMerge(copy, conflict, key, TOO_LARGE, detail=f"{size / 1e6:.0f} MB; the limit is {MAX_COPY_BYTES / 1e6:.0f} MB")
        log.warning("%s", result.sentence())
        return result
    try:
        parsed = parse_session_bytes(copy.read_bytes(), copy.name)
    except OSError as error:
        return CopyMerge(copy, conflict, key, UNREADABLE, detail=error.strerror or str(error))
    if parsed.header is None and not parsed.messages:
        result = CopyMerge(copy, conflict, key, UNREADABLE, detail="no session line in it",
                           skipped_lines=len(parsed.warnings))
        log.warning("%s", result.sentence())
        return result
    if not original.exists():
        # Under the session's own name, so that restoring it gives the conversation back, not a copy.
        trashed = move_aside(copy, store.trash_dir, TRASH_SEPARATOR, stem=original.stem)
        result = CopyMerge(trashed, conflict, key, ORPHANED, skipped_lines=len(parsed.warnings))
        log.info("%s", result.sentence())
        return result
    added = store.merge_messages(key, parsed.messages)
    move_aside(copy, store.trash_dir, TRASH_SEPARATOR)
    result = CopyMerge(copy, conflict, key, MERGED, added=added, skipped_lines=len(parsed.warnings))
    log.info("%s (%s)", result.sentence(), copy.name)
    return result
