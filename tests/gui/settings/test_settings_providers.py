"""Several providers configured in Settings as a person does it: a default local server and a second
provider added beside it, each with its own key and URL, written in the config format the nanobot CLI
reads (agents.defaults.provider left "auto"), then a model of each picked in the model switcher and
reaching its own loopback endpoint with its own key."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.engine.config import load_config, patch_config_file
from nanobot_desktop.engine.llm.registry import resolve_provider
from nanobot_desktop.gui.settings.provider_choice import provider_patch
from nanobot_desktop.gui.settings.provider_form import ProviderChoice
from tests.fake_openai import FakeOpenAIServer, write_fake_config
from tests.gui.chat.test_model_switcher import action_named, open_switcher
from tests.gui.settings.test_settings import choose, retype
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle
from tests.reference_cli import POST4, V035, run_reference_cli

__all__ = ["open_window"]

LEFT = Qt.MouseButton.LeftButton
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing)")  # the popup menu, offscreen


def open_settings(qtbot, window):
    dialog = window.commands.open_settings()
    qtbot.waitExposed(dialog)
    return dialog


def pick(qtbot, window, menu, text: str) -> None:
    """Click `text` in the switcher's menu once every endpoint has answered (the menu is refilled then)."""
    switcher = window.composer.model_switcher
    qtbot.waitUntil(lambda: action_named(menu, text) is not None and switcher.fetch_task is not None
                    and switcher.fetch_task.done(), timeout=WAIT_MS)
    qtbot.mouseClick(menu, LEFT, pos=menu.actionGeometry(action_named(menu, text)).center())


def test_two_providers_set_in_settings_are_written_for_the_cli_and_each_serves_its_models(qtbot, open_window,
                                                                                        fake_openai, tmp_path):
    fake_openai.models = ["local-coder"]
    with FakeOpenAIServer(models=["or-model"]) as second:
        window = open_window()
        config_path = window.engine.config_path
        before = json.loads(config_path.read_text(encoding="utf-8"))
        dialog = open_settings(qtbot, window)
        form = dialog.provider_form
        # the default: a local Ollama server (here the first fake), with a key of its own
        choose(form.preset_combo, "ollama")
        retype(qtbot, form.base_url_edit, fake_openai.base_url)
        retype(qtbot, form.api_key_edit, "sk-local")
        form.model_combo.setEditText("local-coder")
        # a second provider beside it
        more = dialog.more_providers
        assert more.rows == []  # nothing else configured yet
        qtbot.mouseClick(more.add_button, LEFT)
        row = more.rows[0]
        choose(row.preset_combo, "openrouter")
        assert row.base_url_edit.text() == "https://openrouter.ai/api/v1"
        retype(qtbot, row.base_url_edit, second.base_url)
        qtbot.mouseClick(dialog.save_button, LEFT)
        assert row.error.isVisible() and "OpenRouter needs an API key" in row.error.text()  # nothing saved yet
        assert json.loads(config_path.read_text(encoding="utf-8")) == before
        retype(qtbot, row.api_key_edit, "sk-or")
        with qtbot.waitSignal(dialog.applied, timeout=WAIT_MS):
            qtbot.mouseClick(dialog.save_button, LEFT)

        # the bytes on disk: only the changed keys, in the file's own style, nothing forced
        expected = json.loads(json.dumps(before))
        expected["agents"]["defaults"].update(provider="auto", model="local-coder")
        expected["providers"]["custom"] = {"apiKey": "sk-local", "apiBase": fake_openai.base_url}
        expected["providers"]["openrouter"] = {"apiKey": "sk-or", "apiBase": second.base_url}
        assert config_path.read_bytes() == json.dumps(expected, indent=2).encode("utf-8")
        assert (resolve_provider(load_config(config_path)).name, resolve_provider(load_config(config_path),
                                                                                 "openrouter/or-model").name) \
            == ("custom", "openrouter")

        # the switcher: a model of each provider, each reaching its own endpoint with its own key
        switcher = window.composer.model_switcher
        qtbot.waitUntil(lambda: window.commands.settings_dialog is None, timeout=WAIT_MS)  # closed, the window active again
        qtbot.waitUntil(lambda: switcher.button.text() == "local-coder · Ollama ▾", timeout=WAIT_MS)
        menu = open_switcher(qtbot, window)
        pick(qtbot, window, menu, "or-model")
        qtbot.waitUntil(lambda: switcher.session_model == "openrouter/or-model", timeout=WAIT_MS)
        second.add_text("From the router.")
        send(qtbot, window, "who answers?")
        wait_idle(qtbot, window)
        assert second.requests[-1]["model"] == "or-model"
        assert second.requests[-1].headers["authorization"] == "Bearer sk-or"
        assert not fake_openai.requests
        window.new_chat()
        menu = open_switcher(qtbot, window)
        pick(qtbot, window, menu, "local-coder")
        fake_openai.add_text("From the local one.")
        send(qtbot, window, "and you?")
        wait_idle(qtbot, window)
        assert fake_openai.requests[-1]["model"] == "local-coder"
        assert fake_openai.requests[-1].headers["authorization"] == "Bearer sk-local"
        assert len(second.requests) == 1

        # reopened, Settings shows both again: the default, and the other one in the list
        reopened = open_settings(qtbot, window)
        assert reopened.provider_form.preset_combo.currentData() == "ollama"
        assert [row.choice() for row in reopened.more_providers.rows] == [
            ProviderChoice("openrouter", second.base_url, "sk-or", "")]
        # a row switched to another provider: the old block is emptied when saved, the new one written
        row = reopened.more_providers.rows[0]
        choose(row.preset_combo, "deepseek")
        assert reopened.more_providers.removed() == ("openrouter",)
        choose(row.preset_combo, "openrouter")
        retype(qtbot, row.base_url_edit, second.base_url)
        retype(qtbot, row.api_key_edit, "sk-or")
        assert reopened.more_providers.removed() == ()
        # removing it empties its block (the key is gone), the default stays as it was
        qtbot.mouseClick(reopened.more_providers.rows[0].remove_button, LEFT)
        with qtbot.waitSignal(reopened.applied, timeout=WAIT_MS):
            qtbot.mouseClick(reopened.save_button, LEFT)
        after = json.loads(config_path.read_text(encoding="utf-8"))
        assert after["providers"]["openrouter"] == {"apiKey": "", "apiBase": None}
        assert after["providers"]["custom"] == {"apiKey": "sk-local", "apiBase": fake_openai.base_url}
        assert after["agents"]["defaults"]["provider"] == "auto"


