"""Settings → Tools, second half: what background work may do without the person, and how long it waits.

Background work (heartbeat, scheduled tasks, subagents) has its own per-tool policy, separate from the
chat's: "Ask first" there means a notification with Allow once / Deny, and an unanswered ask counts as
Deny after the expiry set here. Kept out of dialog.py so that file stays small; the dialog calls
`add_background_policy` and gets two more fields saved with the rest.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import (QComboBox, QFormLayout, QHeaderView, QLabel, QSpinBox, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from nanobot_desktop.engine.tools.policy import DEFAULT_DECISIONS, exec_allow_possible

LABELS = {"allow": "Allow", "ask": "Ask first (notify me)", "deny": "Deny"}


def add_background_policy(page: QWidget, layout: QVBoxLayout, names: list[str], config: Any,
                          field: Callable[[str, Callable[[], Any], Callable[[Any, Any], None]], None]) -> QTableWidget:
    """Append the background policy table and the expiry to `layout`; register both with `field`."""
    title = QLabel("<b>Background work</b> — heartbeat, scheduled tasks and subagents, while you may be away:", page)
    title.setWordWrap(True)
    table = QTableWidget(len(names), 2, page)
    table.setObjectName("backgroundPolicyTable")
    table.setHorizontalHeaderLabels(["Tool", "When background work calls it"])
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
    combos: dict[str, QComboBox] = {}
    current = config.tools.background_approval
    for row, name in enumerate(names):
        combo = QComboBox(table)
        combo.setObjectName(f"backgroundPolicy_{name}")
        for decision, label in LABELS.items():
            combo.addItem(label, decision)
        combo.setCurrentIndex(combo.findData(current.get(name, DEFAULT_DECISIONS.get(name, "allow"))))
        if name == "exec" and not exec_allow_possible():  # not sandboxed: exec always asks, here too
            combo.model().item(combo.findData("allow")).setEnabled(False)  # type: ignore[attr-defined]
        combos[name] = combo
        table.setItem(row, 0, QTableWidgetItem(name))
        table.setCellWidget(row, 1, combo)
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
    expiry = QSpinBox(page)
    expiry.setObjectName("backgroundApprovalExpiry")
    expiry.setRange(1, 24 * 60)
    expiry.setSuffix(" min")
    expiry.setValue(max(1, round(config.desktop.background_approval_expiry_s / 60)))
    form = QFormLayout()
    form.addRow("An unanswered ask counts as Deny after:", expiry)
    layout.addWidget(title)
    layout.addWidget(table, 1)
    layout.addLayout(form)

    def read() -> dict[str, str]:
        return {name: combo.currentData() for name, combo in combos.items()}

    def write(config: Any, decisions: dict[str, str]) -> None:
        policy = dict(config.tools.background_approval)  # entries for tools not listed here stay
        for name, decision in decisions.items():
            if decision == DEFAULT_DECISIONS.get(name, "allow"):
                policy.pop(name, None)
            else:
                policy[name] = decision
        config.tools.background_approval = policy

    field("background_approval", read, write)
    field("background_expiry", expiry.value, lambda c, v: setattr(c.desktop, "background_approval_expiry_s", v * 60))
    return table
