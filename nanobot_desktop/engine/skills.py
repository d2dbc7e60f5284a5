"""Skills: `skills/<name>/SKILL.md` folders in the workspace, plus the built-ins shipped with the app.

Frontmatter is parsed as real YAML (as nanobot 0.3.5 does) rather than post4's line splitter, so CRLF
files work and `always: false` means false. A broken SKILL.md is listed with its error instead of
breaking the loader, so the person can see and fix it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from nanobot_desktop.data import builtin_skills_dir
from nanobot_desktop.engine.workspace import Workspace
from nanobot_desktop.engine.own_files import LinkedOut, OwnFiles

SKILL_FILE = "SKILL.md"
_TRUE_WORDS = {"true", "yes", "on", "1"}


class FrontmatterError(ValueError):
    """A SKILL.md whose header cannot be read; the message names the line when it can."""


@dataclass
class SkillInfo:
    name: str
    path: Path
    source: str  # "workspace" | "builtin"
    description: str
    available: bool
    missing: list[str] = field(default_factory=list)
    missing_text: str = ""
    always: bool = False
    enabled: bool = True
    error: str | None = None
    shadows_builtin: bool = False
    emoji: str | None = None


@dataclass(frozen=True)
class _Parsed:
    """What a SKILL.md says about itself (independent of PATH and environment)."""

    description: str | None = None
    bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    always: bool = False
    emoji: str | None = None
    error: str | None = None


def _normalise(text: str) -> str:
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter YAML or None, body). Raises FrontmatterError when the header is never closed."""
    text = _normalise(text)
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    raise FrontmatterError("line 1: the frontmatter starts with '---' but no closing '---' line follows")


MAX_FRONTMATTER_CHARS = 64 * 1024  # a header is a few lines; anything near this is not one
MAX_EXPANDED_NODES = 10_000  # values a header may expand to once YAML aliases are followed


def _line_fields(frontmatter: str) -> dict[str, str]:
    """nanobot 0.1.4.post4's own reading: each line with a ':' is `key: value`, split at the first
    ':', both stripped, then quote characters stripped from the value's ends. Always succeeds."""
    fields: dict[str, str] = {}
    for line in frontmatter.split("\n"):
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key.strip()] = value.strip().strip("\"'")
    return fields


def _expanded_size(value: Any, seen: dict[int, int], depth: int = 0) -> int:
    """How many values `value` stands for when every alias is copied out (shared objects counted
    each time they are referenced, computed once each): what a consumer walking it would pay."""
    if depth > 100:
        return MAX_EXPANDED_NODES + 1
    key = id(value)
    if key in seen:
        return seen[key]
    size = 1
    if isinstance(value, dict):
        for k, v in value.items():
            size += _expanded_size(k, seen, depth + 1) + _expanded_size(v, seen, depth + 1)
            if size > MAX_EXPANDED_NODES:
                break
    elif isinstance(value, list):
        for item in value:
            size += _expanded_size(item, seen, depth + 1)
            if size > MAX_EXPANDED_NODES:
                break
    if isinstance(value, (dict, list)):
        seen[key] = size
    return size


def _parse_yaml(frontmatter: str) -> dict[str, Any] | None:
    """The header as YAML, or None when it is not YAML (the line reading then stands alone).
    Raises FrontmatterError for a header too large or expanding too far (an alias bomb)."""
    import yaml  # here, not at the top: PyYAML costs ~16 ms to import and is off the app's start-up path

    if len(frontmatter) > MAX_FRONTMATTER_CHARS:
        raise FrontmatterError(f"the frontmatter is {len(frontmatter):,} characters; a header is at most "
                               f"{MAX_FRONTMATTER_CHARS:,}")
    try:
        data = yaml.safe_load(frontmatter)  # aliases become shared objects: loading itself stays cheap
    except (yaml.YAMLError, RecursionError):
        return None
    if _expanded_size(data, {}) > MAX_EXPANDED_NODES:
        raise FrontmatterError(f"the frontmatter's YAML aliases expand to more than {MAX_EXPANDED_NODES:,} "
                               "values (an alias bomb?); the skill is not loaded")
    return data if isinstance(data, dict) else None


_PLAIN_LINE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*:[ \t]+\S")


def _line_reading_suffices(frontmatter: str, lines: dict[str, str]) -> bool:
    """True when YAML could not change `_header_fields`' answer, so PyYAML need not even be imported
    (the usual header, the built-in skills' included: one `key: value` per line). That holds when every
    line is a bare key at the start of the line with a value the line reading keeps (not empty, not a
    block scalar): YAML then has no other top-level key, and the line value wins for each key. An
    anchor (`&`) could be an alias bomb, which only the YAML reading refuses; an oversized header is
    refused there too."""
    if len(frontmatter) > MAX_FRONTMATTER_CHARS or "&" in frontmatter:
        return False
    if not all(_PLAIN_LINE.match(line) for line in frontmatter.split("\n") if line.strip()):
        return False
    return all(value and value[:1] not in ("|", ">") for value in lines.values())


