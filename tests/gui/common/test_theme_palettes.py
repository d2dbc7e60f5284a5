"""The light palette is Fusion's own, written out (theme.py says why); the dark one is ours."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

from nanobot_desktop.gui.common.design import QPALETTE_LIGHT_CONTRAST_FIXES as LIGHT_CONTRAST_FIXES
from nanobot_desktop.gui.common.theme import STYLE_CHOSEN_AT_START, apply_theme, light_palette

GROUPS = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Disabled)
ROLES = [role for role in QPalette.ColorRole if role not in (QPalette.ColorRole.NColorRoles, QPalette.ColorRole.NoRole)]


def test_the_light_palette_is_fusions_colour_for_colour(qapp: QApplication) -> None:
    """Except the few roles whose Fusion colour fails WCAG contrast (LIGHT_CONTRAST_FIXES)."""
    fusion = QStyleFactory.create("Fusion").standardPalette()
    ours = light_palette()
    different = [(group.name, role.name, fusion.color(group, role).name(), ours.color(group, role).name())
                 for group in GROUPS for role in ROLES
                 if fusion.color(group, role).rgba() != ours.color(group, role).rgba()
                 and role.name not in LIGHT_CONTRAST_FIXES]
    assert different == []
    assert all(ours.isBrushSet(group, role) for group in GROUPS for role in ROLES)  # nothing left to the platform


@pytest.fixture
def theme_restored(qapp: QApplication):
    style, palette, chosen = qapp.style().name(), qapp.palette(), qapp.property(STYLE_CHOSEN_AT_START)
    yield
    qapp.setProperty(STYLE_CHOSEN_AT_START, chosen)
    qapp.setStyle(style)
    qapp.setPalette(palette)


def test_a_theme_sets_fusion_unless_the_app_was_made_with_it(qapp: QApplication, theme_restored: None) -> None:
    qapp.setStyle("Windows")
    qapp.setProperty(STYLE_CHOSEN_AT_START, None)
    apply_theme(qapp, "light")
    assert qapp.style().name().lower() == "fusion"
    assert qapp.palette().color(QPalette.ColorRole.Window).name() == "#efefef"
    apply_theme(qapp, "dark")
    assert qapp.palette().color(QPalette.ColorRole.Window).lightness() < 100
