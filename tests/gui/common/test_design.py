"""Issue 26: one visual language. Every colour the GUI draws with is named in gui/common/design.py
(light and dark), so no widget carries a colour literal of its own; the two Qt palettes are built
from that table; the app's own icons are sharp at scale 2 and follow the theme's text colour."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QPalette

from nanobot_desktop.gui.common import design
from nanobot_desktop.gui.common.icons import ICON_NAMES, icon
from nanobot_desktop.gui.common.theme import dark_palette, light_palette

GUI = Path(design.__file__).resolve().parents[2]
COLOUR_LITERAL = re.compile(r"""["']#[0-9a-fA-F]{3,8}\b|QColor\(\s*\d""")


def test_no_module_of_the_gui_but_the_design_module_writes_a_colour():
    found = []
    for path in sorted(GUI.rglob("*.py")):
        if path == Path(design.__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if COLOUR_LITERAL.search(line):
                found.append(f"{path.relative_to(GUI)}:{number}: {line.strip()}")
    assert found == []


def test_the_palettes_are_the_design_modules_colours():
    light, dark = light_palette(), dark_palette()
    for name, (normal, _disabled) in {**design.QPALETTE_LIGHT, **design.QPALETTE_LIGHT_CONTRAST_FIXES}.items():
        assert light.color(getattr(QPalette.ColorRole, name)) == QColor(normal), name
    for name, color in design.QPALETTE_DARK.items():
        assert dark.color(getattr(QPalette.ColorRole, name)).name() == color, name
    assert set(design.LIGHT._fields) == set(design.DARK._fields)
    for light_color, dark_color in zip(design.LIGHT, design.DARK, strict=True):  # each colour reads on its own base
        assert QColor(light_color).isValid() and QColor(dark_color).isValid()
    base_light, base_dark = QColor(design.QPALETTE_LIGHT["Base"][0]), QColor(design.QPALETTE_DARK["Base"])
    assert QColor(design.LIGHT.error).lightness() < base_light.lightness() - 80
    assert QColor(design.DARK.error).lightness() > base_dark.lightness() + 80


def test_the_scales_grow_and_icons_are_sharp_at_scale_2_in_the_themes_text_colour(qapp):
    assert list(design.SPACING) == sorted(design.SPACING) and list(design.TYPE) == sorted(design.TYPE)
    assert list(design.RADII) == sorted(design.RADII)
    for theme in (light_palette(), dark_palette()):
        text = theme.color(QPalette.ColorRole.ButtonText)
        for name in ICON_NAMES:
            drawn = icon(name, theme)
            pixmap = drawn.pixmap(QSize(20, 20), 2.0)  # a 20-px button at scale 2
            assert pixmap.devicePixelRatio() == 2.0 and pixmap.width() == 40, name  # drawn for 2x, not blown up
            image = pixmap.toImage()
            inked = [image.pixelColor(x, y) for x in range(image.width()) for y in range(image.height())
                     if image.pixelColor(x, y).alpha() == 255]
            assert inked, name
            assert all(abs(color.lightness() - text.lightness()) < 8 for color in inked), name
