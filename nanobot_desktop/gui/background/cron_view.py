"""The Scheduled panel: the jobs of cron/jobs.json, a form to add or edit one, and their runs.

Every write goes through `engine.cron` (CronService), which keeps jobs.json in the original's format
and refuses to save over a file it cannot parse; its messages are shown inline, next to the form.
The list is rebuilt from the service on `CronJobRan`, on `refresh()` (the workspace watcher calls it
after `engine.cron.reload_if_changed()`), and every 30 s so "next run in 4 min" stays true.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

from PySide6.QtCore import (QAbstractTableModel, QByteArray, QDateTime, QModelIndex, QPersistentModelIndex, Qt,
                            QTimer, Signal)
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDateTimeEdit, QFormLayout, QGroupBox,
                               QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QSpinBox,
                               QSplitter, QStackedWidget, QTableView, QVBoxLayout, QWidget)

from nanobot_desktop.engine.cron import CronSchedule, describe_schedule
from nanobot_desktop.engine.cron_types import is_system_job
from nanobot_desktop.engine.events import BackgroundOwnerChanged, CronJobRan
from nanobot_desktop.gui.background.heartbeat_view import error_color, format_clock, format_duration

log = logging.getLogger(__name__)

SYSTEM_JOB_NOTE = ("A protected system job of nanobot 0.3: its gateway runs it (heartbeat: HEARTBEAT.md; "
                   "dream: Dream's memory rewrite). The app leaves it as it is; turn it off in the config.")

Index = QModelIndex | QPersistentModelIndex
EVERY_UNITS = (("seconds", 1000), ("minutes", 60_000), ("hours", 3_600_000), ("days", 86_400_000),
               ("milliseconds", 1))


def next_run_text(next_run_at_ms: int | None, now_ms: int) -> str:
    """"in 4 min (14:35)", "due now", or "—" for a job that will not fire again."""
    if next_run_at_ms is None:
        return "—"
    when = datetime.fromtimestamp(next_run_at_ms / 1000)
    seconds = (next_run_at_ms - now_ms) / 1000
    if seconds <= 0:
        return "due now"
    if seconds < 60:
        return f"in {int(seconds)} s ({when.strftime('%H:%M:%S')})"
    if seconds < 90 * 60:
        return f"in {round(seconds / 60)} min ({when.strftime('%H:%M')})"
    if seconds < 36 * 3600:
        return f"in {round(seconds / 3600)} h ({when.strftime('%H:%M')})"
    return when.strftime("%Y-%m-%d %H:%M")


def error_message(exc: BaseException) -> str:
    """The sentence inside an exception (KeyError's str() adds quotes around it)."""
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def last_status_text(job: Any) -> str:
    state = job.state
    if not state.last_status:
        return "never ran"
    when = format_clock(datetime.fromtimestamp(state.last_run_at_ms / 1000)) if state.last_run_at_ms else ""
    text = state.last_status + (f" at {when}" if when else "")
    return text + (f": {state.last_error}" if state.last_error else "")


class CronJobsModel(QAbstractTableModel):
    """One row per job: name, schedule in words, next run, last status, enabled (a checkbox)."""

    COLUMNS = ("Name", "Schedule", "Next run", "Last run", "Enabled")
    NAME, SCHEDULE, NEXT, LAST, ENABLED = range(5)
    JobRole = Qt.ItemDataRole.UserRole + 1
    JobIdRole = Qt.ItemDataRole.UserRole + 2

    enabled_toggled = Signal(str, bool)
    """(job_id, enabled): the person ticked or unticked a job's checkbox; the view writes it."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._jobs: list[Any] = []
        self.now_ms = lambda: int(datetime.now().timestamp() * 1000)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._jobs)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(self.COLUMNS):
            return self.COLUMNS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == self.ENABLED:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._jobs):
            return None
        job, column = self._jobs[index.row()], index.column()
        if role == self.JobRole:
            return job
        if role == self.JobIdRole:
            return job.id
        if role == Qt.ItemDataRole.CheckStateRole and column == self.ENABLED:
            return Qt.CheckState.Checked if job.enabled else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.NAME:
                return job.name
            if column == self.SCHEDULE:
                return describe_schedule(job.schedule)
            if column == self.NEXT and is_system_job(job):
                return "by the nanobot 0.3 gateway" if job.enabled else "off"
            if column == self.NEXT:
                return next_run_text(job.state.next_run_at_ms, self.now_ms()) if job.enabled else "off"
            if column == self.LAST:
                return last_status_text(job)
            if column == self.ENABLED:
                return "on" if job.enabled else "off"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{job.name}\n{describe_schedule(job.schedule)}\n\n{job.payload.message}"
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid() or index.column() != self.ENABLED or role != Qt.ItemDataRole.CheckStateRole:
            return False
        checked = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value, 2)
        self.enabled_toggled.emit(self._jobs[index.row()].id, bool(checked))
        return True  # the row changes when the view refreshes from the service

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names[self.JobRole] = QByteArray(b"job")
        names[self.JobIdRole] = QByteArray(b"jobId")
        return names

    def job_at(self, row: int) -> Any:
        return self._jobs[row]

    def row_of(self, job_id: str) -> int:
        return next((row for row, job in enumerate(self._jobs) if job.id == job_id), -1)

    def set_jobs(self, jobs: list[Any]) -> None:
        """Same ids in the same order: update in place; otherwise reset (the view restores selection)."""
        if [j.id for j in jobs] == [j.id for j in self._jobs]:
            self._jobs = list(jobs)
            if jobs:
                self.dataChanged.emit(self.index(0, 0), self.index(len(jobs) - 1, len(self.COLUMNS) - 1))
            return
        self.beginResetModel()
        self._jobs = list(jobs)
        self.endResetModel()

    def tick(self) -> None:
        """The clock moved: re-read the countdown column."""
        if self._jobs:
            self.dataChanged.emit(self.index(0, self.NEXT), self.index(len(self._jobs) - 1, self.NEXT))


class CronJobForm(QGroupBox):
    """Add or edit one job: name, schedule (every / cron / at), message; errors are shown inline."""

    submitted = Signal()
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("New job", parent)
        self.setObjectName("cronJobForm")
        self.editing_id: str | None = None
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("cronName")
        self.name_edit.setPlaceholderText("e.g. Morning summary (optional)")
        self.kind_combo = QComboBox()
        self.kind_combo.setObjectName("cronKind")
        for label, kind in (("Every …", "every"), ("Cron expression", "cron"), ("Once at …", "at")):
            self.kind_combo.addItem(label, kind)
        self.every_spin = QSpinBox()
        self.every_spin.setObjectName("cronEveryValue")
        self.every_spin.setRange(1, 1_000_000)
        self.every_spin.setValue(30)
        self.every_unit = QComboBox()
        self.every_unit.setObjectName("cronEveryUnit")
        for label, factor in EVERY_UNITS:
            self.every_unit.addItem(label, factor)
        self.every_unit.setCurrentIndex(1)
        every_row = QWidget()
        every_layout = QHBoxLayout(every_row)
        every_layout.setContentsMargins(0, 0, 0, 0)
        every_layout.addWidget(self.every_spin)
        every_layout.addWidget(self.every_unit, 1)
        self.expr_edit = QLineEdit()
        self.expr_edit.setObjectName("cronExpr")
        self.expr_edit.setPlaceholderText("minute hour day month weekday, e.g. 0 9 * * 1-5")
        self.at_edit = QDateTimeEdit()
        self.at_edit.setObjectName("cronAt")
        self.at_edit.setCalendarPopup(True)
        self.at_edit.setDisplayFormat("yyyy-MM-dd HH:mm")
        self.value_stack = QStackedWidget()
        self.value_stack.addWidget(every_row)
        self.value_stack.addWidget(self.expr_edit)
        self.value_stack.addWidget(self.at_edit)
        self.tz_edit = QLineEdit()
        self.tz_edit.setObjectName("cronTz")
        self.tz_edit.setPlaceholderText("IANA zone, e.g. Europe/Berlin (empty: this computer's)")
        self.delete_after_box = QCheckBox("Delete the job after it ran")
        self.message_edit = QPlainTextEdit()
        self.message_edit.setObjectName("cronMessage")
        self.message_edit.setPlaceholderText("What the agent should do when the job fires")
        self.message_edit.setFixedHeight(self.message_edit.fontMetrics().lineSpacing() * 4 + 12)
        self.error_label = QLabel()
        self.error_label.setObjectName("cronFormError")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        self.save_button = QPushButton("Add job")
        self.save_button.setObjectName("cronFormSave")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.submitted.emit)
        cancel = QPushButton("Cancel")
        cancel.clicked.connect(self.cancelled.emit)

        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Runs", self.kind_combo)
        self.value_label = QLabel("Every")
        form.addRow(self.value_label, self.value_stack)
        self.tz_label = QLabel("Time zone")
        form.addRow(self.tz_label, self.tz_edit)
        form.addRow("", self.delete_after_box)
        form.addRow("Message", self.message_edit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.error_label, 1)
        buttons.addWidget(cancel)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        self.kind_combo.currentIndexChanged.connect(self._on_kind_changed)
        self._on_kind_changed()

    def kind(self) -> str:
        return str(self.kind_combo.currentData())

    def _on_kind_changed(self, _index: int = 0) -> None:
        kind = self.kind()
        self.value_stack.setCurrentIndex({"every": 0, "cron": 1, "at": 2}[kind])
        self.value_label.setText({"every": "Every", "cron": "Expression", "at": "At"}[kind])
        for widget in (self.tz_label, self.tz_edit):
            widget.setVisible(kind == "cron")
        self.delete_after_box.setVisible(kind == "at")

    def start_new(self) -> None:
        self.editing_id = None
        self.setTitle("New job")
        self.save_button.setText("Add job")
        self.name_edit.clear()
        self.kind_combo.setCurrentIndex(0)
        self.every_spin.setValue(30)
        self.every_unit.setCurrentIndex(1)
        self.expr_edit.clear()
        self.tz_edit.clear()
        self.at_edit.setDateTime(QDateTime.currentDateTime().addSecs(3600))
        self.delete_after_box.setChecked(True)
        self.message_edit.clear()
        self.show_error(None)

    def start_edit(self, job: Any) -> None:
        self.start_new()
        self.editing_id = job.id
        self.setTitle(f"Edit “{job.name}”")
        self.save_button.setText("Save changes")
        self.name_edit.setText(job.name)
        schedule = job.schedule
        self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(schedule.kind)))
        if schedule.kind == "every" and schedule.every_ms:
            for row in (3, 2, 1, 0, 4):  # the largest unit that divides exactly
                factor = EVERY_UNITS[row][1]
                if schedule.every_ms % factor == 0:
                    self.every_unit.setCurrentIndex(row)
                    self.every_spin.setValue(schedule.every_ms // factor)
                    break
        self.expr_edit.setText(schedule.expr or "")
        self.tz_edit.setText(schedule.tz or "")
        if schedule.at_ms:
            self.at_edit.setDateTime(QDateTime.fromMSecsSinceEpoch(schedule.at_ms))
        self.delete_after_box.setChecked(job.delete_after_run)
        self.message_edit.setPlainText(job.payload.message)

    def schedule(self) -> CronSchedule:
        kind = self.kind()
        if kind == "every":
            return CronSchedule(kind="every", every_ms=self.every_spin.value() * int(self.every_unit.currentData()))
        if kind == "cron":
            return CronSchedule(kind="cron", expr=self.expr_edit.text().strip(), tz=self.tz_edit.text().strip() or None)
        return CronSchedule(kind="at", at_ms=self.at_edit.dateTime().toMSecsSinceEpoch())

    def show_error(self, message: str | None) -> None:
        self.error_label.setVisible(bool(message))
        self.error_label.setText(message or "")
        if message:
            self.error_label.setStyleSheet(f"color: {error_color(self.palette()).name()}")


class CronView(QWidget):
    """Jobs table, add/edit form, enable/disable, delete, run now, and the selected job's runs."""

    panel_title = "Scheduled"
    open_session_requested = Signal(str)
    """("cron:<job id>"): show the session a job's runs are written to."""

    REFRESH_INTERVAL_MS = 30_000

    def __init__(self, engine: Any, bridge: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cronView")
        self.engine = engine
        self.bridge = bridge
        self.model = CronJobsModel(self)
        self.model.enabled_toggled.connect(self.set_job_enabled)
        self._running: dict[str, asyncio.Future[Any]] = {}
        self._build()
        bridge.event.connect(self._on_event)
        self._timer = QTimer(self)
        self._timer.setInterval(self.REFRESH_INTERVAL_MS)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        self.refresh()

    def _build(self) -> None:
        self.banner = QLabel()
        self.banner.setObjectName("cronStoreError")
        self.banner.setWordWrap(True)
        self.banner.hide()
        self.add_button = QPushButton("Add…")
        self.edit_button = QPushButton("Edit…")
        self.toggle_button = QPushButton("Disable")
        self.delete_button = QPushButton("Delete")
        self.run_button = QPushButton("Run now")
        for name, button in (("cronAdd", self.add_button), ("cronEdit", self.edit_button),
                             ("cronToggle", self.toggle_button), ("cronDelete", self.delete_button),
                             ("cronRunNow", self.run_button)):
            button.setObjectName(name)
        self.add_button.clicked.connect(self.show_add_form)
        self.edit_button.clicked.connect(self.show_edit_form)
        self.toggle_button.clicked.connect(self._toggle_selected)
        self.delete_button.clicked.connect(self._ask_delete)
        self.run_button.clicked.connect(self.run_selected)
        toolbar = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.toggle_button, self.delete_button):
            toolbar.addWidget(button)
        toolbar.addStretch(1)
        toolbar.addWidget(self.run_button)

        self.table = QTableView()
        self.table.setObjectName("cronJobs")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(CronJobsModel.LAST, QHeaderView.ResizeMode.Stretch)
        for column, width in ((CronJobsModel.NAME, 160), (CronJobsModel.SCHEDULE, 200), (CronJobsModel.NEXT, 140),
                              (CronJobsModel.ENABLED, 70)):
            self.table.setColumnWidth(column, width)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.doubleClicked.connect(self._on_double_clicked)
        self.empty_label = QLabel("No scheduled jobs. Add one here, or ask the agent "
                                  "(“remind me every morning at 9 to …”).")
        self.empty_label.setWordWrap(True)
        self.empty_label.setEnabled(False)

        self.form = CronJobForm()
        self.form.submitted.connect(self.submit_form)
        self.form.cancelled.connect(self.hide_form)

        self.details = QPlainTextEdit()
        self.details.setObjectName("cronDetails")
        self.details.setReadOnly(True)
        self.details.setPlaceholderText("Select a job to see its message and this session's runs.")
        self.open_session_button = QPushButton("Open session")
        self.open_session_button.setObjectName("cronOpenSession")
        self.open_session_button.clicked.connect(self._open_session)
        self.action_error = QLabel()
        self.action_error.setObjectName("cronActionError")
        self.action_error.setWordWrap(True)
        self.action_error.hide()
        bottom_row = QHBoxLayout()
        bottom_row.addWidget(self.action_error, 1)
        bottom_row.addStretch(0)
        bottom_row.addWidget(self.open_session_button)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.banner)
        top_layout.addLayout(toolbar)
        top_layout.addWidget(self.empty_label)
        top_layout.addWidget(self.table, 1)
        self.bottom = QStackedWidget()  # the selected job's details, or the add/edit form in their place
        self.bottom.addWidget(self.details)
        self.bottom.addWidget(self.form)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(top)
        splitter.addWidget(self.bottom)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(bottom_row)

    # --- reading -----------------------------------------------------------------------------------------

    def selected_job_id(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.job_at(rows[0].row()).id if rows else None

    def select_job(self, job_id: str) -> None:
        row = self.model.row_of(job_id)
        if row >= 0:
            self.table.selectRow(row)

    def refresh(self) -> None:
        """Re-read the jobs from the service (which re-reads jobs.json when it changed on disk)."""
        selected = self.selected_job_id()
        cron = self.engine.cron
        self.model.set_jobs(cron.list_jobs(include_disabled=True))
        if selected is not None and self.selected_job_id() != selected:
            self.select_job(selected)
        error = cron.store_error
        held_by = cron.held_by  # a nanobot gateway on this config: see engine/coexistence.py
        self.banner.setVisible(error is not None or bool(held_by))
        if error is not None:
            self.banner.setText(f"jobs.json cannot be used, so no job runs and nothing is saved until it is fixed: {error}")
            self.banner.setStyleSheet(f"color: {error_color(self.palette()).name()}")
        elif held_by:
            self.banner.setText(f"The app does not run these jobs now: {held_by}.")
            self.banner.setStyleSheet("")
        self.add_button.setEnabled(error is None)
        self.empty_label.setVisible(self.model.rowCount() == 0 and error is None)
        self._update_buttons()
        self._show_details()

    def _on_event(self, event: Any) -> None:
        if isinstance(event, (CronJobRan, BackgroundOwnerChanged)):
            self.refresh()

    def _on_selection_changed(self, *_args: Any) -> None:
        self._update_buttons()
        self._show_details()

    def _update_buttons(self) -> None:
        job_id = self.selected_job_id()
        job = self.model.job_at(self.model.row_of(job_id)) if job_id else None
        writable = self.engine.cron.store_error is None
        protected = job is not None and is_system_job(job)  # nanobot 0.3's own heartbeat / dream job
        for button in (self.edit_button, self.toggle_button, self.delete_button):
            button.setEnabled(job is not None and writable and not protected)
        running = job_id is not None and job_id in self._running
        self.run_button.setEnabled(job is not None and not running and not protected)
        self.run_button.setText("Running…" if running else "Run now")
        self.toggle_button.setText("Enable" if job is not None and not job.enabled else "Disable")
        self.open_session_button.setEnabled(job is not None)

    def _show_details(self) -> None:
        job_id = self.selected_job_id()
        if job_id is None:
            self.details.clear()
            return
        job = self.model.job_at(self.model.row_of(job_id))
        lines = [f"{job.name} — {describe_schedule(job.schedule)}", "",
                 SYSTEM_JOB_NOTE if is_system_job(job) else job.payload.message]
        if job.state.last_error:
            lines += ["", f"Last error: {job.state.last_error}"]
        runs = self.engine.cron.runs(job_id)
        if runs:
            lines += ["", "Runs since the app started:"]
            for run in reversed(runs[-20:]):
                outcome = run.error if run.error else (run.result or "(no reply)")
                lines.append(f"  {format_clock(run.started_at)}  {run.status}  {format_duration(run.duration_s)}  "
                             f"{' '.join(outcome.split())[:160]}")
        text = "\n".join(lines)
        if self.details.toPlainText() != text:
            self.details.setPlainText(text)

    def _open_session(self) -> None:
        job_id = self.selected_job_id()
        if job_id is not None:
            self.open_session_requested.emit(f"cron:{job_id}")

    # --- writing -----------------------------------------------------------------------------------------

    def show_add_form(self) -> None:
        self.form.start_new()
        self.bottom.setCurrentWidget(self.form)
        self.form.name_edit.setFocus()

    def _on_double_clicked(self, _index: QModelIndex) -> None:
        self.show_edit_form()

    def show_edit_form(self) -> None:
        job_id = self.selected_job_id()
        job = self.engine.cron.get_job(job_id) if job_id else None
        if job is None:
            return
        self.form.start_edit(job)
        self.bottom.setCurrentWidget(self.form)
        self.form.message_edit.setFocus()

    @property
    def form_open(self) -> bool:
        return self.bottom.currentWidget() is self.form

    def hide_form(self) -> None:
        self.form.show_error(None)
        self.bottom.setCurrentWidget(self.details)

    def submit_form(self) -> bool:
        """Add or update through the service; its ValueError/CronStoreError text appears in the form."""
        form = self.form
        message = form.message_edit.toPlainText().strip()
        name = form.name_edit.text().strip()
        cron = self.engine.cron
        try:
            schedule = form.schedule()
            if form.editing_id is None:
                job = cron.add_job(name, schedule, message, delete_after_run=form.kind() == "at" and form.delete_after_box.isChecked())
            else:
                changes: dict[str, Any] = {"schedule": schedule, "message": message, "name": name or message[:30]}
                if form.kind() == "at":
                    changes["delete_after_run"] = form.delete_after_box.isChecked()
                job = cron.update_job(form.editing_id, **changes)
        except Exception as exc:  # noqa: BLE001 - ValueError, CronStoreError, KeyError, OSError: said inline
            form.show_error(error_message(exc))
            return False
        self.hide_form()
        self.refresh()
        self.select_job(job.id)
        return True

    def set_job_enabled(self, job_id: str, enabled: bool) -> None:
        self._write(lambda: self.engine.cron.enable_job(job_id, enabled))

    def _toggle_selected(self) -> None:
        job_id = self.selected_job_id()
        if job_id is not None:
            job = self.model.job_at(self.model.row_of(job_id))
            self.set_job_enabled(job_id, not job.enabled)

    def _ask_delete(self) -> None:
        """Deleting needs a second click on the same button within a few seconds (no modal dialog)."""
        job_id = self.selected_job_id()
        if job_id is None:
            return
        if self.delete_button.property("confirmFor") == job_id:
            self.delete_button.setProperty("confirmFor", None)
            self.delete_button.setText("Delete")
            self.delete_job(job_id)
            return
        self.delete_button.setProperty("confirmFor", job_id)
        self.delete_button.setText("Click again to delete")
        QTimer.singleShot(4000, self._reset_delete_button)

    def _reset_delete_button(self) -> None:
        self.delete_button.setProperty("confirmFor", None)
        self.delete_button.setText("Delete")

    def delete_job(self, job_id: str) -> None:
        self._write(lambda: self.engine.cron.remove_job(job_id))

    def _write(self, change: Any) -> bool:
        try:
            change()
        except Exception as exc:  # noqa: BLE001 - CronStoreError, KeyError, OSError: shown, never raised
            log.warning("cron change failed: %s", exc)
            self.action_error.setText(error_message(exc))
            self.action_error.setStyleSheet(f"color: {error_color(self.palette()).name()}")
            self.action_error.show()
            self.refresh()
            return False
        self.action_error.hide()
        self.refresh()
        return True

    def run_selected(self) -> asyncio.Future[Any] | None:
        """Run the selected job now (even a disabled one); the row updates when it has run."""
        job_id = self.selected_job_id()
        if job_id is None or job_id in self._running:
            return None
        future = asyncio.ensure_future(self.engine.cron.run_job(job_id, force=True))
        self._running[job_id] = future

        def done(f: asyncio.Future[Any]) -> None:
            self._running.pop(job_id, None)
            if not f.cancelled() and f.exception() is not None:
                log.warning("running cron job %s failed: %s", job_id, f.exception())
            self.refresh()

        future.add_done_callback(done)
        self._update_buttons()
        return future

    def shutdown(self) -> None:
        self._timer.stop()
        try:
            self.bridge.event.disconnect(self._on_event)
        except (RuntimeError, TypeError):
            pass
