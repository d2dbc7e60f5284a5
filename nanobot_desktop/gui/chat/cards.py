"""The inline approval card: everything the user needs to decide, and the three answers.

Non-modal on purpose: the engine awaits a future that the card's answer resolves, so the chat
(and every other task) keeps running while the question is open.
"""

from __future__ import annotations


from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTextEdit, QVBoxLayout, QWidget

from nanobot_desktop.engine import exec_allow_possible
from nanobot_desktop.gui.chat.model import ApprovalCard
from nanobot_desktop.gui.chat.widgets import CardFrame, ItemWidget
from nanobot_desktop.gui.common.palette import PaletteColors, palette_colors, set_text_color
from nanobot_desktop.gui.common.widgets import DiffHighlighter, FitTextView, monospace_font, plain_label

ANSWER_LABELS = {"allow_once": "Allowed once", "allow_always": "Always allowed", "deny": "Denied"}


class ApprovalCardWidget(ItemWidget):
    """Tool, command and working folder (for exec), full arguments, the diff, and the answer buttons."""

    answered = Signal(str, str)
    """(call_id, answer) with answer in "allow_once", "allow_always", "deny"."""

    def __init__(self, item: ApprovalCard, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        card = item
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.frame = CardFrame()
        outer.addWidget(self.frame)
        layout = QVBoxLayout(self.frame)
        layout.setContentsMargins(14, 10, 14, 10)
        layout.setSpacing(6)

        origin = f" from {card.origin}" if card.origin else ""
        self.title_label = plain_label(f"Allow the tool “{card.tool}”{origin} to run?")
        title_font = QFont(self.title_label.font())
        title_font.setBold(True)
        self.title_label.setFont(title_font)
        layout.addWidget(self.title_label)
        self._captions: list[QLabel] = []

        self.command_view: FitTextView | None = None
        self.working_dir_label: QLabel | None = None
        if card.command is not None:
            layout.addWidget(self._caption("Command"))
            self.command_view = FitTextView(card.command, max_lines=8)
            layout.addWidget(self.command_view)
            if card.working_dir:
                self.working_dir_label = plain_label(f"in {card.working_dir}")
                self.working_dir_label.setFont(monospace_font())
                layout.addWidget(self.working_dir_label)
        self.sandbox_label: QLabel | None = None
        if card.sandbox:
            self.sandbox_label = plain_label(card.sandbox[:1].upper() + card.sandbox[1:])
            self.sandbox_label.setWordWrap(True)
            layout.addWidget(self.sandbox_label)

        layout.addWidget(self._caption("Arguments"))
        self.arguments_view = FitTextView(card.arguments_text(), max_lines=12)
        layout.addWidget(self.arguments_view)

        self.diff_view: FitTextView | None = None
        self._highlighter: DiffHighlighter | None = None
        if card.diff:
            layout.addWidget(self._caption("Changes"))
            self.diff_view = FitTextView(card.diff.rstrip("\n"), max_lines=18)
            self.diff_view.setLineWrapMode(QTextEdit.LineWrapMode.NoWrap)
            self.diff_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
            self._highlighter = DiffHighlighter(self.diff_view.document(), palette_colors(self.palette()))
            layout.addWidget(self.diff_view)

        buttons = QHBoxLayout()
        buttons.setSpacing(8)
        self.allow_once_button = QPushButton("Allow once")
        self.allow_always_button = QPushButton("Always allow")
        self.deny_button = QPushButton("Deny")
        if card.tool == "exec" and not exec_allow_possible():
            self.allow_always_button.setEnabled(False)
            self.allow_always_button.setToolTip("Without a sandbox, every command is asked for")
        self.allow_once_button.setDefault(True)
        for button, answer in ((self.allow_once_button, "allow_once"),
                               (self.allow_always_button, "allow_always"),
                               (self.deny_button, "deny")):
            button.clicked.connect(lambda _checked=False, a=answer: self._answer(a))
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.state_label = plain_label(selectable=False)
        self.state_label.setWordWrap(False)
        state_font = QFont(self.state_label.font())
        state_font.setBold(True)
        self.state_label.setFont(state_font)
        buttons.addWidget(self.state_label)
        layout.addLayout(buttons)
        self._colors = palette_colors(self.palette())
        self.apply_colors(self._colors)
        self.refresh()

    @property
    def card(self) -> ApprovalCard:
        assert isinstance(self.item, ApprovalCard)
        return self.item

    def _caption(self, text: str) -> QLabel:
        caption = plain_label(text, selectable=False)
        font = QFont(caption.font())
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.9))
        caption.setFont(font)
        self._captions.append(caption)
        return caption

    def _answer(self, answer: str) -> None:
        if self.card.state == "pending":
            self.answered.emit(self.card.call_id, answer)

    def refresh(self) -> None:
        card = self.card
        pending = card.state == "pending"
        for button in (self.allow_once_button, self.allow_always_button, self.deny_button):
            button.setVisible(pending)
        if pending:
            self.state_label.setText("Waiting for your answer")
        elif card.answer in ANSWER_LABELS:
            self.state_label.setText(ANSWER_LABELS[card.answer])
        else:
            self.state_label.setText("Allowed" if card.state == "allowed" else "Denied")
        self.apply_colors(self._colors)

    def apply_colors(self, colors: PaletteColors) -> None:
        self._colors = colors
        card = self.card
        border = {"allowed": colors.ok, "denied": colors.error}.get(card.state, colors.accent)
        self.frame.set_colors(colors.card, border)
        for caption in self._captions:
            set_text_color(caption, colors.muted)
        state_color = {"allowed": colors.ok, "denied": colors.error}.get(card.state, colors.muted)
        set_text_color(self.state_label, state_color)
        if self.sandbox_label is not None:
            contained = not (card.sandbox or "").startswith("not sandboxed")
            set_text_color(self.sandbox_label, colors.muted if contained else colors.error)
        if self._highlighter is not None:
            self._highlighter.set_colors(colors)
