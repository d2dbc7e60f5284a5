"""The system prompt and the per-turn user message, built the way nanobot 0.1.4.post4 builds them.

The system prompt holds no clock, so it stays byte-identical between turns and providers can cache
it; the time, channel and chat id travel in a runtime block at the head of the current user message
instead, and `strip_runtime_for_save` removes that block again before the turn is saved. Everything
is looked at on disk on each call: the files are the truth. A prompt file whose status (inode, size,
modification and change times) is what it was at the last read, and which had not been touched for a
second before that read, is not read again (`_PromptFiles`): a turn costs a stat per file, not a read.
"""

from __future__ import annotations

import base64
import codecs
import logging
import os
import platform
import stat
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.layout import WorkspaceLayout
from nanobot_desktop.engine.memory.store import MemoryStore
from nanobot_desktop.engine.own_files import LinkedOut, OwnFiles

from nanobot_desktop.engine.runtime_block import RUNTIME_TAG as RUNTIME_TAG  # its home since 0.3's form is read too
from nanobot_desktop.engine.skills import SkillsLoader, skill_body_of
from nanobot_desktop.engine.workspace import BOOTSTRAP_FILES, Workspace

log = logging.getLogger(__name__)

SECTION_SEPARATOR = "\n\n---\n\n"
# post4 reads the four bootstrap files; IDENTITY.md was read up to post3 and is honoured when present.
CONTEXT_FILES = (*BOOTSTRAP_FILES, "IDENTITY.md")
MAX_IMAGE_BYTES = 20 * 1024 * 1024
# What of MEMORY.md and of each bootstrap file goes into every prompt, at most (a longer file is cut
# with a notice): a 50 MB MEMORY.md must not be sent, nor even read, on every turn.
MAX_MEMORY_PROMPT_BYTES = 64_000
MAX_PROMPT_FILE_BYTES = 64_000
WHOLE_FILE = 1 << 62  # an always-on skill's SKILL.md goes in whole, as nanobot does

_SYSTEM_NAMES = {"Darwin": "macOS", "Linux": "Linux", "Windows": "Windows"}
_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

_SKILLS_INTRO = (
    "# Skills\n\n"
    "Skills are instructions for particular jobs. To use one, read its SKILL.md with the read_file tool.\n"
    'A skill marked available="false" needs something installed first (its <requires> says what); '
    "you can often install it with apt or brew."
)


@dataclass
class PromptSection:
    """One part of the system prompt, named so the GUI can show where the characters go."""

    name: str
    text: str

    @property
    def chars(self) -> int:
        return len(self.text)


def _read_text(path: Path, limit: int | None = None, own: OwnFiles | None = None) -> str | None:
    """The file's text, or at most its first `limit` bytes followed by a notice saying it was cut.

    Opened through `own` (beneath the workspace): a link out of it reads as no file (and is told).
    """
    limit = MAX_PROMPT_FILE_BYTES if limit is None else limit
    try:
        fd = own.open(path) if own is not None else os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(min(limit, size) + 1)  # never a buffer of `limit` bytes for a small file
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, LinkedOut):
        return None
    if len(data) <= limit:
        return data.decode("utf-8-sig", errors="replace")
    log.warning("%s has %d bytes; only the first %d go into the prompt", path, size, limit)
    text = codecs.getincrementaldecoder("utf-8-sig")(errors="replace").decode(data[:limit])  # no split character
    return (f"{text}\n\n[{path.name} is cut here: it has {max(size, len(data)):,} bytes and the prompt takes at "
            f"most {limit:,} of it. The rest is not shown; ask the user to shorten {path.name}.]")


# A file changed this recently may change again within the file system's timestamp granularity
# without its status showing it, so it is read again until it has been quiet this long ("racy" files).
_SETTLED_NS = 1_000_000_000


