"""A long session in the chat: the newest page is read from the file, older pages come in as the person
scrolls up (in order, nothing twice, nothing missing), and lines another program appends show once."""

from __future__ import annotations

import json
from pathlib import Path

from nanobot_desktop.gui.chat.view import ChatView
from tests.gui.window_fixtures import WAIT_MS, open_window  # noqa: F401 - the fixture

TURNS = 200  # 400 messages: three pages of HISTORY_PAGE_MESSAGES (150), six times ChatView.MAX_WIDGETS (64)


def write_long_session(path: Path, turns: int) -> list[str]:
    """A post4-format session file of `turns` question/answer pairs; returns the texts in order."""
    header = {"_type": "metadata", "key": "cli:direct", "created_at": "2026-03-08T14:36:46",
              "updated_at": "2026-03-09T10:00:00", "metadata": {}, "last_consolidated": 0}
    lines = [json.dumps(header)]
    texts: list[str] = []
    for number in range(turns):
        for role, text in (("user", f"question {number}"), ("assistant", f"answer {number}")):
            lines.append(json.dumps({"role": role, "content": text, "timestamp": "2026-03-08T15:00:00"}))
            texts.append(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return texts


def open_long_session(qtbot, open_window, make_engine):  # noqa: F811 - the fixture passed in
    engine = make_engine()
    texts = write_long_session(engine.sessions.path_for("cli:direct"), TURNS)
    window = open_window(engine)
    task = window.chat.show_session("cli:direct")
    window.sessions_panel.set_current_key("cli:direct")
    assert task is not None
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    return window, texts


def model_texts(window) -> list[str]:
    return [item.text for item in window.chat.model.items()]


def test_a_long_session_opens_with_its_newest_messages(qtbot, open_window, make_engine):  # noqa: F811
    window, texts = open_long_session(qtbot, open_window, make_engine)
    shown = model_texts(window)
    assert 0 < len(shown) < len(texts) and shown == texts[-len(shown):]  # the newest page, read from the end
    assert shown[0].startswith("question")  # a page starts at a turn
    assert window.chat.model.older_end > 0
    view = window.chat_view
    qtbot.waitUntil(lambda: view.loaded_widgets() and view.loaded_widgets()[-1].item.text == texts[-1],
                    timeout=WAIT_MS)
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=WAIT_MS)


def test_scrolling_to_the_top_pages_every_older_message_in_once_and_in_order(qtbot, open_window, make_engine):  # noqa: F811
    window, texts = open_long_session(qtbot, open_window, make_engine)
    view: ChatView = window.chat_view
    model = window.chat.model
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=WAIT_MS)
    most_widgets = 0

    def at_the_very_top() -> bool:
        return model.older_end == 0 and view.first_loaded_row == 0

    for _step in range(2 * len(texts)):
        if at_the_very_top():
            break
        bar.setValue(bar.minimum())  # the person drags the scrollbar to the top
        qtbot.waitUntil(lambda: bar.value() > bar.minimum() or at_the_very_top(), timeout=WAIT_MS)
        most_widgets = max(most_widgets, len(view.loaded_widgets()))
        shown = model_texts(window)
        assert shown == texts[-len(shown):]  # always one contiguous stretch of the newest messages
        first = view.first_loaded_row
        assert [w.item for w in view.loaded_widgets()] == model.items()[first:view.last_loaded_row]
    assert at_the_very_top()
    assert model_texts(window) == texts  # every message once, in the file's order
    assert view.loaded_widgets()[0].item.text == "question 0"
    assert most_widgets <= ChatView.MAX_WIDGETS  # the far end's widgets were dropped on the way up

    bar.setValue(bar.maximum())  # and back down: the newest widgets are made again
    for _step in range(len(texts)):
        if view.last_loaded_row == model.rowCount():
            break
        bar.setValue(bar.maximum())
        qtbot.waitUntil(lambda: bar.value() < bar.maximum() or view.last_loaded_row == model.rowCount(),
                        timeout=WAIT_MS)
    assert view.loaded_widgets()[-1].item.text == texts[-1]


def test_a_line_another_program_appends_to_a_paged_session_shows_once(qtbot, open_window, make_engine):  # noqa: F811
    from nanobot_desktop.engine.sessions.store import SessionStore

    window, texts = open_long_session(qtbot, open_window, make_engine)
    view = window.chat_view
    bar = view.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=WAIT_MS)
    bar.setValue(bar.minimum())  # page some older history in first
    qtbot.waitUntil(lambda: bar.value() > bar.minimum(), timeout=WAIT_MS)
    other = SessionStore(window.engine.sessions.sessions_dir)  # e.g. the nanobot CLI on the same workspace
    session = other.load("cli:direct")
    assert session is not None
    other.append(session, [{"role": "user", "content": "typed in the terminal"},
                           {"role": "assistant", "content": "answered in the terminal"}])
    qtbot.waitUntil(lambda: model_texts(window)[-1:] == ["answered in the terminal"], timeout=WAIT_MS)
    shown = model_texts(window)
    assert shown.count("typed in the terminal") == 1 and shown.count("answered in the terminal") == 1
    assert shown[:-2] == texts[-(len(shown) - 2):]  # the stretch before them has no gap and no repeat