def _header_fields(frontmatter: str) -> dict[str, Any]:
    """What nanobot reads from a header: post4's line values wherever it reads one; YAML's only where
    the line reading has nothing usable (a block scalar `>`/`|`, a mapping spread over lines)."""
    lines = _line_fields(frontmatter)
    if _line_reading_suffices(frontmatter, lines):
        return dict(lines)
    parsed = _parse_yaml(frontmatter) or {}
    fields: dict[str, Any] = {}
    for key in {*lines, *(k for k in parsed if isinstance(k, str))}:
        line_value = lines.get(key, "")
        block = line_value[:1] in ("|", ">") and line_value.rstrip("-+0123456789") in ("|", ">")
        fields[key] = parsed.get(key) if (not line_value or block) and key in parsed else line_value
    return fields


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _TRUE_WORDS
    return bool(value)


def _string_list(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, (str, int, float)) for item in value):
        return tuple(str(item) for item in value)
    raise FrontmatterError(f"{what} must be a list of names")


def _nanobot_metadata(raw: Any) -> dict[str, Any]:
    """The `nanobot` (else `openclaw`) part of `metadata`, which may be a JSON string or a mapping."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            return {}  # as nanobot: metadata that is not JSON means no requirements, not a broken skill
    if not isinstance(raw, dict):
        return {}
    key = "nanobot" if "nanobot" in raw else "openclaw"
    section = raw.get(key)
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise FrontmatterError(f"metadata.{key} must be a mapping")
    return section


def _interpret(data: dict[str, Any]) -> _Parsed:
    meta = _nanobot_metadata(data.get("metadata"))
    requires = meta.get("requires") or {}
    if not isinstance(requires, dict):
        raise FrontmatterError("metadata requires must be a mapping with 'bins' and/or 'env'")
    description = data.get("description")
    emoji = meta.get("emoji")
    return _Parsed(
        description=str(description).strip() if description not in (None, "") else None,
        bins=_string_list(requires.get("bins"), "requires.bins"),
        env=_string_list(requires.get("env"), "requires.env"),
        always=_truthy(data.get("always")) or _truthy(meta.get("always")),
        emoji=str(emoji) if emoji else None,
    )


def parse_skill_text(text: str) -> _Parsed:
    try:
        frontmatter, _body = split_frontmatter(text)
        return _interpret(_header_fields(frontmatter)) if frontmatter is not None else _Parsed()
    except FrontmatterError as exc:
        return _Parsed(error=str(exc))


def _yaml_problem(frontmatter: str) -> str | None:
    """Where a header stops being YAML (nanobot 0.3.x then ignores the whole header), or None."""
    import yaml

    try:
        data = yaml.safe_load(frontmatter)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f"line {mark.line + 2}: " if mark is not None else ""  # +1 for 1-based, +1 for '---'
        return f"{where}{problem} (nanobot 0.3 ignores a header that is not YAML; 0.1.4 reads it line by line)"
    if data is not None and not isinstance(data, dict):
        return f"the frontmatter must be 'key: value' lines, not a {type(data).__name__}"
    return None


def check_frontmatter(text: str) -> str | None:
    """For an editor: None when the SKILL.md header is fine for every nanobot, else a message naming
    the line. Stricter than loading: a header that is not YAML still loads (read line by line, as
    nanobot 0.1.4 does), but nanobot 0.3 would ignore it, so the editor says so before saving."""
    parsed = parse_skill_text(text)
    if parsed.error:
        return parsed.error
    frontmatter, _body = split_frontmatter(text)
    return _yaml_problem(frontmatter) if frontmatter is not None else None


def skill_body_of(text: str) -> str:
    """A SKILL.md's text without its frontmatter (all of it when the header is never closed)."""
    try:
        return split_frontmatter(text)[1].strip()
    except FrontmatterError:
        return _normalise(text).strip()


def _read_skill_bytes(data: bytes) -> _Parsed:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return _Parsed(error=f"line {line}: not valid UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8")
    return parse_skill_text(text)


