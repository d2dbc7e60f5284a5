"""The session store decides who changed a session: one `SessionChanged` event, `outside` True or False."""

from __future__ import annotations

import json
import os

from nanobot_desktop.engine.events import SessionChanged
from nanobot_desktop.engine.workspace import append_text


def _recorder(engine) -> list[SessionChanged]:
    seen: list[SessionChanged] = []
    engine.bus.subscribe(lambda event: seen.append(event) if isinstance(event, SessionChanged) else None)
    return seen


def _cli_line(text: str) -> str:
    """A line as the nanobot CLI appends it to the same session file."""
    return json.dumps({"role": "user", "content": text, "timestamp": "2026-11-24T10:00:00"}) + "\n"


async def test_own_turn_publishes_changes_that_are_not_outside_and_never_come_back(make_engine, fake_openai):
    engine = make_engine()
    seen = _recorder(engine)
    fake_openai.add_text("Hello back.")
    result = await engine.loop.process("desktop:own", "hello")
    path = engine.sessions.path_for("desktop:own")

    appended = [event for event in seen if event.reason == "appended"]
    assert appended and all(not event.outside for event in appended)
    assert {event.turn_id for event in appended} == {result.turn_id}
    assert appended[-1].size == path.stat().st_size, "the last event says how big the file now is"
    assert not any(event.outside for event in seen)

    # The file watcher hints at the turn's own writes afterwards: the store finds nothing new.
    seen.clear()
    assert engine.sessions.notice_changes([path]) == []
    assert engine.sessions.notice_changes() == []
    assert seen == []


async def test_outside_append_is_published_once_as_outside_and_the_next_turn_reads_it(make_engine, fake_openai):
    engine = make_engine()
    key = "telegram:12345"
    fake_openai.add_text("First reply.")
    await engine.loop.process(key, "hello")
    cached = engine.sessions.get_or_create(key)
    path = engine.sessions.path_for(key)
    seen = _recorder(engine)

    append_text(path, _cli_line("typed in the nanobot CLI"))
    assert engine.sessions.notice_changes([path]) == [key]
    assert [(event.session_key, event.reason, event.outside, event.size) for event in seen] == \
        [(key, "changed", True, path.stat().st_size)]
    assert engine.sessions.notice_changes([path]) == [], "one event per change, not one per hint"
    fresh = engine.sessions.get_or_create(key)  # as the loop does when the next turn starts
    assert fresh is not cached and fresh.messages[-1]["content"] == "typed in the nanobot CLI"

    fake_openai.add_text("Second reply.")
    await engine.loop.process(key, "and now?")
    sent = [m["content"] for m in fake_openai.requests[-1]["messages"] if m["role"] == "user"]
    assert any("typed in the nanobot CLI" in str(content) for content in sent)
    assert [m["content"] for m in engine.sessions.get_or_create(key).messages if m["role"] == "user"] == \
        ["hello", "typed in the nanobot CLI", "and now?"]


async def test_outside_change_before_an_own_write_is_reported_first_without_a_hint(make_engine, fake_openai):
    engine = make_engine()
    key = "desktop:race"
    fake_openai.add_text("One.")
    await engine.loop.process(key, "first")
    seen = _recorder(engine)
    append_text(engine.sessions.path_for(key), _cli_line("from the CLI, just before our next turn"))

    fake_openai.add_text("Two.")
    await engine.loop.process(key, "second")
    assert seen[0].outside and seen[0].reason == "changed", "the outside change is said before our write"
    assert not any(event.outside for event in seen[1:])
    assert engine.sessions.notice_changes() == [], "and our own write does not hide or repeat it"
    lines = engine.sessions.path_for(key).read_text(encoding="utf-8").splitlines()
    assert sum("from the CLI, just before our next turn" in line for line in lines) == 1


async def test_files_the_store_never_saw_and_removals_are_outside_changes(make_engine):
    engine = make_engine()
    seen = _recorder(engine)
    folder = engine.sessions.sessions_dir
    folder.mkdir(parents=True, exist_ok=True)
    header = {"_type": "metadata", "key": "slack:C01:17.5", "created_at": "2026-11-24T09:00:00",
              "updated_at": "2026-11-24T09:00:00", "metadata": {}, "last_consolidated": 0}
    new_file = folder / "slack_C01_17.5.jsonl"
    new_file.write_text(json.dumps(header) + "\n" + _cli_line("hi"), encoding="utf-8")
    (folder / "notes.txt").write_text("not a session", encoding="utf-8")

    assert engine.sessions.notice_changes([new_file, folder / "notes.txt"]) == ["slack:C01:17.5"], \
        "the key comes from the metadata line, not the file name"
    os.remove(new_file)
    assert engine.sessions.notice_changes() == ["slack:C01:17.5"]
    assert [(event.reason, event.outside) for event in seen] == [("changed", True), ("removed", True)]


async def test_rename_delete_and_restore_are_own_changes(make_engine, fake_openai):
    engine = make_engine()
    key = "desktop:kept"
    fake_openai.add_text("Reply.")
    await engine.loop.process(key, "hello")
    seen = _recorder(engine)

    engine.sessions.rename(key, "A title")
    trash_id = engine.sessions.delete(key)
    assert engine.sessions.restore(trash_id) == key
    assert [(event.reason, event.outside) for event in seen] == \
        [("metadata", False), ("deleted", False), ("restored", False)]
    assert engine.sessions.notice_changes() == []
