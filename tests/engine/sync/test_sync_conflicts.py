"""A sync tool's conflict copies: recognised by name, merged into their session without losing or
repeating a line, and set aside (never silently dropped) when they cannot be merged."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.events import EventBus, SyncCopyMerged
from nanobot_desktop.engine.layout import SessionPaths, V03SessionPaths, encode_session_key
from nanobot_desktop.engine.sessions import writing
from nanobot_desktop.engine.sessions.store import SessionStore
from nanobot_desktop.engine.sync.merge import missing_messages
from nanobot_desktop.engine.sync.names import DROPBOX, NEXTCLOUD, ONEDRIVE, SYNCTHING, conflict_copies, parse_conflict_name


# --- names ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "original", "tool", "device", "when"), [
    ("notes.sync-conflict-20261128-101500-ABCDEFG.md", "notes.md", SYNCTHING, "ABCDEFG", datetime(2026, 11, 28, 10, 15)),
    ("Y2xpOmRpcmVjdA.sync-conflict-20261128-235959-7Q2XK4M.jsonl", "Y2xpOmRpcmVjdA.jsonl", SYNCTHING, "7Q2XK4M",
     datetime(2026, 11, 28, 23, 59, 59)),
    ("desktop_a1b2.sync-conflict-20261128-101500-ABCDEFG.jsonl", "desktop_a1b2.jsonl", SYNCTHING, "ABCDEFG",
     datetime(2026, 11, 28, 10, 15)),
    ("README.sync-conflict-20261128-101500-ABCDEFG", "README", SYNCTHING, "ABCDEFG", datetime(2026, 11, 28, 10, 15)),
    ("MEMORY (Ann's conflicted copy 2026-11-28).md", "MEMORY.md", DROPBOX, "Ann", datetime(2026, 11, 28)),
    ("MEMORY (Ann Lee's conflicted copy 2026-11-28 (1)).md", "MEMORY.md", DROPBOX, "Ann Lee", datetime(2026, 11, 28)),
    ("MEMORY (conflicted copy 2026-11-28).md", "MEMORY.md", DROPBOX, "", datetime(2026, 11, 28)),
    ("cli_direct (conflicted copy 2026-11-28 101500).jsonl", "cli_direct.jsonl", NEXTCLOUD, "",
     datetime(2026, 11, 28, 10, 15)),
    ("HISTORY_conflict-20261128-101500.md", "HISTORY.md", NEXTCLOUD, "", datetime(2026, 11, 28, 10, 15)),
])
def test_conflict_names_of_each_tool_are_recognised(name: str, original: str, tool: str, device: str,
                                                    when: datetime) -> None:
    parsed = parse_conflict_name(name)
    assert parsed is not None
    assert (parsed.original_name, parsed.tool, parsed.device, parsed.when) == (original, tool, device, when)


def test_onedrive_names_count_only_beside_their_original() -> None:
    siblings = {"notes.md", "notes-LAPTOP-7Q2.md", "notes-LAPTOP-7Q2-2.md", "my-notes.md"}
    first = parse_conflict_name("notes-LAPTOP-7Q2.md", siblings)
    assert first is not None and (first.original_name, first.tool, first.device) == ("notes.md", ONEDRIVE, "LAPTOP-7Q2")
    second = parse_conflict_name("notes-LAPTOP-7Q2-2.md", siblings)
    assert second is not None and second.original_name == "notes.md"
    assert parse_conflict_name("notes-LAPTOP-7Q2.md") is None  # no siblings known: never guessed
    assert parse_conflict_name("my-notes.md", siblings) is None  # "notes" is no computer name, "my.md" absent
    assert parse_conflict_name("report-FINAL.md", {"report-FINAL.md"}) is None  # its original is not there


@pytest.mark.parametrize("name", ["MEMORY.md", "HEARTBEAT.md", "desktop_2026-11-28.jsonl", "cli_direct.jsonl",
                                  "notes.sync-conflict-2026-ABCDEFG.md", "a (copy).md", "x.sync-conflict-20261128-101500-abcdefg.md",
                                  "notes (conflicted copy 2026-13-45 999999).md"])
def test_ordinary_names_are_not_conflict_copies(name: str) -> None:
    parsed = parse_conflict_name(name, {name, "notes.md", "a.md", "x.md"})
    assert parsed is None


def test_conflict_copies_lists_oldest_first(tmp_path: Path) -> None:
    for name in ["s.jsonl", "s.sync-conflict-20261128-120000-BBBBBBB.jsonl", "s.sync-conflict-20261128-090000-AAAAAAA.jsonl",
                 "MEMORY.sync-conflict-20261128-080000-AAAAAAA.md"]:
        (tmp_path / name).write_text("{}\n")
    assert [p.name for p, _ in conflict_copies(tmp_path, ".jsonl")] == [
        "s.sync-conflict-20261128-090000-AAAAAAA.jsonl", "s.sync-conflict-20261128-120000-BBBBBBB.jsonl"]


# --- which messages are missing ---------------------------------------------------------------------

def _msg(role: str, content: str, stamp: str) -> dict[str, Any]:
    return {"role": role, "content": content, "timestamp": stamp}


def test_missing_messages_are_counted_ordered_by_time_and_never_repeated() -> None:
    common = [_msg("user", "hi", "2026-11-28T10:00:00"), _msg("assistant", "hello", "2026-11-28T10:00:01")]
    ours = [*common, _msg("user", "from A", "2026-11-28T10:05:00")]
    theirs = [*common, _msg("user", "from B", "2026-11-28T10:04:00"), _msg("assistant", "ok", "2026-11-28T10:04:02"),
              _msg("user", "hi", "2026-11-28T10:00:00")]  # a second, identical "hi" is a message of its own
    missing = missing_messages(ours, theirs)
    assert [m["content"] for m in missing] == ["hi", "from B", "ok"]
    # key order and spacing do not make a message new
    assert missing_messages([{"content": "x", "role": "user"}], [{"role": "user", "content": "x"}]) == []


# --- merging a session's copy --------------------------------------------------------------------------

def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")


def _session_bytes(key: str, messages: list[dict[str, Any]], **header: Any) -> bytes:
    head = {"_type": "metadata", "key": key, "created_at": "2026-11-28T10:00:00", "updated_at": "2026-11-28T10:10:00",
            "metadata": {}, "last_consolidated": 0, **header}
    return _line(head) + b"".join(_line(m) for m in messages)


COMMON = [_msg("user", "plan the trip", "2026-11-28T10:00:00"), _msg("assistant", "Where to?", "2026-11-28T10:00:02")]
FROM_A = [_msg("user", "Lisbon", "2026-11-28T10:03:00"), _msg("assistant", "Lisbon it is.", "2026-11-28T10:03:05")]
FROM_B = [_msg("user", "also pack a coat", "2026-11-28T10:02:00"), _msg("assistant", "Noted: a coat.", "2026-11-28T10:02:04")]


def _store(tmp_path: Path, v03: bool = False) -> tuple[SessionStore, list[Any]]:
    bus = EventBus()
    seen: list[Any] = []
    bus.subscribe(seen.append)
    folder = tmp_path / "sessions"
    folder.mkdir()
    paths = V03SessionPaths(folder) if v03 else SessionPaths(folder)
    return SessionStore(paths=paths, bus=bus), seen


@pytest.mark.parametrize("v03", [False, True], ids=["post4", "v03"])
def test_a_copy_is_merged_once_in_time_order_and_goes_to_the_trash(tmp_path: Path, v03: bool) -> None:
    store, events = _store(tmp_path, v03)
    key = "cli:direct"
    main = store.path_for(key)
    main.write_bytes(_session_bytes(key, COMMON + FROM_A))
    first_line = main.read_bytes().split(b"\n")[0]
    stem = encode_session_key(key) if v03 else "cli_direct"
    copy = main.with_name(f"{stem}.sync-conflict-20261128-100500-BBBBBBB.jsonl")
    copy.write_bytes(_session_bytes(key, COMMON + FROM_B, updated_at="2026-11-28T10:02:04"))
    assert [info.key for info in store.list_sessions()] == [key]  # the copy is never a second session

    results = store.merge_conflict_copies()

    assert [(r.outcome, r.added, r.conflict.device) for r in results] == [("merged", 2, "BBBBBBB")]
    lines = [json.loads(line) for line in main.read_bytes().splitlines()]
    assert [m["content"] for m in lines[1:]] == ["plan the trip", "Where to?", "Lisbon", "Lisbon it is.",
                                                 "also pack a coat", "Noted: a coat."]
    assert lines[0]["key"] == key and lines[0]["_type"] == "metadata"
    assert main.read_bytes().startswith(first_line.split(b'"updated_at"')[0])  # the same metadata line, updated
    assert not copy.exists()
    trashed = list((main.parent / ".trash").iterdir())
    assert len(trashed) == 1 and trashed[0].read_bytes() == _session_bytes(key, COMMON + FROM_B, updated_at="2026-11-28T10:02:04")
    assert store.merge_conflict_copies() == []  # nothing left to merge
    assert [m["content"] for m in store.get_or_create(key).messages][-2:] == ["also pack a coat", "Noted: a coat."]
    assert any(getattr(e, "turn_id", "") == "sync-merge" for e in events)


def test_a_copy_with_bad_lines_merges_what_it_can_and_keeps_the_rest_in_the_trash(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    main = store.path_for("cli:direct")
    main.write_bytes(_session_bytes("cli:direct", COMMON))
    copy = main.with_name("cli_direct.sync-conflict-20261128-100500-BBBBBBB.jsonl")
    data = _session_bytes("cli:direct", COMMON + FROM_B[:1]) + b'{"role": "assistant", "content": "cut of\n' + b"\xff\xfe\n"
    copy.write_bytes(data)
    (result,) = store.merge_conflict_copies()
    assert (result.outcome, result.added, result.skipped_lines) == ("merged", 1, 2)
    assert [json.loads(line)["content"] for line in main.read_bytes().splitlines()[1:]] == ["plan the trip", "Where to?",
                                                                                          "also pack a coat"]
    (trashed,) = (main.parent / ".trash").iterdir()
    assert trashed.read_bytes() == data  # the unreadable lines are kept, byte for byte


def test_a_copy_without_any_session_line_is_left_as_it_is(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    main = store.path_for("cli:direct")
    main.write_bytes(_session_bytes("cli:direct", COMMON))
    before = main.read_bytes()
    copy = main.with_name("cli_direct.sync-conflict-20261128-100500-BBBBBBB.jsonl")
    copy.write_bytes(b"not json at all\n\x00\x01\n")
    (result,) = store.merge_conflict_copies()
    assert result.outcome == "unreadable" and "could not be read" in result.sentence()
    assert copy.read_bytes() == b"not json at all\n\x00\x01\n" and main.read_bytes() == before


def test_a_copy_of_a_deleted_session_goes_to_the_trash_restorable(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    copy = store.sessions_dir / "cli_direct.sync-conflict-20261128-100500-BBBBBBB.jsonl"
    copy.write_bytes(_session_bytes("cli:direct", COMMON + FROM_B))
    (result,) = store.merge_conflict_copies()
    assert result.outcome == "orphaned" and not copy.exists()
    assert not store.path_for("cli:direct").exists()  # the deletion on the other machine holds
    (entry,) = store.list_trash()
    assert entry.key == "cli:direct" and entry.message_count == 4
    assert store.restore(entry.trash_id) == "cli:direct"
    restored = store.load("cli:direct")  # under the session's own name, not as a copy to merge again
    assert restored is not None and [m["content"] for m in restored.messages][-1] == "Noted: a coat."
    assert store.merge_conflict_copies() == []


def test_a_copy_larger_than_the_limit_is_refused_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, _ = _store(tmp_path)
    main = store.path_for("cli:direct")
    main.write_bytes(_session_bytes("cli:direct", COMMON))
    before = main.read_bytes()
    copy = main.with_name("cli_direct.sync-conflict-20261128-100500-BBBBBBB.jsonl")
    copy.write_bytes(_session_bytes("cli:direct", COMMON + FROM_B))
    monkeypatch.setattr(writing, "MAX_COPY_BYTES", 100)
    (result,) = store.merge_conflict_copies()
    assert result.outcome == "too-large" and "too large" in result.sentence() and copy.name in result.sentence()
    assert copy.exists() and main.read_bytes() == before


async def test_the_engine_merges_at_start_and_says_so(make_engine) -> None:
    engine = make_engine()
    store = engine.sessions
    main = store.path_for("cli:direct")
    main.parent.mkdir(parents=True, exist_ok=True)
    main.write_bytes(_session_bytes("cli:direct", COMMON))
    main.with_name("cli_direct (Laptop's conflicted copy 2026-11-28).jsonl").write_bytes(
        _session_bytes("cli:direct", COMMON + FROM_B))
    seen: list[Any] = []
    engine.bus.subscribe(seen.append)
    merged = engine.merge_sync_copies()
    assert [(e.outcome, e.added, e.device, e.tool) for e in merged] == [("merged", 2, "Laptop", DROPBOX)]
    assert [e for e in seen if isinstance(e, SyncCopyMerged)] == merged
    assert merged[0].sentence == "Added 2 messages from Laptop (Dropbox) that were missing here (a sync conflict)."
    engine.notice_files([main])  # an ordinary change: nothing to merge, nothing said
    assert len([e for e in seen if isinstance(e, SyncCopyMerged)]) == 1


def test_a_reply_written_after_the_sync_tool_swapped_the_file_follows_its_own_question(tmp_path: Path) -> None:
    """The race the real sync engines show: a turn writes its question, the sync tool replaces the file
    with the other machine's version (the question goes into a conflict copy), then the reply comes."""
    store, events = _store(tmp_path)
    session = store.get_or_create("cli:direct")
    store.append(session, COMMON + FROM_A[:1])  # this machine's question
    main = session.path
    mine = main.read_bytes()
    main.with_name("cli_direct.sync-conflict-20261128-100300-AAAAAAA.jsonl").write_bytes(mine)
    theirs = main.with_name(".syncthing.tmp")
    theirs.write_bytes(_session_bytes("cli:direct", COMMON + FROM_B))
    theirs.replace(main)  # the other machine's version wins the name

    store.append(session, FROM_A[1:])  # this machine's reply

    contents = [json.loads(line)["content"] for line in main.read_bytes().splitlines()[1:]]
    assert contents == ["plan the trip", "Where to?", "also pack a coat", "Noted: a coat.", "Lisbon", "Lisbon it is."]
    assert not list(main.parent.glob("*.sync-conflict-*"))
    merged = [e for e in events if isinstance(e, SyncCopyMerged)]
    assert [(e.outcome, e.added, e.device) for e in merged] == [("merged", 1, "AAAAAAA")]
    assert not [e for e in events if type(e).__name__ == "SessionLinesLost"]  # not "erased": it was merged back


def test_a_copy_that_is_a_link_out_of_the_folder_is_never_merged(tmp_path: Path) -> None:
    """exec can make a file with a conflict copy's name that links to a secret: the merge must not read it."""
    store, _ = _store(tmp_path)
    main = store.path_for("cli:direct")
    main.write_bytes(_session_bytes("cli:direct", COMMON))
    secret = tmp_path / "secret.jsonl"
    secret.write_bytes(_session_bytes("cli:direct", COMMON + [_msg("user", "sk-SECRET", "2026-11-28T11:00:00")]))
    link = main.with_name("cli_direct.sync-conflict-20261128-100500-BBBBBBB.jsonl")
    link.symlink_to(secret)
    (result,) = store.merge_conflict_copies()
    assert result.outcome == "unreadable" and "leads out" in result.detail
    assert b"sk-SECRET" not in main.read_bytes() and link.is_symlink()
