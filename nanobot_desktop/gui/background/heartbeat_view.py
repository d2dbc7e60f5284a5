"""The Heartbeat panel: what every tick decided and did, its settings, and HEARTBEAT.md beside it.

The timeline (heartbeat_model.py) mirrors `engine.heartbeat.ticks`. Settings are written through
`engine.update_config` (the config file stays the truth). "Run now" saves unsaved edits of HEARTBEAT.md
first, because the tick reads the file from disk and a person expects the text they see to be the one
checked. Under the editor, a hint applies the engine's skip rule to the text as it is typed and tints
the lines that make the next tick ask the model.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPalette, QTextCursor, QTextFormat
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QLabel, QListView, QPlainTextEdit, QPushButton, QSpinBox,
                               QSplitter, QTextEdit, QVBoxLayout, QWidget)

from nanobot_desktop.engine import (SKIP_WORDS, ApprovalAnswered, ApprovalRequested,
                                    BackgroundOwnerChanged, ConfigChanged, HeartbeatDecided, HeartbeatRan, analyse)
from nanobot_desktop.gui.common.accessibility import help_text
from nanobot_desktop.gui.background.formatting import (error_color, format_clock, format_duration,
                                                       format_local_time, ok_color)
from nanobot_desktop.gui.background.heartbeat_model import (HeartbeatTimelineModel, Index, TickDelegate,
                                                            decision_text, tick_details)
from nanobot_desktop.gui.background.panel import BackgroundPanel
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.keyed_table import table_over_details
from nanobot_desktop.gui.editor.editor import MarkdownEditor

__all__ = ["HeartbeatTimelineModel", "HeartbeatView", "NextTickHint", "decision_text", "format_clock",
           "format_duration", "tick_details"]

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from collections.abc import Mapping

    from nanobot_desktop.gui.common.bridge import EngineBridge, Handler

log = logging.getLogger(__name__)


# The engine's SKIP_WORDS as the GUI shows them (the engine's own words stay English for its log).
SKIP_SENTENCES = {"missing": QT_TRANSLATE_NOOP("Heartbeat", "HEARTBEAT.md does not exist"),
                  "empty": QT_TRANSLATE_NOOP("Heartbeat", "HEARTBEAT.md is empty"),
                  "template": QT_TRANSLATE_NOOP("Heartbeat", "HEARTBEAT.md holds only headings, comments and template lines")}


def skip_words(reason: str) -> str:
    """Why the next check skips, in the UI language."""
    return translate("Heartbeat", SKIP_SENTENCES[reason]) if reason in SKIP_SENTENCES else SKIP_WORDS[reason]

class NextTickHint(QLabel):
    """Says, live, whether the next tick will ask the model about the editor's text, and tints the
    lines that make it do so (the same `heartbeat_rule.analyse` the tick uses)."""

    DEBOUNCE_MS = 150

    def __init__(self, editor: MarkdownEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("heartbeatNextTickHint")
        self.setWordWrap(True)
        self.editor = editor
        self.text_lines: tuple[int, ...] = ()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.DEBOUNCE_MS)
        self._timer.timeout.connect(self.update_hint)
        editor.text_edit.textChanged.connect(self._timer.start)

    def update_hint(self) -> None:
        content = analyse(self.editor.text())
        self.text_lines = content.text_lines
        reason = content.skip_reason
        if reason is None:
            numbers = ", ".join(str(i + 1) for i in content.text_lines[:8]) + ("…" if len(content.text_lines) > 8 else "")
            count = len(content.text_lines)
            self.setText(translate("Heartbeat", "The next check sends this file to the model, because of the %n tinted "
                                   "line(s) you wrote (line(s) {numbers}). The model decides whether there is "
                                   "something to do.", None, count).format(numbers=numbers))
        else:
            self.setText(translate("Heartbeat", "The next check skips without asking the model: {reason}. Write a task "
                                   "anywhere in the file to have it read.").format(reason=skip_words(reason)))
        self._tint(content.text_lines)

    def _tint(self, lines: tuple[int, ...]) -> None:
        edit = self.editor.text_edit
        base = edit.palette().color(QPalette.ColorRole.Base)
        green = ok_color(edit.palette())
        tint = QColor((base.red() * 4 + green.red()) // 5, (base.green() * 4 + green.green()) // 5,
                      (base.blue() * 4 + green.blue()) // 5)
        selections: list[QTextEdit.ExtraSelection] = []
        document = edit.document()
        for number in lines:
            block = document.findBlockByNumber(number)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(tint)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        edit.setExtraSelections(selections)


class HeartbeatView(BackgroundPanel):
    """Timeline, Run now, interval and on/off, and the HEARTBEAT.md editor in a splitter."""

    panel_title = QT_TRANSLATE_NOOP("Heartbeat", "Heartbeat")  # the dock's title (the window translates it)
    open_session_requested = Signal(str)
    """("heartbeat"): show the heartbeat session in the chat."""
    settings_saved = Signal()
    """The interval or the on/off switch reached config.json."""

    POLL_INTERVAL_MS = 1000

    def __init__(self, engine: Engine, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(engine, bridge, "heartbeatView", self.POLL_INTERVAL_MS, parent)
        self.model = HeartbeatTimelineModel(self)
        self.run_task: asyncio.Future[Any] | None = None
        self._run_after_save = False
        self._build()
        self._load_settings()
        self._listen()
        self._timer.start()
        self.editor.open_file(engine.workspace.heartbeat_file)
        self.editor.loaded.connect(lambda _path: self.next_tick_hint.update_hint())
        self.next_tick_hint.update_hint()
        self.refresh()

    def _build(self) -> None:
        self.run_button = QPushButton(translate("Heartbeat", "Run now"))
        self.run_button.setObjectName("heartbeatRunNow")
        self.run_button.setToolTip(translate("Heartbeat", "Check HEARTBEAT.md now and run the tasks the model finds"))
        self.run_button.clicked.connect(self.run_now)
        self.enabled_box = QCheckBox(translate("Heartbeat", "Enabled"))
        self.enabled_box.setObjectName("heartbeatEnabled")
        self.enabled_box.setToolTip(translate("Heartbeat", "Check HEARTBEAT.md periodically while the app runs (saved in config.json)"))
        self.enabled_box.toggled.connect(self._on_enabled_toggled)
        self.interval_spin = QSpinBox()
        self.interval_spin.setObjectName("heartbeatInterval")
        self.interval_spin.setRange(1, 24 * 60)
        self.interval_spin.setPrefix(translate("Heartbeat", "every "))
        self.interval_spin.setSuffix(translate("Heartbeat", " min"))
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
        self.timeline.setItemDelegate(TickDelegate(self.timeline))
        self.timeline.setUniformItemSizes(False)
        self.timeline.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.timeline.selectionModel().currentChanged.connect(self._show_details)
        self.empty_label = QLabel(translate("Heartbeat", "No heartbeat yet this session. “Run now” checks HEARTBEAT.md at once."))
        self.empty_label.setWordWrap(True)
        help_text(self.empty_label)

        self.details = QPlainTextEdit()
        self.details.setObjectName("heartbeatDetails")
        self.details.setReadOnly(True)
        self.details.setPlaceholderText(translate("Heartbeat", "Select a tick to see its tasks and result."))
        self.open_session_button = QPushButton(translate("Heartbeat", "Open session"))
        self.open_session_button.setObjectName("heartbeatOpenSession")
        self.open_session_button.setToolTip(translate("Heartbeat", "Show the heartbeat's conversation in the chat"))
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
            translate("Heartbeat", "nanobot 0.3 workspace: its gateway runs the heartbeat too, as its protected "
                      "“heartbeat” job (Scheduled view), from the same HEARTBEAT.md. This heartbeat is the app's own, "
                      "while the app runs.")
            if layout is not None and layout.is_v03 else "")
        self.layout_note.setObjectName("heartbeatLayoutNote")
        self.layout_note.setWordWrap(True)
        self.layout_note.setVisible(bool(self.layout_note.text()))
        left.addWidget(self.layout_note)
        left.addWidget(self.status_label)
        left.addWidget(self.error_label)
        inner = table_over_details([self.empty_label, self.timeline], self.timeline, self.details)
        left.addWidget(inner, 1)
        left.addLayout(session_row)

        self.editor = MarkdownEditor()
        self.editor.setObjectName("heartbeatEditor")
        self.editor.saved.connect(self._on_editor_saved)
        self.editor.save_failed.connect(self._on_editor_save_failed)
        editor_pane = QWidget()
        right = QVBoxLayout(editor_pane)
        right.setContentsMargins(0, 0, 0, 0)
        editor_title = QLabel(translate("Heartbeat", "HEARTBEAT.md — what each check reads. Write periodic tasks anywhere in it."))
        editor_title.setWordWrap(True)
        self.next_tick_hint = NextTickHint(self.editor)
        right.addWidget(editor_title)
        right.addWidget(self.editor, 1)
        right.addWidget(self.next_tick_hint)

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
            self.error_label.setText(translate("Heartbeat", "Not saved: {error}").format(error=exc))
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
        self._work.when_done(future, self._on_service_switched)

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
                self.status_label.setText(translate("Heartbeat", "Saving HEARTBEAT.md, then checking…"))
                return
            self._run_after_save = False
            self.status_label.setText(translate("Heartbeat", "HEARTBEAT.md could not be saved, so nothing was run (see the editor)."))
            self.refresh()
            return
        self._start_tick()

    def _start_tick(self) -> None:
        self.run_task = asyncio.ensure_future(self.engine.heartbeat.trigger_now())
        self._work.when_done(self.run_task, self._on_tick_done)
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

    def _handlers(self) -> Mapping[type, Handler]:
        return {ApprovalRequested: self._on_approval, ApprovalAnswered: self._on_approval,
                ConfigChanged: self._on_config_changed,
                HeartbeatDecided: lambda _event: self.refresh(), BackgroundOwnerChanged: lambda _event: self.refresh(),
                # published from inside the ending tick, which still counts as ticking
                HeartbeatRan: lambda _event: self.refresh(tick_ending=True)}

    def _on_approval(self, event: ApprovalRequested | ApprovalAnswered) -> None:
        if event.session_key == "heartbeat":
            self.refresh()

    def _on_config_changed(self, event: ConfigChanged) -> None:
        if event.touches("gateway.heartbeat"):  # e.g. saved in Settings
            self._load_settings()
            self.refresh()

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
            return translate("Heartbeat", "Saving HEARTBEAT.md, then checking…")
        waiting = [p for p in self.engine.approvals.pending() if p.session_key == "heartbeat"]
        if waiting:
            asked = "; ".join(f"{p.tool} `{p.summary}`" for p in waiting)
            return translate("Heartbeat", "Waiting for your approval: {tools} — answer in the notification, the tray "
                             "menu or the heartbeat session (Open session).").format(tools=asked)
        if busy:
            return translate("Heartbeat", "Checking HEARTBEAT.md now…")
        if not heartbeat.enabled:
            return translate("Heartbeat", "The periodic check is off; “Run now” still works.")
        if heartbeat.paused:
            return translate("Heartbeat", "Paused (from the tray): timer ticks are skipped; “Run now” still works.")
        held_by = heartbeat.held_by
        if held_by:  # a nanobot gateway on this workspace: see engine/background/coexistence.py
            return translate("Heartbeat", "Not checked by the app: {reason}. “Run now” still works.").format(reason=held_by)
        next_at = heartbeat.next_tick_at
        if next_at is None:
            return translate("Heartbeat", "The periodic check starts with the app's background services.")
        minutes = max(0, round((next_at - datetime.now(next_at.tzinfo)).total_seconds() / 60))
        text = translate("Heartbeat", "Next check at {time} (in {minutes} min).").format(
            time=format_local_time(next_at), minutes=minutes)
        others = self.engine.runs_for_others()  # a workspace shared through a sync tool (engine/sync/machines.py)
        if others:
            text += " " + translate("Heartbeat", "This machine runs the checks for the workspace it shares with {machines}.").format(
                machines=", ".join(others))
        return text

    def _open_session(self) -> None:
        self.open_session_requested.emit("heartbeat")

    def _show_details(self, index: Index, _previous: Any = None) -> None:
        tick = index.data(HeartbeatTimelineModel.RecordRole) if index.isValid() else None
        text = tick_details(tick) if tick is not None else ""
        if self.details.toPlainText() != text:
            self.details.setPlainText(text)

    def shutdown(self) -> None:
        """Stop polling and the editor's worker (the window owner calls this when quitting)."""
        super().shutdown()
        self.editor.shutdown()
