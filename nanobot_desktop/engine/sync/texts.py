"""Conflict copies of the workspace's text files and of the history log.

Text files (MEMORY.md, the bootstrap files, HEARTBEAT.md, skills) cannot be merged line by line without
guessing, so nothing is overwritten: the conflict is listed with both versions, the last saved version
before it (MEMORY.md keeps versions; others have none) and the device, and the person decides. Their
choice is written through the same door as every other save (MEMORY.md through Memory, so the version it
replaces is kept), and the copy goes to the app's trash in the workspace, where it can still be read.

The history log is append-only like a session: the entries of a copy that the log lacks are appended in
time order (HISTORY.md as paragraphs, history.jsonl as new entries with new cursors, the other machine's
cursor numbers being its own), and the copy goes to the trash.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from nanobot_desktop.engine.sessions.file import leads_out
from nanobot_desktop.engine.sync.machines import APP_FOLDER
from nanobot_desktop.engine.sync.merge import MAX_COPY_BYTES, MERGED, TOO_LARGE, UNREADABLE, CopyMerge
from nanobot_desktop.engine.sync.names import ConflictName, conflict_copies
from nanobot_desktop.engine.sync.syncthing import name_device

if TYPE_CHECKING:
    from nanobot_desktop.engine.memory.store import MemoryStore

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".md", ".txt")
MAX_TEXT_BYTES = 2_000_000


def trash_folder(workspace: Path) -> Path:
    """Where merged or replaced copies of text files and history go (restorable by hand)."""
    return workspace / APP_FOLDER / "trash"


def _to_trash(copy: Path, workspace: Path) -> Path:
    folder = trash_folder(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / copy.name
    counter = 2
    while target.exists():
        target = folder / f"{copy.stem}-{counter}{copy.suffix}"
        counter += 1
    os.replace(copy, target)
    return target


@dataclass(frozen=True)
class TextConflict:
    """One text file changed on two machines: `original` (this machine's) and `copy` (the other's)."""

    original: Path
    copy: Path
    conflict: ConflictName
    base_text: str | None  # the last saved version before the conflict, when the file keeps versions
    base_label: str  # says which version that is, or that there is none

    @property
    def name(self) -> str:
        """The file as the workspace names it: "MEMORY.md", "skills/weather/SKILL.md"."""
        return self.original.name if self.original.parent.name != "memory" else f"memory/{self.original.name}"

    def ours(self) -> str:
        return _read_text(self.original)

    def theirs(self) -> str:
        return _read_text(self.copy)


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    return data.decode("utf-8", errors="replace")


def _text_folders(workspace: Path, memory: MemoryStore) -> list[Path]:
    folders = [workspace, memory.memory_file.parent]
    skills = workspace / "skills"
    try:
        folders += sorted(p for p in skills.iterdir() if p.is_dir())
    except OSError:
        pass
    return folders


def text_conflicts(workspace: Path, memory: MemoryStore) -> list[TextConflict]:
    """Every conflict copy of a text file of the workspace whose original exists, oldest first."""
    found: list[TextConflict] = []
    history = memory.history_file.name
    for folder in _text_folders(workspace, memory):
        for copy, conflict in conflict_copies(folder):
            original = folder / conflict.original_name
            if not conflict.original_name.endswith(TEXT_SUFFIXES) or conflict.original_name == history:
                continue
            if not original.is_file() or leads_out(original) is not None or leads_out(copy) is not None:
                continue  # a link or a second name is exec's doing, never a sync tool's: not shown, not read
            base_text, base_label = _base_version(original, conflict, memory)
            found.append(TextConflict(original, copy, name_device(conflict, folder), base_text, base_label))
    return found


def _base_version(original: Path, conflict: ConflictName, memory: MemoryStore) -> tuple[str | None, str]:
    if original != memory.memory_file:
        return None, "no earlier version of this file is kept"
    versions = memory.list_versions()
    if conflict.when is not None:
        versions = [v for v in versions if v.saved_at <= conflict.when] or versions
    if not versions:
        return None, "no earlier version of MEMORY.md is kept yet"
    newest = versions[0]
    try:
        return memory.read_version(newest), f"saved {newest.saved_at:%Y-%m-%d %H:%M}"
    except (OSError, ValueError) as error:
        return None, f"the last version could not be read ({error})"


def resolve_text_conflict(conflict: TextConflict, text: str, workspace: Path, memory: MemoryStore) -> Path:
    """Write the person's chosen `text` to the file and move the other machine's copy to the trash;
    returns where the copy went. MEMORY.md is saved through Memory (the replaced text is kept as a version)."""
    from nanobot_desktop.engine.workspace import atomic_write_text

    if conflict.original == memory.memory_file:
        if text != conflict.ours():
            memory.write_long_term(text, source="merge")
    elif text != conflict.ours():
        atomic_write_text(conflict.original, text)
    moved = _to_trash(conflict.copy, workspace)
    log.info("%s: kept the chosen text; %s's copy is in %s", conflict.name, conflict.conflict.describe_device(), moved)
    return moved


# --- the history log ----------------------------------------------------------------------------------

def merge_history_copies(workspace: Path, memory: MemoryStore) -> list[CopyMerge]:
    """Append to the history log the entries of its conflict copies that it lacks, then trash the copies."""
    log_file = memory.history_file
    results: list[CopyMerge] = []
    for copy, conflict in conflict_copies(log_file.parent):
        if conflict.original_name != log_file.name:
            continue
        conflict = name_device(conflict, log_file.parent)
        outside = leads_out(copy)
        if outside is not None:
            results.append(CopyMerge(copy, conflict, "", UNREADABLE, detail=f"it leads out of the memory folder: {outside}"))
            continue
        try:
            size = copy.stat().st_size
            if size > MAX_COPY_BYTES:
                results.append(CopyMerge(copy, conflict, "", TOO_LARGE, detail=f"{size / 1e6:.0f} MB"))
                continue
            added = _merge_journal(copy, memory) if log_file.suffix == ".jsonl" else _merge_paragraphs(copy, memory)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            results.append(CopyMerge(copy, conflict, "", UNREADABLE, detail=str(error)))
            continue
        _to_trash(copy, workspace)
        results.append(CopyMerge(copy, conflict, "", MERGED, added=added))
        log.info("history: %d entries from %s's copy added", added, conflict.describe_device())
    return results


def _merge_paragraphs(copy: Path, memory: MemoryStore) -> int:
    from nanobot_desktop.engine.memory.store import split_history_entries

    have = Counter(split_history_entries(memory.read_history()))
    missing: list[str] = []
    for entry in split_history_entries(copy.read_text(encoding="utf-8")):
        if have[entry] > 0:
            have[entry] -= 1
        else:
            missing.append(entry)
    for entry in sorted(missing):  # "[YYYY-MM-DD HH:MM] …": sorting the text sorts by time
        memory.append_history(entry)
    return len(missing)


def _merge_journal(copy: Path, memory: MemoryStore) -> int:
    journal = memory.journal
    if journal is None:
        raise ValueError("this workspace keeps its history in HISTORY.md")
    have = Counter((e.timestamp, e.content) for e in journal.entries())
    missing: list[tuple[str, str, str | None]] = []
    for line in copy.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or not isinstance(record.get("content"), str) \
                or not isinstance(record.get("timestamp"), str):
            continue
        key = (record["timestamp"], record["content"])
        if have[key] > 0:
            have[key] -= 1
            continue
        session = record.get("session_key")
        missing.append((record["timestamp"], record["content"], session if isinstance(session, str) else None))
    for stamp, content, session in sorted(missing, key=lambda item: item[0]):
        try:
            when: datetime | None = datetime.strptime(stamp, "%Y-%m-%d %H:%M")
        except ValueError:
            when = None
        journal.append(content, session_key=session, when=when)
    return len(missing)
