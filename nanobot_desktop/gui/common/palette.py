"""The app's colours, all derived from the current QPalette, so light and dark themes both read well.

One place for them: the chat, the inspector, the notice bar, the session list and the background
panels all take their muted text, card, accent, ok and error colours from `palette_colors`, and
recompute them on `PaletteChange`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget

from nanobot_desktop.gui.common.design import theme_colors


def is_dark(palette: QPalette) -> bool:
    """True when the palette's window colour is dark (text must then be light)."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def mix(a: QColor, b: QColor, amount_of_b: float) -> QColor:
    """`a` moved `amount_of_b` (0..1) of the way towards `b`."""
    t = max(0.0, min(1.0, amount_of_b))
    return QColor(
        round(a.red() * (1 - t) + b.red() * t),
        round(a.green() * (1 - t) + b.green() * t),
        round(a.blue() * (1 - t) + b.blue() * t),
    )


@dataclass(frozen=True)
class PaletteColors:
    """The few derived colours the app needs, all computed from the current palette."""

    dark: bool
    base: QColor
    text: QColor
    muted: QColor
    card: QColor
    card_border: QColor
    bubble: QColor
    accent: QColor
    ok: QColor
    error: QColor


def palette_colors(palette: QPalette) -> PaletteColors:
    dark = is_dark(palette)
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    highlight = palette.color(QPalette.ColorRole.Highlight)
    return PaletteColors(
        dark=dark,
        base=base,
        text=text,
        muted=mix(text, base, 0.35),  # ≥ 4.5:1 on the base, cards and bubbles (tests/gui/common/test_contrast.py)
        card=mix(base, text, 0.06),
        card_border=mix(base, text, 0.18),
        bubble=mix(base, highlight, 0.28 if dark else 0.16),
        accent=highlight,
        ok=QColor(theme_colors(dark).ok),
        error=QColor(theme_colors(dark).error),
    )


def error_color(palette: QPalette) -> QColor:
    """A red that reads on the palette's base (Fusion's BrightText is white in the light theme)."""
    return palette_colors(palette).error


def ok_color(palette: QPalette) -> QColor:
    return palette_colors(palette).ok


def muted_color(palette: QPalette) -> QColor:
    return palette_colors(palette).muted


def set_text_color(widget: QWidget, color: QColor) -> None:
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.WindowText, color)
    palette.setColor(QPalette.ColorRole.Text, color)
    widget.setPalette(palette)
