"""Light, dark, or follow the system: one Fusion style, two palettes.

Fusion is used in every mode because it is the one built-in style that honours a custom palette
everywhere (the native styles ignore parts of it), so light and dark look the same on each OS.
Widgets take their colours from the palette, never hard-coded, and re-render on `PaletteChange`.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)

THEME_MODES = ("system", "light", "dark")
FUSION = "Fusion"
# A property of the QApplication: the style given when it was created (shell/app.py), so that
# applying a theme need not ask Qt for the current style.
STYLE_CHOSEN_AT_START = "nanobotStyleChosenAtStart"
_WATCHER_NAME = "nanobotThemeWatcher"


# The light palette: Fusion's own (`QStyleFactory.create("Fusion").standardPalette()`), written out.
# Asking a style object for it would create QStyle's Python type and enums, ~5 ms before the first
# paint. Every role is set here, as in the dark palette (Fusion's leaves a few to the platform's
# colours), so light looks the same on every OS too. role: (active and inactive, disabled);
# tests/gui/test_theme_palettes.py compares it with Fusion's, colour by colour.
_LIGHT = {
    "Window": ("#efefef", "#efefef"), "WindowText": ("#000000", "#bebebe"), "Base": ("#ffffff", "#efefef"),
    "AlternateBase": ("#f7f7f7", "#f7f7f7"), "ToolTipBase": ("#ffffdc", "#ffffdc"),
    "ToolTipText": ("#000000", "#000000"), "PlaceholderText": ("#80000000", "#80000000"),
    "Text": ("#000000", "#bebebe"), "Button": ("#efefef", "#efefef"), "ButtonText": ("#000000", "#bebebe"),
    "BrightText": ("#ffffff", "#ffffff"), "Light": ("#ffffff", "#ffffff"), "Midlight": ("#cacaca", "#cacaca"),
    "Mid": ("#b8b8b8", "#b8b8b8"), "Dark": ("#9f9f9f", "#bebebe"), "Shadow": ("#767676", "#b1b1b1"),
    "Highlight": ("#308cc6", "#919191"), "HighlightedText": ("#ffffff", "#ffffff"),
    "Link": ("#0000ff", "#0000ff"), "LinkVisited": ("#ff00ff", "#ff00ff"), "Accent": ("#308cc6", "#919191"),
}


# Where Fusion's light colours fail WCAG contrast (tests/gui/test_contrast.py): placeholder text 4.0:1
# on white, white on the selection 3.7:1, a visited link 2.7:1 on the window. Only these differ.
LIGHT_CONTRAST_FIXES = {"PlaceholderText": ("#6b6b6b", "#6b6b6b"), "Highlight": ("#2a70b8", "#919191"),
                        "Accent": ("#2a70b8", "#919191"), "LinkVisited": ("#9c27b0", "#9c27b0")}


def light_palette() -> QPalette:
    palette = QPalette()
    for name, (normal, disabled) in {**_LIGHT, **LIGHT_CONTRAST_FIXES}.items():
        role = getattr(QPalette.ColorRole, name)
        for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
            palette.setColor(group, role, QColor(normal))
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled))
    return palette


def dark_palette() -> QPalette:
    palette = QPalette()
    text = QColor(228, 228, 228)
    disabled_text = QColor(128, 128, 128)
    roles = {
        QPalette.ColorRole.Window: QColor(43, 43, 46),
        QPalette.ColorRole.WindowText: text,
        QPalette.ColorRole.Base: QColor(30, 30, 32),
        QPalette.ColorRole.AlternateBase: QColor(50, 50, 54),
        QPalette.ColorRole.ToolTipBase: QColor(50, 50, 54),
        QPalette.ColorRole.ToolTipText: text,
        QPalette.ColorRole.PlaceholderText: QColor(160, 160, 160),  # ≥ 4.5:1 on every background
        QPalette.ColorRole.Text: text,
        QPalette.ColorRole.Button: QColor(55, 55, 59),
        QPalette.ColorRole.ButtonText: text,
        QPalette.ColorRole.BrightText: QColor(255, 90, 90),
        QPalette.ColorRole.Light: QColor(75, 75, 80),
        QPalette.ColorRole.Midlight: QColor(62, 62, 66),
        QPalette.ColorRole.Mid: QColor(40, 40, 43),
        QPalette.ColorRole.Dark: QColor(25, 25, 27),
        QPalette.ColorRole.Shadow: QColor(10, 10, 10),
        QPalette.ColorRole.Link: QColor(110, 170, 240),
        QPalette.ColorRole.LinkVisited: QColor(170, 140, 240),
        QPalette.ColorRole.Highlight: QColor(40, 115, 205),  # white on it ≥ 4.5:1, it on a card ≥ 3:1
        QPalette.ColorRole.HighlightedText: QColor(255, 255, 255),
    }
    for role, color in roles.items():
        palette.setColor(role, color)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, disabled_text)
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Highlight, QColor(70, 70, 74))
    return palette


HIGH_CONTRAST_MODES = ("system", "on", "off")  # AppSettings.high_contrast; "system" follows the OS's preference


def high_contrast_palette(*, dark: bool) -> QPalette:
    """Black on white (or white on black) with a selection and links far from both: ≥ 7:1 for text."""
    ink, paper = (QColor("#ffffff"), QColor("#000000")) if dark else (QColor("#000000"), QColor("#ffffff"))
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: paper, QPalette.ColorRole.WindowText: ink, QPalette.ColorRole.Base: paper,
        QPalette.ColorRole.AlternateBase: QColor("#1a1a1a") if dark else QColor("#f2f2f2"),
        QPalette.ColorRole.ToolTipBase: paper, QPalette.ColorRole.ToolTipText: ink,
        QPalette.ColorRole.PlaceholderText: QColor("#c8c8c8") if dark else QColor("#3d3d3d"),
        QPalette.ColorRole.Text: ink, QPalette.ColorRole.Button: paper, QPalette.ColorRole.ButtonText: ink,
        QPalette.ColorRole.BrightText: QColor("#ff8080") if dark else QColor("#a00000"),
        QPalette.ColorRole.Light: ink, QPalette.ColorRole.Midlight: ink, QPalette.ColorRole.Mid: ink,
        QPalette.ColorRole.Dark: ink, QPalette.ColorRole.Shadow: ink,
        QPalette.ColorRole.Highlight: QColor("#4da3ff") if dark else QColor("#00307a"),
        QPalette.ColorRole.HighlightedText: QColor("#000000") if dark else QColor("#ffffff"),
        QPalette.ColorRole.Accent: QColor("#4da3ff") if dark else QColor("#00307a"),
        QPalette.ColorRole.Link: QColor("#9cc4ff") if dark else QColor("#0000b0"),
        QPalette.ColorRole.LinkVisited: QColor("#e0b0ff") if dark else QColor("#6a0080"),
    }
    for role, color in roles.items():
        palette.setColor(role, color)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#9a9a9a") if dark else QColor("#595959"))
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
