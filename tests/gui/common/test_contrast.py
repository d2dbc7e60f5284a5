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
from nanobot_desktop.gui.common.theme import dark_palette, high_contrast_palette, light_palette

R = QPalette.ColorRole
TEXT_ON = {R.WindowText: (R.Window, R.Button), R.Text: (R.Base, R.AlternateBase), R.ButtonText: (R.Button,),
           R.PlaceholderText: (R.Base, R.Window, R.AlternateBase), R.ToolTipText: (R.ToolTipBase,),
           R.HighlightedText: (R.Highlight,), R.Link: (R.Base, R.Window), R.LinkVisited: (R.Base, R.Window)}
BACKGROUNDS = ("base", "card", "bubble")  # PaletteColors fields things are drawn on
MARKS = ("accent",)  # a pending card's border and the "waiting" mark, drawn on cards and the base: 3:1 (WCAG 1.4.11)
DECORATIVE = ("card_border",)  # a card is told apart by its fill and content; its hairline carries no meaning
PALETTES = {"light": light_palette, "dark": dark_palette,
            "high contrast light": lambda: high_contrast_palette(dark=False),
            "high contrast dark": lambda: high_contrast_palette(dark=True)}


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


@pytest.mark.parametrize("dark", [False, True])
def test_high_contrast_text_reaches_7_to_1(qapp, dark):
    palette = high_contrast_palette(dark=dark)
    for text_role, backgrounds in TEXT_ON.items():
        for background in backgrounds:
            assert contrast_ratio(palette.color(text_role), palette.color(background)) >= 7.0, (text_role, background)


def test_high_contrast_follows_the_system_only_when_asked(qapp, monkeypatch):
    from nanobot_desktop.gui.common import theme

    style, palette = qapp.style().name(), qapp.palette()
    try:
        system_wants = [True]  # what the OS says (QStyleHints.accessibility().contrastPreference())
        monkeypatch.setattr(theme._SchemeWatcher, "wants_high_contrast", lambda self: self.high_contrast == "on" or (
            self.high_contrast == "system" and system_wants[0]))
        theme.apply_theme(qapp, "light", "system")
        assert qapp.palette().color(R.Window) == QColor("#ffffff") and qapp.palette().color(R.Highlight) == QColor("#00307a")
        theme.apply_theme(qapp, "light", "off")
        assert qapp.palette().color(R.Window) == QColor("#efefef")
        theme.apply_theme(qapp, "dark", "on")
        assert qapp.palette().color(R.Window) == QColor("#000000")
        theme.apply_theme(qapp, "dark")  # a theme change keeps the high-contrast choice
        assert qapp.palette().color(R.Window) == QColor("#000000")
        system_wants[0] = False
        theme.apply_theme(qapp, "light", "system")
        assert qapp.palette().color(R.Window) == QColor("#efefef")
        key = qapp.palette().cacheKey()
        theme.set_high_contrast(qapp, "off")  # the outcome is the same: the palette is left alone
        assert qapp.palette().cacheKey() == key
        theme.set_high_contrast(qapp, "on")
        assert qapp.palette().color(R.Window) == QColor("#ffffff")
    finally:
        theme.apply_theme(qapp, "system", "off")
        qapp.setStyle(style)
        qapp.setPalette(palette)


@pytest.mark.parametrize("theme", PALETTES)
def test_the_inspectors_status_marks_stand_out_from_the_base(qapp, theme):
    """A call's status is a coloured mark (its words are in the tooltip and for screen readers):
    essential graphics need 3:1 against what they are drawn on."""
    from nanobot_desktop.gui.inspector.model import _STATUS_COLORS

    base = PALETTES[theme]().color(R.Base)
    failing = {status: round(contrast_ratio(QColor(color), base), 2) for status, color in _STATUS_COLORS.items()
               if contrast_ratio(QColor(color), base) < 3.0}
    assert not failing, failing
