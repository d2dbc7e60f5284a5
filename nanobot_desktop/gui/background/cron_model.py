"""The Scheduled panel's table: one row per job of cron/jobs.json, with honest next-run times.

"Next run" is in the person's time zone (named), says "never" with the reason for a job whose
schedule cannot fire again, and "catching up" while a missed run is being made up for. "Last run"
shows a missed-runs entry when that is the newest news about the job.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QT_TRANSLATE_NOOP, QModelIndex, QPersistentModelIndex, Qt, Signal

from nanobot_desktop.engine import describe_schedule, is_system_job, never_fires_reason

if TYPE_CHECKING:
    from nanobot_desktop.engine import CronJob
from nanobot_desktop.gui.background.formatting import format_clock, format_duration, format_local_time
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.keyed_table import KeyedTableModel

Index = QModelIndex | QPersistentModelIndex


def next_run_text(next_run_at_ms: int | None, now_ms: int) -> str:
    """"in 4 min (14:35 CET)", "due now", or "—"; times in the computer's own zone, named."""
    if next_run_at_ms is None:
        return "—"
    when = datetime.fromtimestamp(next_run_at_ms / 1000).astimezone()
    now = datetime.fromtimestamp(now_ms / 1000).astimezone()
    seconds = (next_run_at_ms - now_ms) / 1000
    if seconds <= 0:
        return translate("Scheduled", "due now")
    if seconds < 60:
        return translate("Scheduled", "in {count} s ({time})").format(count=int(seconds), time=when.strftime("%H:%M:%S %Z"))
    if seconds < 90 * 60:
        return translate("Scheduled", "in {count} min ({time})").format(count=round(seconds / 60),
                                                                        time=format_local_time(when, now))
    if seconds < 36 * 3600:
        return translate("Scheduled", "in {count} h ({time})").format(count=round(seconds / 3600),
                                                                      time=format_local_time(when, now))
    return format_local_time(when, now)


def error_message(exc: BaseException) -> str:
    """The sentence inside an exception (KeyError's str() adds quotes around it)."""
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def last_status_text(job: CronJob, latest: Any = None) -> str:
    """The job's last outcome; a "missed" history entry newer than the last run is shown instead."""
    state = job.state
    if latest is not None and latest.status == "missed" and (
            not state.last_run_at_ms or latest.started_at.timestamp() * 1000 >= state.last_run_at_ms):
        count = latest.note.split(" (")[0]  # "missed 4 runs" (the engine's note, as the log has it)
        if latest.note.endswith("skip"):
            text = translate("Scheduled", "{missed}, skipped — {time}")
        else:
            text = translate("Scheduled", "{missed}, running once now — {time}")
        return text.format(missed=count, time=format_clock(latest.started_at))
    if not state.last_status:
        return translate("Scheduled", "never ran")
    when = format_clock(datetime.fromtimestamp(state.last_run_at_ms / 1000)) if state.last_run_at_ms else ""
    text = str(state.last_status) + (f" at {when}" if when else "")
    return text + (f": {state.last_error}" if state.last_error else "")


def run_line(run: Any) -> str:
    """One history entry: time, status, how it was started, duration, outcome, tools, approvals."""
    if run.status == "missed":
        return f"  {format_clock(run.started_at)}  MISSED  {run.note}"
    outcome = run.error if run.error else (run.result or translate("Scheduled", "(no reply)"))
    trigger = {"manual": translate("Scheduled", "run now"),
               "catch-up": translate("Scheduled", "catch-up")}.get(getattr(run, "trigger", "timer"), "")
    line = (f"  {format_clock(run.started_at)}  {run.status}{f' ({trigger})' if trigger else ''}  "
            f"{format_duration(run.duration_s)}  {' '.join(outcome.split())[:160]}")
    uses = getattr(run, "tools", ()) or ()
    if uses:
        line += "\n      " + translate("Scheduled", "tools: {tools}").format(tools="; ".join(use.describe() for use in uses))
    asked = getattr(run, "approvals", ()) or ()
    if asked:
        line += "\n      " + translate("Scheduled", "waited for your approval: {tools}").format(tools="; ".join(asked))
    return line


class CronJobsModel(KeyedTableModel):
    """One row per job: name, schedule in words, next run, last status, enabled (a checkbox)."""

    COLUMNS = (QT_TRANSLATE_NOOP("Scheduled", "Name"), QT_TRANSLATE_NOOP("Scheduled", "Schedule"),
               QT_TRANSLATE_NOOP("Scheduled", "Next run"), QT_TRANSLATE_NOOP("Scheduled", "Last run"),
               QT_TRANSLATE_NOOP("Scheduled", "Enabled"))  # translated in headerData
    CONTEXT = "Scheduled"
    ROLE_NAMES = (b"job", b"jobId")
    NAME, SCHEDULE, NEXT, LAST, ENABLED = range(5)

    enabled_toggled = Signal(str, bool)
    """(job_id, enabled): the person ticked or unticked a job's checkbox; the view writes it."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.now_ms: Callable[[], int] = lambda: int(datetime.now().timestamp() * 1000)
        self.latest_run: Callable[[str], Any] = lambda _job_id: None
        """The newest history entry of a job (the view points this at the cron service)."""
        self.catching_up: Callable[[str], bool] = lambda _job_id: False

    def key_of(self, job: CronJob) -> str:
        return str(job.id)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == self.ENABLED:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def cell(self, job: CronJob, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.CheckStateRole and column == self.ENABLED:
            return Qt.CheckState.Checked if job.enabled else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.NAME:
                return job.name
            if column == self.SCHEDULE:
                return describe_schedule(job.schedule)
            if column == self.NEXT:
                return self.next_text(job)
            if column == self.LAST:
                return last_status_text(job, self.latest_run(job.id))
            if column == self.ENABLED:
                return translate("Scheduled", "on") if job.enabled else translate("Scheduled", "off")
        if role == Qt.ItemDataRole.ToolTipRole and column == self.LAST:
            latest = self.latest_run(job.id)
            if latest is not None and latest.status == "missed":
                return latest.note
            if job.state.last_error:  # the cell is cut at an ordinary width: the whole error here
                return last_status_text(job, latest)
        if role == Qt.ItemDataRole.ToolTipRole:
            never = never_fires_reason(job, self.now_ms())
            warning = "\n\n" + translate("Scheduled", "This job will never run: {reason}.").format(reason=never) if never else ""
            return f"{job.name}\n{describe_schedule(job.schedule)}\n\n{job.payload.message}{warning}"
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid() or index.column() != self.ENABLED or role != Qt.ItemDataRole.CheckStateRole:
            return False
        checked = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value, 2)
        self.enabled_toggled.emit(self._records[index.row()].id, bool(checked))
        return True  # the row changes when the view refreshes from the service

    def next_text(self, job: CronJob) -> str:
        if not job.enabled:
            return translate("Scheduled", "off")
        if is_system_job(job):
            return translate("Scheduled", "by the nanobot 0.3 gateway")
        if self.catching_up(job.id):
            return translate("Scheduled", "catching up a missed run now")
        never = never_fires_reason(job, self.now_ms())
        if never:
            return translate("Scheduled", "never — {reason}").format(reason=never)
        return next_run_text(job.state.next_run_at_ms, self.now_ms())

    def tick(self) -> None:
        """The clock moved: re-read the countdown column."""
        if self._records:
            self.dataChanged.emit(self.index(0, self.NEXT), self.index(len(self._records) - 1, self.NEXT))


