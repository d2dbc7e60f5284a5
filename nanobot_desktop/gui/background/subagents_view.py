"""The Subagents panel: background workers started by `spawn`, live, with their transcripts.

The engine's SubagentRecords are the truth; the model only points at them. While any subagent runs,
a one-second timer re-reads the duration column and the selected transcript (it grows as the
subagent calls tools), so nothing here needs an event per step.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtWidgets import (QApplication, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget)

from nanobot_desktop.engine import SubagentFinished, SubagentStarted
from nanobot_desktop.gui.common.accessibility import help_text
from nanobot_desktop.gui.background.formatting import error_color, format_clock, format_duration, ok_color
from nanobot_desktop.gui.background.panel import BackgroundPanel
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.keyed_table import KeyedTableModel, KeyedTableView, table_over_details

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from collections.abc import Mapping

    from nanobot_desktop.gui.common.bridge import EngineBridge, Handler

log = logging.getLogger(__name__)

STATUS_WORDS = {"running": QT_TRANSLATE_NOOP("Subagents", "running…"), "ok": QT_TRANSLATE_NOOP("Subagents", "done"),
                "error": QT_TRANSLATE_NOOP("Subagents", "failed"),
                "cancelled": QT_TRANSLATE_NOOP("Subagents", "cancelled")}  # translated where shown
TOOL_RESULT_PREVIEW = 2000


def status_words(status: str) -> str:
    """A subagent's status as shown ("done", "failed", …)."""
    return translate("Subagents", STATUS_WORDS[status]) if status in STATUS_WORDS else status


