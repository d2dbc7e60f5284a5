"""Light, dark, or follow the system: one Fusion style, two palettes.

Fusion is used in every mode because it is the one built-in style that honours a custom palette
everywhere (the native styles ignore parts of it), so light and dark look the same on each OS.
Both palettes are written in gui/common/design.py; widgets take their colours from the palette,
never hard-coded, and re-render on `PaletteChange`.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from nanobot_desktop.gui.common.design import (
    QPALETTE_DARK, QPALETTE_DARK_DISABLED, QPALETTE_HIGH_CONTRAST, QPALETTE_HIGH_CONTRAST_DISABLED, QPALETTE_LIGHT,
    QPALETTE_LIGHT_CONTRAST_FIXES,
)

log = logging.getLogger(__name__)

THEME_MODES = ("system", "light", "dark")
FUSION = "Fusion"
# A property of the QApplication: the style given when it was created (shell/app.py), so that
# applying a theme need not ask Qt for the current style.
STYLE_CHOSEN_AT_START = "nanobotStyleChosenAtStart"
_WATCHER_NAME = "nanobotThemeWatcher"


def light_palette() -> QPalette:
    """Fusion's own light palette, written out in gui/common/design.py (asking a style object for it
    would create QStyle's Python type and enums, ~5 ms before the first paint). Every role is set, as
    in the dark palette, so light looks the same on every OS too."""
    palette = QPalette()
    for name, (normal, disabled) in {**QPALETTE_LIGHT, **QPALETTE_LIGHT_CONTRAST_FIXES}.items():
        role = getattr(QPalette.ColorRole, name)
        for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
            palette.setColor(group, role, QColor(normal))
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled))
    return palette


def dark_palette() -> QPalette:
    palette = QPalette()
    for name, color in QPALETTE_DARK.items():
        palette.setColor(getattr(QPalette.ColorRole, name), QColor(color))
    for name, color in QPALETTE_DARK_DISABLED.items():
        palette.setColor(QPalette.ColorGroup.Disabled, getattr(QPalette.ColorRole, name), QColor(color))
    return palette


HIGH_CONTRAST_MODES = ("system", "on", "off")  # AppSettings.high_contrast; "system" follows the OS's preference


def high_contrast_palette(*, dark: bool) -> QPalette:
    """Black on white (or white on black) with a selection and links far from both: ≥ 7:1 for text
    (the colours are in gui/common/design.py)."""
    palette = QPalette()
    which = 1 if dark else 0
    for name, colors in QPALETTE_HIGH_CONTRAST.items():
        palette.setColor(getattr(QPalette.ColorRole, name), QColor(colors[which]))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(QPALETTE_HIGH_CONTRAST_DISABLED[which]))
    return palette


class _SchemeWatcher(QObject):
    """Lives on the app; re-applies the palette when the system's colour scheme or contrast preference
    changes and the mode follows the system."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.setObjectName(_WATCHER_NAME)
        self.mode = "system"
        self.high_contrast = "off"
        self.dark = False
        app.styleHints().colorSchemeChanged.connect(self._on_scheme_changed)
        # Both held for the app's lifetime: PySide deletes the hints object when its last wrapper goes.
        self.style_hints = app.styleHints()
        self.accessibility_hints = self.style_hints.accessibility()
        self.accessibility_hints.contrastPreferenceChanged.connect(self._on_contrast_changed)

    def _on_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        if self.mode == "system":
            app = QApplication.instance()
            if isinstance(app, QApplication):
                self.dark = scheme == Qt.ColorScheme.Dark
                _set_palette(app, dark=self.dark, high_contrast=self.wants_high_contrast())

    def _on_contrast_changed(self, _preference: Qt.ContrastPreference) -> None:
        if self.high_contrast == "system":
            app = QApplication.instance()
            if isinstance(app, QApplication):
                _set_palette(app, dark=self.dark, high_contrast=self.wants_high_contrast())

    def wants_high_contrast(self) -> bool:
        """The high-contrast palette: chosen ("on"), or asked for by the system ("system")."""
        if self.high_contrast == "system":
            return self.accessibility_hints.contrastPreference() == Qt.ContrastPreference.HighContrast
        return self.high_contrast == "on"


def _set_palette(app: QApplication, *, dark: bool, high_contrast: bool = False) -> None:
    if high_contrast:
        app.setPalette(high_contrast_palette(dark=dark))
    else:
        app.setPalette(dark_palette() if dark else light_palette())


def apply_theme(app: QApplication, mode: str, high_contrast: str | None = None) -> None:
    """Apply "system", "light" or "dark"; "system" keeps following the OS until another mode is set.
    `high_contrast` ("system", "on", "off") swaps in the high-contrast palette; None keeps the choice
    made last (a theme preview in Settings must not drop it)."""
    if mode not in THEME_MODES:
        raise ValueError(f"unknown theme {mode!r}; expected one of {', '.join(THEME_MODES)}")
    if high_contrast is not None and high_contrast not in HIGH_CONTRAST_MODES:
        raise ValueError(f"unknown high-contrast choice {high_contrast!r}; expected one of {', '.join(HIGH_CONTRAST_MODES)}")
    if app.property(STYLE_CHOSEN_AT_START) != FUSION and app.style().name().lower() != FUSION.lower():
        app.setStyle(FUSION)
    watcher = app.findChild(_SchemeWatcher, _WATCHER_NAME)
    if watcher is None:
        watcher = _SchemeWatcher(app)
    watcher.mode = mode
    if high_contrast is not None:
        watcher.high_contrast = high_contrast
    if mode == "system":
        dark = QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark
    else:
        dark = mode == "dark"
    watcher.dark = dark
    contrast = watcher.wants_high_contrast()
    _set_palette(app, dark=dark, high_contrast=contrast)
    log.debug("theme %s applied (dark=%s, high contrast=%s)", mode, dark, contrast)


def set_high_contrast(app: QApplication, choice: str) -> None:
    """Remember the high-contrast choice; the palette changes only when the outcome does (a window
    opening with "system" on a system without the preference repaints nothing)."""
    if choice not in HIGH_CONTRAST_MODES:
        raise ValueError(f"unknown high-contrast choice {choice!r}; expected one of {', '.join(HIGH_CONTRAST_MODES)}")
    watcher = app.findChild(_SchemeWatcher, _WATCHER_NAME)
    if watcher is None:  # no theme applied yet (the app applies one before its window): only "on" needs one
        if choice == "on":
            apply_theme(app, "system", choice)
        return
    before = watcher.wants_high_contrast()
    watcher.high_contrast = choice
    if watcher.wants_high_contrast() != before:
        _set_palette(app, dark=watcher.dark, high_contrast=not before)


def current_theme_mode(app: QApplication) -> str:
    watcher = app.findChild(_SchemeWatcher, _WATCHER_NAME)
    return watcher.mode if watcher is not None else "system"
