"""The Heartbeat panel: what every tick decided and did, its settings, and HEARTBEAT.md beside it.

The timeline mirrors `engine.heartbeat.ticks` (newest first) and only ever inserts new rows at the
top, so a panel left open for weeks stays cheap. Settings are written through `engine.update_config`
(the config file stays the truth). "Run now" saves unsaved edits of HEARTBEAT.md first, because
the tick reads the file from disk and a person expects the text they see to be the one checked.
The small formatting helpers at the top are shared by the other background-task panels.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

from PySide6.QtCore import (QAbstractListModel, QByteArray, QModelIndex, QPersistentModelIndex, QRect,
                            QSize, Qt, QTimer, Signal)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QLabel, QListView, QPlainTextEdit, QPushButton,
                               QSpinBox, QSplitter, QStyle, QStyledItemDelegate, QStyleOptionViewItem,
                               QVBoxLayout, QWidget)

from nanobot_desktop.engine.events import BackgroundOwnerChanged, ConfigChanged, HeartbeatDecided, HeartbeatRan
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.shell.theme import is_dark

log = logging.getLogger(__name__)

MAX_ROWS = 500
DECISION_WORDS = {
    "no_tasks": "skipped — no tasks",
    "skip": "skipped by the model",
    "run": "ran",
    "error": "failed",
}

Index = QModelIndex | QPersistentModelIndex


# --- helpers shared by the background-task panels -------------------------------------------------

def format_clock(moment: datetime | None, now: datetime | None = None) -> str:
    """"14:05:12" today, "Mon 14:05" within a week, else "2026-11-03 14:05"."""
    if moment is None:
        return "—"
    now = now or datetime.now(moment.tzinfo)
    days = abs((now.date() - moment.date()).days)
    if days == 0:
        return moment.strftime("%H:%M:%S")
    if days < 7:
        return moment.strftime("%a %H:%M")
    return moment.strftime("%Y-%m-%d %H:%M")


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 90:
        return f"{minutes} min {rest:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def error_color(palette: QPalette) -> QColor:
    """A red that reads on the palette's base (Fusion's BrightText is white in the light theme)."""
    return QColor("#ff7b72") if is_dark(palette) else QColor("#c62828")


def ok_color(palette: QPalette) -> QColor:
    return QColor("#5cc878") if is_dark(palette) else QColor("#2e7d32")


def muted_color(palette: QPalette) -> QColor:
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    return QColor((text.red() + base.red()) // 2, (text.green() + base.green()) // 2, (text.blue() + base.blue()) // 2)


# --- the timeline model -----------------------------------------------------------------------------

class HeartbeatTimelineModel(QAbstractListModel):
    """Heartbeat ticks, newest first. DisplayRole is a one-line summary; RecordRole the TickRecord."""

    RecordRole = Qt.ItemDataRole.UserRole + 1
    DecisionTextRole = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows) or index.column() != 0:
            return None
        tick = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{format_clock(tick.started_at)} · {decision_text(tick)} · {tick.trigger} · {format_duration(tick.duration_s)}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return tick_details(tick)
        if role == self.RecordRole:
            return tick
        if role == self.DecisionTextRole:
            return decision_text(tick)
        return None

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names[self.RecordRole] = QByteArray(b"record")
        names[self.DecisionTextRole] = QByteArray(b"decisionText")
        return names

    def record(self, row: int) -> Any:
        return self._rows[row]

    def sync(self, ticks: list[Any]) -> None:
        """Take the engine's ticks (newest last): new ones are inserted at the top, old ones trimmed."""
        if not self._rows:
            new = list(ticks)
        else:
            newest = self._rows[0]
            position = next((i for i in range(len(ticks) - 1, -1, -1) if ticks[i] is newest), None)
            if position is None:  # our newest record is gone from the engine: start over
                self.beginResetModel()
                self._rows = list(reversed(ticks))[:MAX_ROWS]
                self.endResetModel()
                return
            new = ticks[position + 1:]
        if new:
            new = new[-MAX_ROWS:]
            self.beginInsertRows(QModelIndex(), 0, len(new) - 1)
            self._rows[:0] = list(reversed(new))
            self.endInsertRows()
        if len(self._rows) > MAX_ROWS:
            self.beginRemoveRows(QModelIndex(), MAX_ROWS, len(self._rows) - 1)
            del self._rows[MAX_ROWS:]
            self.endRemoveRows()


