"""The inline approval card: everything the user needs to decide, the three answers, and a reason.

Non-modal on purpose: the engine waits for the one answer to its request (from this card, the tray, a
notification), so the chat (and every other task) keeps running while the question is open. A card
answered elsewhere says where ("Allowed once: exec echo fed (answered from the tray menu)").

Once answered, the card folds to one line ("Allowed once: write_file notes.md", or "Denied: exec …
— “not now”") with *Show details* to unfold it: a long diff that was already decided stays out of
the way. Where the card shows a diff or a command, the raw arguments (which repeat the same thing)
sit behind *Show arguments*; everything is still there, never truncated.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent
from PySide6.QtWidgets import (QApplication, QHBoxLayout, QLabel, QLineEdit, QPushButton, QTextEdit, QToolButton, QVBoxLayout,
                               QWidget)

from nanobot_desktop.engine import exec_allow_possible
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.accessibility import name
from nanobot_desktop.gui.common.engine_words import sandbox_line
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.chat.model import ApprovalCard, summarize_arguments
from nanobot_desktop.gui.chat.widgets import CardFrame, ElidedLabel, ItemWidget
from nanobot_desktop.gui.common.palette import PaletteColors, palette_colors, set_text_color
from nanobot_desktop.gui.common.widgets import DiffHighlighter, FitTextView, monospace_font, plain_label
from nanobot_desktop.gui.common.design import SPACING

ANSWER_LABELS = {"allow_once": QT_TRANSLATE_NOOP("Chat", "Allowed once"), "allow_always": QT_TRANSLATE_NOOP("Chat", "Always allowed"),
                 "deny": QT_TRANSLATE_NOOP("Chat", "Denied")}  # translated in _answer_label
_STATE_GLYPHS = {"allowed": "✓", "denied": "⊘"}
ANSWERED_BY = {"tray": QT_TRANSLATE_NOOP("Chat", "answered from the tray menu"),
               "notification": QT_TRANSLATE_NOOP("Chat", "answered from a notification"),
               "terminal": QT_TRANSLATE_NOOP("Chat", "answered in the terminal")}
"""Where an answer came from, when it was not this card (the engine's ApprovalSurface values)."""


_ANSWER_KEYS = {Qt.Key.Key_A: "allow_once", Qt.Key.Key_W: "allow_always", Qt.Key.Key_D: "deny"}


class ApprovalCardWidget(ItemWidget):
    """Tool, command and working folder (for exec), the diff, the arguments, and the answer buttons.

    For a keyboard and a screen reader the card is a named group whose name is its question; with
    focus on it (Ctrl+Shift+A brings it there) A allows once, W always allows, D denies with the
    reason typed, and R goes to the reason field (Enter there denies).
    """

    answered = Signal(str, str, str)
    """(call_id, answer, reason) with answer in "allow_once", "allow_always", "deny"; reason only for deny."""
    expand_requested = Signal(str, bool)
    """(call_id, expanded): the person unfolded or folded a resolved card."""

    def __init__(self, item: ApprovalCard, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        card = item
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.frame = CardFrame()
        outer.addWidget(self.frame)
        frame_layout = QVBoxLayout(self.frame)
        frame_layout.setContentsMargins(SPACING.l + SPACING.xs, SPACING.m + SPACING.xs, SPACING.l + SPACING.xs, SPACING.m + SPACING.xs)
        frame_layout.setSpacing(SPACING.m - SPACING.xs)

        # The one line a resolved card folds to.
        self.summary_row = QWidget()
        summary_layout = QHBoxLayout(self.summary_row)
        summary_layout.setContentsMargins(0, 0, 0, 0)
        summary_layout.setSpacing(SPACING.m)
        self.summary_glyph = plain_label(selectable=False)
        self.summary_label = ElidedLabel()
        self.details_button = QToolButton()
        self.details_button.setAutoRaise(True)
        self.details_button.clicked.connect(self._toggle_details)
        summary_layout.addWidget(self.summary_glyph)
        summary_layout.addWidget(self.summary_label, 1)
        summary_layout.addWidget(self.details_button)
        frame_layout.addWidget(self.summary_row)

        self.body = QWidget()
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.m - SPACING.xs)
        frame_layout.addWidget(self.body)

        title = (translate("Chat", "Allow the tool “{tool}” from {origin} to run?") if card.origin
                 else translate("Chat", "Allow the tool “{tool}” to run?"))
        self.title_label = plain_label(title.format(tool=card.tool, origin=card.origin))
        title_font = QFont(self.title_label.font())
        title_font.setBold(True)
        self.title_label.setFont(title_font)
        layout.addWidget(self.title_label)
        self._captions: list[QLabel] = []

        self.command_view: FitTextView | None = None
        self.working_dir_label: QLabel | None = None
        if card.command is not None:
            layout.addWidget(self._caption(translate("Chat", "Command")))
            self.command_view = FitTextView(card.command, max_lines=8)
            name(self.command_view, translate("Chat", "Command"))
            layout.addWidget(self.command_view)
            if card.working_dir:
                self.working_dir_label = plain_label(translate("Chat", "in {folder}").format(folder=card.working_dir))
                self.working_dir_label.setFont(monospace_font())
                layout.addWidget(self.working_dir_label)
        self.sandbox_label: QLabel | None = None
        if card.sandbox:
            self.sandbox_label = plain_label(sandbox_line(card.sandbox))
            self.sandbox_label.setWordWrap(True)
            layout.addWidget(self.sandbox_label)

        self.diff_view: FitTextView | None = None
        self._highlighter: DiffHighlighter | None = None
        if card.diff:
            layout.addWidget(self._caption(translate("Chat", "Changes")))
            self.diff_view = FitTextView(card.diff.rstrip("\n"), max_lines=18)
            name(self.diff_view, translate("Chat", "Changes"))
            self.diff_view.setLineWrapMode(QTextEdit.LineWrapMode.NoWrap)
            self.diff_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
            self._highlighter = DiffHighlighter(self.diff_view.document(), palette_colors(self.palette()))
            layout.addWidget(self.diff_view)

        # The raw arguments: shown as they are when nothing else shows the call, else one click away.
        self._arguments_repeat = card.diff is not None or card.command is not None
        self.arguments_button: QToolButton | None = None
        if self._arguments_repeat:
            self.arguments_button = QToolButton()
            self.arguments_button.setAutoRaise(True)
            self.arguments_button.setCheckable(True)
            self.arguments_button.setText(translate("Chat", "Show arguments"))
            self.arguments_button.toggled.connect(self._show_arguments)
            layout.addWidget(self.arguments_button, 0, Qt.AlignmentFlag.AlignLeft)
        else:
            layout.addWidget(self._caption(translate("Chat", "Arguments")))
        self.arguments_view = FitTextView(card.arguments_text(), max_lines=12)
        name(self.arguments_view, translate("Chat", "Arguments"))
        self.arguments_view.setVisible(not self._arguments_repeat)
        layout.addWidget(self.arguments_view)

        self.reason_edit = QLineEdit()
        name(self.reason_edit, translate("Chat", "Reason for denying"))
        self.reason_edit.setPlaceholderText(translate("Chat", "Reason for denying (optional)"))
        self.reason_edit.setToolTip(translate("Chat", "If you deny, the agent reads this reason and can adjust its plan."))
        self.reason_edit.setClearButtonEnabled(True)
        self.reason_edit.returnPressed.connect(lambda: self._answer("deny"))
        layout.addWidget(self.reason_edit)

        buttons = QHBoxLayout()
        buttons.setSpacing(SPACING.m)
        self.allow_once_button = QPushButton(translate("Chat", "Allow once"))
        self.allow_always_button = QPushButton(translate("Chat", "Always allow"))
        self.deny_button = QPushButton(translate("Chat", "Deny"))
        if card.tool == "exec" and (not exec_allow_possible() or (card.sandbox or "").startswith("not sandboxed")):
            self.allow_always_button.setEnabled(False)
            self.allow_always_button.setToolTip(translate("Chat", "Without a sandbox, every command is asked for"))
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
        self.details_button.setAccessibleDescription(translate("Chat", "Show or hide what this approval was about"))
        target = card.command if card.command is not None else summarize_arguments(card.arguments, limit=200)
        self._question = title.format(tool=card.tool, origin=card.origin)
        self._keys_hint = translate("Chat", "Keys: A allow once, W always allow, D deny, R type a reason for denying.")
        self._target = " ".join((target or "").split())
        self._colors = palette_colors(self.palette())
        self.apply_colors(self._colors)
        self.refresh()

    def focus_answer(self) -> None:
        """Put the keyboard on the card: its Allow once button (Enter), with the answer keys live."""
        if self.card.state == "pending":
            self.allow_once_button.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - the answer keys (see the class docstring)
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        key = Qt.Key(event.key())
        if self.card.state == "pending" and modifiers == Qt.KeyboardModifier.NoModifier:
            if key in _ANSWER_KEYS and not (_ANSWER_KEYS[key] == "allow_always" and not self.allow_always_button.isEnabled()):
                self._answer(_ANSWER_KEYS[key])
                return
            if key == Qt.Key.Key_R:
                self.reason_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
                return
        super().keyPressEvent(event)

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
            reason = " ".join(self.reason_edit.text().split()) if answer == "deny" else ""
            self.answered.emit(self.card.call_id, answer, reason)

    def _toggle_details(self) -> None:
        if self.card.state != "pending":
            self.expand_requested.emit(self.card.call_id, not self.card.expanded)

    def _show_arguments(self, shown: bool) -> None:
        self.arguments_view.setVisible(shown)
        if self.arguments_button is not None:
            self.arguments_button.setText(translate("Chat", "Hide arguments") if shown else translate("Chat", "Show arguments"))

    def summary_text(self) -> str:
        """The folded card's line: the answer, the tool, what it was called on, and the reason if any."""
        card = self.card
        answer = self._answer_label()
        target = card.command if card.command is not None else summarize_arguments(card.arguments, limit=200)
        target = " ".join((target or "").split())
        line = translate("Chat", "{answer}: {tool} {target}").format(answer=answer, tool=card.tool, target=target).rstrip()
        if card.reason:
            line = translate("Chat", "{line} — “{reason}”").format(line=line, reason=card.reason)
        by = ANSWERED_BY.get(card.answered_by)
        if by is not None:
            line = translate("Chat", "{line} ({by})").format(line=line, by=translate("Chat", by))
        elif card.answered_by == "engine" and card.why:
            line = translate("Chat", "{line} ({why})").format(line=line, why=card.why)
        return line

    def _answer_label(self) -> str:
        card = self.card
        label = ANSWER_LABELS.get(card.answer or "", QT_TRANSLATE_NOOP("Chat", "Allowed") if card.state == "allowed"
                                  else QT_TRANSLATE_NOOP("Chat", "Denied"))
        return translate("Chat", label)

    def refresh(self) -> None:
        card = self.card
        pending = card.state == "pending"
        focus = QApplication.focusWidget()
        had_focus = focus is not None and self.isAncestorOf(focus)
        for button in (self.allow_once_button, self.allow_always_button, self.deny_button):
            button.setVisible(pending)
        self.reason_edit.setVisible(pending)
        self.summary_row.setVisible(not pending)
        self.body.setVisible(pending or card.expanded)
        self.title_label.setVisible(pending)
        if pending:
            self.state_label.setText(translate("Chat", "Waiting for your answer"))
        else:
            self.summary_glyph.setText(_STATE_GLYPHS.get(card.state, ""))
            self.summary_label.set_full_text(self.summary_text())
            self.details_button.setText(translate("Chat", "Hide details ▴") if card.expanded else translate("Chat", "Show details ▾"))
            self.state_label.setText(self._answer_label())
        self.state_label.setVisible(False)  # the tool card says "waiting…"; the folded line says the answer
        if had_focus and not pending and not self.details_button.hasFocus():
            self.details_button.setFocus(Qt.FocusReason.OtherFocusReason)  # the keyboard stays on the answered card
        if pending:
            name(self.frame, translate("Chat", "Approval needed: {question}").format(question=self._question),
                 " ".join(part for part in (self._target, self._keys_hint) if part))
        else:
            name(self.frame, self.summary_text(), "")
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
        set_text_color(self.summary_glyph, state_color)
        if self.sandbox_label is not None:
            contained = not (card.sandbox or "").startswith("not sandboxed")
            set_text_color(self.sandbox_label, colors.muted if contained else colors.error)
        if self._highlighter is not None:
            self._highlighter.set_colors(colors)
