"""Settings → Tools: what background work may do without the person, and how long it waits.

Background work (heartbeat, scheduled tasks, subagents) has its own per-tool policy, separate from the
chat's: "Ask first" there means a notification with Allow once / Deny, and an unanswered ask counts as
Deny after the expiry set here. The policy is one more column of the chat's policy table (one row per
tool, both answers side by side). Kept out of dialog.py so that file stays small: the dialog calls
`add_background_policy` and gets two more fields saved with the rest.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QT_TRANSLATE_NOOP
from PySide6.QtWidgets import (QComboBox, QFormLayout, QHeaderView, QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from nanobot_desktop.engine import DEFAULT_DECISIONS, exec_allow_possible
from nanobot_desktop.gui.common.i18n import translate

LABELS = {"allow": QT_TRANSLATE_NOOP("Settings", "Allow"), "ask": QT_TRANSLATE_NOOP("Settings", "Ask first (notify me)"),
          "deny": QT_TRANSLATE_NOOP("Settings", "Deny")}  # translated where shown
HEADER = QT_TRANSLATE_NOOP("Settings", "In background work")


def add_background_policy(page: QWidget, layout: QVBoxLayout, table: QTableWidget, names: list[str], app: Any,
                          field: Callable[[str, Callable[[], Any], Callable[[Any], dict[str, Any]]], None],
                          exec_allowed: Callable[[], bool] = exec_allow_possible) -> dict[str, QComboBox]:
    """Add the background column to the policy `table` and the expiry under it; register both with
    `field(name, read, patch)` (the patch goes to desktop.json through Engine.update_config)."""
    column = table.columnCount()
    table.setColumnCount(column + 1)
    header_item = QTableWidgetItem(translate("Settings", HEADER))
    header_item.setToolTip(translate("Settings", "Heartbeat, scheduled tasks and subagents, while you may be away: ask = a notification"))
    table.setHorizontalHeaderItem(column, header_item)
    combos: dict[str, QComboBox] = {}
    current = dict(app.background_tool_approval)
    for row, name in enumerate(names):
        combo = QComboBox(table)
        combo.setObjectName(f"backgroundPolicy_{name}")
        for decision, label in LABELS.items():
            combo.addItem(translate("Settings", label), decision)
        combo.setCurrentIndex(combo.findData(current.get(name, DEFAULT_DECISIONS.get(name, "allow"))))
        if name == "exec" and not exec_allowed():  # not sandboxed: exec always asks, here too
            combo.model().item(combo.findData("allow")).setEnabled(False)  # type: ignore[attr-defined]
        combos[name] = combo
        table.setCellWidget(row, column, combo)
    table.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    expiry = QSpinBox(page)
    expiry.setObjectName("backgroundApprovalExpiry")
    expiry.setRange(1, 24 * 60)
    expiry.setSuffix(translate("Settings", " min"))
    expiry.setValue(max(1, round(app.background_approval_expiry_s / 60)))
    expiry.setToolTip(translate("Settings", "Background work never waits for ever: the tool call is then denied, and the run goes on"))
    form = QFormLayout()
    form.addRow(translate("Settings", "Background work: an unanswered ask counts as Deny after"), expiry)
    layout.addLayout(form)

    def read() -> dict[str, str]:
        return {name: combo.currentData() for name, combo in combos.items()}

    def patch(decisions: dict[str, str]) -> dict[str, Any]:
        # only the rows the person changed, over the policy as it is now (entries of other tools stay)
        policy: dict[str, Any] = dict(app.background_tool_approval)
        for name, decision in decisions.items():
            if decision == current.get(name, DEFAULT_DECISIONS.get(name, "allow")):
                continue
            if decision == DEFAULT_DECISIONS.get(name, "allow"):
                policy.pop(name, None)
            else:
                policy[name] = decision
        return {"app.backgroundToolApproval": policy}

    field("background_approval", read, patch)
    field("background_expiry", expiry.value, lambda minutes: {"app.backgroundApprovalExpiryS": minutes * 60})
    return combos
