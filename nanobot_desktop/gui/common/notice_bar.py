"""A slim bar above a pane for things the person should know and can act on, without a modal dialog.

Used for "Session deleted — Undo", "No model is configured yet — Open Settings" and endpoint errors.
A bar never blocks anything; it stays until dismissed, replaced, or its timeout runs out.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QToolButton, QWidget

from nanobot_desktop.gui.common.palette import mix, palette_colors, set_text_color
from nanobot_desktop.gui.common.widgets import plain_label

LEVELS = ("info", "warning", "error")


class NoticeBar(QFrame):
    """Message + action buttons + close; hidden until `show_notice`."""

    dismissed = Signal()
    """The bar was closed (by its ✕, a button, or its timeout)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice_bar")
        self.level = "info"
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 6, 4)
        layout.setSpacing(8)
        self.label = plain_label(selectable=True)
        layout.addWidget(self.label, 1)
        self._buttons_layout = QHBoxLayout()
        self._buttons_layout.setSpacing(6)
        layout.addLayout(self._buttons_layout)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.dismiss)
        layout.addWidget(self.close_button)
        self.buttons: list[QPushButton] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self._apply_colors()
        self.hide()

    def show_notice(self, text: str, level: str = "info",
                    actions: list[tuple[str, Callable[[], object]]] | None = None,
                    timeout_ms: int = 0) -> None:
        """Show `text`; each action is (button text, callback) and dismisses the bar after running."""
        if level not in LEVELS:
            raise ValueError(f"unknown notice level {level!r}; expected one of {', '.join(LEVELS)}")
        self.level = level
        self.label.setText(text)
        for button in self.buttons:
            self._buttons_layout.removeWidget(button)
            button.deleteLater()
        self.buttons = []
        for caption, callback in actions or []:
            button = QPushButton(caption)
            button.clicked.connect(lambda _checked=False, run=callback: self._run(run))
            self._buttons_layout.addWidget(button)
            self.buttons.append(button)
        self._apply_colors()
        self.show()
        if timeout_ms > 0:
            self._timer.start(timeout_ms)
        else:
            self._timer.stop()

    def button(self, caption: str) -> QPushButton | None:
        return next((b for b in self.buttons if b.text() == caption), None)

    def text(self) -> str:
        """The shown message ("" while hidden)."""
        return "" if self.isHidden() else self.label.text()

    def dismiss(self) -> None:
        self._timer.stop()
        if not self.isHidden():
            self.hide()
            self.dismissed.emit()

    def _run(self, callback: Callable[[], object]) -> None:
        self.dismiss()
        callback()

    def _apply_colors(self) -> None:
        colors = palette_colors(self.palette())
        tone = {"error": colors.error, "warning": colors.accent}.get(self.level, colors.accent)
        self._fill = mix(colors.base, tone, 0.14)
        self._border = mix(colors.base, tone, 0.55)
        set_text_color(self.label, colors.text)
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(self._border)
        painter.setBrush(self._fill)
        painter.drawRoundedRect(self.rect().adjusted(1, 1, -1, -1), 5, 5)
        painter.end()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            QTimer.singleShot(0, self, self._apply_colors)
