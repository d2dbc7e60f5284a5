"""The Settings dialog: provider, agent, tool policy, heartbeat and appearance.

Why it is built this way:
- Non-modal: callers `open()` it and listen to `applied`; it never runs a nested event loop, so
  streaming and the heartbeat keep running while it is open (the Qt reference §3 explains why
  `exec()` inside a coroutine breaks qasync).
- It edits a deep copy of the engine's config, so unknown keys (a newer nanobot's, a person's) and
  values that came only from `NANOBOT_*` variables survive exactly as `save_config` keeps them.
- A field is written back only when the person changed it: opening Settings and pressing Save must
  not rewrite a value the widgets could only show approximately (an interval of 90 s, a provider
  chosen by "auto").
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QApplication, QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QHeaderView,
    QLabel, QSpinBox, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget,
)

from nanobot_desktop.engine.config import Config, ConfigError
from nanobot_desktop.engine.tools.policy import DEFAULT_DECISIONS, exec_allow_possible
from nanobot_desktop.gui.settings.sandbox_box import SandboxBox
from nanobot_desktop.gui.settings.provider_form import InlineError, ProviderForm, one_line, write_provider
from nanobot_desktop.gui.shell.theme import THEME_MODES, apply_theme, current_theme_mode

log = logging.getLogger(__name__)

REASONING_EFFORTS = ("none", "low", "medium", "high")
DECISION_LABELS = {"allow": "Allow", "ask": "Ask first", "deny": "Deny"}
THEME_LABELS = {"system": "Follow the system", "light": "Light", "dark": "Dark"}

# ------------------------------------------------------------------------------------ settings dialog


class SettingsDialog(QDialog):
    """Edits a copy of the engine's config; Save applies it through `Engine.apply_config`."""

    applied = Signal(object)
    """The new `Config`, after it was saved and the engine adopted it."""

    def __init__(self, engine: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self._engine = engine
        self._config: Config = engine.config.model_copy(deep=True)
        self._previewed_theme = False
        app = QApplication.instance()
        self._theme_at_open = current_theme_mode(app) if isinstance(app, QApplication) else "system"
        # name -> (read the widget, write the value into a config); written only when changed
        self._fields: dict[str, tuple[Callable[[], Any], Callable[[Config, Any], None]]] = {}

        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._provider_page(), "Provider")
        self.tabs.addTab(self._agent_page(), "Agent")
        self.tabs.addTab(self._tools_page(), "Tools")
        self.tabs.addTab(self._heartbeat_page(), "Heartbeat")
        self.tabs.addTab(self._appearance_page(), "Appearance")
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

    def _field(self, name: str, read: Callable[[], Any], write: Callable[[Config, Any], None]) -> None:
        self._fields[name] = (read, write)

    def _provider_page(self) -> QWidget:
        page = QWidget(self)
        self.provider_form = ProviderForm(page)
        self.provider_form.load(self._config)
        intro = QLabel("The OpenAI-compatible endpoint the agent talks to. Pick a preset, paste the key, "
                       "then choose a model from the endpoint's list.", page)
        intro.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(intro)
        layout.addWidget(self.provider_form)
        layout.addStretch(1)
        self._field("provider", self.provider_form.choice, write_provider)
        return page

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
        efforts = list(REASONING_EFFORTS)
        if d.reasoning_effort and d.reasoning_effort not in efforts:  # a value we do not know is still shown
            efforts.append(d.reasoning_effort)
        self.reasoning_combo.addItems(efforts)
        self.reasoning_combo.setCurrentText(d.reasoning_effort or "none")
        self.restrict_check = QCheckBox("Keep file and shell tools inside the workspace folder", page)
        self.restrict_check.setChecked(self._config.tools.restrict_to_workspace)
        self.exec_timeout_spin = _spin(page, 1, 86_400, self._config.tools.exec.timeout, " s")
        form.addRow("Temperature:", self.temperature_spin)
        form.addRow("Max tokens per reply:", self.max_tokens_spin)
        form.addRow("Max tool iterations:", self.max_iterations_spin)
        form.addRow("Memory window (messages):", self.memory_window_spin)
        form.addRow("Reasoning effort:", self.reasoning_combo)
        form.addRow("Shell command timeout:", self.exec_timeout_spin)
        form.addRow("", self.restrict_check)

        def defaults(config: Config) -> Any:
            return config.agents.defaults

        self._field("temperature", self.temperature_spin.value, lambda c, v: setattr(defaults(c), "temperature", v))
        self._field("max_tokens", self.max_tokens_spin.value, lambda c, v: setattr(defaults(c), "max_tokens", v))
        self._field("max_tool_iterations", self.max_iterations_spin.value,
                    lambda c, v: setattr(defaults(c), "max_tool_iterations", v))
        self._field("memory_window", self.memory_window_spin.value,
                    lambda c, v: setattr(defaults(c), "memory_window", v))
        self._field("reasoning_effort", self.reasoning_combo.currentText,
                    lambda c, v: setattr(defaults(c), "reasoning_effort", None if v == "none" else v))
        self._field("restrict", self.restrict_check.isChecked,
                    lambda c, v: setattr(c.tools, "restrict_to_workspace", v))
        self._field("exec_timeout", self.exec_timeout_spin.value, lambda c, v: setattr(c.tools.exec, "timeout", v))
        return page

    def _tools_page(self) -> QWidget:
        page = QWidget(self)
        names = [n for n in self._engine.tools.names() if not n.startswith("mcp_")]  # MCP tools: the MCP panel
        self.policy_table = QTableWidget(len(names), 3, page)
        self.policy_table.setHorizontalHeaderLabels(["Tool", "When the agent calls it", "Default"])
        self.policy_table.verticalHeader().hide()
        self.policy_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.policy_table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        self.policy_combos: dict[str, QComboBox] = {}
        approval = self._config.tools.approval
        for row, name in enumerate(names):
            default = DEFAULT_DECISIONS.get(name, "allow")
            combo = QComboBox(self.policy_table)
            for decision, label in DECISION_LABELS.items():
                combo.addItem(label, decision)
            combo.setCurrentIndex(combo.findData(approval.get(name, default)))
            if name == "exec" and not exec_allow_possible():  # not sandboxed: exec always asks
                combo.model().item(combo.findData("allow")).setEnabled(False)  # type: ignore[attr-defined]
            self.policy_combos[name] = combo
            self.policy_table.setItem(row, 0, QTableWidgetItem(name))
            self.policy_table.setCellWidget(row, 1, combo)
            self.policy_table.setItem(row, 2, QTableWidgetItem(DECISION_LABELS[default]))
        header = self.policy_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        note = QLabel("\"Ask first\" shows an approval card with the full arguments before the tool runs.", page)
        note.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(note)
        layout.addWidget(self.policy_table, 1)
        self.sandbox_box = SandboxBox(self._config, page)
        layout.addWidget(self.sandbox_box)
        self._field("exec_sandbox", self.sandbox_box.values, SandboxBox.write)

        def read() -> dict[str, str]:
            return {name: combo.currentData() for name, combo in self.policy_combos.items()}

        def write(config: Config, decisions: dict[str, str]) -> None:
            approval: dict[str, Any] = dict(config.tools.approval)  # entries for tools not listed here (MCP…) stay
            for name, decision in decisions.items():
                if decision == DEFAULT_DECISIONS.get(name, "allow"):
                    approval.pop(name, None)
                else:
                    approval[name] = decision
            config.tools.approval = approval

        self._field("approval", read, write)
        return page

    def _heartbeat_page(self) -> QWidget:
        heartbeat = self._config.gateway.heartbeat
        page = QWidget(self)
        form = _form(page)
        self.heartbeat_check = QCheckBox("Check HEARTBEAT.md periodically and run the tasks it lists", page)
        self.heartbeat_check.setChecked(heartbeat.enabled)
        self.heartbeat_minutes_spin = _spin(page, 1, 7 * 24 * 60, max(1, round(heartbeat.interval_s / 60)), " min")
        self.heartbeat_minutes_spin.setEnabled(heartbeat.enabled)
        self.heartbeat_check.toggled.connect(self.heartbeat_minutes_spin.setEnabled)
        note = QLabel("Each check reads HEARTBEAT.md; when it lists no tasks nothing is sent to the model.", page)
        note.setWordWrap(True)
        form.addRow("", self.heartbeat_check)
        form.addRow("Check every:", self.heartbeat_minutes_spin)
        form.addRow("", note)
        self._field("heartbeat_enabled", self.heartbeat_check.isChecked,
                    lambda c, v: setattr(c.gateway.heartbeat, "enabled", v))
        self._field("heartbeat_minutes", self.heartbeat_minutes_spin.value,
                    lambda c, v: setattr(c.gateway.heartbeat, "interval_s", v * 60))
        return page

    def _appearance_page(self) -> QWidget:
        desktop = self._config.desktop
        page = QWidget(self)
        form = _form(page)
        self.theme_combo = QComboBox(page)
        for mode in THEME_MODES:
            self.theme_combo.addItem(THEME_LABELS[mode], mode)
        self.theme_combo.setCurrentIndex(self.theme_combo.findData(desktop.theme))
        self.theme_combo.currentIndexChanged.connect(self._preview_theme)
        self.tray_check = QCheckBox("Keep running in the tray when the window is closed", page)
        self.tray_check.setChecked(desktop.close_to_tray)
        self.notifications_check = QCheckBox("Notify me when a heartbeat or scheduled task has a result", page)
        self.notifications_check.setChecked(desktop.notifications)
        form.addRow("Theme:", self.theme_combo)
        form.addRow("", self.tray_check)
        form.addRow("", self.notifications_check)
        self._field("theme", self.theme_combo.currentData, lambda c, v: setattr(c.desktop, "theme", v))
        self._field("close_to_tray", self.tray_check.isChecked, lambda c, v: setattr(c.desktop, "close_to_tray", v))
        self._field("notifications", self.notifications_check.isChecked,
                    lambda c, v: setattr(c.desktop, "notifications", v))
        return page

    def _preview_theme(self) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, self.theme_combo.currentData())
            self._previewed_theme = True

    # --- save / cancel ------------------------------------------------------------------------------------

    def changed_fields(self) -> list[str]:
        return [name for name, (read, _write) in self._fields.items() if read() != self._initial[name]]

    def build_config(self) -> Config:
        """A new Config: the copy taken at open, with every field the person changed written in."""
        config = self._config.model_copy(deep=True)
        for name in self.changed_fields():
            read, write = self._fields[name]
            write(config, read())
        return config

    def save(self) -> bool:
        """Validate, save through the engine, emit `applied` and close; False (dialog stays) on a problem."""
        self.save_error.show_error(None)
        if "provider" in self.changed_fields() and not self.provider_form.validate():
            self.tabs.setCurrentIndex(0)
            self.save_error.show_error("Fix the problems shown on the Provider page before saving.")
            return False
        try:
            config = self.build_config()
            self._engine.apply_config(config)
        except (ConfigError, OSError, ValueError) as error:
            log.warning("settings not saved: %s", error)
            self.save_error.show_error(f"The settings were not saved: {one_line(error)}")
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
