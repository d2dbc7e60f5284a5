"""The tool-call inspector dock: the shown turn's timeline of LLM and tool calls, and the details of one.

Rows come from `TimelineModel` (inspector_model.py), fed by the bridge. Selecting a tool call shows its
pretty JSON arguments, the diff it was approved with, the result (first lines, with Expand) and the
error; selecting an LLM call shows tokens, latency and the context view (context_view.py) of exactly
what was sent. The chat's tool cards call `show_call`; the main window calls `set_session`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QEvent, QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QSizePolicy, QSplitter,
    QStackedWidget, QToolButton, QTreeView, QVBoxLayout, QWidget,
)

from nanobot_desktop.gui.common.formatting import format_duration
from nanobot_desktop.gui.common.i18n import format_number, translate
from nanobot_desktop.gui.common.palette import palette_colors, set_text_color
from nanobot_desktop.gui.common.tool_images import ToolImages
from nanobot_desktop.gui.common.widgets import DiffHighlighter, FitTextView, monospace_font, plain_label
from nanobot_desktop.gui.inspector.context_view import ContextView
from nanobot_desktop.gui.inspector.model import NAME_COLUMN, STATUS_COLUMN, SUMMARY_COLUMN, TIME_COLUMN, TimelineModel
from nanobot_desktop.gui.inspector.records import LLMCall, TimelineEntry, ToolCall, TurnTimeline, status_text

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

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


class InspectorPanel(QWidget):
    """Dockable inspector for the selected session's turns (this app run)."""

    panel_title = QT_TRANSLATE_NOOP("Inspector", "Inspector")  # the dock's title (the window translates it)

    def __init__(self, engine: Engine, bridge: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspectorPanel")
        self.engine = engine
        self.model = TimelineModel(self)
        bridge.engine_event.connect(self.model.record)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        top.addWidget(plain_label(translate("Inspector", "Turn"), selectable=False))
        self.turn_selector = QComboBox()
        self.turn_selector.setObjectName("turnSelector")
        self.turn_selector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.turn_selector.setMinimumContentsLength(16)
        self.turn_selector.setToolTip(translate("Inspector", "Turns of this session since the app started; the newest follows new turns"))
        self.turn_selector.activated.connect(self._on_turn_chosen)
        top.addWidget(self.turn_selector, 1)
        layout.addLayout(top)
        self.summary_label = plain_label()
        self.summary_label.setObjectName("turnSummary")
        layout.addWidget(self.summary_label)

        self.timeline = QTreeView()
        self.timeline.setObjectName("inspectorTimeline")
        self.timeline.setModel(self.model)
        self.timeline.setRootIsDecorated(False)
        self.timeline.setUniformRowHeights(True)
        self.timeline.setAlternatingRowColors(True)
        self.timeline.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.timeline.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.timeline.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(STATUS_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(NAME_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(SUMMARY_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(TIME_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        self.timeline.selectionModel().currentRowChanged.connect(self._on_current_row_changed)

        self.placeholder = plain_label(selectable=False)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.tool_detail = ToolCallDetail()
        self.llm_detail = LLMCallDetail()
        self.details = QStackedWidget()
        self.details.setObjectName("inspectorDetails")
        for page in (self.placeholder, self.tool_detail, self.llm_detail):
            self.details.addWidget(page)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.timeline)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        layout.addWidget(splitter, 1)

        self.model.turns_changed.connect(self._on_turns_changed)
        self.model.shown_turn_changed.connect(self._on_shown_turn_changed)
        self.model.entry_changed.connect(self._on_entry_changed)
        self._on_shown_turn_changed()

    # --- public API --------------------------------------------------------------------------------

    def set_session(self, key: str) -> None:
        """Show that session's latest turn (the main window calls this when the user switches session)."""
        self.model.set_session(key)
        self._fill_turn_selector()

    def show_call(self, call_id: str) -> bool:
        """Select and reveal a call (the chat's tool card click); False when this run never saw it."""
        found = self.model.find_call(call_id, self.model.session_key)
        if found is None:
            return False
        session_key, turn_id = found
        shown = self.model.shown_turn
        if shown is None or (shown.session_key, shown.turn_id) != found:
            if session_key != self.model.session_key:
                self.model.set_session(session_key)
            self.model.show_turn(session_key, turn_id)
            self._fill_turn_selector()
        row = self.model.row_of_call(call_id)
        index = self.model.index(row, NAME_COLUMN)
        self.timeline.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.timeline.scrollTo(index)
        return True

    def selected_entry(self) -> TimelineEntry | None:
        index = self.timeline.currentIndex()
        return self.model.entry(index.row()) if index.isValid() else None

    # --- reacting to the model -------------------------------------------------------------------------

    def _fill_turn_selector(self) -> None:
        turns = self.model.turns(self.model.session_key)
        shown = self.model.shown_turn
        self.turn_selector.blockSignals(True)
        self.turn_selector.clear()
        for turn in turns:
            self.turn_selector.addItem(turn.label(), turn.turn_id)
        if shown is not None and shown in turns:
            self.turn_selector.setCurrentIndex(turns.index(shown))
        self.turn_selector.setEnabled(bool(turns))
        if not turns:
            self.turn_selector.addItem(translate("Inspector", "No turns yet"))
        self.turn_selector.blockSignals(False)

    def _on_turns_changed(self, session_key: str) -> None:
        if session_key == self.model.session_key:
            self._fill_turn_selector()
            self._show_summary()

    def _on_turn_chosen(self, position: int) -> None:
        turn_id = self.turn_selector.itemData(position)
        if isinstance(turn_id, str):
            self.model.show_turn(self.model.session_key, turn_id)

    def _on_shown_turn_changed(self) -> None:
        self._fill_turn_selector()
        self._show_summary()
        self._show_entry(self.selected_entry())

    def _show_summary(self) -> None:
        turn = self.model.shown_turn
        self.summary_label.setText(self._summary(turn))
        if turn is None:
            if self.model.session_key:
                self.placeholder.setText(translate("Inspector", "No turns in this session since the app started.\n"
                                                   "The calls of its next turn will appear here."))
            else:
                self.placeholder.setText(translate("Inspector", "No session selected."))
        else:
            self.placeholder.setText(translate("Inspector", "Select a call above to see its details."))

    @staticmethod
    def _summary(turn: TurnTimeline | None) -> str:
        if turn is None:
            return ""
        llm_calls, tool_calls, tokens_in, tokens_out = turn.totals()
        parts = [status_text(turn.status), translate("Inspector", "%n LLM call(s)", None, llm_calls),
                 translate("Inspector", "{sent} → {received} tokens").format(sent=format_number(tokens_in),
                                                                             received=format_number(tokens_out)),
                 translate("Inspector", "%n tool call(s)", None, tool_calls)]
        if turn.finished_at is not None:
            parts.append(format_duration(max(0.0, turn.finished_at - turn.started_at)))
        text = " · ".join(parts)
        if turn.error:
            text += f"\n{turn.error}"
        return text

    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_entry(self.model.entry(current.row()) if current.isValid() else None)

    def _on_entry_changed(self, row: int) -> None:
        self._show_summary()
        if self.timeline.currentIndex().isValid() and self.timeline.currentIndex().row() == row:
            self._show_entry(self.model.entry(row), keep_expanded=True)

    def _show_entry(self, entry: TimelineEntry | None, *, keep_expanded: bool = False) -> None:
        if isinstance(entry, ToolCall):
            self.tool_detail.set_call(entry, keep_expanded=keep_expanded)
            self.details.setCurrentWidget(self.tool_detail)
        elif isinstance(entry, LLMCall):
            self.llm_detail.set_call(entry)
            self.details.setCurrentWidget(self.llm_detail)
        else:
            self.details.setCurrentWidget(self.placeholder)