def decision_text(tick: Any) -> str:
    return DECISION_WORDS.get(tick.decision, tick.decision)


def tick_details(tick: Any) -> str:
    lines = [f"{tick.started_at.strftime('%Y-%m-%d %H:%M:%S')} — {decision_text(tick)}",
             f"Started by: {'you (Run now)' if tick.trigger == 'manual' else 'the timer'}; "
             f"took {format_duration(tick.duration_s)}"]
    if tick.tasks:
        lines += ["", "Tasks:", tick.tasks]
    if tick.error:
        lines += ["", "Error:", tick.error]
    elif tick.result:
        lines += ["", "Result:", tick.result]
    elif tick.decision == "run":
        lines += ["", "The run finished without a reply (a message may have been sent instead)."]
    return "\n".join(lines)


class _TickDelegate(QStyledItemDelegate):
    """Paints a tick as a header line (time, decision, trigger, duration) plus tasks and outcome."""

    PAD = 6
    STRIPE = 4

    def _lines(self, tick: Any) -> list[tuple[str, str]]:
        lines: list[tuple[str, str]] = []
        if tick.tasks:
            lines.append(("muted", tick.tasks.splitlines()[0]))
        if tick.error:
            lines.append(("error", tick.error.splitlines()[0]))
        elif tick.result:
            lines.append(("text", tick.result.strip().splitlines()[0] if tick.result.strip() else ""))
        return lines

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        tick = index.data(HeartbeatTimelineModel.RecordRole)
        height = QFontMetrics(option.font).height()
        count = 1 + (len(self._lines(tick)) if tick is not None else 0)
        return QSize(200, count * (height + 2) + 2 * self.PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        tick = index.data(HeartbeatTimelineModel.RecordRole)
        if tick is None:
            return
        painter.save()
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(option.rect, palette.color(QPalette.ColorRole.Highlight))
        stripe = {"run": ok_color(palette), "error": error_color(palette)}.get(tick.decision, muted_color(palette))
        painter.fillRect(QRect(option.rect.left(), option.rect.top() + 2, self.STRIPE, option.rect.height() - 4), stripe)
        text_color = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        colors = {"text": text_color, "muted": text_color if selected else muted_color(palette),
                  "error": text_color if selected else error_color(palette)}
        metrics = QFontMetrics(option.font)
        line_height = metrics.height() + 2
        left = option.rect.left() + self.STRIPE + self.PAD
        width = option.rect.width() - self.STRIPE - 2 * self.PAD
        top = option.rect.top() + self.PAD

        bold = QFont(option.font)
        bold.setBold(True)
        right_text = f"{'manual' if tick.trigger == 'manual' else 'timer'} · {format_duration(tick.duration_s)}"
        right_width = metrics.horizontalAdvance(right_text) + self.PAD
        painter.setFont(bold)
        painter.setPen(text_color)
        header = f"{format_clock(tick.started_at)}   {decision_text(tick)}"
        painter.drawText(QRect(left, top, width - right_width, line_height), Qt.AlignmentFlag.AlignVCenter,
                         QFontMetrics(bold).elidedText(header, Qt.TextElideMode.ElideRight, width - right_width))
        painter.setFont(option.font)
        painter.setPen(colors["muted"])
        painter.drawText(QRect(left, top, width, line_height),
                         Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, right_text)
        for number, (kind, text) in enumerate(self._lines(tick), start=1):
            painter.setPen(colors[kind])
            painter.drawText(QRect(left, top + number * line_height, width, line_height), Qt.AlignmentFlag.AlignVCenter,
                             metrics.elidedText(text, Qt.TextElideMode.ElideRight, width))
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.drawLine(option.rect.left(), option.rect.bottom(), option.rect.right(), option.rect.bottom())
        painter.restore()


# --- the panel ----------------------------------------------------------------------------------------

class HeartbeatView(QWidget):
    """Timeline, Run now, interval and on/off, and the HEARTBEAT.md editor in a splitter."""

    panel_title = "Heartbeat"
    open_session_requested = Signal(str)
    """("heartbeat"): show the heartbeat session in the chat."""
    settings_saved = Signal()
    """The interval or the on/off switch reached config.json."""

    POLL_INTERVAL_MS = 1000

    def __init__(self, engine: Any, bridge: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("heartbeatView")
        self.engine = engine
        self.bridge = bridge
        self.model = HeartbeatTimelineModel(self)
        self.run_task: asyncio.Future[Any] | None = None
        self._run_after_save = False
        self._build()
        self._load_settings()
        bridge.event.connect(self._on_event)
        self._poll = QTimer(self)
        self._poll.setInterval(self.POLL_INTERVAL_MS)
        self._poll.timeout.connect(self.refresh)
        self._poll.start()
        self.editor.open_file(engine.workspace.heartbeat_file)
        self.refresh()

    def _build(self) -> None:
        self.run_button = QPushButton("Run now")
        self.run_button.setObjectName("heartbeatRunNow")
        self.run_button.setToolTip("Check HEARTBEAT.md now and run the tasks the model finds")
        self.run_button.clicked.connect(self.run_now)
        self.enabled_box = QCheckBox("Enabled")
        self.enabled_box.setObjectName("heartbeatEnabled")
        self.enabled_box.setToolTip("Check HEARTBEAT.md periodically while the app runs (saved in config.json)")
        self.enabled_box.toggled.connect(self._on_enabled_toggled)
        self.interval_spin = QSpinBox()
        self.interval_spin.setObjectName("heartbeatInterval")
        self.interval_spin.setRange(1, 24 * 60)
        self.interval_spin.setPrefix("every ")
        self.interval_spin.setSuffix(" min")
        self.interval_spin.setKeyboardTracking(False)  # typing "45" saves 45, not 4 then 45
        self.interval_spin.valueChanged.connect(self._on_interval_changed)
        self.status_label = QLabel()
        self.status_label.setObjectName("heartbeatStatus")
        self.status_label.setWordWrap(True)
        self.error_label = QLabel()
        self.error_label.setObjectName("heartbeatError")
        self.error_label.setWordWrap(True)
        self.error_label.hide()

        controls = QHBoxLayout()
        controls.addWidget(self.run_button)
        controls.addWidget(self.enabled_box)
        controls.addWidget(self.interval_spin)
        controls.addStretch(1)

        self.timeline = QListView()
        self.timeline.setObjectName("heartbeatTimeline")
        self.timeline.setModel(self.model)
        self.timeline.setItemDelegate(_TickDelegate(self.timeline))
        self.timeline.setUniformItemSizes(False)
        self.timeline.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.timeline.selectionModel().currentChanged.connect(self._show_details)
        self.empty_label = QLabel("No heartbeat yet this session. “Run now” checks HEARTBEAT.md at once.")
        self.empty_label.setWordWrap(True)
        self.empty_label.setEnabled(False)

        self.details = QPlainTextEdit()
        self.details.setObjectName("heartbeatDetails")
        self.details.setReadOnly(True)
        self.details.setPlaceholderText("Select a tick to see its tasks and result.")
        self.open_session_button = QPushButton("Open session")
        self.open_session_button.setObjectName("heartbeatOpenSession")
        self.open_session_button.setToolTip("Show the heartbeat's conversation in the chat")
        self.open_session_button.clicked.connect(self._open_session)
        session_row = QHBoxLayout()
        session_row.addStretch(1)
        session_row.addWidget(self.open_session_button)

        timeline_pane = QWidget()
        left = QVBoxLayout(timeline_pane)
        left.setContentsMargins(0, 0, 0, 0)
        left.addLayout(controls)
        layout = getattr(self.engine, "layout", None)
        self.layout_note = QLabel(
            "nanobot 0.3 workspace: its gateway runs the heartbeat too, as its protected “heartbeat” job "
            "(Scheduled view), from the same HEARTBEAT.md. This heartbeat is the app's own, while the app runs."
            if layout is not None and layout.is_v03 else "")
        self.layout_note.setObjectName("heartbeatLayoutNote")
        self.layout_note.setWordWrap(True)
        self.layout_note.setVisible(bool(self.layout_note.text()))
        left.addWidget(self.layout_note)
        left.addWidget(self.status_label)
        left.addWidget(self.error_label)
        inner = QSplitter(Qt.Orientation.Vertical)
        inner.setChildrenCollapsible(False)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.empty_label)
        top_layout.addWidget(self.timeline, 1)
        inner.addWidget(top)
        inner.addWidget(self.details)
        inner.setStretchFactor(0, 3)
        inner.setStretchFactor(1, 2)
        left.addWidget(inner, 1)
        left.addLayout(session_row)

        self.editor = MarkdownEditor()
        self.editor.setObjectName("heartbeatEditor")
        self.editor.saved.connect(self._on_editor_saved)
        self.editor.save_failed.connect(self._on_editor_save_failed)
        editor_pane = QWidget()
        right = QVBoxLayout(editor_pane)
        right.setContentsMargins(0, 0, 0, 0)
        editor_title = QLabel("What each check reads: put recurring tasks under “## Active Tasks”.")
        editor_title.setWordWrap(True)
        right.addWidget(editor_title)
        right.addWidget(self.editor, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("heartbeatSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(timeline_pane)
        self.splitter.addWidget(editor_pane)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.splitter)

    # --- settings --------------------------------------------------------------------------------------

    def _load_settings(self) -> None:
        heartbeat = self.engine.config.gateway.heartbeat
        for widget in (self.enabled_box, self.interval_spin):
            widget.blockSignals(True)
        self.enabled_box.setChecked(bool(heartbeat.enabled))
        self.interval_spin.setValue(max(1, round(heartbeat.interval_s / 60)))
        for widget in (self.enabled_box, self.interval_spin):
            widget.blockSignals(False)

    def _on_interval_changed(self, minutes: int) -> None:
        self.save_settings(interval_s=minutes * 60)

    def _on_enabled_toggled(self, enabled: bool) -> None:
        self.save_settings(enabled=enabled)

    def save_settings(self, *, enabled: bool | None = None, interval_s: int | None = None) -> bool:
        """Write gateway.heartbeat to config.json via the engine; a failure is shown, not raised."""
        patch: dict[str, object] = {}
        if enabled is not None:
            patch["gateway.heartbeat.enabled"] = enabled
        if interval_s is not None:
            patch["gateway.heartbeat.intervalS"] = interval_s
        try:
            self.engine.update_config(patch)
        except Exception as exc:  # noqa: BLE001 - OSError, ConfigError: the person must see why
            log.warning("could not save the heartbeat settings: %s", exc)
            self.error_label.setText(f"Not saved: {exc}")
            self.error_label.setStyleSheet(f"color: {error_color(self.palette()).name()}")
            self.error_label.show()
            self._load_settings()
            return False
        self.error_label.hide()
        if enabled is not None:
            self._switch_service(enabled)
        self.settings_saved.emit()
        self.refresh()
        return True

    def _switch_service(self, enabled: bool) -> None:
        heartbeat = self.engine.heartbeat
        heartbeat.enabled = enabled
        if enabled and self.engine.cron.running:  # services run: start ticking now, not at next launch
            future = asyncio.ensure_future(heartbeat.start())
        elif not enabled:
            future = asyncio.ensure_future(heartbeat.stop())
        else:
            return
        future.add_done_callback(self._on_service_switched)

    def _on_service_switched(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.warning("could not start or stop the heartbeat: %s", future.exception())
        self.refresh()

    # --- running -----------------------------------------------------------------------------------------

    def run_now(self) -> None:
        """One tick now; unsaved edits of HEARTBEAT.md are saved first so the tick reads them."""
        self.run_button.setEnabled(False)
        if self.editor.is_dirty:
            self._run_after_save = True
            if self.editor.save():
                self.status_label.setText("Saving HEARTBEAT.md, then checking…")
                return
            self._run_after_save = False
            self.status_label.setText("HEARTBEAT.md could not be saved, so nothing was run (see the editor).")
            self.refresh()
            return
        self._start_tick()

    def _start_tick(self) -> None:
        self.run_task = asyncio.ensure_future(self.engine.heartbeat.trigger_now())
        self.run_task.add_done_callback(self._on_tick_done)
        self.refresh()

    def _on_editor_saved(self, _path: Any) -> None:
        if self._run_after_save:
            self._run_after_save = False
            self._start_tick()

    def _on_editor_save_failed(self, _message: str) -> None:
        if self._run_after_save:
            self._run_after_save = False
            self.refresh()

    def _on_tick_done(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.warning("heartbeat tick failed: %s", future.exception())
        self.refresh()

    # --- keeping up to date ---------------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        if isinstance(event, ConfigChanged) and event.touches("gateway.heartbeat"):  # e.g. saved in Settings
            self._load_settings()
            self.refresh()
        elif isinstance(event, (HeartbeatDecided, HeartbeatRan, BackgroundOwnerChanged)):
            # HeartbeatRan is published from inside the ending tick, which still counts as ticking
            self.refresh(tick_ending=isinstance(event, HeartbeatRan))

    def refresh(self, *, tick_ending: bool = False) -> None:
        heartbeat = self.engine.heartbeat
        self.model.sync(heartbeat.ticks)
        has_rows = self.model.rowCount() > 0
        self.empty_label.setVisible(not has_rows)
        own_run = self.run_task is not None and not self.run_task.done() and not tick_ending
        busy = (heartbeat.ticking and not tick_ending) or self._run_after_save or own_run
        self.run_button.setEnabled(not busy)
        self.status_label.setText(self._status_text(busy))
        current = self.timeline.currentIndex()
        if current.isValid():
            self._show_details(current)

    def _status_text(self, busy: bool) -> str:
        heartbeat = self.engine.heartbeat
        if self._run_after_save:
            return "Saving HEARTBEAT.md, then checking…"
        if busy:
            return "Checking HEARTBEAT.md now…"
        if not heartbeat.enabled:
            return "The periodic check is off; “Run now” still works."
        if heartbeat.paused:
            return "Paused (from the tray); “Run now” still works."
        held_by = heartbeat.held_by
        if held_by:  # a nanobot gateway on this workspace: see engine/coexistence.py
            return f"Not checked by the app: {held_by}. “Run now” still works."
        next_at = heartbeat.next_tick_at
        if next_at is None:
            return "The periodic check starts with the app's background services."
        minutes = max(0, round((next_at - datetime.now(next_at.tzinfo)).total_seconds() / 60))
        return f"Next check at {next_at.strftime('%H:%M')} (in {minutes} min)."

    def _open_session(self) -> None:
        self.open_session_requested.emit("heartbeat")

    def _show_details(self, index: Index, _previous: Any = None) -> None:
        tick = index.data(HeartbeatTimelineModel.RecordRole) if index.isValid() else None
        text = tick_details(tick) if tick is not None else ""
        if self.details.toPlainText() != text:
            self.details.setPlainText(text)

    def shutdown(self) -> None:
        """Stop polling and the editor's worker (the window owner calls this when quitting)."""
        self._poll.stop()
        try:
            self.bridge.event.disconnect(self._on_event)
        except (RuntimeError, TypeError):
            pass
        self.editor.shutdown()
