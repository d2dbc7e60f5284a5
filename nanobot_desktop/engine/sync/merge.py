"""Merging a sync tool's conflict copy of a session file back into the session, never losing a line.

Two machines that append to one session between two syncs leave two versions: the sync tool keeps one
under the session's name and renames the other (sync/names.py). Both start with the same lines (the
conversation before the split) and then differ. The merge appends to the session every message of the
copy that the session lacks, in the copy's time order; the session's own lines and its metadata line
stay as they are (append-only, as every write of a session), and the copy goes to `.trash/` (restorable),
where any line that could not be read stays too. A message counts as present when the session holds the
same JSON object (the same message copied by both machines is one message, however it was spaced).

The session store does the writing (sessions/writing.py, `merge_copies`): when asked (at start, when a
watcher sees a copy, before a headless turn) and before each of its own appends to a file that changed
outside, so that a turn's reply lands after its own question even when the sync tool swapped the file
during the turn. This module holds the rules, free of any file layout.

What is not merged is said, and the copy is left where it is: a copy larger than the limit, or one with
no session line in it. A copy whose session no longer exists goes to the trash unmerged (the person had
deleted the session on one machine; the other machine's lines are kept there, restorable).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sync.names import ConflictName, conflict_copies

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


def identity(message: dict[str, Any]) -> str:
    """The same message, however its JSON was spaced or its keys ordered."""
    return json.dumps(message, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def missing_messages(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of `theirs` that `ours` lacks (counted: a message repeated in theirs but once in ours
    counts once more), ordered by their timestamps; messages without one keep their place after the one
    before them."""
    have = Counter(identity(message) for message in ours)
    missing: list[tuple[str, int, dict[str, Any]]] = []
    last_stamp = ""
    for number, message in enumerate(theirs):
        key = identity(message)
        stamp = message.get("timestamp")
        last_stamp = stamp if isinstance(stamp, str) and stamp else last_stamp
        if have[key] > 0:
            have[key] -= 1
            continue
        missing.append((last_stamp, number, message))
    missing.sort(key=lambda item: (item[0], item[1]))
    return [message for _stamp, _number, message in missing]


def session_conflict_copies(folder: Path, original: str = "") -> list[tuple[Path, ConflictName]]:
    """The conflict copies among a sessions folder's `*.jsonl` files (of `original` only, when given),
    oldest first."""
    # Syncthing's module (urllib.request, http.client, ElementTree: ~1.3 MB resident) is loaded only
    # when there is a copy to name: every session store opens this module, an empty window has none.
    from nanobot_desktop.engine.sync.syncthing import name_device

    return [(path, name_device(name, folder)) for path, name in conflict_copies(folder, ".jsonl")
            if name.original_name.endswith(".jsonl") and (not original or name.original_name == original)]
