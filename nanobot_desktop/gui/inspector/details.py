"""The inspector's detail panes: everything about one tool call, or about one LLM call.

A tool call shows its pretty JSON arguments, the diff it was approved with, the result (collapsed to
its first lines, with Expand) and the error; an LLM call shows tokens, latency and the context view
(context_view.py) of exactly what was sent. The panel (panel.py) picks which one is shown.
"""

from __future__ import annotations


from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout, QLabel, QPlainTextEdit, QSizePolicy, QToolButton, QVBoxLayout, QWidget,
)

from nanobot_desktop.gui.common.formatting import format_duration
from nanobot_desktop.gui.common.i18n import format_number, translate
from nanobot_desktop.gui.common.palette import palette_colors, set_text_color
from nanobot_desktop.gui.common.tool_images import ToolImages
from nanobot_desktop.gui.common.widgets import DiffHighlighter, FitTextView, monospace_font, plain_label
from nanobot_desktop.gui.inspector.context_view import ContextView
from nanobot_desktop.gui.inspector.records import LLMCall, ToolCall, status_text

RESULT_PREVIEW_LINES = 20
RESULT_PREVIEW_CHARS = 4_000  # a result of a few enormous lines is cut too


def collapsed_text(text: str) -> tuple[str, bool]:
    """The first lines of a result, and whether anything was left out."""
    lines = text.splitlines()
    shown = "\n".join(lines[:RESULT_PREVIEW_LINES])
    if len(shown) > RESULT_PREVIEW_CHARS:
        shown = shown[:RESULT_PREVIEW_CHARS]
    return shown, len(shown) < len(text.rstrip("\n"))


def _title_row(layout: QVBoxLayout) -> tuple[QLabel, QLabel]:
    """A detail pane's first row: the call's title in bold, its status right-aligned."""
    title, status = _bold(plain_label()), plain_label()
    status.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    head = QHBoxLayout()
    head.addWidget(title, 1)
    head.addWidget(status)
    layout.addLayout(head)
    return title, status


def _bold(label: QLabel) -> QLabel:
    font = QFont(label.font())
    font.setBold(True)
    label.setFont(font)
    return label


def _copy_button(tooltip: str) -> QToolButton:
    button = QToolButton()
    button.setText(translate("Inspector", "Copy"))
    button.setToolTip(tooltip)
    return button


def _status_color(palette: QPalette, status: str) -> QColor:
    colors = palette_colors(palette)
    if status == "ok":
        return colors.ok
    if status in ("error", "denied"):
        return colors.error
    return colors.muted


