"""The Settings dialog: provider, agent, tool policy, heartbeat and appearance.

Why it is built this way:
- Non-modal: callers `open()` it and listen to `applied`; it never runs a nested event loop, so
  streaming and the heartbeat keep running while it is open (the Qt reference §3 explains why
  `exec()` inside a coroutine breaks qasync).
- Save sends `Engine.update_config` a patch of only the fields the person changed, applied to the
  files as they are then: a heartbeat toggle or an *Always allow* given while the dialog was open
  stays, and opening Settings and pressing Save never rewrites a value the widgets could only show
  approximately (an interval of 90 s, a provider chosen by "auto").
- Pages are a list (`PAGES`, plus `EXTRA_PAGES` for features that bring their own page): each page
  builds its widgets and registers fields with `add_field(name, read, patch)`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtWidgets import (
    QApplication, QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QHeaderView,
    QFrame, QLabel, QScrollArea, QSpinBox, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget,
)

from nanobot_desktop.engine import DEFAULT_DECISIONS, Config, ConfigError
from nanobot_desktop.gui.common.accessibility import name as accessible_name, name_cell_widgets, name_form_fields
from nanobot_desktop.gui.common.i18n import language_names, translate
from nanobot_desktop.gui.common.text_size import TEXT_SIZES
from nanobot_desktop.gui.settings.background_policy import add_background_policy
from nanobot_desktop.gui.settings.provider_choice import default_entry_name, provider_patch
from nanobot_desktop.gui.settings.provider_list import MoreProviders
from nanobot_desktop.gui.settings.provider_form import InlineError, ProviderForm, one_line
from nanobot_desktop.gui.settings.exec_limits_box import ExecLimitsBox
from nanobot_desktop.gui.settings.sandbox_box import SandboxBox
from nanobot_desktop.gui.settings.workspace_page import workspace_page
from nanobot_desktop.gui.common.theme import HIGH_CONTRAST_MODES, THEME_MODES, apply_theme, current_theme_mode

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

log = logging.getLogger(__name__)

REASONING_EFFORTS = {"none": QT_TRANSLATE_NOOP("Settings", "none"), "low": QT_TRANSLATE_NOOP("Settings", "low"),
                     "medium": QT_TRANSLATE_NOOP("Settings", "medium"), "high": QT_TRANSLATE_NOOP("Settings", "high")}
"""agents.defaults.reasoningEffort's values, each shown in the UI language (English shows the value itself)."""
DECISION_LABELS = {"allow": QT_TRANSLATE_NOOP("Settings", "Allow"), "ask": QT_TRANSLATE_NOOP("Settings", "Ask first"),
                   "deny": QT_TRANSLATE_NOOP("Settings", "Deny")}  # translated where shown
ANNOUNCEMENT_LEVELS = ("all", "important", "off")  # AppSettings.announcements
ANNOUNCEMENT_LABELS = {"all": QT_TRANSLATE_NOOP("Settings", "Replies, approvals, errors and background tasks"),
                       "important": QT_TRANSLATE_NOOP("Settings", "Only approvals and errors"),
                       "off": QT_TRANSLATE_NOOP("Settings", "None")}
HIGH_CONTRAST_LABELS = {"system": QT_TRANSLATE_NOOP("Settings", "When the system asks for it"),
                        "on": QT_TRANSLATE_NOOP("Settings", "On"), "off": QT_TRANSLATE_NOOP("Settings", "Off")}
THEME_LABELS = {"system": QT_TRANSLATE_NOOP("Settings", "Follow the system"), "light": QT_TRANSLATE_NOOP("Settings", "Light"),
                "dark": QT_TRANSLATE_NOOP("Settings", "Dark")}

# ------------------------------------------------------------------------------------ settings dialog


Patch = dict[str, Any]
PageBuilder = Callable[["SettingsDialog"], QWidget]
# (title, builder) of pages other features add; each builder may call `dialog.add_field`.
EXTRA_PAGES: list[tuple[str, PageBuilder]] = []


