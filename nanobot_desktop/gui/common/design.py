"""The app's visual language, written down once: spacing, type, radii, the reading width and the
named colours of the light and dark themes. Every widget takes its measures from here (issue 26),
and the palettes (common/theme.py) and derived colours (common/palette.py) read the colours below,
so a contrast check or a new theme has one table to read.

Measures are in device-independent pixels (Qt scales them with the screen) or, for widths that hold
text, in average characters of the font (`chars`), so they hold at any scale and font size.
No Qt import at run time: the window's frame imports this before the first paint, and the Markdown
dialect (no Qt) reads its colours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from PySide6.QtGui import QFontMetrics


class Spacing(NamedTuple):
    """The spacing scale: every margin and gap is one of these."""

    xs: int = 2
    s: int = 4
    m: int = 8
    l: int = 12  # noqa: E741 - the scale's usual name
    xl: int = 16
    xxl: int = 24


class TypeScale(NamedTuple):
    """Font sizes relative to the application font (a factor of its point size)."""

    small: float = 0.9
    body: float = 1.0
    title: float = 1.25
    heading: float = 1.5


class Radii(NamedTuple):
    """Corner radii: cards and bubbles, buttons and chips."""

    small: int = 4
    card: int = 8
    bubble: int = 14


SPACING = Spacing()
TYPE = TypeScale()
RADII = Radii()

READING_CHARS = 76
"""The chat's body text column, in average characters (70–80 reads best); centred in wider windows."""
READING_MARGIN_CHARS = 2
"""The least room left on each side of the chat column in a narrow window, in characters."""
WIDE_CHARS = 128
"""How wide a reply with code or a table may get, in average body characters, centred on the reading
column when the window has the room (its prose stays at READING_CHARS): about 100 columns of code (a
monospace character is ~1.2 average body characters), as Claude Desktop gives code more room."""


def chars(metrics: QFontMetrics, count: float) -> int:
    """`count` average characters of the font, in pixels."""
    return round(count * metrics.averageCharWidth())


class Accents(NamedTuple):
    """Hues that read on light and dark backgrounds alike: status marks, and tints blended into the
    base colour (a diff's added and removed lines, a message bar, a search hit)."""

    added: str = "#2ea043"
    removed: str = "#d83a3a"
    info: str = "#2f7ed8"
    warning: str = "#d99a1e"
    neutral: str = "#808080"
    running: str = "#3b82f6"
    waiting: str = "#b58900"  # ≥ 3:1 on white (an essential mark, tests/gui/common/test_contrast.py)
    failed: str = "#e5534b"
    denied: str = "#d97706"
    cancelled: str = "#8b8b8b"


ACCENTS = Accents()


class ThemeColors(NamedTuple):
    """The named colours of one theme (hex strings): text colours that must read on this theme's base,
    and the Markdown and editor colours that follow it."""

    ok: str
    error: str
    warning: str
    hunk: str
    """A diff's @@ line."""
    border: str
    """Table and code-block borders in a rendered message (a fallback: the chat derives its own)."""
    inline_code_background: str
    quote_bar: str
    muted: str
    code_background: str
    """A code block's background when the Pygments style names none."""
    code_text: str


class HighlightColors(NamedTuple):
    """The Markdown editor's syntax colours (gui/editor/md_highlighter.py)."""

    heading: str
    timestamp: str
    code: str
    code_background: str
    marker: str
    link: str
    quote: str
    comment: str
    frontmatter: str
    frontmatter_key: str


LIGHT = ThemeColors(ok="#176b2e", error="#b42318", warning="#a15c00", hunk="#0550ae", border="#c8c8c8",
                    inline_code_background="#ececec", quote_bar="#b0b0b0", muted="#707070", code_background="#f8f8f8",
                    code_text="#1f1f1f")
DARK = ThemeColors(ok="#7ee787", error="#ff7b72", warning="#e3b341", hunk="#79c0ff", border="#5a5a5e",
                   inline_code_background="#3a3a3e", quote_bar="#6a6a6e", muted="#9a9a9a", code_background="#272822",
                   code_text="#f8f8f2")
HIGHLIGHT_LIGHT = HighlightColors(heading="#1f4e9c", timestamp="#8a4b00", code="#7a2e8c", code_background="#efeaf3",
                                  marker="#b0461f", link="#0b62c4", quote="#4f6b45", comment="#7b7f86",
                                  frontmatter="#5b6470", frontmatter_key="#006e73")
HIGHLIGHT_DARK = HighlightColors(heading="#8ab4ff", timestamp="#f0b35c", code="#d7a6e6", code_background="#352c3b",
                                 marker="#ff9a70", link="#6cb6ff", quote="#a6c99a", comment="#8c9199",
                                 frontmatter="#a5adb8", frontmatter_key="#5fd0d4")

