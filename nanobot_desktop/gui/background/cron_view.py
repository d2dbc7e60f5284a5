"""The Scheduled panel: the jobs of cron/jobs.json, a form to add or edit one, and their history.

Every write goes through `engine.cron` (CronService), which keeps jobs.json in the original's format
and refuses to save over a file it cannot parse; its messages are shown inline, next to the form.
The list is rebuilt from the service on `CronJobRan`, on `refresh()` (the workspace watcher calls it
after `engine.cron.reload_if_changed()`), and every 30 s so "next run in 4 min" stays true. The
history lists runs missed while the app was closed or the computer slept; the rule for them (run
once now, or skip) is set per job in the form, and the default is stated under the table.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QPushButton,
                               QVBoxLayout, QWidget)

from nanobot_desktop.engine import (DEFAULT_MISSED_RULE, MISSED_RULE_WORDS, BackgroundOwnerChanged, CronJobRan,
                                    describe_schedule, is_system_job)
from nanobot_desktop.gui.common.accessibility import help_text
from nanobot_desktop.gui.background.cron_form import EVERY_UNITS, MISSED_RULE_LABELS, CronJobForm
from nanobot_desktop.gui.background.cron_model import (CronJobsModel, error_message, last_status_text,
                                                       next_run_text, run_line)
from nanobot_desktop.gui.background.formatting import error_color
from nanobot_desktop.gui.background.panel import BackgroundPanel
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.keyed_table import KeyedTableView, table_over_details
from nanobot_desktop.gui.common.widgets import PageSizedStack

__all__ = ["EVERY_UNITS", "CronJobForm", "CronJobsModel", "CronView", "error_message", "last_status_text",
           "next_run_text"]

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from collections.abc import Mapping

    from nanobot_desktop.gui.common.bridge import EngineBridge, Handler

log = logging.getLogger(__name__)

SYSTEM_JOB_NOTE = QT_TRANSLATE_NOOP("Scheduled", "A protected system job of nanobot 0.3: its gateway runs it (heartbeat: "
                                    "HEARTBEAT.md; dream: Dream's memory rewrite). The app leaves it as it is; turn it "
                                    "off in the config.")  # translated where shown


class CronView(BackgroundPanel):
    """Jobs table, add/edit form, enable/disable, delete, run now, and the selected job's runs."""

    panel_title = QT_TRANSLATE_NOOP("Scheduled", "Scheduled")  # the dock's title (the window translates it)
    open_session_requested = Signal(str)
    """("cron:<job id>"): show the session a job's runs are written to."""

    REFRESH_INTERVAL_MS = 30_000

    def __init__(self, engine: Engine, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(engine, bridge, "cronView", self.REFRESH_INTERVAL_MS, parent)
        self.model = CronJobsModel(self)
        self.model.enabled_toggled.connect(self.set_job_enabled)
        self.model.latest_run = self._latest_run
        self.model.catching_up = engine.cron.catching_up
        self._running: dict[str, asyncio.Future[Any]] = {}
        self._build()
        self._listen()
        self._timer.start()
        self.refresh()

    def _build(self) -> None:
        self.banner = QLabel()
        self.banner.setObjectName("cronStoreError")
        self.banner.setWordWrap(True)
        self.banner.hide()
        self.add_button = QPushButton(translate("Scheduled", "Add…"))
        self.edit_button = QPushButton(translate("Scheduled", "Edit…"))
        self.toggle_button = QPushButton(translate("Scheduled", "Disable"))
        self.delete_button = QPushButton(translate("Scheduled", "Delete"))
        self.run_button = QPushButton(translate("Scheduled", "Run now"))
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

        self.table = KeyedTableView(self.model, "cronJobs")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(CronJobsModel.NAME, QHeaderView.ResizeMode.Stretch)
        # In characters, so the five columns fit a dock as wide as the chat (~90 characters) in any font;
        # the name takes what is left. ("Enabled" is its label and the check box.)
        characters = self.table.fontMetrics().averageCharWidth()
        for column, width in ((CronJobsModel.SCHEDULE, 20), (CronJobsModel.NEXT, 26), (CronJobsModel.LAST, 18)):
            self.table.setColumnWidth(column, width * characters)
        enabled = str(self.model.headerData(CronJobsModel.ENABLED, Qt.Orientation.Horizontal))
        self.table.setColumnWidth(CronJobsModel.ENABLED, header.fontMetrics().horizontalAdvance(enabled) + 4 * characters)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.doubleClicked.connect(self._on_double_clicked)
        self.empty_label = QLabel(translate("Scheduled", "No scheduled jobs. Add one here, or ask the agent "
                                            "(“remind me every morning at 9 to …”)."))
        self.empty_label.setWordWrap(True)
        help_text(self.empty_label)
        if DEFAULT_MISSED_RULE == "run_once":
            missed = translate("Scheduled", "Times are in this computer's time zone. Runs missed while the app was closed "
                               "or the computer slept are listed in the job's history; by default the job then runs "
                               "once now (Edit… to skip them instead).")
        else:
            missed = translate("Scheduled", "Times are in this computer's time zone. Runs missed while the app was closed "
                               "or the computer slept are listed in the job's history; by default they are skipped "
                               "(Edit… to run the job once instead).")
        self.missed_label = QLabel(missed)
        self.missed_label.setObjectName("cronMissedDefault")
        self.missed_label.setWordWrap(True)
        help_text(self.missed_label)

        self.form = CronJobForm()
        self.form.submitted.connect(self.submit_form)
        self.form.cancelled.connect(self.hide_form)

        self.details = QPlainTextEdit()
        self.details.setObjectName("cronDetails")
        self.details.setReadOnly(True)
        self.details.setPlaceholderText(translate("Scheduled", "Select a job to see its message and this session's runs."))
        self.open_session_button = QPushButton(translate("Scheduled", "Open session"))
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

        self.bottom = PageSizedStack()  # the selected job's details, or the add/edit form in their place
        self.bottom.addWidget(self.details)
        self.bottom.addWidget(self.form)
        splitter = table_over_details([self.banner, toolbar, self.empty_label, self.table, self.missed_label],
                                      self.table, self.bottom)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(bottom_row)

    # --- reading -----------------------------------------------------------------------------------------

    def selected_job_id(self) -> str | None:
        return self.table.selected_key()

    def select_job(self, job_id: str) -> None:
        self.table.select_key(job_id)

    def refresh(self) -> None:
        """Re-read the jobs from the service (which re-reads jobs.json when it changed on disk)."""
        cron = self.engine.cron
        self.table.show_records(cron.list_jobs(include_disabled=True))
        error = cron.store_error
        held_by = cron.held_by  # a nanobot gateway on this config: see engine/background/coexistence.py
        others = self.engine.runs_for_others() if error is None and not held_by else []  # a shared workspace
        self.banner.setVisible(error is not None or bool(held_by) or bool(others))
        if error is not None:
            self.banner.setText(translate("Scheduled", "jobs.json cannot be used, so no job runs and nothing is saved until "
                                          "it is fixed: {error}").format(error=error))
            self.banner.setStyleSheet(f"color: {error_color(self.palette()).name()}")
        elif held_by:
            self.banner.setText(translate("Scheduled", "The app does not run these jobs now: {reason}.").format(reason=held_by))
            self.banner.setStyleSheet("")
        elif others:
            self.banner.setText(translate("Scheduled", "This machine runs these jobs for the workspace it shares with {machines}.")
                                .format(machines=", ".join(others)))
            self.banner.setStyleSheet("")
        self.add_button.setEnabled(error is None)
        self.empty_label.setVisible(self.model.rowCount() == 0 and error is None)
        self._update_buttons()
        self._show_details()

    def _handlers(self) -> Mapping[type, Handler]:
        return {CronJobRan: lambda _event: self.refresh(), BackgroundOwnerChanged: lambda _event: self.refresh()}

    def _on_selection_changed(self, *_args: Any) -> None:
        self._update_buttons()
        self._show_details()

    def _update_buttons(self) -> None:
        job_id = self.selected_job_id()
        job = self.model.record_at(self.model.row_of(job_id)) if job_id else None
        writable = self.engine.cron.store_error is None
        protected = job is not None and is_system_job(job)  # nanobot 0.3's own heartbeat / dream job
        for button in (self.edit_button, self.toggle_button, self.delete_button):
            button.setEnabled(job is not None and writable and not protected)
        running = job_id is not None and job_id in self._running
        self.run_button.setEnabled(job is not None and not running and not protected)
        self.run_button.setText(translate("Scheduled", "Running…") if running else translate("Scheduled", "Run now"))
        self.toggle_button.setText(translate("Scheduled", "Enable") if job is not None and not job.enabled
                                   else translate("Scheduled", "Disable"))
        self.open_session_button.setEnabled(job is not None)

    def _show_details(self) -> None:
        job_id = self.selected_job_id()
        if job_id is None:
            self.details.clear()
            return
        job = self.model.record_at(self.model.row_of(job_id))
        rule = self.engine.missed_rule(job_id)
        label = MISSED_RULE_LABELS.get(rule)
        words = translate("Scheduled", label).lower() if label else MISSED_RULE_WORDS.get(rule, rule)
        if job_id in self.engine.app_settings.missed_runs:
            missed = translate("Scheduled", "If runs were missed: {rule}").format(rule=words)
        else:
            missed = translate("Scheduled", "If runs were missed: {rule} (the default)").format(rule=words)
        lines = [f"{job.name} — {describe_schedule(job.schedule)}",
                 translate("Scheduled", "Next run: {when}").format(when=self.model.next_text(job)), missed,
                 "", translate("Scheduled", SYSTEM_JOB_NOTE) if is_system_job(job) else job.payload.message]
        if job.state.last_error:
            lines += ["", translate("Scheduled", "Last error: {error}").format(error=job.state.last_error)]
        runs = self.engine.cron.runs(job_id)
        if runs:
            lines += ["", translate("Scheduled", "History since the app started (newest first):")]
            lines += [run_line(run) for run in reversed(runs[-20:])]
        text = "\n".join(lines)
        if self.details.toPlainText() != text:
            self.details.setPlainText(text)

    def _latest_run(self, job_id: str) -> Any:
        runs = self.engine.cron.runs(job_id)
        return runs[-1] if runs else None

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
        self.form.start_edit(job, self.engine.app_settings.missed_runs.get(job.id))
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
            if form.missed_rule() != self.engine.app_settings.missed_runs.get(job.id):
                self.engine.set_missed_rule(job.id, form.missed_rule())
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
            job = self.model.record_at(self.model.row_of(job_id))
            self.set_job_enabled(job_id, not job.enabled)

    def _ask_delete(self) -> None:
        """Deleting needs a second click on the same button within a few seconds (no modal dialog)."""
        job_id = self.selected_job_id()
        if job_id is None:
            return
        if self.delete_button.property("confirmFor") == job_id:
            self.delete_button.setProperty("confirmFor", None)
            self.delete_button.setText(translate("Scheduled", "Delete"))
            self.delete_job(job_id)
            return
        self.delete_button.setProperty("confirmFor", job_id)
        self.delete_button.setText(translate("Scheduled", "Click again to delete"))
        QTimer.singleShot(4000, self._reset_delete_button)

    def _reset_delete_button(self) -> None:
        self.delete_button.setProperty("confirmFor", None)
        self.delete_button.setText(translate("Scheduled", "Delete"))

    def delete_job(self, job_id: str) -> None:
        if self._write(lambda: self.engine.cron.remove_job(job_id)) \
                and job_id in self.engine.app_settings.missed_runs:
            self._write(lambda: self.engine.set_missed_rule(job_id, None))  # no rule left for a job that is gone

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
        future = self._start_engine_work(job_id, self.engine.cron.run_job(job_id, force=True), self._running,
                                         "running cron job")
        self._update_buttons()
        return future

