"""The app's own icons: line drawings shipped as SVG in resources/icons/ui, drawn in the palette's
text colour so they read in light and dark, and rendered at 1x, 2x and 3x so they stay crisp at any
screen scale.

Why drawn, not an icon font (qtawesome): a dozen 24-px line icons cost a few hundred bytes each and
no dependency (Qt's SVG image plugin draws them), and they are drawn in one style with the app's line width.
Each SVG uses `currentColor`, replaced here by the palette's colour. Loaded on first use (the
window's frame paints before any icon exists), cached per (name, colour, size).
"""

from __future__ import annotations

from functools import cache, lru_cache

from PySide6.QtCore import QBuffer, QByteArray, QSize
from PySide6.QtGui import QColor, QIcon, QImageReader, QPalette, QPixmap

from nanobot_desktop.data import resources_dir

ICON_NAMES = ("sidebar", "drawer", "agent", "new-chat", "copy", "regenerate", "edit", "chevron-right", "chevron-down",
              "check", "steps")
_SIZES = (16, 20, 24)
_SCALES = (1, 2, 3)


@cache
def _svg_text(name: str) -> str:
    return (resources_dir() / "icons" / "ui" / f"{name}.svg").read_text(encoding="utf-8")


def _pixmap(svg: bytes, size: int, scale: int) -> QPixmap:
    """The drawing at `size` px for a screen of `scale`, rendered by Qt's SVG image plugin (no QtSvg
    Python module to import)."""
    data = QBuffer()
    data.setData(QByteArray(svg))
    reader = QImageReader(data, b"svg")
    reader.setScaledSize(QSize(size * scale, size * scale))
    pixmap = QPixmap.fromImage(reader.read())
    pixmap.setDevicePixelRatio(scale)
    return pixmap


@lru_cache(maxsize=128)
def _icon(name: str, color: str, disabled: str) -> QIcon:
    icon = QIcon()
    for mode, shade in ((QIcon.Mode.Normal, color), (QIcon.Mode.Disabled, disabled)):
        svg = _svg_text(name).replace("currentColor", shade).encode()
        for size in _SIZES:
            for scale in _SCALES:
                icon.addPixmap(_pixmap(svg, size, scale), mode)
    return icon


def icon(name: str, palette: QPalette) -> QIcon:
    """The icon `name` (one of ICON_NAMES) in `palette`'s button-text colour."""
    if name not in ICON_NAMES:
        raise ValueError(f"unknown icon {name!r}")
    text = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.ButtonText)
    muted = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText)
    return _icon(name, QColor(text).name(), QColor(muted).name())
