"""Events that arrive while a session is being read are replayed by turn id, never twice, never lost.

A session's history is read in an executor while the engine keeps publishing; whatever moment the read
happens at, the chat must end up with every message exactly once. The engine's `SessionChanged` says
which turn wrote and how big the file then was, so the controller knows what the read already holds.
"""

from __future__ import annotations

import json

from nanobot_desktop.engine.events import Event, SessionChanged
from nanobot_desktop.engine.sessions.file import parse_session_bytes
from nanobot_desktop.engine.workspace import append_text
from nanobot_desktop.gui.chat.controller import ChatController
from nanobot_desktop.gui.chat.history import items_from_messages
from nanobot_desktop.gui.chat.model import ChatModel
from nanobot_desktop.gui.chat.view import ChatView
from nanobot_desktop.gui.common.bridge import EngineBridge


def _shown(model: ChatModel) -> list[tuple[str, str]]:
    return [(item.kind, str(getattr(item, "text", "") or getattr(item, "name", ""))) for item in model.items()]


def test_a_read_at_any_moment_of_a_turn_plus_the_replay_shows_each_message_once(qtbot, qloop, make_engine,
                                                                                 fake_openai):
    engine = make_engine()
    key = "desktop:replay"
    fake_openai.add_text("Earlier answer.")
    first = engine.loop.submit(key, "earlier question")
    qtbot.waitUntil(first.done, timeout=10000)
    before = engine.sessions.path_for(key).stat().st_size

    events: list[Event] = []
    engine.bus.subscribe(events.append)
    (engine.workspace.root / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    fake_openai.add_tool_calls([("read_file", {"path": "notes.txt"})], content="Let me look.")
    fake_openai.add_text("Your notes say: remember the milk.", chunk_size=5)
    turn = engine.loop.submit(key, "what do my notes say?")
    qtbot.waitUntil(turn.done, timeout=10000)
    data = engine.sessions.path_for(key).read_bytes()
    writes = [event.size for event in events if isinstance(event, SessionChanged)]
    assert len(writes) >= 3 and writes == sorted(writes), "user message, tool step, final reply"

    view = ChatView()
    qtbot.addWidget(view)
    bridge = EngineBridge(engine)
    controller = ChatController(engine, bridge, ChatModel(), view)
    expected = _shown(_model_with(items_from_messages(parse_session_bytes(data).messages)))
    assert ("user", "what do my notes say?") in expected and ("tool", "read_file") in expected
    for size in [before, *writes]:  # the read saw the file as it was after each write of the turn
        messages = parse_session_bytes(data[:size]).messages
        model = _model_with(items_from_messages(messages))
        for index, event in enumerate(events):
            if index not in _covered(events, size):
                controller.relay.apply(model, event)
        assert _shown(model) == expected, f"a read of {size} bytes"
    bridge.detach()


def _model_with(items: list) -> ChatModel:
    model = ChatModel()
    model.set_items(items)
    return model


def _covered(events: list[Event], size: int) -> set[int]:
    from nanobot_desktop.gui.chat.relay import covered_by_read

    return covered_by_read(events, size)


def test_an_outside_change_during_a_turn_is_shown_once_the_turn_is_over(qtbot, qloop, make_engine, fake_openai):
    engine = make_engine()
    key = "cli:direct"
    fake_openai.add_text("Earlier answer.")
    first = engine.loop.submit(key, "earlier question")
    qtbot.waitUntil(first.done, timeout=10000)
    view = ChatView()
    qtbot.addWidget(view)
    bridge = EngineBridge(engine)
    controller = ChatController(engine, bridge, ChatModel(), view)
    with qtbot.waitSignal(controller.session_loaded, timeout=10000):
        controller.show_session(key)

    fake_openai.add_hang("Thinking")
    controller.send("a long one")
    qtbot.waitUntil(lambda: len(fake_openai.requests) == 2, timeout=10000)
    line = {"role": "user", "content": "typed in the terminal meanwhile", "timestamp": "2026-11-24T10:00:00"}
    append_text(engine.sessions.path_for(key), json.dumps(line) + "\n")
    assert engine.sessions.notice_changes() == [key]  # what the file watcher's hint leads to
    texts = lambda: [getattr(item, "text", "") for item in controller.model.items()]  # noqa: E731
    assert "typed in the terminal meanwhile" not in texts(), "never reloaded under a running turn"

    with qtbot.waitSignal(controller.session_loaded, timeout=10000):
        controller.stop_current()
    assert texts().count("typed in the terminal meanwhile") == 1
    assert texts().count("a long one") == 1
    bridge.detach()


def test_an_outside_change_that_arrives_while_the_history_is_read_is_read_again(qtbot, qloop, make_engine,
                                                                                fake_openai):
    import threading

    engine = make_engine()
    key = "cli:direct"
    fake_openai.add_text("Earlier answer.")
    first = engine.loop.submit(key, "earlier question")
    qtbot.waitUntil(first.done, timeout=10000)
    read_page, was_read, go_on = engine.sessions.read_page, threading.Event(), threading.Event()

    def read_then_wait(*args, **kwargs):  # the real read, held back before the chat gets it
        page = read_page(*args, **kwargs)
        was_read.set()
        go_on.wait(10)
        return page

    engine.sessions.read_page = read_then_wait
    view = ChatView()
    qtbot.addWidget(view)
    bridge = EngineBridge(engine)
    controller = ChatController(engine, bridge, ChatModel(), view)
    loaded: list[str] = []
    controller.session_loaded.connect(loaded.append)
    controller.show_session(key)
    qtbot.waitUntil(was_read.is_set, timeout=10000)
    line = {"role": "user", "content": "typed in the terminal meanwhile", "timestamp": "2026-11-24T10:00:00"}
    append_text(engine.sessions.path_for(key), json.dumps(line) + "\n")
    assert engine.sessions.notice_changes() == [key]  # published while the read is on its way
    go_on.set()

    qtbot.waitUntil(lambda: loaded == [key, key], timeout=10000)  # the read, then the read again
    texts = [getattr(item, "text", "") for item in controller.model.items()]
    assert texts == ["earlier question", "Earlier answer.", "typed in the terminal meanwhile"]
    bridge.detach()
