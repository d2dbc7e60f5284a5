"""A slim bar above a pane for things the person should know and can act on, without a modal dialog.

Used for "Session deleted — Undo", "No model is configured yet — Open Settings" and endpoint errors.
A bar never blocks anything. Each notice has a lifetime: it goes when dismissed, replaced, its timeout
runs out, or — the usual case — when the condition it reports ends: the code that shows it gives it a
`topic` ("turn-failed:<session>", "retry:<session>", "no-model") and calls `clear(topic)` when that
condition is over, which hides the bar only if that notice is still the one shown.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QToolButton, QWidget

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.palette import mix, palette_colors, set_text_color
from nanobot_desktop.gui.common.widgets import plain_label

LEVELS = ("info", "warning", "error")


def reason_of(error: BaseException | str) -> str:
    """An error's own words on one line, for the parentheses of "Could not save x (reason)."."""
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror + (f": {error.filename}" if error.filename else "")
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split()).rstrip(".")


class NoticeBar(QFrame):
    """Message + action buttons + close; hidden until `show_notice`."""

    dismissed = Signal()
    """The bar was closed (by its ✕, a button, or its timeout)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice_bar")
        self.level = "info"
        self.topic = ""
        """What the shown notice is about ("" for none); `clear(topic)` hides it when that ends."""
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
        self.close_button.setToolTip(translate("Notices", "Dismiss"))
        self.close_button.setAccessibleName(self.close_button.toolTip())  # "✕" is no name for a screen reader
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
                    timeout_ms: int = 0, topic: str = "") -> None:
        """Show `text`; each action is (button text, callback) and dismisses the bar after running.
        `topic` names the condition, for `clear`; showing the same text and topic again changes nothing."""
        if level not in LEVELS:
            raise ValueError(f"unknown notice level {level!r}; expected one of {', '.join(LEVELS)}")
        captions = [caption for caption, _callback in actions or []]
        if (not self.isHidden() and topic and topic == self.topic and text == self.label.text()
                and level == self.level and captions == [b.text() for b in self.buttons]):
            if timeout_ms > 0:
                self._timer.start(timeout_ms)
            return  # the same notice again: no flicker, no repeat
        self.level = level
        self.topic = topic
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

    def update_text(self, text: str, topic: str) -> bool:
        """Change the text of the notice about `topic` in place (a countdown); False if it is not shown."""
        if self.isHidden() or self.topic != topic:
            return False
        self.label.setText(text)
        return True

    def clear(self, topic: str) -> bool:
        """The condition `topic` ended: hide its notice if it is the one shown. True if it was."""
        if self.isHidden() or not topic or self.topic != topic:
            return False
        self.dismiss()
        return True

    def clear_matching(self, prefix: str) -> bool:
        """Like `clear`, for every topic starting with `prefix` ("turn-failed:")."""
        return self.clear(self.topic) if self.topic.startswith(prefix) else False

    def dismiss(self) -> None:
        self._timer.stop()
        if not self.isHidden():
            self.hide()
            self.topic = ""
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
