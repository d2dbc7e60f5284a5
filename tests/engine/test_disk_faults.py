"""A full disk, a file size limit or a read-only folder costs nothing already written (issue 18).

Each test runs the real CLI in a subprocess against the loopback fake endpoint with writes that fail
for real (RLIMIT_FSIZE with SIGXFSZ ignored; a read-only bind mount or permission bits; a tiny tmpfs
filled up), then checks that the session file, HISTORY.md, MEMORY.md and the config are byte for
byte what they were before the failing write, that the message says which file and what to do, and
that no traceback was printed.
"""

from __future__ import annotations

import json
from pathlib import Path


import pytest

from nanobot_desktop.engine.sessions.store import SessionStore
from nanobot_desktop.engine.workspace import Workspace
from tests.conftest import write_test_config
from tests.fake_openai import Reply, text_reply, tool_calls_reply
from tests.write_faults import fill_disk, read_only, run_cli_limited, snapshot, tiny_tmpfs

LONG_REPLY = "The answer, at length. " * 400  # ~9 KB


def _setup(tmp_path: Path, base_url: str, ws: Path | None = None, **defaults) -> tuple[Path, Workspace, Path]:
    ws = ws or tmp_path / "ws"
    config = write_test_config(tmp_path / "cfg" / "config.json", base_url, ws, **defaults)
    workspace = Workspace.at(ws)
    workspace.sync_templates()
    store = SessionStore(workspace.sessions_dir)
    session = store.get_or_create("cli:direct")
    for number in range(3):
        store.append(session, [{"role": "user", "content": f"earlier question {number}"},
                               {"role": "assistant", "content": f"earlier answer {number}"}])
    return config, workspace, session.path


def _files(config: Path, workspace: Workspace, session_file: Path) -> list[Path]:
    return [session_file, workspace.history_file, workspace.memory_file, config]


def _assert_clean_failure(done, *needles: str) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ")
    for needle in needles:
        assert needle in last, last
    return last


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


# ---- a file size limit (no root needed) -----------------------------------------------------------


@pytest.mark.slow
def test_user_message_that_does_not_fit_leaves_every_file_as_it_was(fake_openai, tmp_path):
    config, workspace, session_file = _setup(tmp_path, fake_openai.base_url)
    fake_openai.add_text("never asked for")
    before = snapshot(*_files(config, workspace, session_file))
    limit = session_file.stat().st_size + 40  # room for part of the user's line, not all of it
    done = run_cli_limited("agent", "-m", "a question that will not fit " * 3, "--config", str(config),
                           home=tmp_path, file_size_limit=limit)
    last = _assert_clean_failure(done, str(session_file), "cannot grow any larger",
                                 "your message was not saved and was not sent")
    assert last.count(".") >= 1 and "\n" not in last
    assert snapshot(*_files(config, workspace, session_file)) == before
    assert fake_openai.requests == []  # nothing was sent that the session does not record


@pytest.mark.slow
def test_reply_that_does_not_fit_is_printed_and_the_file_keeps_only_whole_lines(fake_openai, tmp_path):
    config, _workspace, session_file = _setup(tmp_path, fake_openai.base_url)
    fake_openai.add_text(LONG_REPLY)
    original = session_file.read_bytes()
    limit = len(original) + 2000  # the user's line fits, the 9 KB reply does not
    done = run_cli_limited("agent", "-m", "tell me at length", "--config", str(config), home=tmp_path,
                           file_size_limit=limit)
    _assert_clean_failure(done, "cannot grow any larger", "the reply is shown but was not saved")
    assert done.stdout.strip() == LONG_REPLY.strip()  # the person still gets to read it
    data = session_file.read_bytes()
    assert data.endswith(b"\n")
    # Exactly one whole line more than before (the user's message); the metadata line kept its width.
    assert data.count(b"\n") == original.count(b"\n") + 1
    assert _lines(session_file)[-1]["content"] == "tell me at length"
    width = len(original.split(b"\n", 1)[0]) + 1
    assert len(data.split(b"\n", 1)[0]) + 1 == width  # line 1 updated in place, same width
    assert data[width:].startswith(original[width:])  # every byte before the failing write is as it was


