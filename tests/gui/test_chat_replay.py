"""Events that arrive while a session is being read are replayed by turn id, never twice, never lost.

A session's history is read in an executor while the engine keeps publishing; whatever moment the read
happens at, the chat must end up with every message exactly once. The engine's `SessionChanged` says
which turn wrote and how big the file then was, so the controller knows what the read already holds.
"""

from __future__ import annotations

from nanobot_desktop.engine.events import Event, SessionChanged
from nanobot_desktop.engine.sessions.file import parse_session_bytes
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
                controller._apply(model, event)
        assert _shown(model) == expected, f"a read of {size} bytes"
    bridge.detach()


def _model_with(items: list) -> ChatModel:
    model = ChatModel()
    model.set_items(items)
    return model


def _covered(events: list[Event], size: int) -> set[int]:
    from nanobot_desktop.gui.chat.controller import _covered_by_read

    return _covered_by_read(events, size)
