"""The sandbox in the GUI: the exec approval card's containment line and Settings → Tools' sandbox box."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.engine.tools import sandbox
from nanobot_desktop.engine.tools.sandbox import SandboxSupport, sandbox_support
from nanobot_desktop.gui.chat.cards import ApprovalCardWidget
from nanobot_desktop.gui.chat.model import ApprovalCard, ChatModel
from nanobot_desktop.gui.chat.view import ChatView
from nanobot_desktop.gui.settings.dialog import SettingsDialog

LEFT = Qt.MouseButton.LeftButton
NOT_SANDBOXED = "not sandboxed: this kernel has no Landlock (Linux 5.13 or newer needed)"


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "_SUPPORT", SandboxSupport(False, NOT_SANDBOXED))


def exec_card(qtbot, line: str) -> ApprovalCardWidget:
    chat = ChatView(ChatModel())
    qtbot.addWidget(chat)
    chat.resize(640, 480)
    chat.model().append(ApprovalCard(call_id="c1", tool="exec", arguments={"command": "ls"}, command="ls",
                                     working_dir="/ws", sandbox=line))
    chat.show()
    qtbot.waitExposed(chat)
    card = chat.widget_for_row(0)
    assert isinstance(card, ApprovalCardWidget)
    return card


def test_the_exec_card_says_not_sandboxed_and_offers_no_always_allow(qtbot, no_sandbox) -> None:
    card = exec_card(qtbot, NOT_SANDBOXED)
    assert card.sandbox_label is not None
    assert card.sandbox_label.text() == "Not sandboxed: this kernel has no Landlock (Linux 5.13 or newer needed)"
    assert not card.allow_always_button.isEnabled() and card.allow_once_button.isEnabled()


@pytest.mark.skipif(not sandbox_support().available, reason=sandbox_support().summary)
def test_the_exec_card_says_how_the_command_is_sandboxed(qtbot) -> None:
    card = exec_card(qtbot, sandbox_support().summary + "; network off")
    assert card.sandbox_label is not None and card.sandbox_label.text().startswith("Sandboxed (Landlock ABI")
    assert card.allow_always_button.isEnabled()


def test_settings_without_a_sandbox_say_so_and_refuse_allow_for_exec(qtbot, make_engine, no_sandbox) -> None:
    dialog = SettingsDialog(make_engine())
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    assert dialog.sandbox_box.status_label.text().startswith("Not sandboxed: this kernel has no Landlock")
    assert not dialog.sandbox_box.network_check.isEnabled()
    combo = dialog.policy_combos["exec"]
    assert not combo.model().item(combo.findData("allow")).isEnabled()
    assert combo.model().item(combo.findData("ask")).isEnabled()


@pytest.mark.skipif(not sandbox_support().available, reason=sandbox_support().summary)
def test_sandbox_settings_are_saved_and_reach_the_exec_tool(qtbot, make_engine) -> None:
    engine = make_engine()
    dialog = SettingsDialog(engine)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    dialog.tabs.setCurrentIndex(2)
    assert dialog.sandbox_box.status_label.text().startswith("Sandboxed (Landlock ABI")
    qtbot.mouseClick(dialog.sandbox_box.always_check, LEFT)
    qtbot.mouseClick(dialog.sandbox_box.network_check, LEFT)
    qtbot.mouseClick(dialog.save_button, LEFT)
    on_disk = json.loads(engine.config_path.read_text())
    assert "sandboxAlways" not in on_disk["tools"]["exec"] and "network" not in on_disk["tools"]["exec"]
    app_file = json.loads((engine.config_path.parent / "desktop.json").read_text())
    assert app_file["execSandboxAlways"] is True and app_file["execNetwork"] is False
    exec_tool = engine.tools.get("exec")
    assert (exec_tool.sandbox_always, exec_tool.network) == (True, False)


@pytest.mark.skipif(not sandbox_support().available, reason=sandbox_support().summary)
def test_command_limits_and_web_fetch_networks_are_saved_and_reach_the_tools(qtbot, make_engine) -> None:
    engine = make_engine()
    dialog = SettingsDialog(engine)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    dialog.tabs.setCurrentIndex(2)
    reach = dialog.sandbox_box.reach_label.text()
    assert "D-Bus" in reach and "ssh-agent" in reach and "API keys" in reach
    box = dialog.exec_limits_box
    from nanobot_desktop.engine.tools.sandbox import process_limit_mechanism
    expected = {"cgroup v1": "cgroup v1 pids", "cgroup v2": "cgroup v2", "rlimit": "RLIMIT_NPROC"}
    assert expected[process_limit_mechanism()] in box.mechanism_label.text()  # which bound applies, said
    for key, value in (("memoryMb", 512), ("processes", 64)):
        spin = box.spins[key]
        spin.setFocus()
        spin.selectAll()
        qtbot.keyClicks(spin, str(value))
    box.networks_edit.setFocus()
    qtbot.keyClicks(box.networks_edit, "192.168.1.0/24, 127.0.0.1")
    qtbot.mouseClick(dialog.save_button, LEFT)
    app_file = json.loads((engine.config_path.parent / "desktop.json").read_text())
    assert app_file["execLimits"]["memoryMb"] == 512 and app_file["execLimits"]["processes"] == 64
    assert app_file["webFetchAllowedNetworks"] == ["192.168.1.0/24", "127.0.0.1"]
    limits = engine.tools.get("exec").limits
    assert (limits.memory_mb, limits.processes, limits.cpu_s) == (512, 64, 300)
    assert engine.tools.get("web_fetch").allowed_networks == ["192.168.1.0/24", "127.0.0.1"]