class SettingsDialog(QDialog):
    """Shows the engine's settings; Save sends the changed fields through `Engine.update_config`."""

    applied = Signal(object)
    """The new `Config`, after it was saved and the engine adopted it."""

    def __init__(self, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle(translate("Settings", "Settings"))
        self._engine = engine
        self._config: Config = engine.config.model_copy(deep=True)
        self._previewed_theme = False
        app = QApplication.instance()
        self._theme_at_open = current_theme_mode(app) if isinstance(app, QApplication) else "system"
        # name -> (read the widget, the patch for a value); sent only when changed
        self._fields: dict[str, tuple[Callable[[], Any], Callable[[Any], Patch]]] = {}

        self.tabs = QTabWidget(self)
        pages: list[tuple[str, PageBuilder]] = [
            (translate("Settings", "Provider"), SettingsDialog._provider_page),
            (translate("Settings", "Agent"), SettingsDialog._agent_page),
            (translate("Settings", "Tools"), SettingsDialog._tools_page),
            (translate("Settings", "Heartbeat"), SettingsDialog._heartbeat_page),
            (translate("Settings", "Appearance"), SettingsDialog._appearance_page),
            (translate("Settings", "Workspace"), lambda d: workspace_page(d._engine, d._config, d.add_field, d)), *EXTRA_PAGES]
        for title, build in pages:
            self.tabs.addTab(build(self), title)
        accessible_name(self.tabs, translate("Settings", "Settings pages"))
        name_form_fields(self)  # every field is called by its row's label
        for table in self.findChildren(QTableWidget):
            name_cell_widgets(table)
        self.save_error = InlineError(self)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.save_error)
        layout.addWidget(self.buttons)
        self._initial = {name: read() for name, (read, _write) in self._fields.items()}
        self.resize(640, 520)

    # --- pages ------------------------------------------------------------------------------------------

    def add_field(self, name: str, read: Callable[[], Any], patch: Callable[[Any], Patch]) -> None:
        """Register a widget value: `patch(value)` gives the settings to change when it was edited."""
        self._fields[name] = (read, patch)

    _field = add_field

    def _provider_page(self) -> QWidget:
        layout_kind = getattr(self._engine, "layout", None)
        v03 = bool(layout_kind is not None and layout_kind.is_v03)
        scroll = QScrollArea(self)  # the page grows with the providers listed; it scrolls rather than clips
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setAccessibleName(translate("Settings", "Provider"))  # a screen reader names the page it scrolls
        page = QWidget(scroll)
        self.provider_form = ProviderForm(page)
        self.provider_form.v03 = v03
        self.provider_form.load(self._config, self._engine.app_settings)
        intro = QLabel(translate("Settings", "The default provider and model serve every chat that has not picked "
                                 "another model. Pick a preset, paste the key, then choose a model from the endpoint's list."), page)
        intro.setWordWrap(True)
        self.more_providers = MoreProviders(page)
        self.more_providers.v03 = v03
        self.more_providers.load(self._config, self._engine.app_settings, default_entry_name(self._config))
        layout = QVBoxLayout(page)
        layout.addWidget(intro)
        layout.addWidget(self.provider_form)
        layout.addSpacing(12)
        layout.addWidget(self.more_providers)
        layout.addStretch(1)
        scroll.setWidget(page)

        def read() -> tuple[object, ...]:
            return (self.provider_form.choice(), self.more_providers.choices(), self.more_providers.removed())

        self._field("provider", read, lambda _value: provider_patch(
            self._engine.config, self.provider_form.choice(), self.more_providers.choices(), v03,
            self.more_providers.removed()))
        self._providers_v03 = v03
        return scroll

    def _agent_page(self) -> QWidget:
        d = self._config.agents.defaults
        page = QWidget(self)
        form = _form(page)
        self.temperature_spin = QDoubleSpinBox(page)
        self.temperature_spin.setRange(0.0, 2.0)
        self.temperature_spin.setSingleStep(0.05)
        self.temperature_spin.setDecimals(2)
        self.temperature_spin.setValue(d.temperature)
        self.max_tokens_spin = _spin(page, 1, 2_000_000, d.max_tokens)
        self.max_iterations_spin = _spin(page, 1, 10_000, d.max_tool_iterations)
        self.memory_window_spin = _spin(page, 2, 1_000_000, d.memory_window)
        self.reasoning_combo = QComboBox(page)
        for effort, label in REASONING_EFFORTS.items():
            self.reasoning_combo.addItem(translate("Settings", label), effort)
        if d.reasoning_effort and d.reasoning_effort not in REASONING_EFFORTS:  # a value we do not know is still shown
            self.reasoning_combo.addItem(d.reasoning_effort, d.reasoning_effort)
        self.reasoning_combo.setCurrentIndex(self.reasoning_combo.findData(d.reasoning_effort or "none"))
        self.restrict_check = QCheckBox(translate("Settings", "Keep file and shell tools inside the workspace folder"), page)
        self.restrict_check.setChecked(self._config.tools.restrict_to_workspace)
        self.exec_timeout_spin = _spin(page, 1, 86_400, self._config.tools.exec.timeout, translate("Settings", " s"))
        desktop = self._engine.app_settings
        self.first_byte_spin = _spin(page, 1, 3_600, round(desktop.model_first_byte_timeout), translate("Settings", " s"))
        self.first_byte_spin.setToolTip(translate("Settings", "Give up on a model call when the endpoint sends nothing for this long"))
        self.idle_spin = _spin(page, 1, 3_600, round(desktop.model_idle_timeout), translate("Settings", " s"))
        self.idle_spin.setToolTip(translate("Settings", "Give up on a reply that stops (or slows to a trickle) for this long"))
        form.addRow(translate("Settings", "Temperature:"), self.temperature_spin)
        form.addRow(translate("Settings", "Max tokens per reply:"), self.max_tokens_spin)
        form.addRow(translate("Settings", "Max tool iterations:"), self.max_iterations_spin)
        form.addRow(translate("Settings", "Memory window (messages):"), self.memory_window_spin)
        layout = getattr(self._engine, "layout", None)
        if layout is not None and layout.is_v03:  # 0.3 measures its window in tokens (Workspace page)
            self.memory_window_spin.setEnabled(False)
            self.memory_window_spin.setToolTip(translate("Settings", "A nanobot 0.3 workspace uses the context window in tokens "
                                                         "(Settings → Workspace) instead"))
        form.addRow(translate("Settings", "Reasoning effort:"), self.reasoning_combo)
        form.addRow(translate("Settings", "Shell command timeout:"), self.exec_timeout_spin)
        form.addRow(translate("Settings", "Wait for an answer:"), self.first_byte_spin)
        form.addRow(translate("Settings", "Wait when a reply stalls:"), self.idle_spin)
        form.addRow("", self.restrict_check)

        def at(path: str) -> Callable[[Any], Patch]:
            return lambda value: {path: value}

        self._field("temperature", self.temperature_spin.value, at("agents.defaults.temperature"))
        self._field("max_tokens", self.max_tokens_spin.value, at("agents.defaults.maxTokens"))
        self._field("max_tool_iterations", self.max_iterations_spin.value, at("agents.defaults.maxToolIterations"))
        self._field("memory_window", self.memory_window_spin.value, at("agents.defaults.memoryWindow"))
        self._field("reasoning_effort", self.reasoning_combo.currentData,
                    lambda v: {"agents.defaults.reasoningEffort": None if v == "none" else v})
        self._field("restrict", self.restrict_check.isChecked, at("tools.restrictToWorkspace"))
        self._field("exec_timeout", self.exec_timeout_spin.value, at("tools.exec.timeout"))
        self._field("model_first_byte_timeout", self.first_byte_spin.value,
                    lambda v: {"app.modelFirstByteTimeout": float(v)})
        self._field("model_idle_timeout", self.idle_spin.value, lambda v: {"app.modelIdleTimeout": float(v)})
        return page

    def _tools_page(self) -> QWidget:
        page = QWidget(self)
        names = [n for n in self._engine.tools.names() if not n.startswith("mcp_")]  # MCP tools: the MCP panel
        self.policy_table = QTableWidget(len(names), 3, page)
        accessible_name(self.policy_table, translate("Settings", "Tool approvals"))
        self.policy_table.setHorizontalHeaderLabels([translate("Settings", "Tool"), translate("Settings", "When the agent calls it"),
                                                   translate("Settings", "Default")])
        self.policy_table.verticalHeader().hide()
        self.policy_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.policy_table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        self.policy_combos: dict[str, QComboBox] = {}
        approval = self._engine.app_settings.tool_approval
        self._approval_at_open = {name: approval.get(name, DEFAULT_DECISIONS.get(name, "allow")) for name in names}
        for row, name in enumerate(names):
            default = DEFAULT_DECISIONS.get(name, "allow")
            combo = QComboBox(self.policy_table)
            for decision, label in DECISION_LABELS.items():
                combo.addItem(translate("Settings", label), decision)
            combo.setCurrentIndex(combo.findData(approval.get(name, default)))
            if name == "exec" and not self._engine.exec_allow_possible():  # not sandboxed: exec always asks
                combo.model().item(combo.findData("allow")).setEnabled(False)  # type: ignore[attr-defined]
            self.policy_combos[name] = combo
            self.policy_table.setItem(row, 0, QTableWidgetItem(name))
            self.policy_table.setCellWidget(row, 1, combo)
            self.policy_table.setItem(row, 2, QTableWidgetItem(translate("Settings", DECISION_LABELS[default])))
        header = self.policy_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        note = QLabel(translate("Settings", "\"Ask first\" shows an approval card with the full arguments before the tool runs; "
                                 "for background work also a notification."), page)
        note.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(note)
        layout.addWidget(self.policy_table, 1)
        self.sandbox_box = SandboxBox(self._engine.app_settings, page)
        layout.addWidget(self.sandbox_box)
        self._field("exec_sandbox", self.sandbox_box.values, SandboxBox.patch)
        self.exec_limits_box = ExecLimitsBox(self._engine.app_settings, page)
        layout.addWidget(self.exec_limits_box)
        self._field("exec_limits", self.exec_limits_box.limits, ExecLimitsBox.limits_patch)
        self._field("web_fetch_networks", self.exec_limits_box.networks, ExecLimitsBox.networks_patch)

        def read() -> dict[str, str]:
            return {name: combo.currentData() for name, combo in self.policy_combos.items()}

        def patch(decisions: dict[str, str]) -> Patch:
            # Only the rows the person changed, over the policy as it is now: an "Always allow"
            # given while the dialog was open, and entries of tools not listed here (MCP…), stay.
            approval: dict[str, Any] = dict(self._engine.app_settings.tool_approval)
            for name, decision in decisions.items():
                if decision == self._approval_at_open.get(name):
                    continue
                if decision == DEFAULT_DECISIONS.get(name, "allow"):
                    approval.pop(name, None)
                else:
                    approval[name] = decision
            return {"app.toolApproval": approval}

        self._field("approval", read, patch)
        self.background_policy_combos = add_background_policy(page, layout, self.policy_table, names,
                                                              self._engine.app_settings, self._field,
                                                              self._engine.exec_allow_possible)
        return page

    def _heartbeat_page(self) -> QWidget:
        heartbeat = self._config.gateway.heartbeat
        page = QWidget(self)
        form = _form(page)
        self.heartbeat_check = QCheckBox(translate("Settings", "Check HEARTBEAT.md periodically and run the tasks it lists"), page)
        self.heartbeat_check.setChecked(heartbeat.enabled)
        self.heartbeat_minutes_spin = _spin(page, 1, 7 * 24 * 60, max(1, round(heartbeat.interval_s / 60)),
                                            translate("Settings", " min"))
        self.heartbeat_minutes_spin.setEnabled(heartbeat.enabled)
        self.heartbeat_check.toggled.connect(self.heartbeat_minutes_spin.setEnabled)
        note = QLabel(translate("Settings", "Each check reads HEARTBEAT.md; when it lists no tasks nothing is sent to the model."),
                      page)
        note.setWordWrap(True)
        form.addRow("", self.heartbeat_check)
        form.addRow(translate("Settings", "Check every:"), self.heartbeat_minutes_spin)
        form.addRow("", note)
        self._field("heartbeat_enabled", self.heartbeat_check.isChecked,
                    lambda v: {"gateway.heartbeat.enabled": v})
        self._field("heartbeat_minutes", self.heartbeat_minutes_spin.value,
                    lambda v: {"gateway.heartbeat.intervalS": v * 60})
        self._machines_rows(page, form)
        return page

    def _machines_rows(self, page: QWidget, form: QFormLayout) -> None:
        """Which machine runs the heartbeat and scheduled jobs, when several share the workspace."""
        machines = self._engine.machines
        if not machines.in_use():
            return
        self.runner_combo = QComboBox(page)
        self.runner_combo.setObjectName("backgroundMachine")
        self.runner_combo.addItem(translate("Settings", "Automatically (the first machine that is on)"), "")
        for machine in machines.known():
            label = (translate("Settings", "This machine ({name})").format(name=machine.name)
                     if machine.machine_id == machines.machine_id else machine.name)
            self.runner_combo.addItem(label, machine.machine_id)
        self.runner_combo.setCurrentIndex(max(0, self.runner_combo.findData(machines.chosen() or "")))
        runner = machines.runner()
        now_runs = (translate("Settings", "Now: this machine runs them.") if runner.machine_id == machines.machine_id
                    else translate("Settings", "Now: {name} runs them.").format(name=runner.name))
        minutes = max(1, round(machines.takeover_s / 60))
        note = QLabel(translate("Settings", "This workspace is shared with other machines. {now} When the chosen machine "
                                "has not been seen for {minutes} min, another one takes over.").format(now=now_runs, minutes=minutes),
                      page)
        note.setWordWrap(True)
        form.addRow(translate("Settings", "Run them on:"), self.runner_combo)
        form.addRow("", note)
        self._field("background_machine", self.runner_combo.currentData,
                    lambda machine_id: {"workspace.backgroundMachine": machine_id or None})

    def _appearance_page(self) -> QWidget:
        desktop = self._engine.app_settings
        page = QWidget(self)
        form = _form(page)
        self.theme_combo = QComboBox(page)
        for mode in THEME_MODES:
            self.theme_combo.addItem(translate("Settings", THEME_LABELS[mode]), mode)
        self.theme_combo.setCurrentIndex(self.theme_combo.findData(desktop.theme))
        self.theme_combo.currentIndexChanged.connect(self._preview_theme)
        self.tray_check = QCheckBox(translate("Settings", "Keep running in the tray when the window is closed"), page)
        self.tray_check.setChecked(desktop.close_to_tray)
        self.notifications_check = QCheckBox(translate("Settings", "Notify me when a heartbeat or scheduled task has a result"), page)
        self.notifications_check.setChecked(desktop.notifications)
        self.language_combo = QComboBox(page)
        for code, name in language_names().items():
            self.language_combo.addItem(name, code)
        self.language_combo.setCurrentIndex(max(0, self.language_combo.findData(desktop.language)))
        language_note = QLabel(translate("Settings", "The language changes the next time nanobot Desktop starts."), page)
        form.addRow(translate("Settings", "Theme:"), self.theme_combo)
        form.addRow(translate("Settings", "Language:"), self.language_combo)
        form.addRow("", language_note)
        form.addRow("", self.tray_check)
        self.background_check = QCheckBox(translate("Settings", "Without a tray, keep running when the window is closed"),
                                           page)
        self.background_check.setObjectName("keepRunningWithoutTray")
        self.background_check.setChecked(bool(desktop.keep_running_without_tray))
        form.addRow("", self.background_check)
        self.tray_status = QLabel(tray_status_text(), page)
        self.tray_status.setObjectName("trayStatus")
        self.tray_status.setWordWrap(True)
        form.addRow(translate("Settings", "Tray:"), self.tray_status)
        form.addRow("", self.notifications_check)
        self.updates_check = QCheckBox(translate("Settings", "Check for updates once a day"), page)
        self.updates_check.setObjectName("checkForUpdates")
        self.updates_check.setToolTip(translate("Settings", "Asks the update server (signed metadata) once a day; "
                                                            "Help → Check for updates asks now"))
        self.updates_check.setChecked(desktop.check_for_updates)
        form.addRow("", self.updates_check)
        self.text_size_combo = QComboBox(page)
        for size in sorted({*TEXT_SIZES, desktop.text_size}):
            self.text_size_combo.addItem(f"{size} %", size)
        self.text_size_combo.setCurrentIndex(self.text_size_combo.findData(desktop.text_size))
        self.text_size_combo.setToolTip(translate("Settings", "The size of all text (Ctrl++ and Ctrl+- change it too)"))
        self.announcements_combo = QComboBox(page)
        for level in ANNOUNCEMENT_LEVELS:
            self.announcements_combo.addItem(translate("Settings", ANNOUNCEMENT_LABELS[level]), level)
        self.announcements_combo.setCurrentIndex(max(0, self.announcements_combo.findData(desktop.announcements)))
        self.high_contrast_combo = QComboBox(page)
        for choice in HIGH_CONTRAST_MODES:
            self.high_contrast_combo.addItem(translate("Settings", HIGH_CONTRAST_LABELS[choice]), choice)
        self.high_contrast_combo.setCurrentIndex(max(0, self.high_contrast_combo.findData(desktop.high_contrast)))
        form.addRow(translate("Settings", "High contrast:"), self.high_contrast_combo)
        form.addRow(translate("Settings", "Text size:"), self.text_size_combo)
        form.addRow(translate("Settings", "Screen reader announcements:"), self.announcements_combo)
        self._field("text_size", self.text_size_combo.currentData, lambda v: {"app.textSize": v})
        self._field("high_contrast", self.high_contrast_combo.currentData, lambda v: {"app.highContrast": v})
        self._field("announcements", self.announcements_combo.currentData, lambda v: {"app.announcements": v})
        self._field("theme", self.theme_combo.currentData, lambda v: {"app.theme": v})
        self._field("language", self.language_combo.currentData, lambda v: {"app.language": v})
        self._field("close_to_tray", self.tray_check.isChecked, lambda v: {"app.closeToTray": v})
        self._field("keep_running_without_tray", self.background_check.isChecked,
                    lambda v: {"app.keepRunningWithoutTray": v})
        self._field("notifications", self.notifications_check.isChecked, lambda v: {"app.notifications": v})
        self._field("check_for_updates", self.updates_check.isChecked, lambda v: {"app.checkForUpdates": v})
        return page

    def _preview_theme(self) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, self.theme_combo.currentData())
            self._previewed_theme = True

    # --- save / cancel ------------------------------------------------------------------------------------

    def changed_fields(self) -> list[str]:
        return [name for name, (read, _write) in self._fields.items() if read() != self._initial[name]]

    def build_patch(self) -> Patch:
        """The settings to change: one entry per path of every field the person changed."""
        patch: Patch = {}
        for name in self.changed_fields():
            read, make = self._fields[name]
            patch.update(make(read()))
        return patch

    def save(self) -> bool:
        """Validate, save through the engine, emit `applied` and close; False (dialog stays) on a problem."""
        self.save_error.show_error(None)
        if "provider" in self.changed_fields() and not all([
                self.provider_form.validate(),
                self.more_providers.validate(self.provider_form.choice(), self._providers_v03)]):
            self.tabs.setCurrentIndex(0)
            self.save_error.show_error(translate("Settings", "Fix the problems shown on the Provider page before saving."))
            return False
        try:
            patch = self.build_patch()
            if patch:
                self._engine.update_config(patch)
            config = self._engine.config
        except (ConfigError, OSError, ValueError) as error:
            log.warning("settings not saved: %s", error)
            self.save_error.show_error(translate("Settings", "The settings were not saved: {reason}").format(
                reason=one_line(error)))
            return False
        self._previewed_theme = False  # the new theme stays
        self.applied.emit(config)
        self.accept()
        return True

    def done(self, result: int) -> None:  # Qt override: every way of closing ends here
        self.provider_form.cancel_check()
        if self._previewed_theme:  # cancelled after a live preview: put the old theme back
            app = QApplication.instance()
            if isinstance(app, QApplication):
                apply_theme(app, self._theme_at_open)
            self._previewed_theme = False
        super().done(result)


def tray_status_text() -> str:
    """Whether this desktop shows tray icons, and what closing the window does about it."""
    from PySide6.QtWidgets import QSystemTrayIcon

    if QSystemTrayIcon.isSystemTrayAvailable():
        return translate("Settings", "Available: nanobot waits in the tray when the window is closed.")
    return translate("Settings", "Not available on this desktop. Closing the window asks once whether to keep running "
                                 "in the background; “Show or Hide the Window” in the app's menu entry, or "
                                 "nanobot-desktop --toggle, brings it back.")


def _form(page: QWidget) -> QFormLayout:
    form = QFormLayout(page)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
    return form


def _spin(parent: QWidget, low: int, high: int, value: int, suffix: str = "") -> QSpinBox:
    spin = QSpinBox(parent)
    spin.setRange(min(low, value), max(high, value))  # an unusual stored value is shown, not clamped
    spin.setValue(value)
    if suffix:
        spin.setSuffix(suffix)
    return spin
