"""App-first, as a person does it: first-run onboarding with a discovered local server, or Settings
after `nanobot-desktop onboard` — then the real nanobot CLIs (0.1.4.post4, 0.3.5) run on that config,
say nothing about it, and their `onboard` refresh keeps key, model and provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.cli import main as desktop_cli
from nanobot_desktop.engine.config import load_config
from nanobot_desktop.engine.llm.registry import resolve_provider
from nanobot_desktop.engine.runtime import Engine
from tests.engine.cli.test_cli_compat import VERSIONS, cli_turn, refresh
from tests.gui.window_fixtures import open_window
from tests.gui.settings import test_onboarding as onboarding
from tests.gui.settings import test_settings as settings

LEFT = Qt.MouseButton.LeftButton
__all__ = ["open_window"]  # a fixture used by name


def _both_clis_run_and_keep_it(home: Path, fake_openai, expected: tuple[str, str, str, str]) -> None:
    config_path = home / ".nanobot" / "config.json"
    for index, version in enumerate(VERSIONS):
        cli_turn(version, home, fake_openai, f"answer {index}")
        refresh(version, home)
        resolved = resolve_provider(load_config(config_path))
        assert (resolved.name, resolved.api_key, resolved.api_base, resolved.model) == expected, version


@pytest.mark.heavy
@pytest.mark.slow
def test_a_local_server_chosen_in_onboarding_runs_in_both_clis(qtbot, qloop, fake_openai):
    home = Path.home()
    config_path = home / ".nanobot" / "config.json"
    fake_openai.models = ["fake-model"]
    dialog = onboarding.make_dialog(qtbot, config_path, candidates=[("Ollama", fake_openai.base_url)])
    onboarding.retype(qtbot, dialog.workspace_edit, str(home / "ws"))
    onboarding.scan_on_model_page(qtbot, dialog)
    dialog.server_list.setCurrentRow(0)
    with qtbot.waitSignal(dialog.finished_setup, timeout=5000):
        qtbot.mouseClick(dialog.finish_button, LEFT)
    on_disk = json.loads(config_path.read_text(encoding="utf-8"))
    assert on_disk["agents"]["defaults"]["provider"] == "auto" and "ollama" not in on_disk["providers"]
    assert list(on_disk) == ["agents", "channels", "providers", "gateway", "tools"]
    _both_clis_run_and_keep_it(home, fake_openai, ("custom", "no-key", fake_openai.base_url, "fake-model"))


@pytest.mark.heavy
@pytest.mark.slow
def test_a_provider_set_in_settings_after_app_onboard_runs_in_both_clis(qtbot, qloop, fake_openai):
    home = Path.home()
    assert desktop_cli(["onboard"]) == 0
    engine = Engine.open(home / ".nanobot" / "config.json")
    dialog = settings.make_dialog(qtbot, engine)
    form = dialog.provider_form
    settings.choose(form.preset_combo, "custom")
    settings.retype(qtbot, form.base_url_edit, fake_openai.base_url)
    settings.retype(qtbot, form.api_key_edit, "sk-from-settings")
    form.model_combo.setFocus()
    form.model_combo.lineEdit().selectAll()
    qtbot.keyClicks(form.model_combo.lineEdit(), "fake-model")
    with qtbot.waitSignal(dialog.applied, timeout=5000):
        qtbot.mouseClick(dialog.save_button, LEFT)
    _both_clis_run_and_keep_it(home, fake_openai, ("custom", "sk-from-settings", fake_openai.base_url, "fake-model"))


@pytest.mark.slow
def test_the_app_window_starts_on_a_config_made_by_nanobot_035_and_runs_a_turn(qtbot, open_window, fake_openai):
    from tests.gui.window_fixtures import send, wait_idle
    from tests.reference_cli import onboard

    home = Path.home()
    result = onboard(VERSIONS[1], home)
    assert result.returncode == 0, result.stdout + result.stderr
    config_path = home / ".nanobot" / "config.json"
    data = json.loads(config_path.read_text(encoding="utf-8"))
    assert data["providers"]["custom"] == {**data["providers"]["custom"], "apiKey": None, "apiBase": None}
    data["providers"]["custom"].update(apiKey="sk-fake", apiBase=fake_openai.base_url)
    data["agents"]["defaults"].update(provider="custom", model="fake-model")
    config_path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    window = open_window(Engine.open(config_path))
    fake_openai.add_text("hello from the window")
    send(qtbot, window, "hi")
    wait_idle(qtbot, window)
    assert window.chat.model.items()[-1].text == "hello from the window"
    assert json.loads(config_path.read_text(encoding="utf-8")) == data  # nothing rewritten
