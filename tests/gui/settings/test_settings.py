"""SettingsDialog and the provider form: round trip to config.json, endpoint checks, validation."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QDialog, QLineEdit

from nanobot_desktop.engine.config import load_config
from nanobot_desktop.engine.llm.registry import resolve_provider
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.gui.settings.provider_choice import base_url_problem
from nanobot_desktop.gui.settings.dialog import SettingsDialog
from nanobot_desktop.gui.common.palette import is_dark
from nanobot_desktop.gui.common.theme import apply_theme, current_theme_mode
from tests.conftest import write_test_config

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def restore_theme(qapp):
    style, palette = qapp.style().name(), QPalette(qapp.palette())
    yield
    qapp.setStyle(style)
    qapp.setPalette(palette)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def open_engine(tmp_path: Path, base_url: str, **extra) -> Engine:
    """An engine whose config.json also holds keys this app does not know, plus `extra` edits."""
    path = write_test_config(tmp_path / "cfg" / "config.json", base_url, tmp_path / "ws")
    data = json.loads(path.read_text())
    data["futureFeature"] = {"enabled": True, "level": 3}
    data["agents"]["defaults"]["someNewerSetting"] = "kept"
    data["channels"] = {"telegram": {"enabled": False, "token": "123:abc", "allowFrom": ["me"]}}
    for dotted, value in extra.items():
        *parents, leaf = dotted.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    path.write_text(json.dumps(data, indent=2))
    return Engine.open(path)


def make_dialog(qtbot, engine: Engine) -> SettingsDialog:
    dialog = SettingsDialog(engine)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    return dialog


def choose(combo, data) -> None:
    """Pick the entry whose data (or text) is `data`, as selecting it in the drop-down does."""
    index = combo.findData(data)
    combo.setCurrentIndex(index if index >= 0 else combo.findText(data))


def retype(qtbot, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


def run_check(qtbot, dialog: SettingsDialog, button) -> tuple[bool, str]:
    with qtbot.waitSignal(dialog.provider_form.check_finished, timeout=10_000) as blocker:
        qtbot.mouseClick(button, LEFT)
    return tuple(blocker.args)


# --- round trip ------------------------------------------------------------------------------------


def test_save_writes_the_changes_in_camel_case_and_keeps_unknown_keys(qtbot, qloop, qapp, fake_openai,
                                                                       tmp_path, restore_theme):
    fake_openai.models = ["fake-model", "gpt-4.1-mini", "llama3.2:3b"]
    engine = open_engine(tmp_path, fake_openai.base_url)
    dialog = make_dialog(qtbot, engine)
    form = dialog.provider_form

    retype(qtbot, form.api_key_edit, "sk-new-key")
    run_check(qtbot, dialog, form.refresh_button)
    form.model_combo.setCurrentIndex(form.model_combo.findText("gpt-4.1-mini"))
    dialog.tabs.setCurrentIndex(1)
    retype(qtbot, dialog.temperature_spin.lineEdit(), "0.7")
    qtbot.mouseClick(dialog.restrict_check, LEFT)
    dialog.tabs.setCurrentIndex(2)
    choose(dialog.policy_combos["read_file"], "deny")
    choose(dialog.policy_combos["exec"], "allow")
    dialog.tabs.setCurrentIndex(4)
    choose(dialog.theme_combo, "dark")  # applied at once
    assert is_dark(qapp.palette())

    with qtbot.waitSignal(dialog.applied, timeout=5000) as applied:
        qtbot.mouseClick(dialog.save_button, LEFT)

    on_disk = json.loads(engine.config_path.read_text(encoding="utf-8"))
    defaults = on_disk["agents"]["defaults"]
    assert defaults["model"] == "gpt-4.1-mini"
    assert defaults["temperature"] == 0.7
    assert defaults["provider"] == "auto"  # not forced: nanobot's rules pick providers.custom for it
    assert defaults["someNewerSetting"] == "kept"
    assert "max_tokens" not in defaults and "maxTokens" not in defaults  # only changed keys are written
    assert on_disk["providers"]["custom"] == {"apiKey": "sk-new-key", "apiBase": fake_openai.base_url}
    assert "approval" not in on_disk["tools"] and "desktop" not in on_disk  # the app's own: desktop.json
    assert on_disk["tools"]["restrictToWorkspace"] is True
    app_file = json.loads((engine.config_path.parent / "desktop.json").read_text(encoding="utf-8"))
    assert app_file["toolApproval"] == {"read_file": "deny", "exec": "allow"}  # only non-defaults
    assert app_file["theme"] == "dark"
    assert on_disk["futureFeature"] == {"enabled": True, "level": 3}
    assert on_disk["channels"]["telegram"] == {"enabled": False, "token": "123:abc", "allowFrom": ["me"]}
    # the engine adopted the new config, and the dialog closed with Save
    assert applied.args[0] is engine.config
    assert engine.policy.decision_for("read_file") == "deny" and engine.policy.decision_for("exec") == "allow"
    assert dialog.result() == QDialog.DialogCode.Accepted and not dialog.isVisible()
    assert is_dark(qapp.palette())  # the saved theme stays


def test_save_without_changes_keeps_auto_provider_odd_interval_and_env_only_key(qtbot, fake_openai, tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("NANOBOT_PROVIDERS__OPENROUTER__API_KEY", "sk-from-env")
    engine = open_engine(tmp_path, fake_openai.base_url, **{"agents.defaults.provider": "auto",
                                                           "gateway.heartbeat.intervalS": 90})
    before = json.loads(engine.config_path.read_text())
    dialog = make_dialog(qtbot, engine)
    assert dialog.changed_fields() == []
    qtbot.mouseClick(dialog.save_button, LEFT)
    after = json.loads(engine.config_path.read_text())
    assert after["agents"]["defaults"]["provider"] == "auto"
    assert after["gateway"]["heartbeat"]["intervalS"] == 90
    assert "sk-from-env" not in engine.config_path.read_text()  # the env's key is never written to the file
    assert after["futureFeature"] == before["futureFeature"]


def test_cancel_puts_the_theme_back_and_writes_nothing(qtbot, qapp, fake_openai, tmp_path, restore_theme):
    apply_theme(qapp, "light")  # what the app shows when Settings opens
    engine = open_engine(tmp_path, fake_openai.base_url)
    before = engine.config_path.read_bytes()
    dialog = make_dialog(qtbot, engine)
    dialog.tabs.setCurrentIndex(4)
    choose(dialog.theme_combo, "dark")
    assert is_dark(qapp.palette())
    choose(dialog.theme_combo, "light")
    assert not is_dark(qapp.palette())
    choose(dialog.theme_combo, "dark")
    qtbot.mouseClick(dialog.cancel_button, LEFT)
    assert not is_dark(qapp.palette()) and current_theme_mode(qapp) == "light"
    assert engine.config_path.read_bytes() == before
    assert dialog.result() == QDialog.DialogCode.Rejected


def test_heartbeat_and_agent_numbers_are_saved(qtbot, make_engine):
    engine = make_engine()
    dialog = make_dialog(qtbot, engine)
    dialog.tabs.setCurrentIndex(3)
    qtbot.mouseClick(dialog.heartbeat_check, LEFT)  # the test config has it off
    retype(qtbot, dialog.heartbeat_minutes_spin.lineEdit(), "45")
    dialog.tabs.setCurrentIndex(1)
    retype(qtbot, dialog.max_iterations_spin.lineEdit(), "12")
    retype(qtbot, dialog.exec_timeout_spin.lineEdit(), "90")
    dialog.reasoning_combo.setCurrentText("high")
    qtbot.mouseClick(dialog.save_button, LEFT)
    on_disk = json.loads(engine.config_path.read_text())
    assert on_disk["gateway"]["heartbeat"] == {"enabled": True, "intervalS": 2700}
    assert on_disk["agents"]["defaults"]["maxToolIterations"] == 12
    assert on_disk["agents"]["defaults"]["reasoningEffort"] == "high"
    assert on_disk["tools"]["exec"]["timeout"] == 90
    assert engine.heartbeat.interval_s == 2700


# --- provider form ------------------------------------------------------------------------------------


def test_test_connection_reports_the_model_count(qtbot, qloop, fake_openai, make_engine):
    fake_openai.models = ["a", "b", "fake-model"]
    dialog = make_dialog(qtbot, make_engine())
    ok, message = run_check(qtbot, dialog, dialog.provider_form.test_button)
    assert ok and message == "Connected: 3 models"
    assert dialog.provider_form.status.text() == "Connected: 3 models"
    assert dialog.provider_form.test_button.isEnabled()
    assert fake_openai.model_list_requests == 1


def test_a_wrong_key_gets_the_401_message(qtbot, qloop, fake_openai, make_engine):
    fake_openai.require_api_key = "sk-right"
    dialog = make_dialog(qtbot, make_engine())
    retype(qtbot, dialog.provider_form.api_key_edit, "sk-wrong")
    ok, message = run_check(qtbot, dialog, dialog.provider_form.test_button)
    assert not ok
    assert message.startswith("The endpoint rejected the API key (401)")
    assert "sk-wrong" not in message and "Traceback" not in message
    retype(qtbot, dialog.provider_form.api_key_edit, "sk-right")
    assert run_check(qtbot, dialog, dialog.provider_form.test_button) == (True, "Connected: 1 model")


def test_an_unreachable_endpoint_says_it_could_not_connect(qtbot, qloop, make_engine):
    dialog = make_dialog(qtbot, make_engine())
    url = f"http://127.0.0.1:{closed_port()}/v1"
    retype(qtbot, dialog.provider_form.base_url_edit, url)
    ok, message = run_check(qtbot, dialog, dialog.provider_form.test_button)
    assert not ok
    assert message == (f"Could not connect to {url} (connection refused). "
                       "Check that the server is running and that its URL in Settings is right.")


def test_refresh_models_fills_the_model_list_and_keeps_the_typed_model(qtbot, qloop, fake_openai, make_engine):
    fake_openai.models = ["qwen3:8b", "fake-model", "llama3.2:3b"]
    dialog = make_dialog(qtbot, make_engine())
    combo = dialog.provider_form.model_combo
    assert combo.count() == 0
    ok, message = run_check(qtbot, dialog, dialog.provider_form.refresh_button)
    assert ok and message == "Loaded 3 models from the endpoint"
    assert [combo.itemText(i) for i in range(combo.count())] == fake_openai.models
    assert combo.currentText() == "fake-model"


def test_an_invalid_base_url_blocks_save_with_an_inline_error(qtbot, fake_openai, make_engine):
    engine = make_engine()
    before = engine.config_path.read_bytes()
    dialog = make_dialog(qtbot, engine)
    form = dialog.provider_form
    retype(qtbot, form.base_url_edit, "localhost:1234/v1")
    with qtbot.assertNotEmitted(dialog.applied):
        qtbot.mouseClick(dialog.save_button, LEFT)
    assert form.base_url_error.isVisible()
    assert form.base_url_error.text() == "The base URL must start with http:// or https://"
    assert dialog.isVisible() and dialog.tabs.currentIndex() == 0
    assert engine.config_path.read_bytes() == before
    assert form.test_connection() is None  # no request is even tried
    retype(qtbot, form.base_url_edit, fake_openai.base_url)
    assert not form.base_url_error.isVisible()  # typing clears the message


@pytest.mark.parametrize("text, problem", [
    ("https://api.openai.com/v1", None),
    ("http://127.0.0.1:11434/v1", None),
    ("", "Enter the endpoint's base URL"),
    ("ftp://example.com", "must start with http://"),
    ("http://", "needs a host name"),
    ("http://localhost:99999/v1", "port"),
])
def test_base_url_rules(text, problem):
    found = base_url_problem(text)
    assert (found is None) if problem is None else (problem in found)


def test_a_local_server_preset_is_written_as_custom_with_a_placeholder_key(qtbot, make_engine):
    engine = make_engine()
    dialog = make_dialog(qtbot, engine)
    form = dialog.provider_form
    custom_url = form.base_url_edit.text()
    choose(form.preset_combo, "ollama")
    assert form.base_url_edit.text() == "http://localhost:11434/v1"
    assert form.api_key_edit.text() == "" and "Not needed" in form.api_key_edit.placeholderText()
    choose(form.preset_combo, "custom")
    assert form.base_url_edit.text() == custom_url and form.api_key_edit.text() == "sk-test"
    choose(form.preset_combo, "ollama")
    assert "providers.custom" in form.serving_label.text()
    form.model_combo.setEditText("llama3.2:3b")
    qtbot.mouseClick(dialog.save_button, LEFT)
    on_disk = json.loads(engine.config_path.read_text())
    assert on_disk["agents"]["defaults"]["provider"] == "auto"  # the rules pick providers.custom: nothing forced
    assert on_disk["providers"]["custom"] == {"apiKey": "no-key", "apiBase": "http://localhost:11434/v1"}
    assert "ollama" not in on_disk["providers"]
    resolved = resolve_provider(load_config(engine.config_path))
    assert (resolved.name, resolved.api_base, resolved.model) == ("custom", "http://localhost:11434/v1",
                                                                  "llama3.2:3b")
    reopened = make_dialog(qtbot, engine)  # shown again as the server it is, without the placeholder
    assert reopened.provider_form.preset_combo.currentData() == "ollama"
    assert reopened.provider_form.api_key_edit.text() == ""
    assert reopened.provider_form.serving_label.text().startswith("providers.custom serves 'llama3.2:3b'")


def test_a_provider_that_needs_a_key_refuses_to_save_without_one(qtbot, make_engine):
    engine = make_engine()
    dialog = make_dialog(qtbot, engine)
    form = dialog.provider_form
    choose(form.preset_combo, "openai")
    assert form.base_url_edit.text() == "https://api.openai.com/v1"
    form.model_combo.setEditText("gpt-4.1-mini")
    qtbot.mouseClick(dialog.save_button, LEFT)
    assert form.api_key_error.isVisible() and "OpenAI needs an API key" in form.api_key_error.text()
    assert json.loads(engine.config_path.read_text())["agents"]["defaults"]["provider"] == "custom"


def test_the_key_is_masked_until_shown(qtbot, make_engine):
    dialog = make_dialog(qtbot, make_engine())
    form = dialog.provider_form
    assert form.api_key_edit.echoMode() == QLineEdit.EchoMode.Password
    qtbot.mouseClick(form.show_key_button, LEFT)
    assert form.api_key_edit.echoMode() == QLineEdit.EchoMode.Normal and form.show_key_button.text() == "Hide"
    qtbot.mouseClick(form.show_key_button, LEFT)
    assert form.api_key_edit.echoMode() == QLineEdit.EchoMode.Password


def test_the_policy_table_lists_every_tool_with_its_default(qtbot, make_engine):
    engine = make_engine()
    dialog = make_dialog(qtbot, engine)
    table = dialog.policy_table
    names = [table.item(row, 0).text() for row in range(table.rowCount())]
    assert names == engine.tools.names()
    assert "cron" in names
    defaults = {table.item(row, 0).text(): table.item(row, 2).text() for row in range(table.rowCount())}
    assert defaults["exec"] == "Ask first" and defaults["read_file"] == "Allow"
    assert dialog.policy_combos["write_file"].currentData() == "ask"


def test_closing_during_a_check_cancels_it(qtbot, qloop, fake_openai, make_engine):
    dialog = make_dialog(qtbot, make_engine())
    task = dialog.provider_form.test_connection()
    assert task is not None and dialog.provider_form.busy
    assert not dialog.provider_form.test_button.isEnabled()
    dialog.reject()
    qtbot.waitUntil(task.done, timeout=5000)
    assert task.cancelled()
    assert dialog.provider_form.test_button.isEnabled()


def test_saving_settings_keeps_changes_made_while_it_was_open(qtbot, make_engine):
    """Settings sends only what the person changed: a heartbeat toggle and an *Always allow* given
    while the dialog was open survive its Save."""
    from nanobot_desktop.engine.events import ConfigChanged

    engine = make_engine()
    dialog = make_dialog(qtbot, engine)
    engine.update_config({"gateway.heartbeat.enabled": True})  # e.g. from the Heartbeat panel
    engine.runner.policy.allow_always("write_file")  # what "Always allow" on a card does
    engine.update_config({"app.toolApproval": engine.policy.overrides})
    seen: list[ConfigChanged] = []
    engine.bus.subscribe(lambda event: seen.append(event) if isinstance(event, ConfigChanged) else None)
    dialog.tabs.setCurrentIndex(1)
    retype(qtbot, dialog.temperature_spin.lineEdit(), "0.3")
    with qtbot.waitSignal(dialog.applied, timeout=5000):
        qtbot.mouseClick(dialog.save_button, LEFT)
    on_disk = json.loads(engine.config_path.read_text(encoding="utf-8"))
    assert on_disk["gateway"]["heartbeat"]["enabled"] is True
    assert on_disk["agents"]["defaults"]["temperature"] == 0.3
    assert engine.app_settings.tool_approval == {"write_file": "allow"}
    assert engine.policy.decision_for("write_file") == "allow"
    assert [event.paths for event in seen] == [("agents.defaults.temperature",)]
