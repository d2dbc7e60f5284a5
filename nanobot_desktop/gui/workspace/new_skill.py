"""A new skill: which folder names may be created under `skills/`, and the SKILL.md it starts with.

Names are checked before anything is written, so a bad one is refused with a sentence saying why:
characters every platform accepts, no names Windows reserves, nothing that exists already.
"""

from __future__ import annotations

import re
from pathlib import Path

from nanobot_desktop.data import templates_dir
from nanobot_desktop.engine import SKILL_FILE
from nanobot_desktop.gui.common.i18n import translate

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
NAME_MAX_LENGTH = 64
_RESERVED_NAMES = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def new_skill_name_problem(name: str, skills_dir: Path) -> str | None:
    """Why `name` cannot be a new skill folder in `skills_dir`, or None when it can."""
    if not name:
        return translate("Skills", "Type a name for the skill's folder.")
    if len(name) > NAME_MAX_LENGTH:
        return translate("Skills", "Keep the name under {count} characters.").format(count=NAME_MAX_LENGTH + 1)
    if not NAME_PATTERN.match(name) or name.endswith("."):
        return translate("Skills", "Use letters, digits, '-', '_' or '.', starting with a letter or digit (no spaces or "
                                   "slashes, no '.' at the end).")
    if name.lower() in _RESERVED_NAMES:
        return translate("Skills", "'{name}' is a reserved file name on Windows; pick another.").format(name=name)
    if (skills_dir / name).exists():
        return translate("Skills", "skills/{name} already exists; pick another name.").format(name=name)
    return None


def new_skill_text(name: str) -> str:
    """The new-skill template with the name filled in."""
    template = (templates_dir() / "new_skill" / SKILL_FILE).read_text(encoding="utf-8")
    return template.replace("{{name}}", name)
