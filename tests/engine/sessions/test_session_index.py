"""The session index (engine/sessions/index.py) on real session files: built from them, kept fresh by
the store's appends and the outside changes it notices, rebuilt when missing or unreadable, and never
believed over a file that changed while the app was closed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from nanobot_desktop.engine.events import EventBus
from nanobot_desktop.engine.sessions.index import SessionIndex, default_index_path
from nanobot_desktop.engine.sessions.listing import NEW_CHAT_TITLE
from nanobot_desktop.engine.sessions.store import SessionStore


def _store(tmp_path: Path) -> tuple[SessionStore, SessionIndex]:
    bus = EventBus()
    store = SessionStore(tmp_path / "ws" / "sessions", bus=bus)
    return store, SessionIndex.for_store(store, bus)


def _say(store: SessionStore, key: str, *texts: str) -> None:
    session = store.get_or_create(key)
    store.append(session, [{"role": "user" if n % 2 == 0 else "assistant", "content": text}
                           for n, text in enumerate(texts)])


def _outside_append(path: Path, text: str) -> None:
    """Another process (as the nanobot CLI would) appends a line to the session file."""
    line = json.dumps({"role": "user", "content": text, "timestamp": "2026-11-24T10:00:00"}, ensure_ascii=False)
    script = "import sys; open(sys.argv[1], 'a', encoding='utf-8').write(sys.argv[2] + '\\n')"
    subprocess.run([sys.executable, "-c", script, str(path), line], check=True)


def test_the_index_is_built_from_the_files_in_the_cache_folder_not_the_workspace(tmp_path):
    store, index = _store(tmp_path)
    _say(store, "desktop:a", "Plan the garden", "Tomatoes go in May.")
    _say(store, "cli:b", "What is a banana split?", "Ice cream with a banana.")
    assert not index.index_path.exists()  # nothing happens before first use
    assert [info.key for info in index.list_sessions()] == ["cli:b", "desktop:a"]
    assert index.index_path == default_index_path(store.sessions_dir)
    assert index.index_path.is_relative_to(Path.home() / ".cache" / "nanobot-desktop")
    assert not index.index_path.is_relative_to(tmp_path / "ws")
    assert index.search("tomatoes") == [("desktop:a", "Tomatoes go in May.")]
    assert index.search("banana") == [("cli:b", "What is a banana split?")]
    assert index.search("nothing like this") == []
    # what the index holds is on disk: a new index object (the next app start) answers without rebuilding
    index.close()
    again = SessionIndex.for_store(store)
    assert again.search("tomatoes") == [("desktop:a", "Tomatoes go in May.")] and not again.rebuilt


def test_chinese_text_is_found_by_a_two_and_a_three_character_substring(tmp_path):
    store, index = _store(tmp_path)
    _say(store, "desktop:zh", "请把这个写进你的记忆里", "好的，我已经记住了。")
    _say(store, "desktop:en", "Remember this", "Done.")
    assert index.search("记忆") == [("desktop:zh", "请把这个写进你的记忆里")]
    assert index.search("的记忆") == [("desktop:zh", "请把这个写进你的记忆里")]
    assert index.search("记住了") == [("desktop:zh", "好的，我已经记住了。")]


def test_a_two_letter_search_answers_the_newest_matching_sessions_up_to_the_limit(tmp_path):
    store, index = _store(tmp_path)
    for name in ("a", "b", "c", "d"):
        _say(store, f"desktop:{name}", f"Question {name}", f"Ok, {name}.", f"Ok again, {name}.")
    _say(store, "desktop:none", "Nothing here", "Fine.")
    newest = [info.key for info in index.list_sessions() if info.key != "desktop:none"]
    assert [key for key, _snippet in index.search("ok")] == newest
    assert index.search("OK", limit=2) == [(key, f"Ok, {key[-1]}.") for key in newest[:2]]  # each one's first match
    assert index.search("th", limit=1) == [("desktop:none", "Nothing here")]  # a title match counts too


def test_an_append_by_the_store_is_searchable_at_once_and_only_the_new_lines_are_read(tmp_path):
    store, index = _store(tmp_path)
    _say(store, "desktop:a", "First question", "First answer")
    assert index.search("pineapple") == []
    size_before = store.path_for("desktop:a").stat().st_size
    _say(store, "desktop:a", "Now about the pineapple")
    assert index.search("pineapple") == [("desktop:a", "Now about the pineapple")]
    assert index.search("first answer") == [("desktop:a", "First answer")]  # the old lines are still there
    db = sqlite3.connect(index.index_path)
    (text_size,) = db.execute("SELECT text_size FROM files").fetchone()
    (messages,) = db.execute("SELECT count(*) FROM msg").fetchone()
    db.close()
    assert text_size == store.path_for("desktop:a").stat().st_size > size_before
    assert messages == 3  # appended to, not indexed twice


def test_a_write_by_another_process_is_found_after_the_store_notices_it_and_by_a_listing(tmp_path):
    store, index = _store(tmp_path)
    _say(store, "telegram:7", "Hi from the phone", "Hello!")
    _say(store, "desktop:b", "Something else", "Sure.")
    assert index.search("walrus") == []
    _outside_append(store.path_for("telegram:7"), "Tell me about the walrus")
    assert store.notice_changes() == ["telegram:7"]  # the store publishes SessionChanged(outside=True)
    assert index.search("walrus") == [("telegram:7", "Tell me about the walrus")]
    # a change nobody reported is still found by the next listing (every file's signature is compared)
    _outside_append(store.path_for("desktop:b"), "and the narwhal")
    listed = {info.key: info for info in index.list_sessions()}
    assert listed["desktop:b"].message_count == 3 and listed["desktop:b"].preview == "and the narwhal"
    assert index.search("narwhal") == [("desktop:b", "and the narwhal")]


def test_a_deleted_or_unreadable_index_is_rebuilt_from_the_files(tmp_path):
    store, index = _store(tmp_path)
    _say(store, "desktop:a", "Plan the garden", "Tomatoes go in May.")
    assert index.search("garden")
    index.close()
    index.index_path.unlink()
    rebuilt = SessionIndex.for_store(store)
    assert rebuilt.search("tomatoes") == [("desktop:a", "Tomatoes go in May.")] and rebuilt.rebuilt
    rebuilt.close()
    index.index_path.write_bytes(b"this is not a database\n" * 100)
    again = SessionIndex.for_store(store)
    assert [info.key for info in again.list_sessions()] == ["desktop:a"] and again.rebuilt
    assert again.search("garden") == [("desktop:a", "Plan the garden")]
    assert not list(index.index_path.parent.glob("*.tmp"))  # built aside and renamed into place


def test_a_file_changed_while_the_app_was_closed_is_read_again(tmp_path):
    store, index = _store(tmp_path)
    _say(store, "desktop:a", "Plan the garden", "Tomatoes go in May.")
    _say(store, "desktop:gone", "Short lived")
    assert len(index.list_sessions()) == 2 and index.search("garden")
    index.close()
    # while the app is closed: the CLI appends, someone renames a session in the file, a file is deleted
    _outside_append(store.path_for("desktop:a"), "Add basil too")
    path = store.path_for("desktop:a")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["metadata"] = {"title": "Herbs"}
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    os.unlink(store.path_for("desktop:gone"))
    reopened = SessionIndex.for_store(store)
    listed = reopened.list_sessions()
    assert not reopened.rebuilt
    assert [(info.key, info.title, info.message_count) for info in listed] == [("desktop:a", "Herbs", 3)]
    assert reopened.search("basil") == [("desktop:a", "Add basil too")]
    assert reopened.search("herbs") == [("desktop:a", "Herbs")]  # the new title is searched too
    assert reopened.search("short lived") == []


def _write_by_hand(folder: Path, name: str, key: str, updated: str, texts: list[str],
                   metadata: dict | None = None) -> Path:
    header = {"_type": "metadata", "key": key, "created_at": updated, "updated_at": updated,
              "metadata": metadata or {}, "last_consolidated": 0}
    lines = [json.dumps(header)] + [json.dumps({"role": "user" if n % 2 == 0 else "assistant", "content": text})
                                    for n, text in enumerate(texts)]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_branch_file_says_which_session_it_came_from(tmp_path):
    folder = tmp_path / "ws" / "sessions"
    _write_by_hand(folder, "desktop_origin.jsonl", "desktop:origin", "2026-11-20T10:00:00", ["One", "Two", "Three"])
    _write_by_hand(folder, "desktop_branch.jsonl", "desktop:branch", "2026-11-21T10:00:00", ["One", "Other"],
                   {"branch_of": {"key": "desktop:origin", "at": 1}})
    _write_by_hand(folder, "desktop_odd.jsonl", "desktop:odd", "2026-11-19T10:00:00", ["x"],
                   {"branch_of": {"key": "desktop:origin", "at": -1}})
    index = SessionIndex(folder, tmp_path / "index.sqlite3")
    listed = {info.key: (info.branch_of, info.branch_at) for info in index.list_sessions()}
    assert listed == {"desktop:origin": ("", 0), "desktop:branch": ("desktop:origin", 1), "desktop:odd": ("", 0)}
    index.close()
    again = SessionIndex(folder, tmp_path / "index.sqlite3")  # kept in the index as well
    assert {info.key: info.branch_of for info in again.list_sessions()}["desktop:branch"] == "desktop:origin"


def test_a_new_chat_is_titled_new_chat_until_its_first_message_names_it(tmp_path):
    store, index = _store(tmp_path)
    _say(store, "desktop:20261124-195728-170", "Hello")
    store.clear(store.get_or_create("desktop:20261124-195728-170"))  # /new: an empty file for the key
    assert [(info.key, info.title) for info in index.list_sessions()] == [
        ("desktop:20261124-195728-170", NEW_CHAT_TITLE)]
    _say(store, "desktop:20261124-195728-170", "Which plants like shade?")
    assert [info.title for info in index.list_sessions()] == ["Which plants like shade?"]


def test_branch_records_come_from_the_files_when_the_index_cannot_be_made(tmp_path):
    bus = EventBus()
    store = SessionStore(tmp_path / "ws" / "sessions", bus=bus)
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("not a folder\n", encoding="utf-8")
    index = SessionIndex.for_store(store, bus, index_path=blocked / "sessions.sqlite3")
    _say(store, "desktop:a", "Plan the garden", "Tomatoes go in May.")
    store.branch("desktop:a", 1, "desktop:b")
    assert [(r.key, r.origin, r.at) for r in index.branch_records()] == [("desktop:b", "desktop:a", 1)]
    assert not index.index_path.exists()


def test_a_line_still_being_written_is_indexed_once_it_is_whole(tmp_path):
    store, index = _store(tmp_path)
    _say(store, "desktop:a", "First question", "First answer")
    path = store.path_for("desktop:a")
    line = json.dumps({"role": "user", "content": "About the marmalade", "timestamp": "2026-11-24T10:00:00"})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line[:30])  # another process is halfway through its append
    store.notice_changes()
    assert index.search("marmalade") == []
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line[30:] + "\n")
    store.notice_changes()
    assert index.search("marmalade") == [("desktop:a", "About the marmalade")]
    db = sqlite3.connect(index.index_path)
    (messages,) = db.execute("SELECT count(*) FROM msg").fetchone()
    db.close()
    assert messages == 3  # the half line was not indexed as garbage, the whole one once


def test_a_large_file_is_indexed_without_holding_it_whole(tmp_path):
    """A 100,000-message session's first indexing held its bytes, its split lines and all its texts at
    once (~40 MB for a 16 MB file, the 'RSS growth over 100 turns' bench row's one-off release)."""
    import tracemalloc

    store, index = _store(tmp_path)
    _say(store, "desktop:big", "Start")
    path = store.path_for("desktop:big")
    with open(path, "a", encoding="utf-8") as handle:
        for number in range(20_000):
            handle.write(json.dumps({"role": "user" if number % 2 else "assistant",
                                     "content": f"Message {number} about the plants and the open tasks on the list.",
                                     "timestamp": "2026-11-24T10:00:00"}) + "\n")
    size = path.stat().st_size
    assert size > 2_000_000
    index.list_sessions()  # the listing's summary is another reader; this measures the text index
    tracemalloc.start()
    try:
        assert index.search("Message 19999 ") == [("desktop:big", "Message 19999 about the plants and the open tasks "
                                                                  "on the list.")]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size / 4, f"indexing a {size:,}-byte file peaked at {peak:,} bytes of Python objects"


def test_the_first_listing_reads_only_each_channels_newest_rows_of_the_index(tmp_path):
    folder = tmp_path / "ws" / "sessions"
    for number in range(6):
        for channel in ("desktop", "cli"):
            _write_by_hand(folder, f"{channel}_{number}.jsonl", f"{channel}:{number}",
                           f"2026-03-0{number + 1}T{10 if channel == 'cli' else 9:02d}:00:00", [f"Topic {number}"])
    store, index = _store(tmp_path)
    assert index.newest(2) is None  # no index yet: the first listing reads the files (list_sessions)
    everything = [info.key for info in index.list_sessions()]
    assert index.newest(2) is None  # open already: list_sessions answers as fast
    index.close()
    with sqlite3.connect(index.index_path) as db:  # an index made before `newest` existed has no such SQL index
        db.execute("DROP INDEX files_newest")
    again = SessionIndex.for_store(store)
    newest = again.newest(2)
    assert newest is not None
    assert [info.key for info in newest] == ["cli:5", "desktop:5", "cli:4", "desktop:4"]
    assert [info.key for info in newest] == [key for key in everything if key[-1] in "45"]  # list_sessions' order
    assert newest[0].title == "Topic 5" and newest[0].path == folder / "cli_5.jsonl"
    with sqlite3.connect(again.index_path) as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'files_newest'").fetchone()
    assert [info.key for info in again.list_sessions(check=False)] == everything
    again.close()
    other = SessionIndex(tmp_path / "elsewhere", again.index_path)  # an index of another folder is not believed
    assert other.newest(2) is None
