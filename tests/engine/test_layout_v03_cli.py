"""The app and the real nanobot 0.3.5 CLI taking turns on one 0.3 workspace (issue 11's acceptance).

Each test runs `nanobot onboard` of 0.3.5 in a HOME of its own, points the config at the loopback fake
endpoint, and alternates CLI turns with the engine's. What one program writes must be what the other
reads, and neither may lose, duplicate or move the other's files.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from nanobot_desktop.engine.layout import encode_session_key
from nanobot_desktop.engine.runtime import Engine
from tests.fake_openai import Reply, text_reply, tool_calls_reply
from tests.reference_cli import V035, onboard, reference_cli, run_reference_cli


def _home() -> Path:
    return Path(os.environ["HOME"])  # the test's own HOME (tests/conftest.py), shared by app and CLI


def _onboard(base_url: str, **defaults: object) -> Path:
    """`nanobot onboard` (0.3.5), then the config pointed at the fake; returns the config path."""
    result = onboard(V035, _home())
    assert result.returncode == 0, result.stdout + result.stderr
    config_path = _home() / ".nanobot" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["agents"]["defaults"].update({"model": "fake-model", "provider": "custom", **defaults})
    config["providers"]["custom"].update({"apiKey": "sk-test", "apiBase": base_url})
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return config_path


def _cli_turn(message: str) -> str:
    result = run_reference_cli(V035, ["agent", "-m", message, "--no-markdown"], home=_home())
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _texts(request: dict) -> list[str]:
    """Every text the request carried, user and assistant (content strings and text parts)."""
    out = []
    for message in request["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [part.get("text", "") for part in content if isinstance(part, dict)]
    return out


def _tree(*folders: Path) -> dict[str, str]:
    """path -> sha256 of every file below the folders (the git repository's internals left out)."""
    found: dict[str, str] = {}
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and ".git" not in path.relative_to(folder).parts[:1]:
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _open_engine(config_path: Path) -> Engine:
    engine = Engine.open(config_path)
    assert engine.layout.is_v03, engine.layout.reason
    return engine


def _session_file(engine: Engine, key: str) -> Path:
    return engine.sessions.sessions_dir / f"{encode_session_key(key)}.jsonl"


@pytest.mark.heavy
@pytest.mark.slow
async def test_cli_turns_then_app_continues_then_cli_sees_the_app_turn(fake_openai):
    config_path = _onboard(fake_openai.base_url)
    workspace = _home() / ".nanobot" / "workspace"
    fake_openai.add_text("CLI reply one")
    fake_openai.add_text("CLI reply two")
    _cli_turn("first from the CLI")
    _cli_turn("second from the CLI")
    sessions_root = _home() / ".nanobot" / "sessions"
    before = _tree(workspace, sessions_root)

    engine = _open_engine(config_path)
    try:
        listed = {info.key: info for info in engine.sessions.list_sessions()}
        assert set(listed) == {"cli:direct"}
        assert listed["cli:direct"].message_count == 4
        assert engine.sessions.search("second from the cli") == [("cli:direct", "second from the CLI")]
        fake_openai.add_text("the app's answer")
        result = await engine.loop.process("cli:direct", "a turn from the app", channel="cli", chat_id="direct")
        assert result.status == "ok", result.error
        app_request = fake_openai.requests[-1]
        assert "first from the CLI" in _texts(app_request) and "CLI reply two" in _texts(app_request)
    finally:
        await engine.shutdown()

    session_file = _session_file(engine, "cli:direct")
    header = json.loads(session_file.read_bytes().split(b"\n", 1)[0])
    assert header["key"] == "cli:direct" and header["last_archived"] == header["last_consolidated"] == 0
    assert "_last_usage" in header["metadata"]  # the CLI's metadata kept

    fake_openai.add_text("CLI reply three")
    _cli_turn("third from the CLI")
    texts = _texts(fake_openai.requests[-1])
    assert any("a turn from the app" in text for text in texts)
    assert "the app's answer" in texts

    after = _tree(workspace, sessions_root)
    assert set(before) <= set(after), f"files lost: {set(before) - set(after)}"
    new_files = set(after) - set(before)
    assert all(not path.endswith(".jsonl") for path in new_files), new_files  # nothing duplicated
    assert not (workspace / "sessions").exists()
    assert not (workspace / "memory" / "HISTORY.md").exists()
    assert not (workspace / "TOOLS.md").exists()
    lines = [json.loads(line) for line in session_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    roles = [line.get("role") for line in lines[1:]]
    assert roles == ["user", "assistant"] * 4


@pytest.mark.heavy
@pytest.mark.slow
async def test_app_first_then_cli_sees_it_and_app_sees_the_cli(fake_openai):
    config_path = _onboard(fake_openai.base_url)
    workspace = _home() / ".nanobot" / "workspace"
    assert not (workspace / ".nanobot" / "workspace-id").exists()  # onboard alone makes no id
    before = _tree(workspace)

    engine = _open_engine(config_path)
    try:
        assert engine.sessions.list_sessions() == []
        fake_openai.add_text("the app speaks first")
        result = await engine.loop.process("cli:direct", "hello from the app", channel="cli", chat_id="direct")
        assert result.status == "ok", result.error
    finally:
        await engine.shutdown()
    workspace_id = (workspace / ".nanobot" / "workspace-id").read_text().strip()
    namespace = _home() / ".nanobot" / "sessions" / workspace_id
    assert (namespace / ".workspace").read_text().strip() == str(workspace.resolve())
    assert (namespace / "Y2xpOmRpcmVjdA.jsonl").is_file()

    fake_openai.add_text("CLI answers")
    _cli_turn("the CLI follows")
    texts = _texts(fake_openai.requests[-1])
    assert any("hello from the app" in text for text in texts) and "the app speaks first" in texts
    assert [p.name for p in namespace.glob("*.jsonl")] == ["Y2xpOmRpcmVjdA.jsonl"]  # the CLI used the app's file

    engine = _open_engine(config_path)
    try:
        session = engine.sessions.load("cli:direct")
        assert session is not None
        assert [m["content"] for m in session.messages if m["role"] == "user"][-1] == "the CLI follows"
    finally:
        await engine.shutdown()
    after = _tree(workspace)
    assert set(before) <= set(after)
    assert not (workspace / "memory" / "HISTORY.md").exists()
    assert not (workspace / "sessions").exists()


def _reference_python() -> Path:
    return reference_cli(V035).parent / "python"


def _run_035_python(code: str, workspace: Path) -> str:
    """Run `code` with the 0.3.5 package's own Python (its own readers and git store)."""
    result = subprocess.run([str(_reference_python()), "-c", code, str(workspace)], check=False, capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL,
                            env={**os.environ, "HOME": str(_home())})
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.heavy
@pytest.mark.slow
async def test_app_consolidation_appends_to_history_jsonl_that_035_reads(fake_openai):
    config_path = _onboard(fake_openai.base_url, maxTokens=200)
    workspace = _home() / ".nanobot" / "workspace"
    fake_openai.add_text("CLI reply " + "x" * 1200)
    _cli_turn("a long question " + "y" * 1200)

    def answer(body: dict) -> Reply | None:
        tools = [tool.get("function", {}).get("name") for tool in body.get("tools") or []]
        if "save_memory" in tools:
            return tool_calls_reply([("save_memory", {
                "history_entry": "[2026-01-02 03:04] The user asked a long question about y; answered with x.",
                "memory_update": "# Memory\n\n- the user likes y\n"})])
        return text_reply("short app answer")

    fake_openai.respond_with(answer)
    engine = _open_engine(config_path)
    try:
        # A window where the CLI's two long messages fill most of what is left after the system prompt
        # and the reply: the app's next turn consolidates first (0.3's 200k would never get there).
        system_tokens = len(engine.context.build_system_prompt()) // 4
        engine.config.agents.defaults.model_extra["contextWindowTokens"] = system_tokens + 200 + 1024 + 500
        result = await engine.loop.process("cli:direct", "and now?", channel="cli", chat_id="direct")
        assert result.status == "ok", result.error
        await engine.loop.wait_for_consolidation("cli:direct")
        engine.memory.flush()
        entries = engine.memory.journal.entries()
    finally:
        await engine.shutdown()
    assert [(e.timestamp, e.content, e.session_key) for e in entries] == [
        ("2026-01-02 03:04", "The user asked a long question about y; answered with x.", "cli:direct")]
    assert (workspace / "memory" / ".cursor").read_text() == str(entries[0].cursor)
    assert not (workspace / "memory" / "HISTORY.md").exists()
    header = json.loads(next(iter(engine.sessions.sessions_dir.glob("*.jsonl"))).read_bytes().split(b"\n")[0])
    assert header["last_archived"] == header["last_consolidated"] > 0

    read_back = _run_035_python(
        "import json, sys\nfrom pathlib import Path\nfrom nanobot.agent.memory import MemoryStore\n"
        "store = MemoryStore(Path(sys.argv[1]))\n"
        "print(json.dumps([store.read_unprocessed_history(0), store.get_latest_cursor()]))", workspace)
    history, latest = json.loads(read_back.strip().splitlines()[-1])
    assert [(entry["content"], entry.get("session_key")) for entry in history] == [(entries[0].content, "cli:direct")]
    assert latest == entries[0].cursor
    log = _run_035_python(
        "import sys\nfrom pathlib import Path\nfrom nanobot.agent.memory import MemoryStore\n"
        "print([c.message for c in MemoryStore(Path(sys.argv[1])).git.log()])", workspace)
    assert "consolidation: edit memory/MEMORY.md" in log  # the app's commit, read by 0.3's own git store


@pytest.mark.slow
async def test_a_dream_commit_is_a_restorable_version(fake_openai):
    config_path = _onboard(fake_openai.base_url)
    workspace = _home() / ".nanobot" / "workspace"
    initial = (workspace / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    _run_035_python(
        "import sys\nfrom pathlib import Path\nfrom nanobot.agent.memory import MemoryStore\n"
        "store = MemoryStore(Path(sys.argv[1]))\n"
        "store.write_memory('# Memory\\n\\n- dreamt fact\\n')\n"
        "print(store.git.auto_commit(store.build_dream_commit_message("
        "'dream: periodic memory consolidation', store.dream_content_diff())))", workspace)

    engine = _open_engine(config_path)
    try:
        assert engine.memory.uses_git_versions
        versions = engine.memory.list_versions()
        assert [v.source for v in versions] == ["dream", "init"]
        assert engine.memory.read_version(versions[0]) == "# Memory\n\n- dreamt fact\n"
        assert engine.memory.read_version(versions[1]) == initial
        engine.memory.restore_version(versions[1])
        engine.memory.flush()  # on an event-loop thread the commit runs beside the caller
        assert (workspace / "memory" / "MEMORY.md").read_text(encoding="utf-8") == initial
        engine.memory.write_long_term("# Memory\n\n- my own fact\n", source="user")
        engine.memory.flush()
        after = engine.memory.list_versions()
        assert [v.source for v in after] == ["user", "restore", "dream", "init"]
        assert not (workspace / "memory" / ".versions").exists()
    finally:
        await engine.shutdown()
    log = _run_035_python(
        "import sys\nfrom pathlib import Path\nfrom nanobot.agent.memory import MemoryStore\n"
        "store = MemoryStore(Path(sys.argv[1]))\n"
        "print([c.message.splitlines()[0] for c in store.git.log()])", workspace)
    assert "user: edit memory/MEMORY.md" in log and "dream: periodic memory consolidation" in log
    status = subprocess.run(["git", "status", "--porcelain", "--", "memory/MEMORY.md"], check=False,  # noqa: ASYNC221
                            cwd=workspace, capture_output=True, text=True)
    if status.returncode == 0:  # where the git CLI exists, it agrees the file is committed
        assert status.stdout == ""


@pytest.fixture(autouse=True)
def _needs_035() -> None:
    reference_cli(V035)  # skips with the reason when the 0.3.5 CLI is not installed


@pytest.mark.slow
async def test_a_0_3_workspace_made_by_the_app_works_with_the_035_cli(fake_openai):
    from nanobot_desktop.engine.config import patch_settings
    from nanobot_desktop.engine.layout import LayoutKind, prepare_workspace

    config_path = _home() / ".nanobot" / "config.json"
    # no file yet: the app's first-run setup writes the defaults plus what the person chose
    patch_settings(config_path, {"agents.defaults.model": "fake-model", "agents.defaults.provider": "custom",
                                 "providers.custom.apiBase": fake_openai.base_url,
                                 "providers.custom.apiKey": "sk-test", "app.theme": "dark"})
    workspace = _home() / ".nanobot" / "workspace"
    prepare_workspace(workspace, LayoutKind.V03)

    engine = _open_engine(config_path)
    try:
        fake_openai.add_text("made by the app")
        result = await engine.loop.process("cli:direct", "hello", channel="cli", chat_id="direct")
        assert result.status == "ok", result.error
    finally:
        await engine.shutdown()
    before = _tree(workspace, _home() / ".nanobot" / "sessions")

    assert "desktop" not in json.loads(config_path.read_text(encoding="utf-8"))  # 0.3.5 would refuse it
    fake_openai.add_text("the CLI continues")
    _cli_turn("the CLI's turn")
    assert "made by the app" in _texts(fake_openai.requests[-1])
    after = _tree(workspace, _home() / ".nanobot" / "sessions")
    assert set(before) <= set(after), f"files lost: {set(before) - set(after)}"
    assert not (workspace / "memory" / "HISTORY.md").exists()
    log = _run_035_python(
        "import sys\nfrom pathlib import Path\nfrom nanobot.agent.memory import MemoryStore\n"
        "print([c.message for c in MemoryStore(Path(sys.argv[1])).git.log()])", workspace)
    assert "init: nanobot memory store" in log  # the repository the app made is one 0.3 reads
