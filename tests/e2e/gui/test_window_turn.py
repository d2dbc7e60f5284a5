"""A streamed turn in the window against the real llama.cpp server: typed and sent as a person does,
the reply streams into the chat, the wait reads "the local server is reading the prompt", and the
inspector shows the call's time to first token and speed."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

from nanobot_desktop.engine.events import LLMCallFinished, TextDelta, WaitingForModel
from tests.gui.window_fixtures import send
from tests.local_server import LlamaServer

pytestmark = [pytest.mark.heavy, pytest.mark.e2e, pytest.mark.timeout(900)]


def test_a_streamed_turn_in_the_window(qtbot, open_window, llama: LlamaServer, real_engine, report) -> None:
    engine = real_engine(llama.base_url)
    window = open_window(engine)
    seen: list[object] = []
    engine.bus.subscribe(seen.append)
    waits: list[str] = []
    window.chat.waiting_changed.connect(lambda _key, text: waits.append(text) if text else None)
    started = time.monotonic()
    send(qtbot, window, "Say hello to Ada in one short sentence.")
    qtbot.waitUntil(lambda: any(isinstance(e, TextDelta) for e in seen), timeout=600_000)
    pieces_when_first_seen = sum(isinstance(e, TextDelta) for e in seen)
    key = window.current_key
    qtbot.waitUntil(lambda: not window.chat.is_busy(key), timeout=600_000)
    took = time.monotonic() - started
    deltas = sum(isinstance(e, TextDelta) for e in seen)
    assert deltas > pieces_when_first_seen  # it streamed: more pieces came after the first was shown
    reply = window.chat.model.item(window.chat.model.rowCount() - 1).text
    assert reply.strip()
    call = next(e for e in seen if isinstance(e, LLMCallFinished))
    if any(isinstance(e, WaitingForModel) for e in seen):
        assert any(text.startswith("The local server is reading the prompt…") for text in waits)
    inspector = window.panel("inspector")
    assert inspector is not None
    window.docks["inspectorDock"].show()
    rect = inspector.timeline.visualRect(inspector.model.index(0, 0))
    qtbot.mouseClick(inspector.timeline.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert "First token:" in inspector.llm_detail.speed_label.text()
    report(f"GUI streamed turn: {took:.1f} s, {deltas} pieces of text; first token after {call.first_token_s:.1f} s, "
           f"{call.tokens_per_s:.1f} tokens/s; the model said: {reply[:100]!r}")
