"""Contrast (WCAG 2) of every text colour the GUI uses over every background it is drawn on, in the
light and the dark palette: ≥ 4.5:1 for text, ≥ 3:1 for marks and borders that carry meaning.

The pairs come from the palette modules themselves: every QPalette text role over the backgrounds
it is drawn on, and every field of `PaletteColors` (gui/common/palette.py) over every background
field, so a colour added there is checked without touching this test.
"""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtGui import QColor, QPalette

from nanobot_desktop.gui.common.accessibility import contrast_ratio
from nanobot_desktop.gui.common.palette import PaletteColors, palette_colors
from nanobot_desktop.gui.shell.theme import dark_palette, light_palette

R = QPalette.ColorRole
TEXT_ON = {R.WindowText: (R.Window, R.Button), R.Text: (R.Base, R.AlternateBase), R.ButtonText: (R.Button,),
           R.PlaceholderText: (R.Base, R.Window, R.AlternateBase), R.ToolTipText: (R.ToolTipBase,),
           R.HighlightedText: (R.Highlight,), R.Link: (R.Base, R.Window), R.LinkVisited: (R.Base, R.Window)}
BACKGROUNDS = ("base", "card", "bubble")  # PaletteColors fields things are drawn on
MARKS = ("accent",)  # a pending card's border and the "waiting" mark, drawn on cards and the base: 3:1 (WCAG 1.4.11)
DECORATIVE = ("card_border",)  # a card is told apart by its fill and content; its hairline carries no meaning
PALETTES = {"light": light_palette, "dark": dark_palette}


def test_the_example_pairs_of_the_issue():
    assert round(contrast_ratio(QColor("#bebebe"), QColor("#efefef")), 2) == 1.62
    assert contrast_ratio(QColor("#000000"), QColor("#ffffff")) == pytest.approx(21.0)


@pytest.mark.parametrize("theme", PALETTES)
def test_every_text_role_reads_on_its_backgrounds(qapp, theme):
    palette = PALETTES[theme]()
    failing = []
    for text_role, backgrounds in TEXT_ON.items():
        for background in backgrounds:
            ratio = contrast_ratio(palette.color(text_role), palette.color(background))
            if ratio < 4.5:
                failing.append(f"{text_role.name} {palette.color(text_role).name(QColor.NameFormat.HexArgb)} on "
                               f"{background.name} {palette.color(background).name()}: {ratio:.2f}:1")
    assert not failing, failing


@pytest.mark.parametrize("theme", PALETTES)
def test_every_derived_colour_reads_on_every_derived_background(qapp, theme):
    palette = PALETTES[theme]()
    colors = palette_colors(palette)
    fields = [f.name for f in dataclasses.fields(PaletteColors) if isinstance(getattr(colors, f.name), QColor)]
    window = palette.color(R.Window)
    failing = []
    for name in fields:
        if name in BACKGROUNDS or name in DECORATIVE:
            continue
        minimum = 3.0 if name in MARKS else 4.5
        for background_name, background in [*((b, getattr(colors, b)) for b in BACKGROUNDS), ("window", window)]:
            if name in MARKS and background_name not in ("card", "base"):
                continue
            ratio = contrast_ratio(getattr(colors, name), background)
            if ratio < minimum:
                failing.append(f"{name} {getattr(colors, name).name()} on {background_name} {background.name()}: "
                               f"{ratio:.2f}:1 < {minimum}")
    assert not failing, failing
