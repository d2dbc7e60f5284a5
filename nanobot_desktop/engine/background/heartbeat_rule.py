"""The one rule that decides whether a heartbeat tick asks the model at all.

A tick makes no model call only when HEARTBEAT.md holds nothing a person wrote: the file is
missing, or every line is blank, a heading, inside an HTML comment, free of any letter or digit
(a bare bullet, an empty checkbox, a rule), or an unchanged line of a known template. Any other text,
anywhere in the file (above the first heading, under "Completed", under renamed headings), sends the
whole file to the model, as the nanobot CLI does for any non-empty file. The editor uses
`analyse()` too, to show which lines make the next tick ask the model.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from nanobot_desktop.data import templates_dir
from nanobot_desktop.engine.workspace import HEARTBEAT_FILE

SKIP_MISSING = "missing"
SKIP_EMPTY = "empty"
SKIP_TEMPLATE = "template"
SKIP_WORDS = {
    SKIP_MISSING: "HEARTBEAT.md does not exist",
    SKIP_EMPTY: "HEARTBEAT.md is empty",
    SKIP_TEMPLATE: "HEARTBEAT.md holds only headings, comments and template lines",
}

_HEADING = re.compile(r"^#{1,6}(\s|$)")
_WORD = re.compile(r"[^\W_]")  # a letter or digit
_MARKER = re.compile(r"^(?:[-*+]|\d+[.)])\s*(?:\[[ xX]?\])?")  # a list bullet and its checkbox

# Lines of earlier versions of our template, so a workspace created by an older release still counts
# as untouched.
_OLD_TEMPLATE_LINES = frozenset({
    "This file is checked every 30 minutes. When it lists no active task, the check is skipped and no",
    "model is asked anything.",
    'Add a line under "Active Tasks" for anything that should be done periodically, for example',
    '"every morning, summarise my unread newsletters". Move finished one-off tasks to "Completed".',
})
# The prose lines of the nanobot CLI 0.1.4.post4 template (`nanobot onboard`), known by the first 16
# hex digits of the SHA-256 of the line with its whitespace collapsed. 0.3.5's prose is in a comment.
_CLI_TEMPLATE_FINGERPRINTS = frozenset({"ca7d11579a957587", "cfb33971d4f8f8bd", "f224bc137e5bd0f9"})


def _collapse(line: str) -> str:
    return " ".join(line.split())


def _fingerprint(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:16]


@lru_cache(maxsize=1)
def _shipped_template_lines() -> frozenset[str]:
    try:
        text = (templates_dir() / HEARTBEAT_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return frozenset()
    return frozenset(_collapse(line) for line in _visible_lines(text) if _collapse(line))


def is_template_line(collapsed: str) -> bool:
    """True for an unchanged prose line of our template (any release) or of the CLI's."""
    return (collapsed in _shipped_template_lines() or collapsed in _OLD_TEMPLATE_LINES
            or _fingerprint(collapsed) in _CLI_TEMPLATE_FINGERPRINTS)


def _visible_lines(text: str) -> list[str]:
    """The file's lines with HTML comments blanked out (an unclosed comment hides the rest)."""
    visible: list[str] = []
    in_comment = False
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        kept: list[str] = []
        rest = line
        while rest:
            if in_comment:
                end = rest.find("-->")
                if end < 0:
                    rest = ""
                else:
                    rest, in_comment = rest[end + 3:], False
            else:
                start = rest.find("<!--")
                if start < 0:
                    kept.append(rest)
                    rest = ""
                else:
                    kept.append(rest[:start])
                    rest, in_comment = rest[start + 4:], True
        visible.append(" ".join(kept))
    return visible


def _is_text(visible: str) -> bool:
    collapsed = _collapse(visible)
    if not collapsed or _HEADING.match(collapsed) or not _WORD.search(_MARKER.sub("", collapsed)):
        return False
    return not is_template_line(collapsed)


@dataclass(frozen=True)
class HeartbeatContent:
    """What the next tick would do with this text: `text_lines` are the 0-based lines that count."""

    exists: bool
    text_lines: tuple[int, ...]
    blank: bool

    @property
    def skip_reason(self) -> str | None:
        """None when the model is asked; else SKIP_MISSING, SKIP_EMPTY or SKIP_TEMPLATE."""
        if not self.exists:
            return SKIP_MISSING
        if self.blank:
            return SKIP_EMPTY
        return None if self.text_lines else SKIP_TEMPLATE


def analyse(text: str | None) -> HeartbeatContent:
    """Apply the rule to the file's text (None: the file does not exist)."""
    if text is None:
        return HeartbeatContent(False, (), True)
    lines = _visible_lines(text)
    return HeartbeatContent(True, tuple(i for i, line in enumerate(lines) if _is_text(line)), not text.strip())


def text_lines(text: str) -> list[str]:
    """The lines that count as written by the person, stripped (the fallback task summary)."""
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [raw[i].strip() for i in analyse(text).text_lines]