def _read_text(path: Path, own: OwnFiles) -> str | None:
    data = own.read_or_none(path)
    return None if data is None else data.decode("utf-8-sig", errors="replace")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class SkillsLoader:
    """Finds skills on disk; every call looks at the files again (parsing is cached by mtime and size)."""

    def __init__(
        self, workspace: Workspace, builtin_dir: Path | None = None, disabled: Iterable[str] = ()
    ) -> None:
        self.workspace = workspace
        self.builtin_dir = Path(builtin_dir) if builtin_dir is not None else builtin_skills_dir()
        self.disabled: set[str] = set(disabled)
        self._cache: dict[Path, tuple[tuple[int, int], _Parsed]] = {}

    def set_disabled(self, names: Iterable[str]) -> None:
        self.disabled = set(names)

    # ---- discovery --------------------------------------------------------------------------

    @staticmethod
    def _skill_files(directory: Path) -> list[tuple[str, Path, os.stat_result]]:
        """(name, SKILL.md, its status) of each skill folder. Every turn's prompt lists them, so this
        makes one stat per skill (the folder's type comes with the listing)."""
        try:
            listing = os.scandir(directory)
        except OSError:  # missing, or not a folder
            return []
        base = str(directory.absolute())
        found = []
        with listing:
            for entry in listing:
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                skill_file = os.path.join(base, entry.name, SKILL_FILE)
                try:
                    status = os.stat(skill_file)
                except OSError:
                    continue
                if stat.S_ISREG(status.st_mode):
                    found.append((entry.name, Path(skill_file), status))
        return sorted(found, key=lambda item: item[0])

    def _parsed(self, path: Path, status: os.stat_result | None = None) -> _Parsed:
        try:
            status = status or path.stat()
            key = (status.st_mtime_ns, status.st_size)
            cached = self._cache.get(path)
            if cached and cached[0] == key:
                return cached[1]
            parsed = _read_skill_bytes(self.workspace.own.read(path))
        except LinkedOut as exc:
            return _Parsed(error=f"not read: it leads out of the workspace ({exc.target})")
        except OSError as exc:
            return _Parsed(error=f"cannot read {path.name}: {exc.strerror or exc}")
        self._cache[path] = (key, parsed)
        return parsed

    def _info(self, name: str, path: Path, source: str, status: os.stat_result | None = None) -> SkillInfo:
        parsed = self._parsed(path, status)
        missing = [f"CLI: {b}" for b in parsed.bins if not shutil.which(b)]
        missing += [f"ENV: {e}" for e in parsed.env if not os.environ.get(e)]
        return SkillInfo(
            name=name,
            path=path,
            source=source,
            description=parsed.description or name,
            available=parsed.error is None and not missing,
            missing=missing,
            missing_text=", ".join(missing),
            always=parsed.always,
            enabled=name not in self.disabled,
            error=parsed.error,
            emoji=parsed.emoji,
        )

    def list_skills(self, include_disabled: bool = True) -> list[SkillInfo]:
        """Workspace skills, then built-ins, each sorted by name; a workspace skill hides its built-in twin."""
        skills = [self._info(n, p, "workspace", st) for n, p, st in self._skill_files(self.workspace.skills_dir)]
        workspace_names = {s.name for s in skills}
        for name, path, status in self._skill_files(self.builtin_dir):
            if name in workspace_names:
                next(s for s in skills if s.name == name).shadows_builtin = True
            else:
                skills.append(self._info(name, path, "builtin", status))
        return [s for s in skills if include_disabled or s.enabled]

    def _find(self, name: str) -> Path | None:
        if not name or name != Path(name).name or name.startswith("."):
            return None
        for directory in (self.workspace.skills_dir, self.builtin_dir):
            path = directory / name / SKILL_FILE
            if path.is_file():
                return path
        return None

    def load_skill(self, name: str) -> str | None:
        """The whole SKILL.md (workspace first), or None when there is no such skill."""
        path = self._find(name)
        return _read_text(path, self.workspace.own) if path else None

    def skill_body(self, name: str) -> str:
        """The SKILL.md without its frontmatter ("" when there is no such skill)."""
        text = self.load_skill(name)
        return "" if text is None else skill_body_of(text)

    # ---- what goes into the prompt ------------------------------------------------------------

    def get_always_skills(self, skills: list[SkillInfo] | None = None) -> list[str]:
        skills = self.list_skills() if skills is None else skills
        return [s.name for s in skills if s.available and s.enabled and s.always]

    def build_skills_summary(self, skills: list[SkillInfo] | None = None) -> str:
        """The `<skills>` XML of post4 for enabled, readable skills ("" when there are none)."""
        skills = self.list_skills(include_disabled=False) if skills is None else skills
        lines = ["<skills>"]
        for skill in skills:
            if not skill.enabled or skill.error:
                continue
            lines.append(f'  <skill available="{str(skill.available).lower()}">')
            lines.append(f"    <name>{_escape(skill.name)}</name>")
            lines.append(f"    <description>{_escape(skill.description)}</description>")
            lines.append(f"    <location>{skill.path}</location>")
            if skill.missing_text:
                lines.append(f"    <requires>{_escape(skill.missing_text)}</requires>")
            lines.append("  </skill>")
        if len(lines) == 1:
            return ""
        lines.append("</skills>")
        return "\n".join(lines)
