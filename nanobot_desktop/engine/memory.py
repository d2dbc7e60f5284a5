"""Two-layer memory: MEMORY.md (lasting facts, rewritten whole) and HISTORY.md (append-only log).

Layout and behaviour follow nanobot 0.1.4.post4 so a workspace stays readable by the CLI. Two things
are added on top: every rewrite of MEMORY.md first keeps the replaced text under
`memory/.versions/` (so nothing the user or the agent wrote is lost and can be restored), and
consolidation computes its new offset from the message count it actually summarised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.history_journal import HistoryJournal, current_history_session
from nanobot_desktop.engine.layout import WorkspaceLayout
from nanobot_desktop.engine.llm.types import ChatWithTools, LLMResponse
from nanobot_desktop.engine.memory_git import GitMemoryMixin, MemoryGit, MemoryVersion
from nanobot_desktop.engine.workspace import (
    StorageError, Workspace, append_text, atomic_write_bytes, storage_error,
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


class MemoryStore(GitMemoryMixin):
    """Reads and writes `memory/MEMORY.md`, the history log and the MEMORY.md versions.

    The `layout` (engine/layout.py) decides the history log (HISTORY.md, or history.jsonl of a 0.3
    workspace) and where versions live (`.versions/`, or the workspace's git repository in 0.3).
    """

    def __init__(self, workspace: Workspace, layout: WorkspaceLayout | None = None) -> None:
        # Failed consolidations by conversation: (message count then, why), so the same request is not
        # sent again on every turn (see consolidate_detailed).
        self.failed_consolidations: dict[str, tuple[int, str]] = {}
        self.workspace = workspace
        self.layout = layout
        self.journal = HistoryJournal(workspace.memory_dir) if layout is not None and layout.is_v03 else None
        self.git = MemoryGit(workspace.root) if layout is not None and layout.is_v03 else None
        self._committer: ThreadPoolExecutor | None = None
        self._last_job: Future[None] | None = None

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
            return _decode(self.memory_file.read_bytes())
        except FileNotFoundError:
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
            self._replace_tracked("memory/MEMORY.md", new_data, source, note)
            return
        try:
            current = self.memory_file.read_bytes()
        except FileNotFoundError:
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

    def _save_version(self, data: bytes, source: str) -> Path:
        stamp = datetime.now()
        while True:
            path = self.versions_dir / f"MEMORY-{stamp.strftime(_VERSION_STAMP)}-{source}.md"
            if not path.exists():
                break
            stamp += timedelta(microseconds=1)  # two saves in one clock tick must not overwrite each other
        atomic_write_bytes(path, data)
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
        if version.commit:
            self.restore_file_version(version)
            return
        self._replace_memory(version.path.read_bytes(), "restore")

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
            return _decode(self.history_file.read_bytes())
        except FileNotFoundError:
            return ""


def split_history_entries(text: str) -> list[str]:
    """HISTORY.md entries: paragraphs separated by blank lines (an entry may span several lines)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [part.strip() for part in _BLANK_LINE.split(text) if part.strip()]


# ---- consolidation ----------------------------------------------------------------------------

SAVE_MEMORY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "save_memory",
        "description": "Store the result of memory consolidation: a history log entry and the updated long-term memory.",
        "parameters": {
            "type": "object",
            "properties": {
                "history_entry": {
                    "type": "string",
                    "description": (
                        "One paragraph of 2-5 sentences recording the main events, decisions and topics of "
                        "the conversation. Begin with [YYYY-MM-DD HH:MM] and keep concrete names, numbers "
                        "and terms so the log can be searched with grep later."
                    ),
                },
                "memory_update": {
                    "type": "string",
                    "description": (
                        "The complete new long-term memory as Markdown: every fact already in it plus any "
                        "new lasting facts. If nothing new was learned, return the current memory as it is."
                    ),
                },
            },
            "required": ["history_entry", "memory_update"],
        },
    },
}

_CONSOLIDATION_SYSTEM = "You consolidate an agent's memory. Reply only by calling the save_memory tool."
_CONSOLIDATION_INSTRUCTION = (
    "Summarise the conversation below into a history entry and fold any lasting facts into the "
    "long-term memory, then call save_memory with both."
)


@dataclass
class ConsolidationResult:
    """What one consolidation did; `offset` is None when it failed (and then nothing was written)."""

    offset: int | None
    error: str | None = None
    summarised: int = 0
    history_entry: str | None = None
    memory_changed: bool = False

    @property
    def ok(self) -> bool:
        return self.offset is not None


def _render_content(content: Any) -> str:
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "image_url":
                parts.append("[image]")
            else:
                parts.append(str(block))
        return " ".join(parts)
    return str(content)


def format_conversation(messages: list[dict[str, Any]]) -> list[str]:
    """One line per message with content: `[timestamp[:16]] ROLE [tools: a, b]: content`."""
    lines = []
    for message in messages:
        content = message.get("content")
        if not content:
            continue
        tools_used = message.get("tools_used")
        tools = f" [tools: {', '.join(map(str, tools_used))}]" if tools_used else ""
        stamp = str(message.get("timestamp") or "?")[:16]
        role = str(message.get("role", "?")).upper()
        lines.append(f"[{stamp}] {role}{tools}: {_render_content(content)}")
    return lines


def build_consolidation_messages(current_memory: str, lines: list[str]) -> list[dict[str, Any]]:
    user = (
        f"{_CONSOLIDATION_INSTRUCTION}\n\n"
        f"## Current Long-term Memory\n{current_memory or '(empty)'}\n\n"
        f"## Conversation to Process\n" + "\n".join(lines)
    )
    return [{"role": "system", "content": _CONSOLIDATION_SYSTEM}, {"role": "user", "content": user}]


