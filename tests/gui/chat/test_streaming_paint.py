"""What the screen shows while and after a reply streams: the chat's widgets keep static contents
(a reply growing at the bottom repaints only what changed, bench/stream_stall.py), so nothing of an
older frame may stay on screen when the window is resized mid-stream or after.

The offscreen platform's screen grab returns the window's backing store, the pixels the screen
would show; `QWidget.grab()` renders the window afresh. The two must agree once Qt has painted.
"""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QImage

from nanobot_desktop.gui.chat.model import AssistantMessage
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]

REPLY = "\n\n".join(
    f"## Part {n}\n\nA paragraph of the reply, long enough to wrap at a narrow width, with `code`.\n\n"
    f"| Name | Value |\n|---|---|\n| width | {n} |\n\n```python\nprint({n})\n```"
    for n in range(12))


def _on_screen(window) -> QImage:
    return QGuiApplication.primaryScreen().grabWindow(window.winId()).toImage().convertToFormat(QImage.Format.Format_RGB32)


def _fresh(window) -> QImage:
    return window.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _reply(window) -> AssistantMessage:
    return next(item for item in reversed(window.chat.model.items()) if isinstance(item, AssistantMessage))


def _streamed(window) -> int:
    """Characters of the reply shown so far (0 before it starts)."""
    replies = [item for item in window.chat.model.items() if isinstance(item, AssistantMessage)]
    return len(replies[-1].text) if replies else 0


def test_the_screen_matches_a_fresh_render_as_a_reply_grows_and_the_chat_changes_width(qtbot, open_window,
                                                                                        fake_openai):
    """The window keeps its size (a top-level resize repaints everything anyway): the chat's width
    changes as the drawer opens and closes, and the reply grows at the bottom."""
    window = open_window()
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: _on_screen(window) == _fresh(window), timeout=WAIT_MS)
    fake_openai.add_text(REPLY, chunk_size=24, delay_s=0.01)
    send(qtbot, window, "Write the report")
    for shown_chars in (300, 900, 1600):
        qtbot.waitUntil(lambda: _streamed(window) >= shown_chars, timeout=WAIT_MS)  # noqa: B023
        window.docking.toggle_drawer()
    wait_idle(qtbot, window)
    assert _reply(window).text == REPLY
    qtbot.waitUntil(lambda: _on_screen(window) == _fresh(window), timeout=WAIT_MS)
    for _ in range(2):
        window.docking.toggle_drawer()
        qtbot.waitUntil(lambda: _on_screen(window) == _fresh(window), timeout=WAIT_MS)


def test_the_screen_grab_sees_a_change_that_was_not_painted_yet(qtbot, open_window):
    """The check above can fail: a change Qt has not painted yet differs from the fresh render."""
    window = open_window()
    qtbot.waitUntil(lambda: _on_screen(window) == _fresh(window), timeout=WAIT_MS)
    window.chat_view.setVisible(False)
    assert _on_screen(window) != _fresh(window)
    qtbot.waitUntil(lambda: _on_screen(window) == _fresh(window), timeout=WAIT_MS)
