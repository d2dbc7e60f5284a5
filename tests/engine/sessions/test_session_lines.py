"""Session files hold up against bad lines and concurrent writers (issue 13, "Bad lines").

A line in a wrong shape (which the agent itself can append through exec) is skipped with a warning
like a corrupt line, and later turns of the session work. Two processes appending at once never lose
a line, even when the metadata line is unpadded (as the nanobot CLI writes it) and so gets rewritten.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nanobot_desktop.engine.sessions.file import header_line, parse_session_bytes
from nanobot_desktop.engine.sessions.lock import LOCK_NAME
from nanobot_desktop.engine.sessions.store import SessionStore

HEADER = {"_type": "metadata", "key": "cli:direct", "created_at": "2026-01-01T10:00:00",
          "updated_at": "2026-01-01T10:00:00", "metadata": {}, "last_consolidated": 0}
GOOD_BEFORE = {"role": "user", "content": "first question"}
GOOD_AFTER = {"role": "assistant", "content": "first answer"}

BAD_LINES = {
    "tool_calls_not_a_list": {"role": "assistant", "content": None, "tool_calls": "notalist"},
    "function_is_a_string": {"role": "assistant", "content": None,
                             "tool_calls": [{"id": "call_1", "type": "function", "function": "read_file"}]},
    "tool_call_not_an_object": {"role": "assistant", "content": None, "tool_calls": ["call_1"]},
    "tool_call_without_id": {"role": "assistant", "content": None,
                             "tool_calls": [{"type": "function", "function": {"name": "x", "arguments": "{}"}}]},
    "tool_call_without_name": {"role": "assistant", "content": None,
                               "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]},
    "arguments_a_number": {"role": "assistant", "content": None,
                           "tool_calls": [{"id": "c", "function": {"name": "x", "arguments": 5}}]},
    "role_a_number": {"role": 7, "content": "hi"},
    "role_a_list": {"role": ["user"], "content": "hi"},
    "role_unknown": {"role": "wizard", "content": "hi"},
    "no_role": {"content": "hi"},
    "content_a_number": {"role": "user", "content": 42},
    "content_an_object": {"role": "user", "content": {"text": "hi"}},
    "content_list_of_strings": {"role": "user", "content": ["hi"]},
    "tool_without_call_id": {"role": "tool", "name": "read_file", "content": "result"},
    "tool_call_id_a_number": {"role": "tool", "tool_call_id": 3, "content": "result"},
    "name_a_list": {"role": "tool", "tool_call_id": "c", "name": ["x"], "content": "result"},
    "tool_calls_on_a_user": {"role": "user", "content": "hi", "tool_calls": []},
}
NON_OBJECT_LINES = {"a_list": [1, 2], "a_string": "hello", "a_number": 12, "null": None}


def _write_session(path: Path, middle: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header_line(HEADER) + (json.dumps(GOOD_BEFORE) + "\n").encode() + middle
                     + (json.dumps(GOOD_AFTER) + "\n").encode())


@pytest.mark.parametrize("name", sorted(BAD_LINES) + sorted(NON_OBJECT_LINES))
def test_a_bad_line_shape_is_skipped_with_a_warning(name, tmp_path):
    bad = BAD_LINES.get(name, NON_OBJECT_LINES.get(name))
    data = header_line(HEADER) + b"".join((json.dumps(obj) + "\n").encode() for obj in (GOOD_BEFORE, bad, GOOD_AFTER))
    parsed = parse_session_bytes(data, "s.jsonl")
    assert parsed.messages == [GOOD_BEFORE, GOOD_AFTER]
    assert len(parsed.warnings) == 1
    assert parsed.warnings[0].startswith("s.jsonl: line 3 ") and parsed.warnings[0].endswith("; skipped")


def test_good_shapes_are_kept(tmp_path):
    good = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "text"},
        {"role": "assistant", "content": "done", "tool_calls": None, "reasoning_content": "hmm"},
        {"role": "assistant", "content": "", "tool_calls": []},
    ]
    data = header_line(HEADER) + b"".join((json.dumps(obj) + "\n").encode() for obj in good)
    parsed = parse_session_bytes(data)
    assert parsed.messages == good and parsed.warnings == []


@pytest.mark.parametrize("name", ["tool_calls_not_a_list", "function_is_a_string", "role_a_number",
                                  "content_an_object"])
def test_later_turns_of_a_session_with_a_bad_line_work(name, make_engine, fake_openai):
    engine = make_engine()
    path = engine.sessions.path_for("cli:direct")
    _write_session(path, (json.dumps(BAD_LINES[name]) + "\n").encode())
    before = path.read_bytes()
    fake_openai.add_text("still working")

    async def turn():
        try:
            return await engine.loop.process("cli:direct", "and now?")
        finally:
            await engine.shutdown()

    result = asyncio.run(turn())
    assert result.status == "ok" and result.reply == "still working"
    sent = fake_openai.requests[0]["messages"]
    assert [m["content"] for m in sent if m["role"] != "system"][-3:] == ["first question", "first answer",
                                                                          sent[-1]["content"]]
    width = len(header_line(HEADER))  # line 1 is updated in place; every other byte before stays
    after = path.read_bytes()
    assert len(after.split(b"\n", 1)[0]) + 1 == width and after[width:].startswith(before[width:])
    assert json.dumps(BAD_LINES[name]).encode() in path.read_bytes()  # the bad line stays on disk


# ---- two writers -----------------------------------------------------------------------------------

_WORKER = r"""
import json, sys
from pathlib import Path
from nanobot_desktop.engine.sessions.store import SessionStore
name, folder = sys.argv[1], Path(sys.argv[2])
for line in sys.stdin:
    round_number = int(line)
    store = SessionStore(folder)
    session = store.load("cli:direct")
    store.append(session, [{"role": "user", "content": f"{name} question {round_number}"},
                           {"role": "assistant", "content": f"{name} answer {round_number}"}])
    print("done", flush=True)
"""


def _unpad_header(path: Path) -> None:
    """What the nanobot CLI does on every save: line 1 written compactly (then the file replaced)."""
    data = path.read_bytes()
    first, rest = data.split(b"\n", 1)
    header = json.loads(first)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(json.dumps(header).encode() + b"\n" + rest)
    os.replace(tmp, path)


def test_two_processes_appending_20_rounds_with_an_unpadded_header_lose_nothing(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "cli_direct.jsonl"
    path.write_bytes(json.dumps(HEADER).encode() + b"\n")  # unpadded, as the CLI writes it
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, name, str(folder)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=env) for name in ("A", "B")]
    try:
        for round_number in range(20):
            _unpad_header(path)
            for worker in workers:  # both start at once: both see an unpadded line 1 and want to rewrite it
                worker.stdin.write(f"{round_number}\n")
                worker.stdin.flush()
            for worker in workers:
                assert worker.stdout.readline() == "done\n"
    finally:
        for worker in workers:
            worker.stdin.close()
            worker.wait(timeout=30)
    messages = SessionStore(folder).load("cli:direct").messages
    contents = {m["content"] for m in messages}
    expected = {f"{name} {kind} {r}" for name in "AB" for kind in ("question", "answer") for r in range(20)}
    assert expected - contents == set()
    assert len(messages) == 80
    assert (folder / LOCK_NAME).exists()  # the same lock file name nanobot 0.3.5 uses for its session folder
