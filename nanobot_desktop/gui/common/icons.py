"""The app's own icons: line drawings shipped as SVG in resources/icons/ui, drawn in the palette's
text colour so they read in light and dark, and rendered when painted, at the size and screen scale
asked for, so they stay crisp at any scale (1.5 too).

Rendered on demand (`_SvgIconEngine`) rather than prepared: an icon used to carry 18 pixmaps (3 sizes
x scales 1-3 x normal/disabled, ~140 kB) of which a toolbar button paints one; the window's icons
held 2.65 MB of images that way (heaptrack, bench/window_rss.py). Each engine keeps only what was
painted, a few kB.

Why drawn, not an icon font (qtawesome): a dozen 24-px line icons cost a few hundred bytes each and
no dependency (Qt's SVG image plugin draws them), and they are drawn in one style with the app's line width.
Each SVG uses `currentColor`, replaced here by the palette's colour. Loaded on first use (the
window's frame paints before any icon exists), cached per (name, colour, size).
"""

from __future__ import annotations

from functools import cache, lru_cache

from PySide6.QtCore import QBuffer, QByteArray, QRect, QSize
from PySide6.QtGui import QColor, QIcon, QIconEngine, QImageReader, QPainter, QPalette, QPixmap

from nanobot_desktop.data import resources_dir

ICON_NAMES = ("sidebar", "drawer", "agent", "new-chat", "copy", "regenerate", "edit", "chevron-right", "chevron-down",
              "check", "steps")


@cache
def _svg_text(name: str) -> str:
    return (resources_dir() / "icons" / "ui" / f"{name}.svg").read_text(encoding="utf-8")


def _pixmap(svg: bytes, size: QSize, scale: float) -> QPixmap:
    """The drawing at `size` px for a screen of `scale`, rendered by Qt's SVG image plugin (no QtSvg
    Python module to import)."""
    data = QBuffer()
    data.setData(QByteArray(svg))
    reader = QImageReader(data, b"svg")
    reader.setScaledSize(QSize(max(1, round(size.width() * scale)), max(1, round(size.height() * scale))))
    pixmap = QPixmap.fromImage(reader.read())
    pixmap.setDevicePixelRatio(scale)
    return pixmap


class _SvgIconEngine(QIconEngine):
    """One icon in two shades (normal, disabled), each size and scale rendered the first time it is asked for."""

    def __init__(self, name: str, color: str, disabled: str) -> None:
        super().__init__()
        self._name, self._color, self._disabled = name, color, disabled
        self._rendered: dict[tuple[int, int, float, str], QPixmap] = {}

    def scaledPixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float) -> QPixmap:  # noqa: N802
        shade = self._disabled if mode == QIcon.Mode.Disabled else self._color
        size = self.actualSize(size, mode, state)
        key = (size.width(), size.height(), scale, shade)
        pixmap = self._rendered.get(key)
        if pixmap is None:
            pixmap = self._rendered[key] = _pixmap(_svg_text(self._name).replace("currentColor", shade).encode(),
                                                   size, scale)
        return pixmap

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        device = painter.device()
        scale = device.devicePixelRatioF() if device is not None else 1.0
        pixmap = self.scaledPixmap(rect.size(), mode, state, scale)
        square = self.actualSize(rect.size(), mode, state)
        painter.drawPixmap(QRect(rect.x() + (rect.width() - square.width()) // 2,
                                 rect.y() + (rect.height() - square.height()) // 2, square.width(), square.height()),
                           pixmap)

    def actualSize(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QSize:  # noqa: N802
        side = min(size.width(), size.height())  # the drawings are square: centred in a wider box
        return QSize(side, side)

    def clone(self) -> QIconEngine:
        return _SvgIconEngine(self._name, self._color, self._disabled)


@lru_cache(maxsize=128)
def _icon(name: str, color: str, disabled: str) -> QIcon:
    return QIcon(_SvgIconEngine(name, color, disabled))


def icon(name: str, palette: QPalette) -> QIcon:
    """The icon `name` (one of ICON_NAMES) in `palette`'s button-text colour."""
    if name not in ICON_NAMES:
        raise ValueError(f"unknown icon {name!r}")
    text = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.ButtonText)
    muted = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText)
    return _icon(name, QColor(text).name(), QColor(muted).name())
