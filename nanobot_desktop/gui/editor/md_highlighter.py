"""Markdown syntax highlighting for the workspace files (MEMORY, HISTORY, bootstrap files, SKILL.md).

Regex-per-line on purpose: it is predictable, fast enough for files of a few MB, and needs no
parser. Multi-line constructs (fenced code, YAML frontmatter, HTML comments) are carried from
block to block through QSyntaxHighlighter's block state.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QFont, QPalette, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from nanobot_desktop.gui.common.design import HIGHLIGHT_DARK, HIGHLIGHT_LIGHT, HighlightColors

# Block states (what the *next* line is inside of).
STATE_NORMAL = -1  # Qt's default for "no state"
STATE_FENCE_BACKTICK = 1
STATE_FENCE_TILDE = 2
STATE_FRONTMATTER = 3
STATE_COMMENT = 4

_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s.*)?$")
_TIMESTAMP = re.compile(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\]")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_QUOTE = re.compile(r"^ {0,3}>")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?=\s)(?:\s+\[[ xX]\](?=\s|$))?")
_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?!\*)|(?<![_\w])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![_\w])")
_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_LINK = re.compile(r"!?\[[^\]\n]*\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|<https?://[^>\s]+>|https?://[^\s<>()]+")
_FRONTMATTER_KEY = re.compile(r"^\s*(?:- )?([\w.-]+)\s*:")
_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"


_Palette = HighlightColors  # the colours are written in gui/common/design.py
_LIGHT = HIGHLIGHT_LIGHT
_DARK = HIGHLIGHT_DARK


def palette_is_dark(palette: QPalette) -> bool:
    """A theme is dark when its text is lighter than its background."""
    return palette.color(QPalette.ColorRole.Base).lightness() < palette.color(QPalette.ColorRole.Text).lightness()


class MarkdownHighlighter(QSyntaxHighlighter):
    """Highlights Markdown plus the bits nanobot files use: frontmatter and HISTORY timestamps."""

    def __init__(self, document: QTextDocument | None = None, *, dark: bool = False) -> None:
        super().__init__(document)  # type: ignore[arg-type]  # None is accepted at run time; the stubs say no
        self._formats: dict[str, QTextCharFormat] = {}
        self._dark = dark
        self._build_formats()

    @property
    def dark(self) -> bool:
        return self._dark

    def set_dark(self, dark: bool) -> None:
        """Switch colour set when the application palette changes (light/dark theme)."""
        if dark == self._dark:
            return
        self._dark = dark
        self._build_formats()
        if self.document() is not None:
            self.rehighlight()

    def format_for(self, name: str) -> QTextCharFormat:
        """The character format used for one kind of element (tests and legends use it)."""
        return QTextCharFormat(self._formats[name])

    def _build_formats(self) -> None:
        colors = _DARK if self._dark else _LIGHT

        def make(color: str, *, bold: bool = False, italic: bool = False, background: str | None = None,
                 underline: bool = False) -> QTextCharFormat:
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(color))
            if bold:
                fmt.setFontWeight(QFont.Weight.Bold)
            if italic:
                fmt.setFontItalic(True)
            if underline:
                fmt.setFontUnderline(True)
            if background:
                fmt.setBackground(QColor(background))
            return fmt

        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Weight.Bold)
        italic = QTextCharFormat()
        italic.setFontItalic(True)
        self._formats = {
            "heading": make(colors.heading, bold=True),
            "timestamp": make(colors.timestamp, bold=True),
            "code": make(colors.code, background=colors.code_background),
            "fence": make(colors.code, background=colors.code_background),
            "marker": make(colors.marker, bold=True),
            "link": make(colors.link, underline=True),
            "quote": make(colors.quote, italic=True),
            "comment": make(colors.comment, italic=True),
            "frontmatter": make(colors.frontmatter),
            "frontmatter_key": make(colors.frontmatter_key, bold=True),
            "rule": make(colors.comment, bold=True),
            "bold": bold,
            "italic": italic,
        }

    # QSyntaxHighlighter override: called by Qt for each block that needs (re)formatting.
    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt override)
        previous = self.previousBlockState()
        if previous == STATE_FRONTMATTER or (previous == STATE_NORMAL and self._starts_frontmatter(text)):
            self._highlight_frontmatter(text, opening=previous != STATE_FRONTMATTER)
            return
        if previous in (STATE_FENCE_BACKTICK, STATE_FENCE_TILDE):
            self._highlight_fence_body(text, previous)
            return
        start = 0
        if previous == STATE_COMMENT:
            end = text.find(_COMMENT_CLOSE)
            if end < 0:
                self.setFormat(0, len(text), self._formats["comment"])
                self.setCurrentBlockState(STATE_COMMENT)
                return
            start = end + len(_COMMENT_CLOSE)
            self.setFormat(0, start, self._formats["comment"])
        self.setCurrentBlockState(STATE_NORMAL)
        if start == 0:
            fence = _FENCE.match(text)
            if fence:
                self.setFormat(0, len(text), self._formats["fence"])
                tick = fence.group(1)[0] == "`"
                self.setCurrentBlockState(STATE_FENCE_BACKTICK if tick else STATE_FENCE_TILDE)
                return
        self._highlight_line(text, start)
        self._highlight_comments(text, start)

    def _starts_frontmatter(self, text: str) -> bool:
        return self.currentBlock().blockNumber() == 0 and text.rstrip() == "---"

    def _highlight_frontmatter(self, text: str, *, opening: bool) -> None:
        stripped = text.rstrip()
        if not opening and stripped in ("---", "..."):
            self.setFormat(0, len(text), self._formats["frontmatter"])
            self.setCurrentBlockState(STATE_NORMAL)
            return
        self.setFormat(0, len(text), self._formats["frontmatter"])
        if not opening:
            key = _FRONTMATTER_KEY.match(text)
            if key:
                self.setFormat(key.start(1), key.end(1) - key.start(1), self._formats["frontmatter_key"])
        self.setCurrentBlockState(STATE_FRONTMATTER)

    def _highlight_fence_body(self, text: str, state: int) -> None:
        self.setFormat(0, len(text), self._formats["fence"])
        closing = _FENCE.match(text)
        fence_char = "`" if state == STATE_FENCE_BACKTICK else "~"
        if closing and closing.group(1)[0] == fence_char and not text[closing.end():].strip():
            self.setCurrentBlockState(STATE_NORMAL)
        else:
            self.setCurrentBlockState(state)

    def _highlight_line(self, text: str, start: int) -> None:
        fmt = self._formats
        body = text[start:]
        if start == 0:
            if _HEADING.match(text):
                self.setFormat(0, len(text), fmt["heading"])
                self._highlight_inline(text, 0, code_only=True)
                return
            if _RULE.match(text):
                self.setFormat(0, len(text), fmt["rule"])
                return
            stamp = _TIMESTAMP.match(text)
            if stamp:
                self.setFormat(0, stamp.end(), fmt["timestamp"])
            elif _QUOTE.match(text):
                self.setFormat(0, len(text), fmt["quote"])
            else:
                marker = _LIST_MARKER.match(text)
                if marker:
                    self.setFormat(0, marker.end(), fmt["marker"])
        if body:
            self._highlight_inline(text, start, code_only=False)

    def _highlight_inline(self, text: str, start: int, *, code_only: bool) -> None:
        fmt = self._formats
        if not code_only:
            for pattern, name in ((_BOLD, "bold"), (_ITALIC, "italic")):
                for match in pattern.finditer(text, start):
                    self._merge_format(match.start(), match.end(), fmt[name])
            for match in _LINK.finditer(text, start):
                self.setFormat(match.start(), match.end() - match.start(), fmt["link"])
        if "`" in text:
            for match in _INLINE_CODE.finditer(text, start):
                self.setFormat(match.start(), match.end() - match.start(), fmt["code"])

    def _merge_format(self, begin: int, end: int, extra: QTextCharFormat) -> None:
        """Add bold/italic on top of what is already there (e.g. a bold word inside a quote)."""
        position = begin
        while position < end:
            current = QTextCharFormat(self.format(position))
            run_end = position + 1
            while run_end < end and self.format(run_end) == self.format(position):
                run_end += 1
            current.merge(extra)
            self.setFormat(position, run_end - position, current)
            position = run_end

    def _highlight_comments(self, text: str, start: int) -> None:
        position = start
        while True:
            begin = text.find(_COMMENT_OPEN, position)
            if begin < 0:
                return
            end = text.find(_COMMENT_CLOSE, begin + len(_COMMENT_OPEN))
            if end < 0:
                self.setFormat(begin, len(text) - begin, self._formats["comment"])
                self.setCurrentBlockState(STATE_COMMENT)
                return
            end += len(_COMMENT_CLOSE)
            self.setFormat(begin, end - begin, self._formats["comment"])
            position = end
