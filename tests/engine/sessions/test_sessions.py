"""Sessions: post4 JSONL compatibility, append-only writes, robustness, list/trash/search/export."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.sessions.store import Session, SessionNotFoundError, SessionStore, safe_key

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "workspace_post4" / "sessions"
POST4_HEADER_KEYS = ["_type", "key", "created_at", "updated_at", "metadata", "last_consolidated"]


def original_reader(path: Path) -> dict[str, Any]:
    """What nanobot post4's loader does with a file (reference §5): strip each line, json.loads it,
    a `_type == "metadata"` line supplies metadata/created_at/last_consolidated, all others are messages.
    Any parse error makes it give up, so our files must never trigger one."""
    messages: list[dict[str, Any]] = []
    result: dict[str, Any] = {"metadata": {}, "created_at": None, "last_consolidated": 0}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            data = json.loads(line)
            if data.get("_type") == "metadata":
                result["metadata"] = data.get("metadata", {})
                result["created_at"] = data.get("created_at")
                result["last_consolidated"] = data.get("last_consolidated", 0)
            else:
                messages.append(data)
    result["messages"] = messages
    return result


@pytest.fixture
def post4_sessions(tmp_path: Path) -> Path:
    """A copy of the hand-written post4 session files (the fixtures themselves are never modified)."""
    target = tmp_path / "ws" / "sessions"
    shutil.copytree(FIXTURES, target)
    return target


def _turn(n: int) -> list[dict[str, Any]]:
    call_id = f"call_{n}"
    return [
        {"role": "user", "content": f"question {n} — ünïcödé"},
        {"role": "assistant", "content": None, "reasoning_content": "think",
         "tool_calls": [{"id": call_id, "type": "function",
                         "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{n}.txt"})}}]},
        {"role": "tool", "tool_call_id": call_id, "name": "read_file", "content": f"content {n}"},
        {"role": "assistant", "content": f"answer {n}"},
    ]


def _first_line(data: bytes) -> bytes:
    return data[: data.index(b"\n") + 1]


# --- file names -----------------------------------------------------------------------------------

def test_safe_key_follows_the_post4_rule() -> None:
    assert safe_key("telegram:12/3") == "telegram_12_3"
    assert safe_key('a<b>c"d\\e|f?g*h') == "a_b_c_d_e_f_g_h"
    assert safe_key("  cli:direct  ") == "cli_direct"
    assert SessionStore(Path("/x/sessions")).path_for("telegram:12/3") == Path("/x/sessions/telegram_12_3.jsonl")


# --- loading the original's files -------------------------------------------------------------------

def test_post4_file_loads_every_message_and_offset(post4_sessions: Path) -> None:
    before = (post4_sessions / "telegram_12345.jsonl").read_bytes()
    session = SessionStore(post4_sessions).get_or_create("telegram:12345")
    assert session.warnings == []
    assert len(session.messages) == 8
    assert session.last_consolidated == 4
    assert session.created_at == "2026-03-08T14:36:46.279485"
    assert session.updated_at == "2026-03-08T14:41:02.118903"
    assert session.metadata == {}
    assert [m["role"] for m in session.messages] == [
        "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]
    call = session.messages[1]
    assert call["reasoning_content"] == "The user wants the file; read it first."
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"path": "notes.txt"}
    assert session.messages[2]["content"] == "buy milk\nfix the bike"
    assert session.messages[5]["content"] is None
    assert session.messages[5]["thinking_blocks"][0]["thinking"] == "List the folder first."
    assert session.messages[7]["content"] == "Der Ordner ist leer – nur „.“ und „..“ ✓"
    assert session.title == "What is in notes.txt?"
    assert session.channel == "telegram"
    assert (post4_sessions / "telegram_12345.jsonl").read_bytes() == before


def test_legacy_tools_used_lines_load_as_messages(post4_sessions: Path) -> None:
    session = SessionStore(post4_sessions).get_or_create("cli:direct")
    assert session.warnings == []
    assert len(session.messages) == 4
    assert session.messages[1]["tools_used"] == ["list_dir", "read_file"]
    assert session.last_consolidated == 0
    assert session.created_at == "2026-01-10T09:00:00.000001"
    history = session.get_history()
    assert history[1] == {"role": "assistant", "content": "Your todo list has three items."}


def test_corrupt_middle_and_truncated_last_line_are_skipped_not_rewritten(post4_sessions: Path) -> None:
    path = post4_sessions / "discord_777.jsonl"
    before = path.read_bytes()
    store = SessionStore(post4_sessions)
    session = store.get_or_create("discord:777")
    assert [m["content"] for m in session.messages] == [
        "first question", "first answer", "second question", "second answer"]
    assert session.last_consolidated == 1
    assert len(session.warnings) == 2
    assert "line 4" in session.warnings[0] and "not valid JSON" in session.warnings[0]
    assert "line 7" in session.warnings[1] and "incomplete" in session.warnings[1]
    store.load("discord:777")
    store.list_sessions()
    assert path.read_bytes() == before


def test_out_of_range_offset_is_clamped_and_compact_json_reads(post4_sessions: Path) -> None:
    session = SessionStore(post4_sessions).get_or_create("slack:C01:1700000000.123")
    assert len(session.messages) == 2
    assert session.last_consolidated == 2
    assert any("last_consolidated 99" in w for w in session.warnings)
    assert session.title == "Thread about the release"
    assert session.get_history() == []


@pytest.mark.parametrize("bad, expected", [('"3"', 0), ("-2", 0), ("true", 0), ("1.5", 0), ("1", 1)])
def test_non_int_or_negative_offset_resets(tmp_path: Path, bad: str, expected: int) -> None:
    path = tmp_path / "cli_x.jsonl"
    path.write_text('{"_type": "metadata", "key": "cli:x", "last_consolidated": ' + bad + '}\n'
                    '{"role": "user", "content": "a"}\n{"role": "assistant", "content": "b"}\n', encoding="utf-8")
    session = SessionStore(tmp_path).get_or_create("cli:x")
    assert session.last_consolidated == expected
    assert len(session.messages) == 2


def test_non_utf8_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "cli_x.jsonl"
    path.write_bytes(b'{"role": "user", "content": "ok"}\n{"role": "user", "content": "bad \xff\xfe"}\n'
                     b'{"role": "assistant", "content": "fine"}\n')
    session = SessionStore(tmp_path).get_or_create("cli:x")
    assert [m["content"] for m in session.messages] == ["ok", "fine"]
    assert len(session.warnings) == 1 and "line 2" in session.warnings[0] and "UTF-8" in session.warnings[0]


# --- writing ----------------------------------------------------------------------------------------

def test_written_files_reload_identically_and_the_original_reader_agrees(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.get_or_create("telegram:42")
    assert not session.path.exists()
    store.append(session, _turn(1))
    store.append(session, _turn(2) + [{"role": "user", "content": [{"type": "text", "text": "list"}]}])
    store.set_last_consolidated(session, 4)
    store.update_metadata(session, title="My chat ✓")

    lines = session.path.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    assert list(header) == POST4_HEADER_KEYS
    assert header["metadata"] == {"title": "My chat ✓"} and header["last_consolidated"] == 4
    assert "✓".encode() in lines[0]  # ensure_ascii=False, as the original writes

    again = SessionStore(tmp_path / "sessions").get_or_create("telegram:42")
    assert again.messages == session.messages
    assert again.warnings == []
    assert (again.created_at, again.updated_at, again.metadata, again.last_consolidated) == (
        session.created_at, session.updated_at, session.metadata, 4)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?", m["timestamp"]) for m in again.messages)

    original = original_reader(session.path)
    assert original["messages"] == session.messages
    assert original["metadata"] == {"title": "My chat ✓"}
    assert original["last_consolidated"] == 4
    assert original["created_at"] == session.created_at


def test_append_keeps_callers_timestamp_and_does_not_alias(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create("cli:t")
    message = {"role": "user", "content": "x", "timestamp": "2026-01-01T00:00:00"}
    store.append(session, [message])
    message["content"] = "changed later"
    assert session.messages[0] == {"role": "user", "content": "x", "timestamp": "2026-01-01T00:00:00"}


def test_append_to_10000_message_session_writes_only_the_new_lines(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create("cli:big")
    store.append(session, [m for n in range(2500) for m in _turn(n)])
    assert len(session.messages) == 10_000
    before = session.path.read_bytes()
    header_before = _first_line(before)
    inode = session.path.stat().st_ino

    turn = _turn(99_999)
    written = store.append(session, turn)

    assert session.path.stat().st_ino == inode  # the same file grew; it was not replaced by a rewrite
    after = session.path.read_bytes()
    assert len(after) == len(before) + written
    assert len(_first_line(after)) == len(header_before)
    assert after[len(header_before):len(before)] == before[len(header_before):]
    expected_tail = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in session.messages[-4:])
    assert after[len(before):] == expected_tail.encode("utf-8")
    assert json.loads(_first_line(after))["updated_at"] == session.updated_at
    assert len(SessionStore(tmp_path).get_or_create("cli:big").messages) == 10_004


def test_cli_written_unpadded_header_is_rewritten_once_then_updated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "telegram_7.jsonl"
    header = {"_type": "metadata", "key": "telegram:7", "created_at": "2026-03-08T10:00:00.000001",
              "updated_at": "2026-03-08T10:00:00.000002", "metadata": {}, "last_consolidated": 0}
    body = "".join(json.dumps(m, ensure_ascii=False) + "\n" for n in range(2500) for m in _turn(n)).encode()
    path.write_bytes(json.dumps(header).encode() + b"\n" + body)

    store = SessionStore(tmp_path)
    session = store.get_or_create("telegram:7")
    first_written = store.append(session, _turn(1))
    once = path.read_bytes()
    padded = _first_line(once)
    assert len(padded) % 512 == 0 and padded.endswith(b" \n")
    assert once[len(padded):] == body + once[len(once) - first_written:]

    inode = path.stat().st_ino
    second_written = store.append(session, _turn(2))
    assert path.stat().st_ino == inode
    twice = path.read_bytes()
    assert len(twice) == len(once) + second_written
    assert len(_first_line(twice)) == len(padded)
    assert twice[len(padded):len(once)] == once[len(padded):]
    assert original_reader(path)["messages"] == session.messages


def test_header_that_outgrows_its_width_is_widened_without_losing_lines(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create("cli:grow")
    store.append(session, _turn(1))
    before = session.path.read_bytes()
    old_width = len(_first_line(before))
    store.update_metadata(session, note="n" * 1500)
    after = session.path.read_bytes()
    new_width = len(_first_line(after))
    assert new_width > 1500 and new_width % 512 == 0 and new_width != old_width
    assert after[new_width:] == before[old_width:]
    assert SessionStore(tmp_path).get_or_create("cli:grow").metadata["note"] == "n" * 1500


def test_a_kill_between_appends_leaves_a_loadable_file_and_the_next_append_works(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create("cli:kill")
    store.append(session, _turn(1))
    partial = b'{"role": "user", "content": "half wri'
    with open(session.path, "ab") as handle:  # what a kill in the middle of a write leaves behind
        handle.write(partial)

    reloaded = SessionStore(tmp_path).get_or_create("cli:kill")
    assert reloaded.messages == session.messages
    assert len(reloaded.warnings) == 1 and "incomplete" in reloaded.warnings[0]

    store2 = SessionStore(tmp_path)
    resumed = store2.get_or_create("cli:kill")
    store2.append(resumed, _turn(2))
    data = session.path.read_bytes()
    assert partial + b"\n" in data  # the broken bytes are kept, on a line of their own
    final = SessionStore(tmp_path).get_or_create("cli:kill")
    assert [m["content"] for m in final.messages if m["role"] == "assistant" and m["content"]] == [
        "answer 1", "answer 2"]
    assert len(final.warnings) == 1 and "not valid JSON" in final.warnings[0]


def test_invalid_messages_are_rejected_before_anything_is_written(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create("cli:v")
    store.append(session, _turn(1))
    before = session.path.read_bytes()
    with pytest.raises(ValueError, match="JSON"):
        store.append(session, [{"role": "user", "content": "ok"}, {"role": "user", "content": object()}])
    with pytest.raises(ValueError, match="role"):
        store.append(session, [{"content": "no role"}])
    with pytest.raises(ValueError, match="last_consolidated"):
        store.set_last_consolidated(session, 5)
    assert session.path.read_bytes() == before
    assert len(session.messages) == 4


def test_a_file_without_metadata_line_gets_one_and_keeps_every_line(tmp_path: Path) -> None:
    path = tmp_path / "email_bob.jsonl"
    lines = b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n'
    path.write_bytes(lines)
    store = SessionStore(tmp_path)
    session = store.get_or_create("email:bob")
    written = store.append(session, [{"role": "user", "content": "again"}])
    data = path.read_bytes()
    header = _first_line(data)
    assert json.loads(header)["key"] == "email:bob"
    assert data[len(header):] == lines + data[len(data) - written:]
    assert [m["content"] for m in original_reader(path)["messages"]] == ["hi", "hello", "again"]


def test_a_torn_metadata_line_is_replaced_and_unknown_header_keys_survive(tmp_path: Path) -> None:
    torn = tmp_path / "cli_torn.jsonl"
    torn.write_bytes(b'{"_type": "metadata", "key": "cli:torn", "crea\n{"role": "user", "content": "kept"}\n')
    store = SessionStore(tmp_path)
    session = store.get_or_create("cli:torn")
    assert [m["content"] for m in session.messages] == ["kept"] and len(session.warnings) == 1
    store.append(session, [{"role": "assistant", "content": "new"}])
    assert [m["content"] for m in original_reader(torn)["messages"]] == ["kept", "new"]

    newer = tmp_path / "cli_newer.jsonl"
    newer.write_text('{"_type": "metadata", "key": "cli:newer", "created_at": "2026-01-01T00:00:00", '
                     '"updated_at": "2026-01-01T00:00:00", "metadata": {}, "last_consolidated": 0, '
                     '"last_archived": 0}\n', encoding="utf-8")
    session = store.get_or_create("cli:newer")
    store.append(session, [{"role": "user", "content": "x"}])
    header = json.loads(_first_line(newer.read_bytes()))
    assert list(header) == POST4_HEADER_KEYS + ["last_archived"]


def test_a_session_built_by_hand_is_written_to_its_key_path(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.append(Session(key="cli:manual"), [{"role": "user", "content": "x"}])
    assert store.load("cli:manual").messages[0]["content"] == "x"


def test_set_last_consolidated_is_on_disk_at_once(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create("cli:c")
    store.append(session, _turn(1) + _turn(2))
    size = session.path.stat().st_size
    store.set_last_consolidated(session, 6)
    assert session.path.stat().st_size == size
    assert json.loads(_first_line(session.path.read_bytes()))["last_consolidated"] == 6
    assert SessionStore(tmp_path).load("cli:c").last_consolidated == 6


# --- get_history --------------------------------------------------------------------------------------

def _session(messages: list[dict[str, Any]], offset: int = 0) -> Session:
    return Session(key="cli:h", messages=messages, last_consolidated=offset)


def test_history_starts_after_the_consolidated_offset_and_at_a_user_turn() -> None:
    messages = [{"role": "user", "content": "old"}, {"role": "assistant", "content": "old answer"},
                {"role": "assistant", "content": "stray"}, {"role": "user", "content": "new", "timestamp": "t"},
                {"role": "assistant", "content": "reply", "reasoning_content": "r", "thinking_blocks": []}]
    assert _session(messages, offset=2).get_history() == [
        {"role": "user", "content": "new"}, {"role": "assistant", "content": "reply"}]
    only_assistant = [{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert _session(only_assistant).get_history() == only_assistant  # no user message: nothing dropped


def test_history_max_messages_and_bad_offsets() -> None:
    messages = [{"role": "user" if n % 2 == 0 else "assistant", "content": str(n)} for n in range(10)]
    assert [m["content"] for m in _session(messages).get_history(max_messages=4)] == ["6", "7", "8", "9"]
    assert [m["content"] for m in _session(messages).get_history(max_messages=3)] == ["8", "9"]
    assert len(_session(messages).get_history(max_messages=0)) == 10
    assert _session(messages, offset=50).get_history() == []
    assert len(_session(messages, offset=-3).get_history()) == 10
    assert len(_session(messages, offset="2").get_history()) == 10  # type: ignore[arg-type]


def test_history_entries_are_made_once_per_message_and_follow_a_replaced_list() -> None:
    """Every call sends the same entry for a message it sent before (a kept request shares it); messages
    that are new objects, as after a reload, get entries of their own."""
    session = _session([{"role": "user", "content": "q", "timestamp": "t1"}, {"role": "assistant", "content": "a"}])
    first = session.get_history()
    session.messages.append({"role": "user", "content": "q2", "timestamp": "t2"})
    second = session.get_history()
    assert second[0] is first[0] and second[1] is first[1]
    assert second[2] == {"role": "user", "content": "q2"}
    session.last_consolidated = 2  # the window moved past the first two: they are let go
    assert session.get_history(max_messages=0) == [second[2]] and session.get_history()[0] is second[2]
    session.messages = [{"role": "user", "content": "q", "timestamp": "t1"}, {"role": "user", "content": "other"}]
    session.last_consolidated = 0
    replaced = session.get_history()
    assert replaced == [{"role": "user", "content": "q"}, {"role": "user", "content": "other"}]
    assert replaced[0] is not first[0]


def test_history_drops_orphan_tool_results_and_keeps_only_replay_fields(post4_sessions: Path) -> None:
    turn = _turn(1)
    messages = [{"role": "user", "content": "q"}, turn[2], *turn, {"role": "tool", "tool_call_id": "nope",
                                                                   "name": "x", "content": "orphan"}]
    history = _session(messages).get_history()
    assert [m["role"] for m in history] == ["user", "user", "assistant", "tool", "assistant"]
    assert history[2] == {"role": "assistant", "content": None, "tool_calls": turn[1]["tool_calls"]}
    assert history[3] == {"role": "tool", "content": "content 1", "tool_call_id": "call_1", "name": "read_file"}

    # Offset 2 cuts the tool call away from its result: the result must not be replayed alone.
    session = SessionStore(post4_sessions).get_or_create("telegram:12345")
    session.last_consolidated = 2
    assert [m["role"] for m in session.get_history()] == ["user", "assistant", "tool", "assistant"]


# --- list, rename, trash, clear, migration ---------------------------------------------------------------

def test_list_sessions_newest_first_with_title_channel_count_preview(post4_sessions: Path) -> None:
    (post4_sessions / "email_bob.jsonl").write_text('{"role": "user", "content": "no metadata line here"}\n',
                                                    encoding="utf-8")
    os.utime(post4_sessions / "email_bob.jsonl", (0, 0))  # mtime 1970: listed last
    infos = SessionStore(post4_sessions).list_sessions()
    assert [i.key for i in infos] == ["slack:C01:1700000000.123", "telegram:12345", "discord:777",
                                      "cli:direct", "email:bob"]
    telegram = infos[1]
    assert telegram.title == "What is in notes.txt?"
    assert telegram.channel == "telegram"
    assert telegram.message_count == 8
    assert telegram.preview == "Der Ordner ist leer – nur „.“ und „..“ ✓"
    assert telegram.updated_at == "2026-03-08T14:41:02.118903"
    assert infos[0].title == "Thread about the release"
    assert infos[3].title == "hello, can you read my todo list?" and infos[3].message_count == 4
    assert infos[4].title == "no metadata line here" and infos[4].message_count == 1


def test_a_scheduled_jobs_session_is_titled_by_the_jobs_name(tmp_path: Path) -> None:
    """Every run of a job starts with the same prompt (post4's gateway and the app write it alike), so a
    title cut from its first words would make every job's session read "[Scheduled Task] Timer finished."."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for job_id, name, instruction in (("a1b2c3d4", "Time to take a break!", "Stretch and drink some water"),
                                      ("5e6f7a8b", "Call the dentist", "Call the dentist about the filling")):
        prompt = (f"[Scheduled Task] Timer finished.\n\nTask '{name}' has been triggered.\n"
                  f"Scheduled instruction: {instruction}")
        (folder / f"cron_{job_id}.jsonl").write_text(
            json.dumps({"_type": "metadata", "key": f"cron:{job_id}", "created_at": "2026-03-08T09:00:00.000001",
                        "updated_at": "2026-03-08T09:00:05.000002", "metadata": {}, "last_consolidated": 0}) + "\n"
            + json.dumps({"role": "user", "content": prompt, "timestamp": "2026-03-08T09:00:00.000003"}) + "\n"
            + json.dumps({"role": "assistant", "content": "Done.", "timestamp": "2026-03-08T09:00:05.000002"}) + "\n",
            encoding="utf-8")
    store = SessionStore(folder)
    assert sorted(info.title for info in store.list_sessions()) == ["Call the dentist", "Time to take a break!"]
    assert store.get_or_create("cron:5e6f7a8b").title == "Call the dentist"
    # A person's own message that happens to start the same way keeps its words.
    chat = store.get_or_create("cli:direct")
    store.append(chat, [{"role": "user", "content": "[Scheduled Task] what does this prefix mean?"}])
    assert chat.title == "[Scheduled Task] what does this prefix mean?"