class _PromptFiles:
    """`_read_text` for the files every prompt takes, remembering each text with the status it was read at."""

    def __init__(self, own: OwnFiles | None = None) -> None:
        self._own = own
        self._texts: dict[tuple[Path, int | None], tuple[tuple[int, int, int, int], str | None]] = {}

    def read(self, path: Path, limit: int | None = None) -> str | None:
        try:
            status = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            self._texts.pop((path, limit), None)
            return None
        except OSError:
            return _read_text(path, limit, self._own)  # let the read say what is wrong, as without this cache
        stamp = (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
        known = self._texts.get((path, limit))
        if known is not None and known[0] == stamp:
            return known[1]
        text = _read_text(path, limit, self._own)
        if time.time_ns() - max(status.st_mtime_ns, status.st_ctime_ns) > _SETTLED_NS:
            self._texts[(path, limit)] = (stamp, text)
        else:
            self._texts.pop((path, limit), None)
        return text


def sniff_image_mime(data: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP image from its first bytes, else None."""
    for signature, mime in _IMAGE_SIGNATURES:
        if data.startswith(signature):
            return mime
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _image_block(path: Path, own: OwnFiles | None = None) -> dict[str, Any] | None:
    """An image attachment as a data URL; one in the workspace is opened beneath it (`own`)."""
    try:
        fd = own.open(path) if own is not None else os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode) or os.fstat(fd).st_size > MAX_IMAGE_BYTES:
                return None
            data = handle.read(MAX_IMAGE_BYTES + 1)
    except OSError:
        return None
    mime = sniff_image_mime(data)
    if mime is None:
        return None
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}


def build_runtime_context(channel: str | None, chat_id: str | None, now: datetime | None = None) -> str:
    """The metadata block put before the user's text: time, and channel/chat id when both are known."""
    now = now or datetime.now()
    zone = (now.tzname() if now.tzinfo else time.strftime("%Z")) or "UTC"
    lines = [RUNTIME_TAG, f"Current Time: {now.strftime('%Y-%m-%d %H:%M (%A)')} ({zone})"]
    if channel and chat_id:
        lines += [f"Channel: {channel}", f"Chat ID: {chat_id}"]
    return "\n".join(lines)


def build_user_content(
    text: str,
    media: list[str] | None,
    channel: str | None,
    chat_id: str | None,
    *,
    now: datetime | None = None,
    base_dir: Path | None = None,
    own: OwnFiles | None = None,
) -> str | list[dict[str, Any]]:
    """The current user message: runtime block + text, or content parts when images are attached."""
    runtime = build_runtime_context(channel, chat_id, now)
    images = []
    for item in media or []:
        path = Path(item).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        block = _image_block(path, own)
        if block is None:
            log.info("attachment %s is not a readable PNG/JPEG/GIF/WebP image; not sent", item)
        else:
            images.append(block)
    if not images:
        return f"{runtime}\n\n{text}"
    return [{"type": "text", "text": runtime}, *images, {"type": "text", "text": text}]


def _is_inline_image(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") != "image_url":
        return False
    image = block.get("image_url")
    url = image.get("url") if isinstance(image, dict) else image
    return isinstance(url, str) and url.startswith("data:image/")


def strip_runtime_for_save(content: Any) -> Any:
    """User content as it should be stored: no runtime block, images as "[image]"; None if nothing is left."""
    if isinstance(content, str):
        if not content.startswith(RUNTIME_TAG):
            return content
        _runtime, separator, rest = content.partition("\n\n")
        return rest if separator and rest.strip() else None
    if isinstance(content, list):
        kept: list[Any] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and str(block.get("text", "")).startswith(RUNTIME_TAG):
                continue
            if _is_inline_image(block):
                kept.append({"type": "text", "text": "[image]"})
                continue
            kept.append(block)
        return kept or None
    return content


class ContextBuilder:
    """Builds the system prompt and message list from the workspace files, looked at on every call."""

    def __init__(self, workspace: Workspace, skills: SkillsLoader, memory: MemoryStore,
                 layout: WorkspaceLayout | None = None) -> None:
        self.workspace = workspace
        self.skills = skills
        self.memory = memory
        self.layout = layout
        # nanobot 0.3 loads AGENTS.md, SOUL.md and USER.md only (no TOOLS.md, no IDENTITY.md).
        self.context_files: tuple[str, ...] = layout.bootstrap_files if layout is not None and layout.is_v03 \
            else CONTEXT_FILES
        self._files = _PromptFiles(workspace.own)
        self._identity_text: tuple[Path, str] | None = None
        self._system: tuple[tuple[str, ...], str] = ((), "")  # the last sections' texts and their join

    # ---- system prompt ----------------------------------------------------------------------

    def _identity(self) -> str:
        """Built once per workspace root (resolving it and asking the platform cost more than the rest)."""
        if self._identity_text is None or self._identity_text[0] != self.workspace.root:
            self._identity_text = (self.workspace.root, self._build_identity())
        return self._identity_text[1]

    def _build_identity(self) -> str:
        root = self.workspace.root.resolve()
        history = ("memory/history.jsonl (append-only JSONL: cursor, timestamp, content per line; search it "
                   "with grep)" if self.layout is not None and self.layout.is_v03 else
                   "memory/HISTORY.md (search it with grep; each entry starts with [YYYY-MM-DD HH:MM])")
        system = platform.system()
        runtime = f"{_SYSTEM_NAMES.get(system, system or 'Unknown')} {platform.machine()}, Python {platform.python_version()}"
        if system == "Windows":
            policy = (
                "## Platform Policy (Windows)\n"
                "- This is Windows: do not count on GNU tools such as grep, sed or awk being installed.\n"
                "- Prefer Windows-native commands or the file tools.\n"
                "- If command output comes out garbled, run it again with UTF-8 output enabled."
            )
        else:
            policy = (
                "## Platform Policy (POSIX)\n"
                "- This is a POSIX system: use UTF-8 and the standard shell tools.\n"
                "- Use the file tools when they are simpler or safer than a shell command."
            )
        return (
            "# nanobot 🐈\n\n"
            "You are nanobot, a personal AI assistant that can use tools to get things done.\n\n"
            f"## Runtime\n{runtime}\n\n"
            f"## Workspace\nYour workspace is {root}\n"
            f"- Long-term memory: {root}/memory/MEMORY.md (write lasting, important facts here)\n"
            f"- History log: {root}/{history}\n"
            f"- Custom skills: {root}/skills/{{skill-name}}/SKILL.md\n\n"
            f"{policy}\n\n"
            "## nanobot Guidelines\n"
            "- Say what you are about to do before calling tools, but never claim a result before you have received it.\n"
            "- Read a file before you change it.\n"
            "- When accuracy matters, read a file again after writing it.\n"
            "- When a tool fails, work out why before trying again.\n"
            "- When a request is ambiguous, ask.\n\n"
            "Answer with plain text. Use the 'message' tool only to send something to a specific chat channel."
        )

    def _bootstrap(self) -> str:
        parts = []
        for name in self.context_files:
            content = self._files.read(self.workspace.bootstrap_path(name))
            if content is not None:
                parts.append(f"## {name}\n\n{content}")
        return "\n\n".join(parts)

    def system_sections(self) -> list[PromptSection]:
        """The system prompt's parts in post4 order: identity, bootstrap, memory, active skills, skills."""
        sections = [PromptSection("identity", self._identity())]
        bootstrap = self._bootstrap()
        if bootstrap:
            sections.append(PromptSection("bootstrap", bootstrap))
        memory = self._files.read(self.memory.memory_file, MAX_MEMORY_PROMPT_BYTES)  # never the whole of a huge file
        if memory and memory.strip():
            sections.append(PromptSection("memory", f"# Memory\n\n## Long-term Memory\n{memory}"))
        skills = self.skills.list_skills()
        active = []
        always = set(self.skills.get_always_skills(skills))
        for skill in skills:  # the listed SKILL.md is the one `skill_body` finds (a workspace one first)
            text = self._files.read(skill.path, WHOLE_FILE) if skill.name in always else None
            body = skill_body_of(text) if text is not None else ""
            if body:
                active.append(f"### Skill: {skill.name}\n\n{body}")
        if active:
            sections.append(PromptSection("active_skills", "# Active Skills\n\n" + SECTION_SEPARATOR.join(active)))
        summary = self.skills.build_skills_summary(skills)
        if summary:
            sections.append(PromptSection("skills", f"{_SKILLS_INTRO}\n\n{summary}"))
        return sections

    def build_system_prompt(self) -> str:
        return self._joined(self.system_sections())

    def _joined(self, sections: list[PromptSection]) -> str:
        """The sections' join, the same str object while their texts are unchanged: every call's request
        is kept by its LLMCallStarted event (the inspector keeps 100 turns a session), and a fresh join
        per call held another copy of the ~28 kB prompt per turn (1.1 MB in 40 turns, tracemalloc)."""
        texts = tuple(section.text for section in sections)
        if texts != self._system[0]:
            self._system = (texts, SECTION_SEPARATOR.join(texts))
        return self._system[1]

    # ---- messages -----------------------------------------------------------------------------

    def build_runtime_context(self, channel: str | None, chat_id: str | None, now: datetime | None = None) -> str:
        return build_runtime_context(channel, chat_id, now)

    def build_user_content(
        self,
        text: str,
        media: list[str] | None,
        channel: str | None,
        chat_id: str | None,
        *,
        now: datetime | None = None,
    ) -> str | list[dict[str, Any]]:
        return build_user_content(text, media, channel, chat_id, now=now, base_dir=self.workspace.root,
                                  own=self.workspace.own)

    def build_messages(
        self,
        history: list[dict[str, Any]],
        current_message: str,
        media: list[str] | None = None,
        channel: str | None = None,
        chat_id: str | None = None,
        *,
        now: datetime | None = None,
        sections: list[PromptSection] | None = None,
    ) -> list[dict[str, Any]]:
        """[system, *history, user]: the runtime block rides in the one user message of this turn.

        `sections` lets a caller that already read them (the loop, for the inspector's sizes) avoid
        reading the workspace files a second time.
        """
        system = self._joined(sections) if sections is not None else self.build_system_prompt()
        return [
            {"role": "system", "content": system},
            *history,
            {"role": "user", "content": self.build_user_content(current_message, media, channel, chat_id, now=now)},
        ]
