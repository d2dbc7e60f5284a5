"""Settings → Tools: the background policy (separate from the chat's) and the approval expiry."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from tests.gui.settings.test_settings import choose, make_dialog, open_engine

LEFT = Qt.MouseButton.LeftButton


def test_background_policy_and_expiry_are_saved_apart_from_the_chat_policy(qtbot, tmp_path, fake_openai):
    engine = open_engine(tmp_path, fake_openai.base_url)
    dialog = make_dialog(qtbot, engine)
    dialog.tabs.setCurrentIndex(2)
    table = dialog.policy_table
    assert table.horizontalHeaderItem(3).text() == "In background work"
    combos = {table.item(row, 0).text(): table.cellWidget(row, 3) for row in range(table.rowCount())}
    assert combos == dialog.background_policy_combos
    assert combos["exec"].currentData() == "ask" and combos["read_file"].currentData() == "allow"  # defaults
    choose(combos["exec"], "deny")
    choose(combos["web_fetch"], "ask")
    expiry = dialog.findChild(type(dialog.heartbeat_minutes_spin), "backgroundApprovalExpiry")
    assert expiry.value() == 30
    expiry.setValue(5)
    with qtbot.waitSignal(dialog.applied, timeout=5000):
        qtbot.mouseClick(dialog.save_button, LEFT)
    app = json.loads((engine.config_path.parent / "desktop.json").read_text(encoding="utf-8"))
    assert app["backgroundToolApproval"] == {"exec": "deny", "web_fetch": "ask"}
    assert app["backgroundApprovalExpiryS"] == 300
    assert "exec" not in app.get("toolApproval", {})  # the chat policy is untouched
    assert engine.background_policy.decision_for("exec") == "deny"
    assert engine.policy.decision_for("exec") == "ask"
