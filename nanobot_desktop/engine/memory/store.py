"""Two-layer memory: MEMORY.md (lasting facts, rewritten whole) and HISTORY.md (append-only log).

Layout and behaviour follow nanobot 0.1.4.post4 so a workspace stays readable by the CLI. Two things
are added on top: every rewrite of MEMORY.md first keeps the replaced text under
`memory/.versions/` (so nothing the user or the agent wrote is lost and can be restored), and
consolidation (consolidation.py) computes its new offset from the message count it actually summarised.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from datetime import datetime, timedelta
from pathlib import Path

from nanobot_desktop.engine.changes import ChangeTracker, Signature, signature_of
from nanobot_desktop.engine.memory.history_journal import HistoryJournal, current_history_session
from nanobot_desktop.engine.layout import WorkspaceLayout
from nanobot_desktop.engine.own_files import LinkedOut
from nanobot_desktop.engine.memory.git import MemoryGit, MemoryVersion, TrackedFiles
from nanobot_desktop.engine.workspace import (
    StorageError, Workspace, append_text, atomic_write_bytes,
)

log = logging.getLogger(__name__)

VERSIONS_DIRNAME = ".versions"
_VERSION_STAMP = "%Y%m%d-%H%M%S-%f"
_VERSION_NAME = re.compile(r"^MEMORY-(\d{8}-\d{6}-\d{6})-([A-Za-z0-9_-]+)\.md$")
_SOURCE_OK = re.compile(r"^[A-Za-z0-9_-]+$")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _decode(data: bytes) -> str:
    """Text of a memory file; a stray BOM is dropped and undecodable bytes shown, never fatal."""
    return data.decode("utf-8-sig", errors="replace")


class MemoryStore:
    """Reads and writes `memory/MEMORY.md`, the history log and the MEMORY.md versions.

    The `layout` (engine/layout.py) decides the history log (HISTORY.md, or history.jsonl of a 0.3
    workspace) and where versions live (`.versions/`, or the workspace's git repository in 0.3).
    """

    def __init__(self, workspace: Workspace, layout: WorkspaceLayout | None = None,
                 changes: ChangeTracker | None = None) -> None:
        """`changes` is the engine's one change tracker (engine/changes.py; one of its own when None):
        every write here is recorded in it, so only someone else's edit comes back as outside."""
        # Failed consolidations by conversation: (message count then, why), so the same request is not
        # sent again on every turn (see consolidate_detailed).
        self.failed_consolidations: dict[str, tuple[int, str]] = {}
        self.workspace = workspace
        self.layout = layout
        self.changes = changes if changes is not None else ChangeTracker()
        self._restored: tuple[Path, Signature | None] | None = None  # the file the last restore wrote, as it left it
        self.journal = (HistoryJournal(workspace.memory_dir, workspace.own, self.changes)
                        if layout is not None and layout.is_v03 else None)
        self.git = MemoryGit(workspace.root) if layout is not None and layout.is_v03 else None
        self.tracked = TrackedFiles(workspace, self.git, self.changes)  # 0.3: saves are commits, versions commits

    # --- the git-tracked files of a 0.3 workspace (memory/git.py's TrackedFiles) ------------------------

    @property
    def uses_git_versions(self) -> bool:
        """True when versions come from (and saves go to) the workspace's git repository (nanobot 0.3)."""
        return self.tracked.uses_git_versions

    def flush(self) -> None:
        """Wait until every queued write and commit is done (not on the GUI thread)."""
        self.tracked.flush()

    def file_versions(self, rel_path: str) -> list[Any]:
        """Versions of a git-tracked file ("memory/MEMORY.md", "SOUL.md", "USER.md"), newest first."""
        return self.tracked.file_versions(rel_path)

    def restore_file_version(self, version: Any) -> None:
        """Put a committed version of SOUL.md / USER.md / MEMORY.md back, as a new commit."""
        self.tracked.restore_file_version(version)

    def save_tracked(self, path: Path, text: str) -> None:
        """The user's save of SOUL.md or USER.md (the Files view): written and committed as one version."""
        self.tracked.save_tracked(path, text)

    def commit_user_save(self, path: Path) -> str | None:
        """After the user saved SOUL.md or USER.md elsewhere in the app: commit it as 0.3 would see it."""
        return self.tracked.commit_user_save(path)

    @property
    def memory_file(self) -> Path:
        return self.workspace.memory_file

    @property
    def history_file(self) -> Path:
        return self.journal.file if self.journal is not None else self.workspace.history_file


    @property
    def versions_dir(self) -> Path:
        return self.workspace.memory_dir / VERSIONS_DIRNAME

    # ---- long-term memory -------------------------------------------------------------------

    def read_long_term(self) -> str:
        try:
            return _decode(self.workspace.own.read(self.memory_file))
        except (FileNotFoundError, LinkedOut):
            return ""

    def write_long_term(self, content: str, source: str = "user") -> None:
        """Replace MEMORY.md, keeping the text it replaces as a version first (no-op if unchanged)."""
        self._replace_memory(content.encode("utf-8"), source)

    def get_memory_context(self) -> str:
        memory = self.read_long_term()
        return f"## Long-term Memory\n{memory}" if memory.strip() else ""

    def _replace_memory(self, new_data: bytes, source: str, note: str = "") -> None:
        if not _SOURCE_OK.match(source):
            raise ValueError(f"memory version source must be letters, digits, '-' or '_' (got {source!r})")
        if self.uses_git_versions:
            self.tracked.replace("memory/MEMORY.md", new_data, source, note)
            return
        try:
            current = self.workspace.own.read(self.memory_file)
        except (FileNotFoundError, LinkedOut):  # a link out is replaced, and what it led to never copied
            current = None
        if current == new_data:
            return
        try:
            version = self._save_version(current, source) if current is not None else None
        except OSError as error:  # told as a MEMORY.md problem: that is what the person was saving
            raise StorageError(self.memory_file, getattr(error, "cause", error)) from error
        try:
            atomic_write_bytes(self.memory_file, new_data)
        except OSError:
            if version is not None:  # MEMORY.md did not change: the copy of it is not a version
                version.unlink(missing_ok=True)
            raise
        self.changes.wrote(self.memory_file)

    def _save_version(self, data: bytes, source: str) -> Path:
        stamp = datetime.now()
        while True:
            path = self.versions_dir / f"MEMORY-{stamp.strftime(_VERSION_STAMP)}-{source}.md"
            if not path.exists():
                break
            stamp += timedelta(microseconds=1)  # two saves in one clock tick must not overwrite each other
        atomic_write_bytes(path, data)
        self.changes.wrote(path)
        return path

    # ---- versions ---------------------------------------------------------------------------

    def list_versions(self) -> list[MemoryVersion]:
        """Saved copies of MEMORY.md, newest first; files that do not look like versions are ignored."""
        if self.uses_git_versions:
            return self.file_versions("memory/MEMORY.md")
        if not self.versions_dir.is_dir():
            return []
        versions: list[MemoryVersion] = []
        for path in self.versions_dir.iterdir():
            match = _VERSION_NAME.match(path.name)
            if not match or not path.is_file():
                continue
            try:
                saved_at = datetime.strptime(match.group(1), _VERSION_STAMP)
                size = path.stat().st_size
            except (ValueError, OSError):
                continue
            versions.append(MemoryVersion(path=path, saved_at=saved_at, source=match.group(2), size=size))
        versions.sort(key=lambda v: (v.saved_at, v.path.name), reverse=True)
        return versions

    def read_version(self, version: MemoryVersion) -> str:
        if version.commit and self.git is not None:
            rel_path = version.path.relative_to(self.workspace.root).as_posix()
            return self.git.read(version.commit, rel_path)
        return _decode(version.path.read_bytes())

    def restore_version(self, version: MemoryVersion) -> None:
        """Put a saved copy back; the text it replaces becomes a version itself (source "restore")."""
        target = version.path if version.commit else self.memory_file
        if version.commit:
            self.restore_file_version(version)
        else:
            self._replace_memory(version.path.read_bytes(), "restore")
        self._restored = (target, signature_of(target))

    def restore_still_current(self) -> bool:
        """Whether the file the last restore wrote still holds what it wrote: nothing changed it since,
        whoever (the agent, a save here, another program). It ends the memory view's "Restored" line."""
        if self._restored is None:
            return False
        path, signature = self._restored
        return signature_of(path) == signature

    # ---- history ----------------------------------------------------------------------------

    def append_history(self, entry: str) -> None:
        """Append one entry: to history.jsonl in a 0.3 workspace (its cursor rules), else followed by a
        blank line (the post4 `entry.rstrip() + "\\n\\n"` shape)."""
        text = entry.rstrip()
        if not text:
            return
        if self.journal is not None:
            self.journal.append(text, session_key=current_history_session())
            return
        append_text(self.history_file, self._separator_needed() + text + "\n\n")
        self.changes.wrote(self.history_file)

    def commit_consolidation(self, entry: str | None, memory_update: str | None) -> None:
        """Append the history entry and replace MEMORY.md as one step: both happen, or neither.

        The entry goes first (an append can be undone by truncating); if MEMORY.md then cannot be
        written, HISTORY.md is cut back to its length before, so a retry does not log the entry twice.
        """
        journal_before = self.journal.snapshot() if self.journal is not None else None
        try:
            history_before: int | None = self.history_file.stat().st_size
        except FileNotFoundError:
            history_before = None
        if entry:
            self.append_history(entry)
        if memory_update is None:
            return
        try:
            self.write_long_term(memory_update, source="consolidation")
        except OSError:
            if entry and self.journal is not None and journal_before is not None:
                self.journal.restore(journal_before)  # history.jsonl and .cursor as they were
            elif entry:
                self._undo_history_append(history_before)
            raise

    def _undo_history_append(self, length: int | None) -> None:
        try:
            if length is None:
                self.history_file.unlink(missing_ok=True)
            else:
                os.truncate(self.history_file, length)
        except OSError:
            log.exception("could not undo the history entry appended to %s", self.history_file)
        self.changes.wrote(self.history_file)

    def _separator_needed(self) -> str:
        """Extra newlines so a hand-edited file that lost its trailing blank line keeps entries apart."""
        try:
            size = self.history_file.stat().st_size
        except FileNotFoundError:
            return ""
        if size == 0:
            return ""
        with self.history_file.open("rb") as handle:
            handle.seek(max(0, size - 2))
            tail = handle.read()
        if tail.endswith(b"\n\n") or tail == b"\n":
            return ""
        return "\n" if tail.endswith(b"\n") else "\n\n"

    def read_history(self) -> str:
        if self.journal is not None:
            return self.journal.render_text()
        try:
            return _decode(self.workspace.own.read(self.history_file))
        except (FileNotFoundError, LinkedOut):
            return ""


def split_history_entries(text: str) -> list[str]:
    """HISTORY.md entries: paragraphs separated by blank lines (an entry may span several lines)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [part.strip() for part in _BLANK_LINE.split(text) if part.strip()]
