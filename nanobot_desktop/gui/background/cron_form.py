"""Add or edit one scheduled job: name, schedule (every / cron / at), message, missed-run rule.

The missed-run rule is an app setting (kept with the app's own settings, not in jobs.json, which the
nanobot CLI rewrites without unknown keys); "Default" follows the app-wide default stated in the view.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QDateTime, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDateTimeEdit, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QPlainTextEdit, QPushButton, QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from nanobot_desktop.engine import DEFAULT_MISSED_RULE, MISSED_RULES, MISSED_RULE_WORDS, CronSchedule
from nanobot_desktop.gui.background.formatting import error_color
from nanobot_desktop.gui.common.i18n import translate

EVERY_UNITS = ((QT_TRANSLATE_NOOP("Scheduled", "seconds"), 1000), (QT_TRANSLATE_NOOP("Scheduled", "minutes"), 60_000),
               (QT_TRANSLATE_NOOP("Scheduled", "hours"), 3_600_000), (QT_TRANSLATE_NOOP("Scheduled", "days"), 86_400_000),
               (QT_TRANSLATE_NOOP("Scheduled", "milliseconds"), 1))  # labels translated where shown
MISSED_RULE_LABELS = {"run_once": QT_TRANSLATE_NOOP("Scheduled", "Run once now"), "skip": QT_TRANSLATE_NOOP("Scheduled", "Skip")}


class CronJobForm(QGroupBox):
    """Add or edit one job: name, schedule (every / cron / at), message; errors are shown inline."""

    submitted = Signal()
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(translate("Scheduled", "New job"), parent)
        self.setObjectName("cronJobForm")
        self.editing_id: str | None = None
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("cronName")
        self.name_edit.setPlaceholderText(translate("Scheduled", "e.g. Morning summary (optional)"))
        self.kind_combo = QComboBox()
        self.kind_combo.setObjectName("cronKind")
        for label, kind in ((translate("Scheduled", "Every …"), "every"),
                            (translate("Scheduled", "Cron expression"), "cron"),
                            (translate("Scheduled", "Once at …"), "at")):
            self.kind_combo.addItem(label, kind)
        self.every_spin = QSpinBox()
        self.every_spin.setObjectName("cronEveryValue")
        self.every_spin.setRange(1, 1_000_000)
        self.every_spin.setValue(30)
        self.every_unit = QComboBox()
        self.every_unit.setObjectName("cronEveryUnit")
        for unit, factor in EVERY_UNITS:
            self.every_unit.addItem(translate("Scheduled", unit), factor)
        self.every_unit.setCurrentIndex(1)
        every_row = QWidget()
        every_layout = QHBoxLayout(every_row)
        every_layout.setContentsMargins(0, 0, 0, 0)
        every_layout.addWidget(self.every_spin)
        every_layout.addWidget(self.every_unit, 1)
        self.expr_edit = QLineEdit()
        self.expr_edit.setObjectName("cronExpr")
        self.expr_edit.setPlaceholderText(translate("Scheduled", "minute hour day month weekday, e.g. 0 9 * * 1-5"))
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
        self.tz_edit.setPlaceholderText(translate("Scheduled", "IANA zone, e.g. Europe/Berlin (empty: this computer's)"))
        self.delete_after_box = QCheckBox(translate("Scheduled", "Delete the job after it ran"))
        self.missed_combo = QComboBox()
        self.missed_combo.setObjectName("cronMissedRule")
        default_words = translate("Scheduled", MISSED_RULE_LABELS[DEFAULT_MISSED_RULE]).lower() \
            if DEFAULT_MISSED_RULE in MISSED_RULE_LABELS else MISSED_RULE_WORDS[DEFAULT_MISSED_RULE]
        self.missed_combo.addItem(translate("Scheduled", "Default ({rule})").format(rule=default_words), None)
        for rule in MISSED_RULES:
            rule_label = MISSED_RULE_LABELS.get(rule)
            self.missed_combo.addItem(translate("Scheduled", rule_label) if rule_label
                                      else MISSED_RULE_WORDS[rule].capitalize(), rule)
        self.missed_combo.setToolTip(translate("Scheduled", "Runs missed while the app was closed or the computer slept: "
                                               "run the job once as soon as that is noticed, or skip them (they are "
                                               "listed either way)"))
        self.message_edit = QPlainTextEdit()
        self.message_edit.setObjectName("cronMessage")
        self.message_edit.setPlaceholderText(translate("Scheduled", "What the agent should do when the job fires"))
        self.message_edit.setFixedHeight(self.message_edit.fontMetrics().lineSpacing() * 4 + 12)
        self.error_label = QLabel()
        self.error_label.setObjectName("cronFormError")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        self.save_button = QPushButton(translate("Scheduled", "Add job"))
        self.save_button.setObjectName("cronFormSave")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.submitted.emit)
        cancel = QPushButton(translate("Scheduled", "Cancel"))
        cancel.clicked.connect(self.cancelled.emit)

        form = QFormLayout()
        form.addRow(translate("Scheduled", "Name"), self.name_edit)
        form.addRow(translate("Scheduled", "Runs"), self.kind_combo)
        self.value_label = QLabel(translate("Scheduled", "Every"))
        form.addRow(self.value_label, self.value_stack)
        self.tz_label = QLabel(translate("Scheduled", "Time zone"))
        form.addRow(self.tz_label, self.tz_edit)
        form.addRow("", self.delete_after_box)
        form.addRow(translate("Scheduled", "If runs were missed"), self.missed_combo)
        form.addRow(translate("Scheduled", "Message"), self.message_edit)
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
        self.value_label.setText({"every": translate("Scheduled", "Every"), "cron": translate("Scheduled", "Expression"),
                                  "at": translate("Scheduled", "At")}[kind])
        for widget in (self.tz_label, self.tz_edit):
            widget.setVisible(kind == "cron")
        self.delete_after_box.setVisible(kind == "at")

    def start_new(self) -> None:
        self.editing_id = None
        self.setTitle(translate("Scheduled", "New job"))
        self.save_button.setText(translate("Scheduled", "Add job"))
        self.name_edit.clear()
        self.kind_combo.setCurrentIndex(0)
        self.every_spin.setValue(30)
        self.every_unit.setCurrentIndex(1)
        self.expr_edit.clear()
        self.tz_edit.clear()
        self.at_edit.setDateTime(QDateTime.currentDateTime().addSecs(3600))
        self.delete_after_box.setChecked(True)
        self.missed_combo.setCurrentIndex(0)
        self.message_edit.clear()
        self.show_error(None)

    def missed_rule(self) -> str | None:
        """The chosen rule, or None for the default."""
        data = self.missed_combo.currentData()
        return str(data) if data else None

    def start_edit(self, job: Any, missed_rule: str | None = None) -> None:
        self.start_new()
        self.editing_id = job.id
        self.setTitle(translate("Scheduled", "Edit “{name}”").format(name=job.name))
        self.save_button.setText(translate("Scheduled", "Save changes"))
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
        self.missed_combo.setCurrentIndex(max(0, self.missed_combo.findData(missed_rule)) if missed_rule else 0)

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