def test_two_local_servers_cannot_share_the_one_custom_block(qtbot, open_window):
    window = open_window()
    dialog = open_settings(qtbot, window)
    choose(dialog.provider_form.preset_combo, "ollama")
    dialog.provider_form.model_combo.setEditText("llama3.2")
    qtbot.mouseClick(dialog.more_providers.add_button, LEFT)
    choose(dialog.more_providers.rows[0].preset_combo, "lmstudio")
    before = window.engine.config_path.read_bytes()
    qtbot.mouseClick(dialog.save_button, LEFT)
    assert dialog.more_providers.error.isVisible()
    assert "would both be written as providers.custom" in dialog.more_providers.error.text()
    assert window.engine.config_path.read_bytes() == before


def test_a_v03_config_names_ollama_and_lm_studio_by_themselves(tmp_path):
    """0.3.x runs `providers.ollama` / `providers.lmStudio`: Settings writes them there, leaves the rules to
    pick the default, and a model of the other is routed by its prefix."""
    path = write_fake_config(tmp_path / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws", provider="auto")
    config = load_config(path)
    patch = provider_patch(config, ProviderChoice("ollama", "http://127.0.0.1:11434/v1", "", "llama3.2"),
                           (ProviderChoice("lmstudio", "http://127.0.0.1:1234/v1", "", ""),), v03=True,
                           removed=("custom",))
    assert patch["providers.ollama.apiBase"] == "http://127.0.0.1:11434/v1"
    assert patch["providers.lmStudio.apiBase"] == "http://127.0.0.1:1234/v1"
    assert "providers.ollama.apiKey" not in patch  # a local server needs none; 0.3.x runs it without
    assert patch["providers.custom.apiKey"] == "" and patch["agents.defaults.provider"] == "auto"
    saved, _changed = patch_config_file(path, {key: value for key, value in patch.items() if not key.startswith("app.")})
    assert resolve_provider(saved).name == "ollama"
    routed = resolve_provider(saved, "lm_studio/qwen3")
    assert (routed.name, routed.model, routed.api_base) == ("lm_studio", "qwen3", "http://127.0.0.1:1234/v1")
    on_disk = json.loads(path.read_text(encoding="utf-8"))["providers"]
    assert on_disk["ollama"] == {"apiBase": "http://127.0.0.1:11434/v1"}
    assert on_disk["lmStudio"] == {"apiBase": "http://127.0.0.1:1234/v1"}


@pytest.mark.slow
@pytest.mark.parametrize("version", [POST4, pytest.param(V035, marks=pytest.mark.heavy)])  # ~30 s each on 2 cores
def test_the_real_cli_runs_the_default_of_two_configured_providers(version, qtbot, open_window, fake_openai, tmp_path):
    """The config Settings wrote for two providers runs in the real CLI: its default model goes to the
    default provider's endpoint with that provider's key."""
    with FakeOpenAIServer(models=["or-model"]) as second:
        window = open_window()
        dialog = open_settings(qtbot, window)
        retype(qtbot, dialog.provider_form.api_key_edit, "sk-local")
        dialog.provider_form.model_combo.setEditText("local-coder")
        qtbot.mouseClick(dialog.more_providers.add_button, LEFT)
        row = dialog.more_providers.rows[0]
        choose(row.preset_combo, "openrouter")
        retype(qtbot, row.base_url_edit, second.base_url)
        retype(qtbot, row.api_key_edit, "sk-or")
        with qtbot.waitSignal(dialog.applied, timeout=WAIT_MS):
            qtbot.mouseClick(dialog.save_button, LEFT)
        home = window.engine.config_path.parent.parent
        fake_openai.add_text("pong from local")
        result = run_reference_cli(version, ["agent", "-m", "ping", "--no-markdown"], home=home)
        assert result.returncode == 0 and "pong from local" in result.stdout, result.stdout + result.stderr
        assert fake_openai.requests[-1].headers["authorization"] == "Bearer sk-local"
        assert fake_openai.requests[-1]["model"] == "local-coder"
        assert not second.requests