@pytest.mark.slow
def test_torn_tail_with_no_room_for_the_repair_stays_byte_identical(fake_openai, tmp_path):
    config, workspace, session_file = _setup(tmp_path, fake_openai.base_url)
    with open(session_file, "ab") as handle:  # a crash left half a line
        handle.write(b'{"role": "assistant", "content": "half of a rep')
    fake_openai.add_text("never asked for")
    before = snapshot(*_files(config, workspace, session_file))
    done = run_cli_limited("agent", "-m", "hello", "--config", str(config), home=tmp_path,
                           file_size_limit=session_file.stat().st_size + 1)  # room for the newline only
    _assert_clean_failure(done, "cannot grow any larger", "your message was not saved")
    assert snapshot(*_files(config, workspace, session_file)) == before


def _consolidating_endpoint(fake_openai, entry: str, memory: str, reply: str = "ok") -> None:
    def respond(body: dict) -> Reply:
        if any(tool["function"]["name"] == "save_memory" for tool in body.get("tools") or []):
            return tool_calls_reply([("save_memory", {"history_entry": entry, "memory_update": memory})])
        return text_reply(reply)
    fake_openai.respond_with(respond)


def _consolidation_case(fake_openai, tmp_path, *, entry: str, memory: str, history_size: int, limit: int):
    config, workspace, session_file = _setup(tmp_path, fake_openai.base_url, memoryWindow=4)
    workspace.history_file.write_text("[2026-01-01 10:00] An old entry.\n\n" + "x" * history_size + "\n\n")
    _consolidating_endpoint(fake_openai, entry, memory)
    before = snapshot(workspace.history_file, workspace.memory_file, config)
    header_before = json.loads(session_file.read_bytes().split(b"\n", 1)[0])
    done = run_cli_limited("agent", "-m", "next", "--config", str(config), home=tmp_path, file_size_limit=limit)
    header_after = json.loads(session_file.read_bytes().split(b"\n", 1)[0])
    return done, before, workspace, config, header_before, header_after


@pytest.mark.slow
def test_history_entry_that_does_not_fit_changes_neither_history_nor_memory(fake_openai, tmp_path):
    done, before, workspace, config, header_before, header_after = _consolidation_case(
        fake_openai, tmp_path, entry="[2026-11-24 10:00] " + "A long summary. " * 100,
        memory="# Memory\n\nA new fact.\n", history_size=20_000, limit=20_600)
    assert done.returncode == 0, done.stderr  # the turn itself was fine; memory just was not updated
    assert "Traceback" not in done.stderr
    assert (f"memory was not updated: {workspace.history_file} cannot grow any larger (the file size limit was "
            "reached): raise the limit or move the file away; memory was left as it was.") in done.stderr
    assert snapshot(workspace.history_file, workspace.memory_file, config) == before
    assert header_after["last_consolidated"] == header_before["last_consolidated"] == 0
    assert not list((workspace.memory_dir / ".versions").glob("*"))  # no version of an unchanged file


@pytest.mark.slow
def test_memory_that_does_not_fit_undoes_the_history_entry_already_written(fake_openai, tmp_path):
    done, before, workspace, config, header_before, header_after = _consolidation_case(
        fake_openai, tmp_path, entry="[2026-11-24 10:00] A short summary.",
        memory="# Memory\n\n" + "A fact that goes on. " * 2000, history_size=100, limit=20_000)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert f"memory was not updated: {workspace.memory_file} cannot grow any larger" in done.stderr
    assert snapshot(workspace.history_file, workspace.memory_file, config) == before
    assert header_after["last_consolidated"] == header_before["last_consolidated"] == 0
    assert not list((workspace.memory_dir / ".versions").glob("*"))


# ---- a read-only folder ----------------------------------------------------------------------------