# The Qt palettes of the two themes (common/theme.py applies them). role: (active and inactive, disabled).
# Light is Fusion's own standard palette, written out (tests/gui/common/test_theme_palettes.py compares them).
QPALETTE_LIGHT = {
    "Window": ("#efefef", "#efefef"), "WindowText": ("#000000", "#bebebe"), "Base": ("#ffffff", "#efefef"),
    "AlternateBase": ("#f7f7f7", "#f7f7f7"), "ToolTipBase": ("#ffffdc", "#ffffdc"),
    "ToolTipText": ("#000000", "#000000"), "PlaceholderText": ("#80000000", "#80000000"),
    "Text": ("#000000", "#bebebe"), "Button": ("#efefef", "#efefef"), "ButtonText": ("#000000", "#bebebe"),
    "BrightText": ("#ffffff", "#ffffff"), "Light": ("#ffffff", "#ffffff"), "Midlight": ("#cacaca", "#cacaca"),
    "Mid": ("#b8b8b8", "#b8b8b8"), "Dark": ("#9f9f9f", "#bebebe"), "Shadow": ("#767676", "#b1b1b1"),
    "Highlight": ("#308cc6", "#919191"), "HighlightedText": ("#ffffff", "#ffffff"),
    "Link": ("#0000ff", "#0000ff"), "LinkVisited": ("#ff00ff", "#ff00ff"), "Accent": ("#308cc6", "#919191"),
}
QPALETTE_DARK = {
    "Window": "#2b2b2e", "WindowText": "#e4e4e4", "Base": "#1e1e20", "AlternateBase": "#323236",
    "ToolTipBase": "#323236", "ToolTipText": "#e4e4e4", "PlaceholderText": "#a0a0a0", "Text": "#e4e4e4",
    "Button": "#37373b", "ButtonText": "#e4e4e4", "BrightText": "#ff5a5a", "Light": "#4b4b50", "Midlight": "#3e3e42",
    "Mid": "#28282b", "Dark": "#19191b", "Shadow": "#0a0a0a", "Link": "#6eaaf0", "LinkVisited": "#aa8cf0",
    "Highlight": "#2873cd", "HighlightedText": "#ffffff",  # placeholder ≥ 4.5:1 on every background; white on
}                                                          # the selection ≥ 4.5:1, the selection on a card ≥ 3:1
# Where Fusion's light colours fail WCAG contrast (tests/gui/common/test_contrast.py): placeholder text 4.0:1
# on white, white on the selection 3.7:1, a visited link 2.7:1 on the window. Only these differ from it.
QPALETTE_LIGHT_CONTRAST_FIXES = {"PlaceholderText": ("#6b6b6b", "#6b6b6b"), "Highlight": ("#2a70b8", "#919191"),
                                 "Accent": ("#2a70b8", "#919191"), "LinkVisited": ("#9c27b0", "#9c27b0")}
# High contrast (Settings → Appearance, or the system's preference): black on white or white on black,
# with a selection and links far from both, ≥ 7:1 for text. role: (light, dark)
QPALETTE_HIGH_CONTRAST = {
    "Window": ("#ffffff", "#000000"), "WindowText": ("#000000", "#ffffff"), "Base": ("#ffffff", "#000000"),
    "AlternateBase": ("#f2f2f2", "#1a1a1a"), "ToolTipBase": ("#ffffff", "#000000"), "ToolTipText": ("#000000", "#ffffff"),
    "PlaceholderText": ("#3d3d3d", "#c8c8c8"), "Text": ("#000000", "#ffffff"), "Button": ("#ffffff", "#000000"),
    "ButtonText": ("#000000", "#ffffff"), "BrightText": ("#a00000", "#ff8080"), "Light": ("#000000", "#ffffff"),
    "Midlight": ("#000000", "#ffffff"), "Mid": ("#000000", "#ffffff"), "Dark": ("#000000", "#ffffff"),
    "Shadow": ("#000000", "#ffffff"), "Highlight": ("#00307a", "#4da3ff"), "HighlightedText": ("#ffffff", "#000000"),
    "Accent": ("#00307a", "#4da3ff"), "Link": ("#0000b0", "#9cc4ff"), "LinkVisited": ("#6a0080", "#e0b0ff"),
}
QPALETTE_HIGH_CONTRAST_DISABLED = ("#595959", "#9a9a9a")  # disabled text: (light, dark)
QPALETTE_DARK_DISABLED = {"Text": "#808080", "ButtonText": "#808080", "WindowText": "#808080", "Highlight": "#46464a"}


def theme_colors(dark: bool) -> ThemeColors:
    return DARK if dark else LIGHT


def highlight_colors(dark: bool) -> HighlightColors:
    return HIGHLIGHT_DARK if dark else HIGHLIGHT_LIGHT


# The Usage page's chart: one hue per source of model calls, the app's and the nanobot CLI's own
# (gui/background/usage_chart.py); they read on the light and the dark chart background alike.
USAGE_SOURCE_COLORS = {"chat": "#3b82f6", "consolidation": "#a855f7", "heartbeat": "#ef4444", "cron": "#f59e0b",
                       "subagent": "#10b981", "cli:user": "#64748b", "cli:api": "#0ea5e9", "cli:cron": "#d97706",
                       "cli:dream": "#8b5cf6", "cli:system": "#94a3b8"}
USAGE_FALLBACK_COLOR = "#6b7280"
