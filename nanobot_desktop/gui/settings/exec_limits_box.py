"""Settings → Tools: the bounds of one shell command in the sandbox, and the networks web_fetch may reach.

Both are the app's own settings (desktop.json `execLimits`, `webFetchAllowedNetworks`): the CLI has
no sandbox and no such guard. A box of its own so the settings dialog only places it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QSpinBox, QWidget

from nanobot_desktop.engine import AppSettings, process_limit_mechanism
from nanobot_desktop.gui.common.i18n import translate

# (desktop.json key, label, unit suffix, maximum)
_LIMITS = (
    ("memoryMb", QT_TRANSLATE_NOOP("Settings", "Memory per process"), QT_TRANSLATE_NOOP("Settings", " MB"), 1_048_576),
    ("processes", QT_TRANSLATE_NOOP("Settings", "Processes"), "", 1_000_000),
    ("openFiles", QT_TRANSLATE_NOOP("Settings", "Open files per process"), "", 1_048_576),
    ("cpuS", QT_TRANSLATE_NOOP("Settings", "CPU time per process"), QT_TRANSLATE_NOOP("Settings", " s"), 86_400),
    ("fileSizeMb", QT_TRANSLATE_NOOP("Settings", "Largest file written"), QT_TRANSLATE_NOOP("Settings", " MB"), 1_048_576),
)


class ExecLimitsBox(QGroupBox):
    """Spin boxes for the per-call limits (0: none) and a line of networks web_fetch may reach."""

    def __init__(self, app: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(translate("Settings", "Command limits"), parent)
        limits = app.exec_limits
        current = {"memoryMb": limits.memory_mb, "processes": limits.processes, "openFiles": limits.open_files,
                   "cpuS": limits.cpu_s, "fileSizeMb": limits.file_size_mb}
        layout = QFormLayout(self)
        note = QLabel(translate("Settings", "Each sandboxed command, with all it starts, stops at these limits and the "
                                            "agent is told which one (0: no limit)."), self)
        note.setWordWrap(True)
        layout.addRow(note)
        mechanism = process_limit_mechanism()
        how = {"cgroup v2": translate("Settings", "Processes are counted by a cgroup of each call (cgroup v2, delegated)."),
               "cgroup v1": translate("Settings", "Processes are counted by a cgroup of each call (cgroup v1 pids)."),
               }.get(mechanism, translate("Settings", "Processes are counted per user (RLIMIT_NPROC); no cgroup can be "
                                                     "made here, and the limit does not bind root."))
        self.mechanism_label = QLabel(how, self)
        self.mechanism_label.setObjectName("processLimitMechanism")
        self.mechanism_label.setWordWrap(True)
        layout.addRow(self.mechanism_label)
        self.spins: dict[str, QSpinBox] = {}
        for key, label, suffix, maximum in _LIMITS:
            spin = QSpinBox(self)
            spin.setObjectName(f"execLimit_{key}")
            spin.setRange(0, maximum)
            spin.setSuffix(translate("Settings", suffix) if suffix else "")
            spin.setValue(current[key])
            spin.setAccessibleName(translate("Settings", label))
            self.spins[key] = spin
            layout.addRow(translate("Settings", label), spin)
        self.networks_edit = QLineEdit(", ".join(app.web_fetch_allowed_networks), self)
        self.networks_edit.setObjectName("webFetchAllowedNetworks")
        self.networks_edit.setPlaceholderText(translate("Settings", "none (e.g. 192.168.1.0/24, 127.0.0.1)"))
        self.networks_edit.setToolTip(translate("Settings", "web_fetch refuses loopback, private and link-local "
                                                            "addresses unless a network here holds them."))
        self.networks_edit.setAccessibleName(translate("Settings", "Local networks web_fetch may reach"))
        layout.addRow(translate("Settings", "Local networks web_fetch may reach"), self.networks_edit)

    def limits(self) -> dict[str, int]:
        return {key: spin.value() for key, spin in self.spins.items()}

    def networks(self) -> list[str]:
        return [part.strip() for part in self.networks_edit.text().replace(";", ",").split(",") if part.strip()]

    @staticmethod
    def limits_patch(values: dict[str, int]) -> dict[str, Any]:
        return {"app.execLimits": dict(values)}

    @staticmethod
    def networks_patch(values: list[str]) -> dict[str, Any]:
        return {"app.webFetchAllowedNetworks": list(values)}
