"""The app's visual language, written down once: spacing, type, radii, the reading width and the
named colours of the light and dark themes. Every widget takes its measures from here (issue 26),
and the palettes (shell/theme.py) and derived colours (common/palette.py) read the colours below,
so a contrast check or a new theme has one table to read.

Measures are in device-independent pixels (Qt scales them with the screen) or, for widths that hold
text, in average characters of the font (`chars`), so they hold at any scale and font size.
No Qt import beyond QtGui's value types: the window's frame imports this before the first paint.
"""

from __future__ import annotations

from typing import NamedTuple

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


def chars(metrics: QFontMetrics, count: float) -> int:
    """`count` average characters of the font, in pixels."""
    return round(count * metrics.averageCharWidth())


class ThemeColors(NamedTuple):
    """The named colours of one theme (hex strings, #rrggbb or #aarrggbb)."""

    window: str
    window_text: str
    base: str
    alternate_base: str
    text: str
    button: str
    button_text: str
    placeholder: str
    highlight: str
    highlighted_text: str
    link: str
    link_visited: str
    tooltip_base: str
    tooltip_text: str
    ok: str
    error: str
    warning: str
    info: str
    removed: str
    """Deleted lines of a diff, an invalid field."""
    added: str
    """Added lines of a diff, a skill that is available."""
    neutral: str
    """A state that is neither good nor bad (cancelled)."""


LIGHT = ThemeColors(
    window="#efefef", window_text="#000000", base="#ffffff", alternate_base="#f7f7f7", text="#000000",
    button="#efefef", button_text="#000000", placeholder="#80000000", highlight="#308cc6", highlighted_text="#ffffff",
    link="#0000ff", link_visited="#ff00ff", tooltip_base="#ffffdc", tooltip_text="#000000",
    ok="#1a7f37", error="#b42318", warning="#a15c00", info="#2f7ed8", removed="#d83a3a", added="#2ea043",
    neutral="#8b8b8b",
)
DARK = ThemeColors(
    window="#2b2b2e", window_text="#e4e4e4", base="#1e1e20", alternate_base="#323236", text="#e4e4e4",
    button="#37373b", button_text="#e4e4e4", placeholder="#8c8c8c", highlight="#2a78d2", highlighted_text="#ffffff",
    link="#6eaaf0", link_visited="#aa8cf0", tooltip_base="#323236", tooltip_text="#e4e4e4",
    ok="#7ee787", error="#ff7b72", warning="#e3b341", info="#6cb6ff", removed="#d83a3a", added="#2ea043",
    neutral="#8b8b8b",
)


def theme_colors(dark: bool) -> ThemeColors:
    return DARK if dark else LIGHT