@pytest.mark.slow
def test_read_only_workspace_is_one_sentence_and_changes_nothing(fake_openai, tmp_path):
    config, workspace, session_file = _setup(tmp_path, fake_openai.base_url)
    fake_openai.add_text("never asked for")
    before = snapshot(*_files(config, workspace, session_file))
    with read_only(workspace.root) as how:
        done = run_cli_limited("agent", "-m", "hello", "--config", str(config), home=tmp_path)
    expected = "read-only file system" if how == "bind mount" else "no permission to write"
    _assert_clean_failure(done, expected, "your message was not saved")
    assert snapshot(*_files(config, workspace, session_file)) == before


# ---- a full disk (root: a tiny tmpfs) --------------------------------------------------------------


@pytest.mark.slow
def test_full_disk_keeps_whole_lines_and_says_so(fake_openai, tmp_path):
    with tiny_tmpfs(tmp_path / "disk", 512) as disk:
        config, workspace, session_file = _setup(tmp_path, fake_openai.base_url, ws=disk / "ws")
        fill_disk(disk, leave=0)
        fake_openai.add_text(LONG_REPLY)
        before = snapshot(*_files(config, workspace, session_file))
        done = run_cli_limited("agent", "-m", "tell me at length " * 300, "--config", str(config),
                               home=tmp_path)
        _assert_clean_failure(done, f"The disk holding {session_file.parent} is full: free some space",
                              "your message was not saved")
        assert snapshot(*_files(config, workspace, session_file)) == before


@pytest.mark.slow
def test_onboard_into_a_read_only_folder_is_one_sentence(tmp_path):
    folder = tmp_path / "nb"
    folder.mkdir()
    with read_only(folder) as how:
        done = run_cli_limited("onboard", "--config", str(folder / "config.json"), "--workspace",
                               str(tmp_path / "ws"), home=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and "config.json" in last  # the config's own wording (config.io)
    assert ("read-only file system" if how == "bind mount" else "permission") in last.lower()
    assert list(folder.iterdir()) == []


@pytest.mark.slow
@pytest.mark.heavy
def test_the_reported_run_eight_turns_on_a_nearly_full_2_mb_disk(fake_openai, tmp_path):
    """Issue 18 as reported: 2 MB, filled to its last 56 KB, eight turns with long replies and a small
    memory window. Every run ends in a sentence (never a traceback), the session holds whole lines only,
    HISTORY.md whole entries only, and each reply is printed whether or not it could be saved."""
    with tiny_tmpfs(tmp_path / "disk", 2048) as disk:
        config, workspace, session_file = _setup(tmp_path, fake_openai.base_url, ws=disk / "ws", memoryWindow=4)
        replies = iter(range(1, 100))

        def respond(body: dict) -> Reply:
            if any(tool["function"]["name"] == "save_memory" for tool in body.get("tools") or []):
                return tool_calls_reply([("save_memory", {
                    "history_entry": "[2026-11-24 10:00] " + "Summary words. " * 600,
                    "memory_update": "# Memory\n" + "fact " * 3000})])
            return text_reply(f"Reply {next(replies)}: " + "long reply text " * 530)

        fake_openai.respond_with(respond)
        memory_before = workspace.memory_file.read_bytes()
        fill_disk(disk, leave=56 * 1024)
        outcomes = []
        for turn in range(8):
            done = run_cli_limited("agent", "-m", f"turn {turn} " + "question " * 50, "--config", str(config),
                                   home=tmp_path)
            assert "Traceback" not in done.stderr and "Unexpected error" not in done.stderr
            # The reply is shown, saved or not (unless the question itself could not be saved, and so not sent).
            assert done.stdout.startswith("Reply ") or "your message was not saved and was not sent" in done.stderr
            outcomes.append(done.returncode)
            if done.returncode:
                assert done.stderr.strip().splitlines()[-1].startswith(
                    f"Error: The disk holding {session_file.parent} is full: free some space; ")
        assert 1 in outcomes  # the disk did fill up during the run
        data = session_file.read_bytes()
        assert data.endswith(b"\n")
        assert all(isinstance(json.loads(line), dict) for line in data.splitlines() if line.strip())
        history = workspace.history_file.read_bytes()
        assert history == b"" or history.endswith(b"\n\n")
        memory = workspace.memory_file.read_bytes()
        assert memory == memory_before or memory == ("# Memory\n" + "fact " * 3000).encode()
