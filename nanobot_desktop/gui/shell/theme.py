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

from nanobot_desktop.gui.common.design import QPALETTE_DARK, QPALETTE_DARK_DISABLED, QPALETTE_LIGHT

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
    for name, (normal, disabled) in QPALETTE_LIGHT.items():
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


class _SchemeWatcher(QObject):
    """Lives on the app; re-applies the palette when the system scheme changes and mode is "system"."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.setObjectName(_WATCHER_NAME)
        self.mode = "system"
        app.styleHints().colorSchemeChanged.connect(self._on_scheme_changed)

    def _on_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        if self.mode == "system":
            app = QApplication.instance()
            if isinstance(app, QApplication):
                _set_palette(app, dark=scheme == Qt.ColorScheme.Dark)


def _set_palette(app: QApplication, *, dark: bool) -> None:
    app.setPalette(dark_palette() if dark else light_palette())


def apply_theme(app: QApplication, mode: str) -> None:
    """Apply "system", "light" or "dark"; "system" keeps following the OS until another mode is set."""
    if mode not in THEME_MODES:
        raise ValueError(f"unknown theme {mode!r}; expected one of {', '.join(THEME_MODES)}")
    if app.property(STYLE_CHOSEN_AT_START) != FUSION and app.style().name().lower() != FUSION.lower():
        app.setStyle(FUSION)
    watcher = app.findChild(_SchemeWatcher, _WATCHER_NAME)
    if watcher is None:
        watcher = _SchemeWatcher(app)
    watcher.mode = mode
    if mode == "system":
        dark = QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark
    else:
        dark = mode == "dark"
    _set_palette(app, dark=dark)
    log.debug("theme %s applied (dark=%s)", mode, dark)


def current_theme_mode(app: QApplication) -> str:
    watcher = app.findChild(_SchemeWatcher, _WATCHER_NAME)
    return watcher.mode if watcher is not None else "system"
