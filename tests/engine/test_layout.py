"""engine/layout.py, the 0.3 session naming in the store, history.jsonl, and 0.3 configs (no CLI needed)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from nanobot_desktop.engine.config import load_config, patch_config_file
from nanobot_desktop.engine.memory.history_journal import HistoryJournal
from nanobot_desktop.engine.layout import (
    LayoutKind,
    V03SessionPaths,
    claim_workspace_id,
    decode_session_stem,
    detect_layout,
    encode_session_key,
    prepare_workspace,
)
from nanobot_desktop.engine.sessions.store import SessionStore


def test_detection_follows_the_disk_then_the_config(tmp_path):
    config = tmp_path / "data" / "config.json"
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    assert detect_layout(ws, config).kind is LayoutKind.POST4
    assert detect_layout(ws, config, {"contextWindowTokens": 1000}).kind is LayoutKind.V03
    assert detect_layout(ws, config, new_workspace="0.3").kind is LayoutKind.V03
    (ws / "memory" / "HISTORY.md").write_text("")
    assert detect_layout(ws, config, {"dream": {}}).kind is LayoutKind.POST4  # the disk wins over the config
    (ws / "memory" / "history.jsonl").write_text("")
    layout = detect_layout(ws, config)
    assert layout.is_v03 and layout.label == "nanobot 0.3 workspace"
    assert layout.history_file == ws / "memory" / "history.jsonl"
    assert "TOOLS.md" not in layout.bootstrap_files
    assert layout.sessions_root == tmp_path / "data" / "sessions"


def test_session_names_are_base64url_without_padding():
    assert encode_session_key("cli:direct") == "Y2xpOmRpcmVjdA"
    assert decode_session_stem("Y2xpOmRpcmVjdA") == "cli:direct"
    assert encode_session_key("telegram:12/3?") == "dGVsZWdyYW06MTIvMz8"
    assert decode_session_stem("dGVsZWdyYW06MTIvMz8") == "telegram:12/3?"
    assert decode_session_stem("cli_direct") is None  # a lossy legacy name is not a canonical one


def test_workspace_id_is_created_once_and_recovered_from_the_session_folder(tmp_path):
    ws, root = tmp_path / "ws", tmp_path / "sessions"
    ws.mkdir()
    first = claim_workspace_id(ws, root)
    assert len(first) == 32 and (ws / ".nanobot" / "workspace-id").read_text() == f"{first}\n"
    assert (root / first / ".workspace").read_text() == f"{ws.resolve()}\n"
    assert claim_workspace_id(ws, root) == first
    (ws / ".nanobot" / "workspace-id").unlink()
    assert claim_workspace_id(ws, root) == first  # found again through the folder's .workspace
    repairs: list[str] = []
    for damage in ("not an id\n", ""):  # what a command in the workspace may write there
        (ws / ".nanobot" / "workspace-id").write_text(damage)
        assert claim_workspace_id(ws, root, repairs.append) == first  # repaired from the session folder
        assert (ws / ".nanobot" / "workspace-id").read_text() == f"{first}\n"
    (ws / ".nanobot" / "workspace-id").unlink()
    (ws / ".nanobot" / "workspace-id").symlink_to(tmp_path / "elsewhere")
    assert claim_workspace_id(ws, root, repairs.append) == first
    assert len(repairs) == 3 and all("did not hold a workspace id" in text for text in repairs)
    assert not (ws / ".nanobot" / "workspace-id").is_symlink()


def test_a_copied_workspace_gets_a_session_folder_of_its_own(tmp_path):
    original, copy, root = tmp_path / "a", tmp_path / "b", tmp_path / "sessions"
    original.mkdir()
    first = claim_workspace_id(original, root)
    (copy / ".nanobot").mkdir(parents=True)
    (copy / ".nanobot" / "workspace-id").write_text(f"{first}\n")
    second = claim_workspace_id(copy, root)
    assert second != first and (root / second / ".workspace").read_text().strip() == str(copy.resolve())


def _v03_store(tmp_path: Path) -> SessionStore:
    return SessionStore(paths=V03SessionPaths(tmp_path / "sessions" / ("a" * 32)))


def test_v03_store_writes_canonical_names_with_last_archived(tmp_path):
    store = _v03_store(tmp_path)
    session = store.get_or_create("cli:direct")
    store.append(session, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    store.set_last_consolidated(session, 2)
    path = store.sessions_dir / "Y2xpOmRpcmVjdA.jsonl"
    header = json.loads(path.read_bytes().split(b"\n")[0])
    assert header["last_archived"] == header["last_consolidated"] == 2
    assert (store.sessions_dir / ".session-files.lock").exists()
    store.invalidate("cli:direct")
    assert store.get_or_create("cli:direct").last_consolidated == 2


def test_v03_store_reads_last_archived_first(tmp_path):
    store = _v03_store(tmp_path)
    store.sessions_dir.mkdir(parents=True)
    lines = [{"_type": "metadata", "key": "cli:x", "created_at": "2026-01-01T00:00:00",
              "updated_at": "2026-01-01T00:00:00", "metadata": {"title": "T"}, "last_archived": 1,
              "last_consolidated": 0},
             {"_type": "provider_state", "state": {"opaque": True}},
             {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    path = store.sessions_dir / f"{encode_session_key('cli:x')}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = store.load("cli:x")
    assert session is not None and session.last_consolidated == 1 and len(session.messages) == 2
    store.append(session, [{"role": "user", "content": "c"}])
    kept = path.read_text().splitlines()
    assert json.loads(kept[1]) == lines[1]  # the record 0.3 keeps for the provider stays where it was


def test_lossy_legacy_file_is_read_then_continued_under_the_canonical_name(tmp_path):
    store = _v03_store(tmp_path)
    store.sessions_dir.mkdir(parents=True)
    lossy = store.sessions_dir / "cli_direct.jsonl"
    lossy_bytes = (json.dumps({"_type": "metadata", "key": "cli:direct", "created_at": "2026-01-01T00:00:00",
                               "updated_at": "2026-01-01T00:00:00", "metadata": {}, "last_consolidated": 0})
                   + "\n" + json.dumps({"role": "user", "content": "old"}) + "\n").encode()
    lossy.write_bytes(lossy_bytes)
    assert [info.key for info in store.list_sessions()] == ["cli:direct"]
    session = store.get_or_create("cli:direct")
    assert [m["content"] for m in session.messages] == ["old"]
    store.append(session, [{"role": "assistant", "content": "new"}])
    canonical = store.sessions_dir / "Y2xpOmRpcmVjdA.jsonl"
    assert [json.loads(line).get("content") for line in canonical.read_text().splitlines()[1:]] == ["old", "new"]
    assert lossy.read_bytes() == lossy_bytes  # left exactly as it was
    assert [info.path for info in store.list_sessions()] == [canonical]  # listed once


def test_writes_wait_for_the_cli_holding_the_session_lock(tmp_path):
    from filelock import FileLock

    store = _v03_store(tmp_path)
    session = store.get_or_create("cli:direct")
    store.append(session, [{"role": "user", "content": "one"}])
    other = FileLock(str(store.sessions_dir / ".session-files.lock"))  # another process, as far as it knows
    other.acquire()
    done = threading.Event()
    writer = threading.Thread(target=lambda: (store.append(session, [{"role": "user", "content": "two"}]),
                                              done.set()))
    writer.start()
    try:
        assert not done.wait(0.3)  # blocked while the lock is held
    finally:
        other.release()
    writer.join(10)
    assert done.is_set()


def test_history_journal_appends_with_cursors_and_edits_in_place(tmp_path):
    journal = HistoryJournal(tmp_path / "memory")
    journal.memory_dir.mkdir()
    foreign = '{"cursor": 7, "timestamp": "2026-01-01 10:00", "content": "from the CLI", "session_key": "cli:direct"}'
    journal.file.write_text(foreign + "\nnot json\n")
    (journal.memory_dir / ".cursor").write_text("7")
    entry = journal.append("[2026-02-03 04:05] a summary")
    assert (entry.cursor, entry.timestamp, entry.content) == (8, "2026-02-03 04:05", "a summary")
    assert (journal.memory_dir / ".cursor").read_text() == "8"
    assert [e.cursor for e in journal.entries()] == [7, 8]
    assert journal.entries()[0].session_key == "cli:direct"
    journal.edit(8, "a better summary")
    lines = journal.file.read_text().splitlines()
    assert lines[0] == foreign and lines[1] == "not json"  # other lines byte for byte
    assert json.loads(lines[2]) == {"cursor": 8, "timestamp": "2026-02-03 04:05", "content": "a better summary"}
    assert [e.cursor for e in journal.search("BETTER")] == [8]
    with pytest.raises(KeyError):
        journal.edit(99, "x")
    with pytest.raises(ValueError):
        journal.append("   ")


def test_prepare_v03_workspace_makes_what_onboard_makes(tmp_path):
    ws = tmp_path / "ws"
    prepare_workspace(ws, LayoutKind.V03)
    assert (ws / "memory" / "history.jsonl").read_bytes() == b""
    assert not (ws / "memory" / "HISTORY.md").exists() and not (ws / "TOOLS.md").exists()
    assert (ws / ".git").is_dir() and "!memory/MEMORY.md" in (ws / ".gitignore").read_text()
    assert detect_layout(ws, tmp_path / "config.json").is_v03
    prepare_workspace(tmp_path / "old", LayoutKind.POST4)
    assert (tmp_path / "old" / "memory" / "HISTORY.md").exists()


def test_a_v03_config_with_nulls_loads_and_saves_back_its_nulls(tmp_path):
    path = tmp_path / "config.json"
    data = {"agents": {"defaults": {"model": "m", "contextWindowTokens": 65536,
                                    "dream": {"enabled": True, "intervalH": 2, "modelOverride": None}}},
            "providers": {"openai": {"apiKey": None, "apiBase": None}, "custom": {"apiKey": "k"}},
            "api": {"host": "127.0.0.1"}}
    path.write_text(json.dumps(data))
    config = load_config(path)
    assert config.providers.openai.api_key.get_secret_value() == ""
    patch_config_file(path, {"agents.defaults.model": "other"})
    saved = json.loads(path.read_text())
    assert saved["providers"]["openai"]["apiKey"] is None and saved["providers"]["openai"]["apiBase"] is None
    assert saved["agents"]["defaults"]["dream"] == data["agents"]["defaults"]["dream"]
    assert saved["agents"]["defaults"]["contextWindowTokens"] == 65536 and saved["api"] == data["api"]
    assert saved["agents"]["defaults"]["model"] == "other"


async def test_0_3_system_jobs_are_kept_never_run_and_never_removed(tmp_path):
    from nanobot_desktop.engine.background.cron import CronService

    store = tmp_path / "cron" / "jobs.json"
    store.parent.mkdir()
    job = {"id": "heartbeat", "name": "heartbeat", "enabled": True,
           "schedule": {"kind": "every", "atMs": None, "everyMs": 1000, "expr": None, "tz": "UTC"},
           "payload": {"kind": "system_event", "message": "", "deliver": False, "channel": None, "to": None,
                       "sessionKey": None, "originChannel": None},
           "state": {"nextRunAtMs": 1, "lastRunAtMs": None, "lastStatus": None, "lastError": None,
                     "runHistory": []},
           "createdAtMs": 1, "updatedAtMs": 1, "deleteAfterRun": False}
    store.write_text(json.dumps({"version": 1, "jobs": [job]}))
    ran: list[str] = []

    async def on_job(cron_job):
        ran.append(cron_job.id)

    cron = CronService(store, on_job=on_job)
    assert await cron.run_job("heartbeat", force=True) is False
    with pytest.raises(ValueError, match="protected system job"):
        cron.remove_job("heartbeat")
    assert ran == [] and json.loads(store.read_text())["jobs"][0]["payload"]["sessionKey"] is None


@pytest.mark.slow
def test_cli_onboard_keeps_a_0_3_workspace_0_3_and_can_make_one(tmp_path):
    import subprocess
    import sys

    def onboard(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "nanobot_desktop", "onboard", *args], check=False,
                              capture_output=True, text=True, timeout=120)

    made = onboard("--config", str(tmp_path / "a" / "config.json"), "--workspace", str(tmp_path / "ws03"),
                   "--layout", "0.3")
    assert made.returncode == 0 and "nanobot 0.3 layout" in made.stdout, made.stdout + made.stderr
    ws = tmp_path / "ws03"
    assert (ws / "memory" / "history.jsonl").exists() and (ws / ".git").is_dir()
    again = onboard("--config", str(tmp_path / "b" / "config.json"), "--workspace", str(ws))
    assert again.returncode == 0 and "existing nanobot workspace, nanobot 0.3 layout" in again.stdout
    assert not (ws / "memory" / "HISTORY.md").exists() and not (ws / "TOOLS.md").exists()


def test_context_of_a_0_3_workspace_leaves_tools_md_out_and_fits_history_in_tokens(tmp_path):
    from nanobot_desktop.engine.runtime import Engine
    from nanobot_desktop.engine.agent.token_window import consolidation_window, fit_history

    ws = tmp_path / "ws"
    prepare_workspace(ws, LayoutKind.V03)
    (ws / "TOOLS.md").write_text("# Tools\nsecret tool notes\n")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws), "contextWindowTokens": 9000}}}))
    engine = Engine.open(config)
    prompt = engine.context.build_system_prompt()
    assert "secret tool notes" not in prompt and "## SOUL.md" in prompt and "history.jsonl" in prompt
    assert engine.settings().context_window_tokens == 9000

    history = [{"role": "user", "content": "u" * 400}, {"role": "assistant", "content": "a" * 400},
               {"role": "user", "content": "v" * 400}, {"role": "assistant", "content": "b" * 400}]
    assert fit_history(history, 250) == history[2:]  # 100 tokens each: the last turn, from its user message
    assert fit_history(history, 1000) == history
    assert consolidation_window(history, 1000) is None  # 400 of 1000: not yet
    assert consolidation_window(history, 450) == 4  # nearly full: keep the 2 newest (in half the budget)


async def test_a_session_0_3_compacted_is_continued_from_its_summary(make_engine, fake_openai, tmp_path):
    prepare_workspace(tmp_path / "ws", LayoutKind.V03)
    engine = make_engine()
    key = "cli:direct"
    lines = [{"_type": "metadata", "key": key, "created_at": "2026-01-01T00:00:00",
              "updated_at": "2026-01-01T00:00:00", "last_archived": 2, "last_consolidated": 2,
              "metadata": {"_last_summary": {"text": "They agreed on blue tiles.",
                                             "last_active": "2026-01-01T00:00:00"}}},
             {"role": "user", "content": "old question about tiles"}, {"role": "assistant", "content": "old answer"},
             {"role": "user", "content": "Continue the active task from the working-memory checkpoint above.",
              "_hidden_history": True},
             {"role": "user", "content": "/status", "_command": True},
             {"role": "assistant", "content": "status shown", "_command": True}]
    engine.sessions.sessions_dir.mkdir(parents=True, exist_ok=True)
    path = engine.sessions.path_for(key)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    fake_openai.add_text("ok")
    result = await engine.loop.process(key, "and the grout?", channel="cli", chat_id="direct")
    assert result.status == "ok", result.error
    sent = fake_openai.requests[-1]["messages"]
    assert "They agreed on blue tiles." in sent[0]["content"]
    texts = [str(message.get("content")) for message in sent[1:]]
    assert not any("old question" in text or "status shown" in text for text in texts)
    await engine.shutdown()


async def test_a_0_3_job_bound_to_a_chat_runs_in_that_chat(make_engine, fake_openai, tmp_path):
    prepare_workspace(tmp_path / "ws", LayoutKind.V03)
    engine = make_engine()
    job = {"id": "j1", "name": "water", "enabled": True,
           "schedule": {"kind": "every", "atMs": None, "everyMs": 3_600_000, "expr": None, "tz": None},
           "payload": {"kind": "agent_turn", "message": "remind me to water the plants", "deliver": True,
                       "channel": "telegram", "to": "42", "sessionKey": "telegram:42",
                       "originChannel": "telegram", "originChatId": "42", "originMetadata": {"x": 1}},
           "state": {"nextRunAtMs": None, "lastRunAtMs": None, "lastStatus": None, "lastError": None},
           "createdAtMs": 1, "updatedAtMs": 1, "deleteAfterRun": False}
    store = engine.cron.store_path
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps({"version": 1, "jobs": [job]}))
    fake_openai.add_text("Time to water the plants.")
    assert await engine.cron.run_job("j1", force=True)
    bound = engine.sessions.load("telegram:42")
    assert bound is not None and bound.messages[-1]["content"] == "Time to water the plants."
    assert engine.sessions.load("cron:j1") is None
    saved = json.loads(store.read_text())["jobs"][0]["payload"]
    assert saved["originMetadata"] == {"x": 1} and saved["sessionKey"] == "telegram:42"  # kept as 0.3 wrote it
    await engine.shutdown()


def _v03_memory(tmp_path: Path):
    from nanobot_desktop.engine.memory.store import MemoryStore
    from nanobot_desktop.engine.workspace import Workspace

    root = tmp_path / "ws"
    prepare_workspace(root, LayoutKind.V03)
    memory = MemoryStore(Workspace.at(root), detect_layout(root, tmp_path / "config.json"))
    assert memory.journal is not None
    memory.journal.append("an earlier entry")
    return memory


def test_a_failed_consolidation_leaves_history_jsonl_and_its_cursor_byte_identical(tmp_path, monkeypatch):
    import errno

    memory = _v03_memory(tmp_path)
    journal_file, cursor_file = memory.journal.file, memory.journal.cursor_file
    before = (journal_file.read_bytes(), cursor_file.read_bytes(), memory.memory_file.read_bytes())

    def disk_full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(memory.memory_file))

    monkeypatch.setattr(memory, "write_long_term", disk_full)
    with pytest.raises(OSError):
        memory.commit_consolidation("a summary that must not stay", "new facts")
    assert (journal_file.read_bytes(), cursor_file.read_bytes(), memory.memory_file.read_bytes()) == before
    assert not (memory.workspace.memory_dir / "HISTORY.md").exists()


def test_a_journal_entry_whose_cursor_cannot_be_written_is_taken_back(tmp_path, monkeypatch):
    import errno

    from nanobot_desktop.engine.memory import history_journal

    memory = _v03_memory(tmp_path)
    journal = memory.journal
    before = (journal.file.read_bytes(), journal.cursor_file.read_bytes())

    def disk_full(path, *_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(history_journal, "atomic_write_text", disk_full)
    with pytest.raises(OSError):
        journal.append("an entry without its cursor")
    assert (journal.file.read_bytes(), journal.cursor_file.read_bytes()) == before
