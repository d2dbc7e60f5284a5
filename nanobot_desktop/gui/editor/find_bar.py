"""Find-in-file bar for the Markdown editor (Ctrl+F; Enter / Shift+Enter; Esc closes).

Searching is case-insensitive and literal, which is what people expect when looking through
HISTORY.md for a word. The match count is refreshed on a short timer, not per keystroke, so typing
stays smooth in multi-MB files.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QToolButton, QWidget

from nanobot_desktop.gui.common.i18n import translate


class FindBar(QFrame):
    """Searches a QPlainTextEdit; hidden until `open_bar()`."""

    closed = Signal()
    """The bar was closed (Esc or its close button); the editor takes the focus back."""

    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.field = QLineEdit(self)
        self.field.setPlaceholderText(translate("Editor", "Find"))
        self.field.setClearButtonEnabled(True)
        self.field.installEventFilter(self)
        self.count_label = QLabel(self)
        self.count_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("9999 of 9999  "))
        previous = QToolButton(self)
        previous.setText("▲")
        previous.setToolTip(translate("Editor", "Previous match (Shift+Enter)"))
        previous.setAccessibleName(translate("Editor", "Previous match"))  # the glyphs are no names
        following = QToolButton(self)
        following.setText("▼")
        following.setToolTip(translate("Editor", "Next match (Enter)"))
        following.setAccessibleName(translate("Editor", "Next match"))
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip(translate("Editor", "Close (Esc)"))
        close.setAccessibleName(translate("Editor", "Close find"))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 3, 6, 3)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.count_label)
        layout.addWidget(previous)
        layout.addWidget(following)
        layout.addWidget(close)
        previous.clicked.connect(self.find_previous)
        following.clicked.connect(self.find_next)
        close.clicked.connect(self.close_bar)
        self._count_timer = QTimer(self)
        self._count_timer.setSingleShot(True)
        self._count_timer.setInterval(120)
        self._count_timer.timeout.connect(self._update_count)
        self.field.textChanged.connect(self._on_text_changed)
        self.hide()

    # ---- public -------------------------------------------------------------------------------
    def open_bar(self) -> None:
        """Show the bar, prefilled with the editor's selection if there is a short one."""
        selected = self._editor.textCursor().selectedText()
        if selected and "\u2029" not in selected and len(selected) < 200:
            self.field.setText(selected)
        self.show()
        self.field.setFocus()
        self.field.selectAll()
        self._update_count()

    def close_bar(self) -> None:
        self.hide()
        self.closed.emit()

    def find_next(self) -> bool:
        return self._find(backward=False)

    def find_previous(self) -> bool:
        return self._find(backward=True)

    @property
    def match_count(self) -> int:
        return self._count_matches()

    # ---- internals ----------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            key_event: QKeyEvent = event  # type: ignore[assignment]
            if key_event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if key_event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    self.find_previous()
                else:
                    self.find_next()
                return True
            if key_event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
        return super().eventFilter(watched, event)

    def _on_text_changed(self, _text: str) -> None:
        self._count_timer.start()
        self._find(backward=False, from_selection_start=True)

    def _find(self, *, backward: bool, from_selection_start: bool = False) -> bool:
        needle = self.field.text()
        if not needle:
            return False
        document = self._editor.document()
        cursor = self._editor.textCursor()
        if from_selection_start:
            cursor.setPosition(cursor.selectionStart())
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        found = document.find(needle, cursor, flags)
        if found.isNull():  # wrap around
            start = QTextCursor(document)
            if backward:
                start.movePosition(QTextCursor.MoveOperation.End)
            found = document.find(needle, start, flags)
        if found.isNull():
            self._count_timer.start()
            return False
        self._editor.setTextCursor(found)
        self._editor.centerCursor()
        self._count_timer.start()
        return True

    def _count_matches(self) -> int:
        needle = self.field.text().lower()
        if not needle:
            return 0
        return self._editor.toPlainText().lower().count(needle)

    def _update_count(self) -> None:
        needle = self.field.text()
        if not needle:
            self.count_label.setText("")
            return
        text = self._editor.toPlainText().lower()
        needle = needle.lower()
        total = text.count(needle)
        if total == 0:
            self.count_label.setText(translate("Editor", "No matches"))
            return
        cursor = self._editor.textCursor()
        current = text.count(needle, 0, cursor.selectionEnd())
        if cursor.hasSelection() and cursor.selectedText().lower() == needle:
            self.count_label.setText(translate("Editor", "{current} of {total}").format(current=current, total=total))
        else:
            self.count_label.setText(translate("Editor", "%n match(es)", None, total))
