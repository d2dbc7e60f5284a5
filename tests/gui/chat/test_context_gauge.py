"""The context window's fill in the window (status bar gauge) and the inspector (fill, time to first
token, tokens/s), from a real turn against the scripted endpoint that says its window like llama.cpp."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.fake_openai import Reply
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]  # the fixture, used by name

PROPS = {"default_generation_settings": {"n_ctx": 8192}}


def test_the_gauge_shows_the_servers_count_of_the_window_and_follows_the_chat_shown(qtbot, open_window,
                                                                                     fake_openai):
    fake_openai.routes[("GET", "/props")] = PROPS
    window = open_window()
    gauge = window.commands.context_gauge
    assert gauge.isHidden()  # nothing known before a model call
    fake_openai.add(Reply(deltas=[{"content": "Paris "}, {"content": "it is."}], delay_s=0.15, usage=(3000, 12)))
    send(qtbot, window, "What is the capital of France?")
    qtbot.waitUntil(lambda: gauge.isVisible() and gauge.value() == 3000, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert (gauge.maximum(), gauge.text()) == (8192, "Context 3,000 / 8,192")
    assert "3,000 of the model's 8,192-token context window" in gauge.toolTip()

    first = window.current_key
    window.new_chat()
    qtbot.waitUntil(lambda: window.current_key != first, timeout=WAIT_MS)
    assert gauge.isHidden()  # a new chat has used nothing yet
    window.open_session(first)
    assert gauge.isVisible() and gauge.value() == 3000


def test_the_inspector_shows_fill_first_token_and_speed(qtbot, open_window, fake_openai):
    fake_openai.routes[("GET", "/props")] = PROPS
    window = open_window()
    fake_openai.add(Reply(deltas=[{"content": f"word{n} "} for n in range(5)], delay_s=0.2, usage=(4096, 40)))
    send(qtbot, window, "Tell me something.")
    wait_idle(qtbot, window)
    inspector = window.panel("inspector")
    assert inspector is not None
    index = inspector.model.index(0, 0)
    rect = inspector.timeline.visualRect(index)
    window.docks["inspectorDock"].show()
    qtbot.mouseClick(inspector.timeline.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    shown = inspector.llm_detail.speed_label.text()
    assert shown.startswith("Context: 4,096 / 8,192 tokens (50 %) · First token: 0.")
    rate = float(shown.rsplit("· ", 1)[1].removesuffix(" tokens/s"))
    assert 20 < rate < 60  # 40 tokens over the ~0.8 s after the first one
    assert "First token" in inspector.model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