class ToolCallDetail(QWidget):
    """Everything about one tool call; the result starts collapsed to its first lines."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolCallDetail")
        self.call: ToolCall | None = None
        self.expanded = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        self.title_label, self.status_label = _title_row(layout)

        args_bar = QHBoxLayout()
        args_bar.addWidget(_bold(plain_label(translate("Inspector", "Arguments"), selectable=False)), 1)
        self.copy_arguments_button = _copy_button(translate("Inspector", "Copy the arguments as JSON"))
        self.copy_arguments_button.clicked.connect(self.copy_arguments)
        args_bar.addWidget(self.copy_arguments_button)
        layout.addLayout(args_bar)
        self.arguments_view = FitTextView("", max_lines=12)
        self.arguments_view.setObjectName("toolArguments")
        layout.addWidget(self.arguments_view)

        self.error_label = plain_label()
        self.error_label.setObjectName("toolError")
        layout.addWidget(self.error_label)

        self.diff_title = _bold(plain_label(translate("Inspector", "Change shown for approval"), selectable=False))
        self.diff_view = FitTextView("", max_lines=12)
        self.diff_highlighter = DiffHighlighter(self.diff_view.document(), palette_colors(self.palette()))
        layout.addWidget(self.diff_title)
        layout.addWidget(self.diff_view)

        result_bar = QHBoxLayout()
        result_bar.addWidget(_bold(plain_label(translate("Inspector", "Result"), selectable=False)))
        self.result_info = plain_label(selectable=False)
        result_bar.addWidget(self.result_info, 1)
        self.expand_button = QToolButton()
        self.expand_button.setObjectName("expandResult")
        self.expand_button.setText(translate("Inspector", "Expand"))
        self.expand_button.setCheckable(True)
        self.expand_button.toggled.connect(self.set_expanded)
        self.copy_result_button = _copy_button(translate("Inspector", "Copy the whole result"))
        self.copy_result_button.clicked.connect(self.copy_result)
        result_bar.addWidget(self.expand_button)
        result_bar.addWidget(self.copy_result_button)
        layout.addLayout(result_bar)
        self.result_view = QPlainTextEdit()
        self.result_view.setObjectName("toolResult")
        self.result_view.setReadOnly(True)
        self.result_view.setFont(monospace_font())
        self.result_view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        layout.addWidget(self.result_view, 1)
        self.images = ToolImages()  # images an MCP tool returned
        layout.addWidget(self.images)

    def set_call(self, call: ToolCall, *, keep_expanded: bool = False) -> None:
        if not keep_expanded or call is not self.call:
            self.expanded = False
        self.call = call
        self.title_label.setText(f"{call.title}  ·  {call.call_id}")
        duration = format_duration(call.duration_s, missing="")
        self.status_label.setText(status_text(call.status) + (f" · {duration}" if duration else ""))
        set_text_color(self.status_label, _status_color(self.palette(), call.status))
        arguments = call.arguments_json()
        if self.arguments_view.toPlainText() != arguments:
            self.arguments_view.setPlainText(arguments)
        error = call.error
        self.error_label.setVisible(bool(error))
        if error:  # the first line says what went wrong; the whole text is the result below
            first = next((line.strip() for line in error.splitlines() if line.strip()), "")
            shown = first if len(first) <= 300 else first[:300] + "…"
            self.error_label.setText(f"{status_text(call.status)}: {shown}")
            set_text_color(self.error_label, palette_colors(self.palette()).error)
        self.images.set_paths(call.media)
        self.diff_title.setVisible(bool(call.diff))
        self.diff_view.setVisible(bool(call.diff))
        if call.diff and self.diff_view.toPlainText() != call.diff:
            self.diff_view.setPlainText(call.diff)
        self._show_result()

    def _show_result(self) -> None:
        call = self.call
        if call is None:
            return
        if call.result is None:
            self.result_info.setText(translate("Inspector", "(waiting for the user's answer)")
                                     if call.status == "awaiting approval" else translate("Inspector", "(still running)"))
            self.result_view.setPlainText("")
            self.expand_button.hide()
            return
        text = call.result
        preview, cut = collapsed_text(text)
        lines = len(text.splitlines())
        self.result_info.setText(translate("Inspector", "%n line(s)", None, lines) + " · "
                                 + translate("Inspector", "{count} characters").format(count=format_number(len(text))))
        self.expand_button.setVisible(cut)
        self.expand_button.blockSignals(True)
        self.expand_button.setChecked(self.expanded and cut)
        self.expand_button.setText(translate("Inspector", "Collapse") if self.expanded and cut
                                   else translate("Inspector", "Expand"))
        self.expand_button.blockSignals(False)
        more = lines - min(lines, RESULT_PREVIEW_LINES)
        shown = text if (self.expanded or not cut) else preview + "\n… " + translate(
            "Inspector", "(%n more line(s): Expand)", None, more)
        if self.result_view.toPlainText() != shown:
            self.result_view.setPlainText(shown)

    def set_expanded(self, expanded: bool) -> None:
        self.expanded = expanded
        self._show_result()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # theme switched: recolour status, error and diff
            self.diff_highlighter.set_colors(palette_colors(self.palette()))
            if self.call is not None:
                self.set_call(self.call, keep_expanded=True)

    def copy_arguments(self) -> None:
        if self.call is not None:
            QGuiApplication.clipboard().setText(self.call.arguments_json())

    def copy_result(self) -> None:
        if self.call is not None and self.call.result is not None:
            QGuiApplication.clipboard().setText(self.call.result)


class LLMCallDetail(QWidget):
    """Model, tokens, latency and finish reason of one LLM call, above its context view."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("llmCallDetail")
        self.call: LLMCall | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        self.title_label, self.status_label = _title_row(layout)
        self.numbers_label = plain_label()
        self.numbers_label.setObjectName("llmNumbers")
        layout.addWidget(self.numbers_label)
        self.speed_label = plain_label()
        self.speed_label.setObjectName("llmSpeed")
        layout.addWidget(self.speed_label)
        self.error_label = plain_label()
        layout.addWidget(self.error_label)
        self.context_view = ContextView()
        layout.addWidget(self.context_view, 1)

    def set_call(self, call: LLMCall) -> None:
        rebuild_context = call is not self.call or self.context_view.outline is None \
            or (call.prompt_tokens is not None and translate("Inspector", "{tokens} prompt tokens").format(
                tokens=format_number(call.prompt_tokens)) not in self.context_view.outline.summary)
        self.call = call
        self.title_label.setText(translate("Inspector", "LLM call · {model}").format(model=call.model))
        latency = format_duration(call.latency_s, missing="")
        self.status_label.setText(status_text(call.status) + (f" · {latency}" if latency else ""))
        set_text_color(self.status_label, _status_color(self.palette(), call.status))
        if call.status == "running":
            self.numbers_label.setText(translate("Inspector", "Waiting for the model…"))
        else:
            self.numbers_label.setText(
                translate("Inspector", "Tokens: {sent} in · {received} out    Latency: {latency}    Finish: {reason}").format(
                    sent=format_number(call.prompt_tokens or 0), received=format_number(call.completion_tokens or 0),
                    latency=latency or "—", reason=call.finish_reason or "—"))
        self.speed_label.setText(call.speed_text)  # context fill, time to first token, tokens/s
        self.speed_label.setVisible(bool(call.speed_text))
        self.error_label.setVisible(bool(call.error))
        if call.error:
            self.error_label.setText(translate("Inspector", "Error: {error}").format(error=call.error))
            set_text_color(self.error_label, palette_colors(self.palette()).error)
        if rebuild_context:
            self.context_view.set_call(call)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.call is not None:
            self.set_call(self.call)
