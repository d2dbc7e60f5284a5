"""A turn nanobot 0.3.5 left unfinished shows Continue / Dismiss in the window (issue 29)."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from nanobot_desktop.gui.chat.model import AssistantMessage
from tests.gui.window_fixtures import WAIT_MS, open_window, wait_idle  # noqa: F401 - fixture


def _interrupted_session(engine, key: str = "cli:direct") -> None:
    """A session as 0.3.5 leaves it when killed after a tool ran (its checkpoint beside the file)."""
    updated = "2026-11-28T11:35:17.115670"
    path = engine.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"_type": "metadata", "key": key, "created_at": updated, "updated_at": updated,
              "metadata": {"pending_user_turn": True}, "last_consolidated": 0}
    user = {"role": "user", "content": "how many tulips?", "timestamp": updated}
    path.write_text(json.dumps(header) + "\n" + json.dumps(user) + "\n", encoding="utf-8")
    call = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "n.txt"}'}}
    checkpoint = {"phase": "tools_completed", "iteration": 0, "model": "fake-model",
                  "assistant_message": {"role": "assistant", "content": "", "tool_calls": [call]},
                  "completed_tool_results": [{"role": "tool", "tool_call_id": "call_1", "name": "read_file",
                                              "content": "tulips: 40"}],
                  "pending_tool_calls": [], "provider_state_checkpoint_version": "v1"}
    side = path.with_name(path.stem + ".checkpoint.json")
    side.write_text(json.dumps({"version": 1, "session_key": key, "base_updated_at": updated,
                                "base_message_count": 1, "checkpoint": checkpoint, "provider_state": None},
                               separators=(",", ":")), encoding="utf-8")


def test_continue_goes_on_from_the_saved_turn(qtbot, open_window, fake_openai):  # noqa: F811
    window = open_window()
    engine = window.engine
    _interrupted_session(engine)
    window.open_session("cli:direct")
    bar = window.notice_bar
    qtbot.waitUntil(lambda: bar.isVisible() and "stopped in the middle of a turn" in bar.label.text(), timeout=WAIT_MS)
    assert [b.text() for b in bar.buttons] == ["Continue", "Dismiss"]
    fake_openai.add_text("You have 40 tulips.")
    qtbot.mouseClick(bar.buttons[0], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any(isinstance(i, AssistantMessage) and i.text == "You have 40 tulips."
                                for i in window.chat.model.items()), timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert engine.interrupted_turn("cli:direct") is None
    assert "tulips: 40" in json.dumps(fake_openai.requests[-1]["messages"])
    texts = [getattr(i, "text", "") for i in window.chat.model.items()]
    assert not any("Continue the interrupted request" in t for t in texts)  # hidden history


def test_dismiss_keeps_the_saved_work_and_asks_nothing(qtbot, open_window, fake_openai):  # noqa: F811
    window = open_window()
    engine = window.engine
    _interrupted_session(engine)
    window.open_session("cli:direct")
    bar = window.notice_bar
    qtbot.waitUntil(lambda: bar.isVisible() and len(bar.buttons) == 2, timeout=WAIT_MS)
    qtbot.mouseClick(bar.buttons[1], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: engine.interrupted_turn("cli:direct") is None, timeout=WAIT_MS)
    messages = engine.sessions.load("cli:direct").messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"] and fake_openai.requests == []
