"""Several providers at once, driven in the window: two real loopback endpoints, each with its own key,
the model switcher grouped by provider, a model from each reaching its own endpoint with its own key,
each reply naming the model that wrote it, and a local server shown under its own name."""

from __future__ import annotations

import json

import pytest

from nanobot_desktop.gui.chat.model import AssistantMessage
from tests.fake_openai import FakeOpenAIServer
from tests.gui.chat.test_model_switcher import action_named, open_switcher, pick  # the switcher, as a person uses it
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle

__all__ = ["open_window"]

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing)")  # the popup menu, offscreen


def last_reply_widget(window):
    rows = [row for row, item in enumerate(window.chat.model.items()) if isinstance(item, AssistantMessage)]
    return window.chat_view.widget_for_row(rows[-1])


def test_two_providers_each_model_reaches_its_endpoint_with_its_key(qtbot, open_window, fake_openai, tmp_path):
    fake_openai.models = ["fake-model", "local-coder"]
    with FakeOpenAIServer(models=["or-model"]) as second:
        window = open_window()
        window.engine.update_config({"agents.defaults.provider": "auto", "providers.openrouter.apiKey": "sk-or",
                                     "providers.openrouter.apiBase": second.base_url,
                                     "app.localServers.custom": {"kind": "ollama", "apiBase": fake_openai.base_url}})
        switcher = window.composer.model_switcher
        switcher.show_current()
        # the local server (providers.custom) reads as what it is
        assert switcher.button.text() == "fake-model · Ollama ▾"
        menu = open_switcher(qtbot, window)
        qtbot.waitUntil(lambda: action_named(menu, "or-model") is not None, timeout=WAIT_MS)
        sections = [a.text() for a in menu.actions() if a.isSeparator() and a.text()]
        assert sections == ["Ollama", "OpenRouter"]  # grouped by provider
        pick(qtbot, menu, "or-model")
        qtbot.waitUntil(lambda: switcher.session_model == "openrouter/or-model", timeout=WAIT_MS)
        assert switcher.button.text() == "or-model · OpenRouter ▾"
        second.add_text("Hello from the router.")
        send(qtbot, window, "who answers?")
        wait_idle(qtbot, window)
        routed = second.requests[-1]
        assert routed["model"] == "or-model" and routed.headers["authorization"] == "Bearer sk-or"
        assert not fake_openai.requests  # nothing of it went to the other endpoint
        qtbot.waitUntil(lambda: last_reply_widget(window).model_label.isVisible(), timeout=WAIT_MS)
        assert last_reply_widget(window).model_label.text() == "or-model"
        # another chat on the default model: the local server, with its own key
        window.new_chat()
        qtbot.waitUntil(lambda: switcher.button.text() == "fake-model · Ollama ▾", timeout=WAIT_MS)
        menu = open_switcher(qtbot, window)
        pick(qtbot, menu, "local-coder")
        qtbot.waitUntil(lambda: switcher.session_model == "local-coder", timeout=WAIT_MS)
        fake_openai.add_text("Hello from the local one.")
        send(qtbot, window, "and now?")
        wait_idle(qtbot, window)
        local = fake_openai.requests[-1]
        assert local["model"] == "local-coder" and local.headers["authorization"] == "Bearer sk-test"
        assert len(second.requests) == 1
        qtbot.waitUntil(lambda: last_reply_widget(window).model_label.text() == "local-coder",
                        timeout=WAIT_MS)
        assert session_lines(window)[0]["metadata"]["model"] == "local-coder"
    # the config holds both providers, each with its key; the app's own record is not in config.json
    config = json.loads(window.engine.config_path.read_text(encoding="utf-8"))
    assert config["providers"]["openrouter"]["apiKey"] == "sk-or"
    assert config["providers"]["custom"]["apiKey"] == "sk-test"
    assert "app" not in config and "localServers" not in json.dumps(config)
