"""A turn another program erased from a session file is said in the window, and *Put back in a new
chat* continues it there (issue 29)."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle  # noqa: F401 - fixture


def test_an_erased_turn_is_reported_and_put_back_into_a_new_chat(qtbot, open_window, fake_openai):  # noqa: F811
    window = open_window()
    engine = window.engine
    engine.sessions.append(engine.sessions.get_or_create("cli:direct"), [{"role": "user", "content": "older"}])
    path = engine.sessions.path_for("cli:direct")
    before = path.read_bytes()
    window.open_session("cli:direct")
    qtbot.waitUntil(lambda: window.current_key == "cli:direct" and not window.chat.is_loading("cli:direct"),
                    timeout=WAIT_MS)
    fake_openai.add_text("Tuesday works.")
    send(qtbot, window, "book the dentist")
    wait_idle(qtbot, window)
    # the nanobot CLI saves the session as it held it, from before the app's turn
    kept = [json.loads(line) for line in before.split(b"\n") if line.strip()]
    path.write_text("".join(json.dumps(obj) + "\n" for obj in kept), encoding="utf-8")
    engine.sessions.notice_changes([path])
    bar = window.notice_bar
    qtbot.waitUntil(lambda: bar.isVisible() and "were erased" in bar.label.text(), timeout=WAIT_MS)
    assert "2 message(s)" in bar.label.text() and [b.text() for b in bar.buttons] == ["Put back in a new chat"]
    qtbot.mouseClick(bar.buttons[0], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current_key.startswith("desktop:"), timeout=WAIT_MS)
    restored = engine.sessions.load(window.current_key)
    assert restored is not None
    assert [m["content"] for m in restored.messages] == ["book the dentist", "Tuesday works."]
