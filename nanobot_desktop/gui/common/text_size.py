"""The whole UI's text size: one application font, scaled from the system's, so every widget follows.

Layouts here are measured in characters of the font (window/layout.py), so a larger font makes the
panels wider and taller rather than clipping their text. The system's size is remembered on the
application the first time, so steps never compound.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

TEXT_SIZES = (80, 90, 100, 110, 125, 150, 175, 200)
"""The steps of Ctrl+= / Ctrl+- and the Settings page, in percent of the system font."""
_BASE_PROPERTY = "nanobotSystemFontPointSize"


def next_text_size(current: int, direction: int) -> int:
    """The step after `current` (direction 1), before it (-1), or 100 (0); clamped to TEXT_SIZES."""
    if direction == 0:
        return 100
    if direction > 0:
        return next((size for size in TEXT_SIZES if size > current), TEXT_SIZES[-1])
    return next((size for size in reversed(TEXT_SIZES) if size < current), TEXT_SIZES[0])


def apply_text_size(app: QApplication, percent: int) -> None:
    """Set the application font to `percent` of the system's size (every widget without a font of its
    own follows; Qt relays it as a FontChange)."""
    base = app.property(_BASE_PROPERTY)
    if not isinstance(base, float):
        base = app.font().pointSizeF()
        app.setProperty(_BASE_PROPERTY, float(base))
    font = app.font()
    wanted = base * percent / 100
    if abs(font.pointSizeF() - wanted) > 0.01:
        font.setPointSizeF(wanted)
        app.setFont(font)
