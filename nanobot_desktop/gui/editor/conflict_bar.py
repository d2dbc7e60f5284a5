"""Inline message bars for the editor: conflicts, file notices and errors, shown above the text.

Bars instead of dialogs: they never block the event loop (no exec()), they stay visible while the
person keeps typing, and they say what happened right where it matters.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from nanobot_desktop.gui.common.design import ACCENTS, RADII
from nanobot_desktop.gui.editor.code_edit import blend


class BarKind(Enum):
    INFO = ACCENTS.info
    WARNING = ACCENTS.warning
    ERROR = ACCENTS.removed


class MessageBar(QFrame):
    """A tinted strip with a message and a few buttons; hidden until `show_message` is called."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self._kind = BarKind.INFO
        self._label = QLabel(self)
        self._label.setWordWrap(True)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(10, 6, 6, 6)
        self._layout.setSpacing(6)
        self._layout.addWidget(self._label, 1)
        self._buttons: dict[str, QPushButton] = {}
        self.hide()

    @property
    def text(self) -> str:
        return self._label.text()

    @property
    def kind(self) -> BarKind:
        return self._kind

    def button(self, label: str) -> QPushButton:
        """The button with this label (tests and keyboard wiring use it)."""
        return self._buttons[label]

    def button_labels(self) -> list[str]:
        return list(self._buttons)

    def show_message(self, kind: BarKind, text: str,
                     actions: list[tuple[str, Callable[[], None]]] | None = None) -> None:
        """Show `text` with one button per (label, callback); replaces whatever the bar showed."""
        for button in self._buttons.values():
            self._layout.removeWidget(button)
            button.deleteLater()
        self._buttons.clear()
        self._kind = kind
        self._label.setText(text)
        for label, callback in actions or []:
            button = QPushButton(label, self)
            button.setAutoDefault(False)
            button.clicked.connect(callback)
            self._layout.addWidget(button, 0, Qt.AlignmentFlag.AlignVCenter)
            self._buttons[label] = button
        self._apply_colors()
        self.show()

    def clear(self) -> None:
        self.hide()
        self._label.clear()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_colors()

    def _apply_colors(self) -> None:
        # The application palette, not ours: our own style sheet changes our palette (no feedback loop).
        palette = QApplication.palette()
        base = palette.color(QPalette.ColorRole.Base)
        accent = QColor(self._kind.value)
        background = blend(base, accent, 0.18)
        border = blend(base, accent, 0.6)
        text = palette.color(QPalette.ColorRole.Text)
        # The selector names only this frame, so the buttons keep their native look.
        sheet = (
            f"QFrame#{self.objectName()} {{ background: {background.name()}; border: 1px solid {border.name()};"
            f" border-radius: {RADII.small}px; }}"
            f" QFrame#{self.objectName()} > QLabel {{ color: {text.name()}; background: transparent; }}"
        )
        if sheet != self.styleSheet():
            self.setStyleSheet(sheet)
