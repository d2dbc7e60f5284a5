"""Settings → Tools: what background work may do without the person, and how long it waits.

Background work (heartbeat, scheduled tasks, subagents) has its own per-tool policy, separate from the
chat's: "Ask first" there means a notification with Allow once / Deny, and an unanswered ask counts as
Deny after the expiry set here. The policy is one more column of the chat's policy table (one row per
tool, both answers side by side). Kept out of dialog.py so that file stays small: the dialog calls
`add_background_policy` and gets two more fields saved with the rest.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QComboBox, QFormLayout, QHeaderView, QSpinBox, QTableWidget, QVBoxLayout, QWidget

from nanobot_desktop.engine.tools.policy import DEFAULT_DECISIONS, exec_allow_possible

LABELS = {"allow": "Allow", "ask": "Ask first (notify me)", "deny": "Deny"}
HEADER = "In background work"


def add_background_policy(page: QWidget, layout: QVBoxLayout, table: QTableWidget, names: list[str], config: Any,
                          field: Callable[[str, Callable[[], Any], Callable[[Any, Any], None]], None]) -> dict[str, QComboBox]:
    """Add the background column to the policy `table` and the expiry under it; register both with `field`."""
    column = table.columnCount()
    table.setColumnCount(column + 1)
    table.setHorizontalHeaderItem(column, type(table.horizontalHeaderItem(0))(HEADER))
    header_tip = "Heartbeat, scheduled tasks and subagents, while you may be away: ask = a notification"
    table.horizontalHeaderItem(column).setToolTip(header_tip)
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
        table.setCellWidget(row, column, combo)
    table.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    expiry = QSpinBox(page)
    expiry.setObjectName("backgroundApprovalExpiry")
    expiry.setRange(1, 24 * 60)
    expiry.setSuffix(" min")
    expiry.setValue(max(1, round(config.desktop.background_approval_expiry_s / 60)))
    expiry.setToolTip("Background work never waits for ever: the tool call is then denied, and the run goes on")
    form = QFormLayout()
    form.addRow("Background work: an unanswered ask counts as Deny after", expiry)
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
    return combos