def test_list_preview_and_title_are_cut(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.get_or_create("cli:long")
    store.append(session, [{"role": "user", "content": "word " * 100},
                           {"role": "assistant", "content": "reply " * 100},
                           {"role": "assistant", "content": None, "tool_calls": []}])
    [info] = store.list_sessions()
    assert len(info.title) == 60 and info.title.endswith("…")
    assert len(info.preview) == 120 and info.preview.startswith("reply reply")
    assert len(session.title) == 60


def test_rename_persists_a_title_and_an_empty_title_reverts(post4_sessions: Path) -> None:
    store = SessionStore(post4_sessions)
    store.rename("telegram:12345", "  Notes   and folders ")
    assert store.get_or_create("telegram:12345").title == "Notes and folders"
    fresh = SessionStore(post4_sessions)
    assert fresh.load("telegram:12345").metadata == {"title": "Notes and folders"}
    assert next(i for i in fresh.list_sessions() if i.key == "telegram:12345").title == "Notes and folders"
    assert len(fresh.load("telegram:12345").messages) == 8
    store.rename("telegram:12345", "")
    assert SessionStore(post4_sessions).load("telegram:12345").title == "What is in notes.txt?"
    with pytest.raises(SessionNotFoundError):
        store.rename("telegram:nobody", "x")


def test_delete_moves_to_trash_and_restore_brings_it_back(post4_sessions: Path) -> None:
    store = SessionStore(post4_sessions)
    path = post4_sessions / "telegram_12345.jsonl"
    original = path.read_bytes()
    store.get_or_create("telegram:12345")
    trash_id = store.delete("telegram:12345")
    assert not path.exists()
    assert (post4_sessions / ".trash" / trash_id).read_bytes() == original
    assert "telegram:12345" not in [i.key for i in store.list_sessions()]
    assert store.get_or_create("telegram:12345").messages == []  # the cache was dropped

    [entry] = store.list_trash()
    assert (entry.trash_id, entry.key, entry.title, entry.message_count) == (
        trash_id, "telegram:12345", "What is in notes.txt?", 8)

    assert store.restore(trash_id) == "telegram:12345"
    assert path.read_bytes() == original
    assert store.list_trash() == []
    assert len(store.get_or_create("telegram:12345").messages) == 8

    second = store.delete("telegram:12345")
    path.write_text("", encoding="utf-8")
    with pytest.raises(FileExistsError, match="already exists"):
        store.restore(second)
    assert (post4_sessions / ".trash" / second).read_bytes() == original
    with pytest.raises(ValueError):
        store.restore("../telegram_12345.jsonl")
    with pytest.raises(SessionNotFoundError):
        store.delete("cli:nothing")


def test_clear_archives_the_file_and_starts_an_empty_one(post4_sessions: Path) -> None:
    store = SessionStore(post4_sessions)
    path = post4_sessions / "telegram_12345.jsonl"
    original = path.read_bytes()
    session = store.get_or_create("telegram:12345")
    archive = store.clear(session)
    assert archive is not None and archive.parent == post4_sessions / ".archive"
    assert re.fullmatch(r"telegram_12345-\d{8}-\d{6}\.jsonl", archive.name)
    assert archive.read_bytes() == original
    assert session.messages == [] and session.last_consolidated == 0
    header = json.loads(path.read_bytes())
    assert list(header) == POST4_HEADER_KEYS and header["last_consolidated"] == 0
    store.append(session, _turn(1))
    assert len(SessionStore(post4_sessions).load("telegram:12345").messages) == 4
    second = store.clear(session)
    assert second != archive and second is not None and second.exists() and archive.exists()


def test_legacy_sessions_move_in_from_home(tmp_path: Path) -> None:
    legacy = Path.home() / ".nanobot" / "sessions"
    legacy.mkdir(parents=True)
    shutil.copy(FIXTURES / "cli_direct.jsonl", legacy / "cli_direct.jsonl")
    store = SessionStore(tmp_path / "ws" / "sessions")
    session = store.get_or_create("cli:direct")
    assert len(session.messages) == 4
    assert not (legacy / "cli_direct.jsonl").exists()
    assert (tmp_path / "ws" / "sessions" / "cli_direct.jsonl").read_bytes() == (
        FIXTURES / "cli_direct.jsonl").read_bytes()


# --- search and export ----------------------------------------------------------------------------------

def test_search_is_case_insensitive_over_titles_and_messages(post4_sessions: Path) -> None:
    store = SessionStore(post4_sessions)
    hits = store.search("FIX THE bike")
    assert [key for key, _ in hits] == ["telegram:12345", "telegram:12345"]
    assert any("buy milk fix the bike" in snippet for _, snippet in hits)
    assert store.search("release") == [("slack:C01:1700000000.123", "Thread about the release"),
                                       ("slack:C01:1700000000.123", "Is the release ready?")]
    assert store.search('„.“') and store.search("nothing like this") == []
    assert len(store.search("question", limit=2)) == 2


def test_export_markdown_has_tool_calls_results_reasoning_and_times(post4_sessions: Path) -> None:
    text = SessionStore(post4_sessions).export_markdown("telegram:12345")
    assert text.startswith("# What is in notes.txt?\n")
    assert "**Tool call `read_file`**" in text
    assert '{\n  "path": "notes.txt"\n}' in text
    call_at = text.index("**Tool call `read_file`**")
    assert text.index("buy milk\nfix the bike") > call_at
    assert "<details><summary>Reasoning</summary>" in text and "The user wants the file" in text
    assert "List the folder first." in text
    assert "2026-03-08T14:36:46.280011" in text
    assert text.count("buy milk\nfix the bike") == 1  # a result is shown once, under its call


def test_export_json_has_metadata_and_messages(post4_sessions: Path) -> None:
    store = SessionStore(post4_sessions)
    document = json.loads(store.export_json("telegram:12345"))
    assert list(document["metadata"]) == POST4_HEADER_KEYS
    assert document["metadata"]["key"] == "telegram:12345"
    assert document["messages"] == store.load("telegram:12345").messages
    with pytest.raises(SessionNotFoundError):
        store.export_json("cli:missing")


def test_the_list_preview_leaves_out_markdown_marks(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    lines = [{"_type": "metadata", "created_at": "2026-11-24T10:00:00", "updated_at": "2026-11-24T10:00:05",
              "metadata": {}, "last_consolidated": 0},
             {"role": "user", "content": "Hello", "timestamp": "2026-11-24T10:00:00"},
             {"role": "assistant", "content": "## Done\nHere is a **reply** with `code` and __more__",
              "timestamp": "2026-11-24T10:00:05"}]
    (sessions / "desktop_x.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    [info] = SessionStore(sessions).list_sessions()
    assert info.preview == "Done Here is a reply with code and more"


def test_read_metadata_reads_the_metadata_line_alone(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    header = {"_type": "metadata", "created_at": "2026-11-24T10:00:00", "updated_at": "2026-11-24T10:00:05",
              "metadata": {"branch_of": {"key": "desktop:a", "at": 2}, "model": "big-model"}, "last_consolidated": 0}
    # A torn message line after the metadata line: reading the metadata never gets that far.
    (sessions / "desktop_b.jsonl").write_bytes(json.dumps(header).encode() + b'\n{"role": "user", "cont')
    store = SessionStore(sessions)
    assert store.read_metadata("desktop:b") == {"branch_of": {"key": "desktop:a", "at": 2}, "model": "big-model"}
    assert store.read_metadata("desktop:missing") == {}


@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_a_long_session_is_summarized_from_its_ends_as_if_read_whole(tmp_path: Path, monkeypatch, chunk: int) -> None:
    from nanobot_desktop.engine.sessions import listing

    header = {"_type": "metadata", "key": "desktop:long", "created_at": "2026-11-24T10:00:00",
              "updated_at": "2026-11-24T12:00:00", "metadata": {}, "last_consolidated": 0}
    lines = [json.dumps(header)]
    for number in range(6000):
        lines.append(json.dumps({"role": "user", "content": f"Question {number}: what about the 记忆 of plant {number}?"},
                                ensure_ascii=False))
        lines.append(json.dumps({"role": "assistant", "content": f"Answer **{number}** " + "x" * 150}))
    path = tmp_path / "desktop_long.jsonl"
    # One blank line in the middle (the reader skips it) and no newline after the last line.
    path.write_bytes(("\n".join(lines[:5000]) + "\n\n" + "\n".join(lines[5000:])).encode("utf-8"))
    assert path.stat().st_size > listing.WHOLE_FILE_BYTES
    monkeypatch.setattr(listing, "COUNT_CHUNK_BYTES", chunk)
    from_ends = listing.summarize(path)
    monkeypatch.setattr(listing, "WHOLE_FILE_BYTES", 1 << 40)
    whole = listing.summarize(path)
    assert from_ends == whole
    assert (whole.message_count, whole.title.startswith("Question 0"), whole.preview.startswith("Answer 5999")) == \
        (12000, True, True)
