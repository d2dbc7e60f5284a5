"""The composer's model switcher, driven as a person does: open it, pick a model the fake endpoint lists at
/models, send, and check what reached the endpoint and what the session's metadata line holds."""

from __future__ import annotations

import socket
import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle

__all__ = ["open_window"]  # the fixture

LEFT = Qt.MouseButton.LeftButton
CUSTOM = "Custom (OpenAI-compatible)"
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing)")  # the popup menu, offscreen


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def open_switcher(qtbot, window) -> QMenu:
    switcher = window.composer.model_switcher
    qtbot.mouseClick(switcher.button, LEFT)
    qtbot.waitUntil(lambda: switcher.menu.isVisible(), timeout=WAIT_MS)
    return switcher.menu


def action_named(menu: QMenu, text: str) -> QAction | None:
    return next((action for action in menu.actions() if action.text() == text), None)


def pick(qtbot, menu: QMenu, text: str) -> None:
    qtbot.waitUntil(lambda: action_named(menu, text) is not None, timeout=WAIT_MS)  # the lists arrive
    action = action_named(menu, text)
    qtbot.mouseClick(menu, LEFT, pos=menu.actionGeometry(action).center())


def test_a_model_picked_in_the_switcher_is_sent_remembered_and_only_for_that_chat(qtbot, open_window, fake_openai):
    fake_openai.models = ["fake-model", "big-model"]
    window = open_window()
    switcher = window.composer.model_switcher
    assert switcher.button.text() == f"fake-model · {CUSTOM} ▾"  # the config's model by default
    first = window.current_key

    menu = open_switcher(qtbot, window)
    assert menu.actions()[0].text() == "Default model: fake-model" and menu.actions()[0].isChecked()
    pick(qtbot, menu, "big-model")
    qtbot.waitUntil(lambda: switcher.session_model == "big-model", timeout=WAIT_MS)
    assert switcher.button.text() == f"big-model · {CUSTOM} ▾"
    assert window.commands.model_label.text() == "Model: big-model"  # the status bar follows the chat's model
    assert "served by Custom (OpenAI-compatible) at " + fake_openai.base_url in switcher.button.toolTip()
    assert not window.engine.sessions.path_for(first).exists()  # no empty chat in the list for a choice

    fake_openai.add_text("from the big one")
    send(qtbot, window, "hello")
    wait_idle(qtbot, window)
    assert fake_openai.requests[-1]["model"] == "big-model"
    assert session_lines(window, first)[0]["metadata"]["model"] == "big-model"

    window.new_chat()  # another chat keeps the config's model
    second = window.current_key
    assert second != first
    qtbot.waitUntil(lambda: switcher.button.text() == f"fake-model · {CUSTOM} ▾", timeout=WAIT_MS)
    fake_openai.add_text("from the default")
    send(qtbot, window, "and here?")
    wait_idle(qtbot, window)
    assert fake_openai.requests[-1]["model"] == "fake-model"
    assert "model" not in session_lines(window, second)[0]["metadata"]

    window.open_session(first)  # reopened: the choice is read back from its metadata line
    qtbot.waitUntil(lambda: switcher.button.text() == f"big-model · {CUSTOM} ▾", timeout=WAIT_MS)
    menu = open_switcher(qtbot, window)
    assert [a.text() for a in switcher.choice_actions() if a.isChecked()] == ["big-model"]
    pick(qtbot, menu, "Default model: fake-model")  # back to the default: the field goes away
    qtbot.waitUntil(lambda: switcher.session_model is None, timeout=WAIT_MS)
    assert "model" not in session_lines(window, first)[0]["metadata"]
    assert [line.get("content") for line in session_lines(window, first)[1:]] == ["hello", "from the big one"]


def test_a_provider_that_cannot_be_reached_says_so_in_the_menu(qtbot, open_window, fake_openai):
    fake_openai.models = ["fake-model", "qwen3:8b"]
    window = open_window()
    unreachable = f"http://127.0.0.1:{closed_port()}/v1"
    window.engine.update_config({"agents.defaults.provider": "auto", "providers.openrouter.apiKey": "sk-or",
                                 "providers.openrouter.apiBase": unreachable})
    menu = open_switcher(qtbot, window)
    assert any(action.text() == "Loading the model lists…" for action in menu.actions())
    qtbot.waitUntil(lambda: any(a.text().startswith("Cannot list its models:") for a in menu.actions()),
                    timeout=WAIT_MS)
    problem = next(a for a in menu.actions() if a.text().startswith("Cannot list its models:"))
    assert not problem.isEnabled() and problem.toolTip().startswith("Cannot list the models of OpenRouter: ")
    assert "connection refused" in problem.toolTip()
    sections = [a.text() for a in menu.actions() if a.isSeparator() and a.text()]
    assert sections == [CUSTOM, "OpenRouter"]
    assert action_named(menu, "qwen3:8b") is not None  # the reachable one is listed all the same
    assert not any(a.text() == "Loading the model lists…" for a in menu.actions())
    menu.close()


def test_a_new_default_model_from_the_settings_shows_in_a_chat_without_its_own(qtbot, open_window, fake_openai):
    window = open_window()
    switcher = window.composer.model_switcher
    config = window.engine.update_config({"agents.defaults.model": "other-model"}) and window.engine.config
    window.commands.on_settings_applied(config)  # what the Settings dialog's Apply ends with
    assert switcher.button.text() == f"other-model · {CUSTOM} ▾"
    assert window.commands.model_label.text() == "Model: other-model"


def test_a_model_picked_before_the_chats_own_model_is_read_is_not_undone_by_that_read(qtbot, open_window, fake_openai,
                                                                                   monkeypatch):
    """The chat's own model is read in an executor when the chat opens; a person can pick one before that read
    ends. The read's older answer must not put the button back to the default (it failed once in CI)."""
    fake_openai.models = ["fake-model", "big-model"]
    window = open_window()
    switcher = window.composer.model_switcher
    read_may_end, read_returned = threading.Event(), threading.Event()
    real_get = window.engine.session_models.get

    def slow_get(key: str) -> str | None:
        model = real_get(key)
        if threading.current_thread() is not threading.main_thread():  # the executor's read, not the cached lookup
            read_may_end.wait(timeout=WAIT_MS / 1000)  # it read the file before the choice was saved
            read_returned.set()
        return model

    monkeypatch.setattr(window.engine.session_models, "get", slow_get)
    window.new_chat()
    loading = switcher._loading
    menu = open_switcher(qtbot, window)
    pick(qtbot, menu, "big-model")
    qtbot.waitUntil(lambda: switcher.session_model == "big-model", timeout=WAIT_MS)
    read_may_end.set()  # the read that began before the choice ends only now
    qtbot.waitUntil(lambda: read_returned.is_set() and loading.done(), timeout=WAIT_MS)
    assert switcher.session_model == "big-model"
    assert switcher.button.text() == f"big-model · {CUSTOM} ▾"