class SubagentsModel(KeyedTableModel):
    """One row per subagent, newest first: label, task, status, duration."""

    COLUMNS = (QT_TRANSLATE_NOOP("Subagents", "Label"), QT_TRANSLATE_NOOP("Subagents", "Task"), QT_TRANSLATE_NOOP("Subagents", "Status"),
               QT_TRANSLATE_NOOP("Subagents", "Duration"))  # translated in headerData
    CONTEXT = "Subagents"
    ROLE_NAMES = (b"record", b"taskId")
    LABEL, TASK, STATUS, DURATION = range(4)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._statuses: list[str] = []

    def key_of(self, record: Any) -> str:
        return str(record.task_id)

    def cell(self, record: Any, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.LABEL:
                return record.label
            if column == self.TASK:
                return " ".join(record.task.split())
            if column == self.STATUS:
                return status_words(record.status)
            if column == self.DURATION:
                return format_duration(record.duration_s)
        if role == Qt.ItemDataRole.ToolTipRole:
            return translate("Subagents", "{label} (id {id}), started {time}").format(
                label=record.label, id=record.task_id, time=format_clock(record.started_at)) + f"\n\n{record.task}"
        if role == Qt.ItemDataRole.ForegroundRole and column == self.STATUS:
            palette = QApplication.palette()  # the model has no widget of its own
            if record.status == "ok":
                return ok_color(palette)
            if record.status == "error":
                return error_color(palette)
        return None

    def set_records(self, records: list[Any]) -> None:
        """Same subagents in the same order: refresh changed rows; otherwise reset."""
        if [self.key_of(r) for r in records] != [self.key_of(r) for r in self._records]:
            self._statuses = [r.status for r in records]
        super().set_records(records)

    def changed_rows(self, records: list[Any]) -> list[int]:
        """The records are the engine's own objects, changed in place: a row is redrawn when its status
        changed since the last look, or while it runs (its duration grows)."""
        rows = []
        for row, record in enumerate(records):
            if record.status != self._statuses[row] or record.status == "running":
                self._statuses[row] = record.status
                rows.append(row)
        return rows

    def any_running(self) -> bool:
        return any(r.status == "running" for r in self._records)


def transcript_text(record: Any) -> str:
    """The subagent's conversation as "role: content" blocks, tool calls and results included."""
    blocks: list[str] = []
    for message in record.transcript:
        role = message.get("role", "?")
        if role == "system":
            continue  # the subagent's own instructions: the same for every subagent
        content = message.get("content")
        if isinstance(content, list):  # multimodal parts
            content = " ".join(str(part.get("text", "[" + str(part.get("type")) + "]")) for part in content
                               if isinstance(part, dict))
        if role == "tool":
            text = str(content or "")
            if len(text) > TOOL_RESULT_PREVIEW:
                more = len(text) - TOOL_RESULT_PREVIEW
                text = text[:TOOL_RESULT_PREVIEW] + "… " + translate("Subagents", "(%n more character(s))", None, more)
            blocks.append(f"tool ({message.get('name', '?')}): {text}")
            continue
        lines = [f"{role}: {content}"] if content else []
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            arguments = function.get("arguments", "")
            try:
                arguments = json.dumps(json.loads(arguments), ensure_ascii=False)
            except (TypeError, ValueError):
                pass
            lines.append(f"{role} → {function.get('name', '?')}({arguments})")
        if lines:
            blocks.append("\n".join(lines))
    if record.status != "running" and record.result:
        blocks.append(translate("Subagents", "result ({status}): {result}").format(status=status_words(record.status),
                                                                                   result=record.result))
    elif record.status == "cancelled":
        blocks.append(translate("Subagents", "cancelled before it finished"))
    return "\n\n".join(blocks)


class SubagentsView(BackgroundPanel):
    """Running and finished subagents; the selected one's transcript; Cancel for a running one."""

    panel_title = QT_TRANSLATE_NOOP("Subagents", "Subagents")  # the dock's title (the window translates it)
    open_session_requested = Signal(str)
    """(session_key): the session that spawned the selected subagent."""

    TICK_INTERVAL_MS = 1000

    def __init__(self, engine: Engine, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(engine, bridge, "subagentsView", self.TICK_INTERVAL_MS, parent)
        self.model = SubagentsModel(self)
        self._cancelling: dict[str, asyncio.Future[Any]] = {}
        self._build()
        self._listen()
        self.refresh()

    def _build(self) -> None:
        self.table = KeyedTableView(self.model, "subagentsTable")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(SubagentsModel.TASK, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(SubagentsModel.LABEL, 160)
        self.table.setColumnWidth(SubagentsModel.STATUS, 90)
        self.table.setColumnWidth(SubagentsModel.DURATION, 90)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.empty_label = QLabel(translate("Subagents", "No subagents yet. The agent starts one with the spawn tool for "
                                            "long background work; it shows up here while it runs."))
        self.empty_label.setWordWrap(True)
        help_text(self.empty_label)
        self.transcript = QPlainTextEdit()
        self.transcript.setObjectName("subagentTranscript")
        self.transcript.setReadOnly(True)
        self.transcript.setPlaceholderText(translate("Subagents", "Select a subagent to see what it did."))
        self.cancel_button = QPushButton(translate("Subagents", "Cancel"))
        self.cancel_button.setObjectName("subagentCancel")
        self.cancel_button.setToolTip(translate("Subagents", "Stop the selected subagent (its session is told it was cancelled)"))
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.open_session_button = QPushButton(translate("Subagents", "Open session"))
        self.open_session_button.setObjectName("subagentOpenSession")
        self.open_session_button.setToolTip(translate("Subagents", "Show the conversation that started this subagent"))
        self.open_session_button.clicked.connect(self._open_session)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.open_session_button)
        buttons.addWidget(self.cancel_button)

        splitter = table_over_details([self.empty_label, self.table], self.table, self.transcript, stretch=(1, 2))
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)

    def selected_task_id(self) -> str | None:
        return self.table.selected_key()

    def select_task(self, task_id: str) -> None:
        self.table.select_key(task_id)

    def refresh(self) -> None:
        self.table.show_records(self.engine.subagents.list())
        self.empty_label.setVisible(self.model.rowCount() == 0)
        if self.model.any_running():
            if not self._timer.isActive():
                self._timer.start()
        else:
            self._timer.stop()
        self._update_selection_views()

    def _handlers(self) -> Mapping[type, Handler]:
        return {SubagentStarted: lambda _event: self.refresh(), SubagentFinished: lambda _event: self.refresh()}

    def _on_selection_changed(self, *_args: Any) -> None:
        self._update_selection_views()

    def _update_selection_views(self) -> None:
        task_id = self.selected_task_id()
        record = self.model.record_at(self.model.row_of(task_id)) if task_id else None
        running = record is not None and record.status == "running"
        cancelling = task_id in self._cancelling
        self.cancel_button.setEnabled(running and not cancelling)
        self.cancel_button.setText(translate("Subagents", "Cancelling…") if cancelling else translate("Subagents", "Cancel"))
        self.open_session_button.setEnabled(record is not None)
        text = transcript_text(record) if record is not None else ""
        if self.transcript.toPlainText() != text:
            at_bottom = self.transcript.verticalScrollBar().value() >= self.transcript.verticalScrollBar().maximum() - 4
            self.transcript.setPlainText(text)
            if at_bottom:
                self.transcript.verticalScrollBar().setValue(self.transcript.verticalScrollBar().maximum())

    def cancel_selected(self) -> asyncio.Future[Any] | None:
        """Ask the engine to cancel the selected running subagent; the row shows "cancelled" after."""
        task_id = self.selected_task_id()
        if task_id is None or task_id in self._cancelling:
            return None
        future = self._start_engine_work(task_id, self.engine.subagents.cancel(task_id), self._cancelling,
                                         "cancelling subagent")
        self._update_selection_views()
        return future

    def _open_session(self) -> None:
        task_id = self.selected_task_id()
        if task_id is not None:
            self.open_session_requested.emit(self.model.record_at(self.model.row_of(task_id)).origin_session_key)

