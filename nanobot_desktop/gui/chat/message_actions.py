"""What a person can do with a message besides reading it: switch between branches, edit and resend, regenerate.

The widgets here only say what was asked (signals carrying the item's uid); gui/chat/branching.py turns
that into new session files through the engine. A user bubble gets `UserActions` (Edit, and the "‹ 2/3 ›"
switcher when the conversation forks at that message); an assistant reply gets `ReplyActions`
(Regenerate and the switcher).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QToolButton, QVBoxLayout, QWidget

from nanobot_desktop.gui.common.i18n import translate


UNSAVED_COMMANDS = ("/new", "/help", "/stop")  # the engine handles them before anything is written


def flat_button(text: str, tip: str, on_click: Callable[[], object]) -> QToolButton:
    """A message's action button: flat until hovered, its text and tooltip, `on_click` when clicked."""
    button = QToolButton()
    button.setText(text)
    button.setAutoRaise(True)
    button.setToolTip(tip)
    button.clicked.connect(lambda: on_click())
    return button


class ForkSwitcher(QWidget):
    """"‹ 2/3 ›": which of the conversations that fork here is shown, with steps to its neighbours."""

    stepped = Signal(int)
    """-1 (the previous sibling) or +1 (the next one)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        self.previous_button = self._arrow("‹", translate("Chat", "Show the previous version of the conversation from here"), -1)
        self.previous_button.setAccessibleName(translate("Chat", "Previous version"))  # "‹" is no name
        self.position_label = QLabel()
        self.position_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.next_button = self._arrow("›", translate("Chat", "Show the next version of the conversation from here"), 1)
        self.next_button.setAccessibleName(translate("Chat", "Next version"))
        row.addWidget(self.previous_button)
        row.addWidget(self.position_label)
        row.addWidget(self.next_button)
        self.set_fork(None)

    def _arrow(self, glyph: str, tip: str, step: int) -> QToolButton:
        return flat_button(glyph, tip, lambda: self.stepped.emit(step))

    def set_fork(self, fork: tuple[int, int] | None) -> None:
        """(position from 1, count) of the version shown, or None when the conversation does not fork here."""
        self.setVisible(fork is not None)
        if fork is None:
            return
        position, count = fork
        self.position_label.setText(f"{position}/{count}")
        self.position_label.setToolTip(translate("Chat", "Version {position} of {count} of the conversation from this message")
                                       .format(position=position, count=count))
        self.previous_button.setEnabled(position > 1)
        self.next_button.setEnabled(position < count)


class _ForkActions(QWidget):
    """Actions with a "‹ 2/3 ›" switcher, made the first time the message forks (or it is asked for):
    most messages never fork, and its two buttons and label were ~16 kB of Qt objects each."""

    fork_stepped = Signal(int)
    """-1 or +1: the switcher was used."""

    def _place_switcher(self, layout: QBoxLayout, before: QWidget) -> None:
        self._switcher: ForkSwitcher | None = None
        self._switcher_layout = layout
        self._switcher_before = before

    @property
    def switcher(self) -> ForkSwitcher:
        if self._switcher is None:
            switcher = self._switcher = ForkSwitcher()
            switcher.stepped.connect(self.fork_stepped)
            self._switcher_layout.insertWidget(self._switcher_layout.indexOf(self._switcher_before), switcher)
        return self._switcher

    def set_fork(self, fork: tuple[int, int] | None) -> None:
        """(position from 1, count) of the version shown, or None when the conversation does not fork here."""
        if fork is not None or self._switcher is not None:
            self.switcher.set_fork(fork)


class _EditBox(QPlainTextEdit):
    """Ctrl+Enter sends, Escape cancels (Enter alone adds a line, as in a longer edit one expects)."""

    submitted = Signal()
    cancelled = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.submitted.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
            return
        super().keyPressEvent(event)


class _InlineEditor(QWidget):
    """The edit box under a bubble with Cancel and *Send as a new branch*."""

    def __init__(self) -> None:
        super().__init__()
        editor_layout = QVBoxLayout(self)
        editor_layout.setContentsMargins(48, 0, 0, 0)
        self.edit_box = _EditBox()
        self.edit_box.setTabChangesFocus(True)
        self.edit_box.setFixedHeight(self.edit_box.fontMetrics().lineSpacing() * 5 + 12)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = QPushButton(translate("Chat", "Cancel"))
        self.send_button = QPushButton(translate("Chat", "Send as a new branch"))
        self.send_button.setToolTip(translate("Chat", "Start a new version of the conversation from here with the edited text "
                                                      "(Ctrl+Enter)"))
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.send_button)
        editor_layout.addWidget(self.edit_box)
        editor_layout.addLayout(buttons)


class UserActions(_ForkActions):
    """Below a user bubble: the switcher and *Edit*; editing opens an inline editor pre-filled with the text.

    The editor (a QPlainTextEdit with its document and scroll bars, and two buttons: ~50 kB of Qt
    objects) is made the first time *Edit* is used, not with every bubble: most are never edited."""

    edit_submitted = Signal(str)
    """The edited text: send it in a new branch that forks at this message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addStretch(1)
        self.edit_button = flat_button(translate("Chat", "Edit"), translate(
            "Chat", "Edit this message and send it again; the conversation so far stays as it is"), self.start_edit)
        bar.addWidget(self.edit_button)
        self._place_switcher(bar, self.edit_button)
        self._layout.addLayout(bar)
        self._editor: _InlineEditor | None = None
        self._text = ""

    @property
    def editor(self) -> _InlineEditor:
        """The inline editor, made (hidden) on first use."""
        if self._editor is None:
            editor = self._editor = _InlineEditor()
            editor.hide()
            editor.edit_box.submitted.connect(self._submit)
            editor.edit_box.cancelled.connect(self.cancel_edit)
            editor.cancel_button.clicked.connect(self.cancel_edit)
            editor.send_button.clicked.connect(self._submit)
            self._layout.addWidget(editor)
        return self._editor

    @property
    def edit_box(self) -> QPlainTextEdit:
        return self.editor.edit_box

    @property
    def send_button(self) -> QPushButton:
        return self.editor.send_button

    @property
    def cancel_button(self) -> QPushButton:
        return self.editor.cancel_button

    def set_text(self, text: str) -> None:
        """The message's text; a command that is never saved (`/new`, `/help`) has nothing to branch from."""
        self._text = text
        self.edit_button.setVisible(text.strip().lower() not in UNSAVED_COMMANDS)

    def start_edit(self) -> None:
        self.edit_box.setPlainText(self._text)
        self.editor.show()
        self.edit_button.setEnabled(False)
        self.edit_box.setFocus()
        self.edit_box.moveCursor(self.edit_box.textCursor().MoveOperation.End)

    def cancel_edit(self) -> None:
        if self._editor is not None:
            self._editor.hide()
        self.edit_button.setEnabled(True)

    def _submit(self) -> None:
        text = self.edit_box.toPlainText()
        if not text.strip():
            return
        self.cancel_edit()
        self.edit_submitted.emit(text)


class ReplyActions(_ForkActions):
    """In an assistant reply's footer: the switcher and *Regenerate*."""

    regenerate_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        self.regenerate_button = flat_button(translate("Chat", "Regenerate"), translate(
            "Chat", "Ask for a new reply to the same message; this reply stays as it is"), self.regenerate_requested.emit)
        row.addWidget(self.regenerate_button)
        self._place_switcher(row, self.regenerate_button)