def _save_memory_arguments(response: LLMResponse) -> tuple[dict[str, Any] | None, str | None]:
    """The save_memory arguments as a dict, or (None, reason) when the model did not give usable ones."""
    call = next((c for c in response.tool_calls if c.name == "save_memory"), None)
    if call is None:
        return None, "the model did not call save_memory"
    if call.parse_error:
        return None, f"save_memory arguments were malformed: {call.parse_error}"
    args: Any = call.arguments
    if not args and call.raw_arguments:
        args = call.raw_arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            return None, f"save_memory arguments are not valid JSON: {exc}"
    if isinstance(args, list):
        if not args or not isinstance(args[0], dict):
            return None, "save_memory arguments are a list without an object in first place"
        args = args[0]
    if not isinstance(args, dict):
        return None, f"save_memory arguments must be an object, got {type(args).__name__}"
    if not args.get("history_entry") and not args.get("memory_update"):
        return None, "save_memory was called without history_entry or memory_update"
    return args, None


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _gate_key(messages: list[dict[str, Any]], start: int) -> str:
    """Which conversation (and from where) a consolidation summarises: its first message to summarise."""
    first = messages[start] if start < len(messages) else {}
    return f"{start}:{first.get('role')}:{first.get('timestamp')}:{str(first.get('content'))[:200]}"


def _failed(memory: MemoryStore, key: str, total: int, retry_after: int, error: str,
            archive_all: bool = False) -> ConsolidationResult:
    """A failed attempt: remembered, so the same request is not resent on every turn (/new, which the
    person asked for, always tries again, so its error says only what went wrong)."""
    memory.failed_consolidations[key] = (total, error)
    if archive_all:
        return ConsolidationResult(offset=None, error=error)
    return ConsolidationResult(offset=None, error=f"{error}; not retried until the conversation has "
                                                  f"{retry_after} more messages (or at /new)")


async def consolidate_detailed(
    messages: list[dict[str, Any]],
    last_consolidated: int,
    memory: MemoryStore,
    chat: ChatWithTools,
    *,
    archive_all: bool = False,
    memory_window: int = 100,
) -> ConsolidationResult:
    """`consolidate`, but also saying why it failed and what it wrote (for events and the GUI)."""
    total = len(messages)  # snapshot: messages appended while the model thinks are not summarised
    if archive_all:
        old = messages[last_consolidated:total]
        new_offset = 0
    else:
        keep_count = max(memory_window, 0) // 2
        if total <= keep_count or total - last_consolidated <= 0:
            return ConsolidationResult(offset=last_consolidated)
        new_offset = total - keep_count
        old = messages[last_consolidated:new_offset]
        if not old:
            return ConsolidationResult(offset=last_consolidated)

    lines = format_conversation(old)
    if not lines:
        return ConsolidationResult(offset=new_offset, summarised=len(old))

    gate_key = _gate_key(messages, last_consolidated)
    failed = memory.failed_consolidations.get(gate_key)
    retry_after = max(memory_window, 1)
    if failed is not None and not archive_all and total < failed[0] + retry_after:
        # The same (possibly huge) request failed before: do not resend it on every turn.
        return ConsolidationResult(offset=None, error=(
            f"not retried: the last attempt failed ({failed[1]}); it is tried again once the conversation "
            f"has {failed[0] + retry_after - total} more messages, or at /new"))

    current_memory = memory.read_long_term()
    try:
        response = await chat(build_consolidation_messages(current_memory, lines), [SAVE_MEMORY_TOOL])
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - ProviderError or anything a chat function may raise
        log.warning("memory consolidation failed: %s", exc)
        return _failed(memory, gate_key, total, retry_after, f"the model call failed: {exc}", archive_all)

    args, reason = _save_memory_arguments(response)
    if args is None:
        log.warning("memory consolidation failed: %s", reason)
        return _failed(memory, gate_key, total, retry_after, reason or "the model did not save memory",
                       archive_all)
    memory.failed_consolidations.pop(gate_key, None)

    entry = _as_text(args["history_entry"]) if args.get("history_entry") else None
    update = _as_text(args["memory_update"]) if args.get("memory_update") else None
    changed = update is not None and update != current_memory
    try:
        memory.commit_consolidation(entry, update if changed else None)
    except OSError as exc:
        log.warning("memory consolidation could not write: %s", exc)
        failure = storage_error(Path(getattr(exc, "filename", None) or memory.memory_file), exc)
        return ConsolidationResult(offset=None, error=failure.sentence("memory was left as it was"))
    return ConsolidationResult(
        offset=new_offset, summarised=len(old), history_entry=entry, memory_changed=changed
    )


async def consolidate(
    messages: list[dict[str, Any]],
    last_consolidated: int,
    memory: MemoryStore,
    chat: ChatWithTools,
    *,
    archive_all: bool = False,
    memory_window: int = 100,
) -> int | None:
    """Summarise old messages into HISTORY.md/MEMORY.md; return the new offset, or None on failure.

    Normal mode keeps the newest `memory_window // 2` messages and summarises the rest since
    `last_consolidated`; `archive_all` (used by /new) summarises everything since the offset and
    returns 0 because the caller then clears the session. On failure nothing is written.
    """
    result = await consolidate_detailed(
        messages, last_consolidated, memory, chat, archive_all=archive_all, memory_window=memory_window
    )
    return result.offset
