"""History repair and legacy migration (engine details the loop and the session list rely on)."""

from __future__ import annotations

import json
from pathlib import Path

from nanobot_desktop.engine.sessions.store import INTERRUPTED_TOOL_RESULT, SessionStore


def _write(path: Path, lines: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


META = {"_type": "metadata", "key": "telegram:1", "created_at": "2026-03-08T14:36:46.279485",
        "updated_at": "2026-03-08T14:40:00.000000", "metadata": {}, "last_consolidated": 0}


def test_tool_calls_left_without_results_get_a_stand_in_result(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "exec", "arguments": "{\"command\": \"ls\"}"}}
    _write(tmp_path / "telegram_1.jsonl", [
        META,
        {"role": "user", "content": "run ls", "timestamp": "2026-03-08T14:37:00"},
        {"role": "assistant", "content": None, "tool_calls": [call], "timestamp": "2026-03-08T14:37:01"},
        # the process was killed here: no tool line
        {"role": "user", "content": "hello?", "timestamp": "2026-03-08T14:39:00"},
    ])
    before = (tmp_path / "telegram_1.jsonl").read_bytes()
    history = SessionStore(tmp_path).get_or_create("telegram:1").get_history()
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "user"]
    assert history[2] == {"role": "tool", "tool_call_id": "call_1", "name": "exec", "content": INTERRUPTED_TOOL_RESULT}
    assert (tmp_path / "telegram_1.jsonl").read_bytes() == before


def test_answered_tool_calls_are_left_alone(tmp_path: Path) -> None:
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}} for i in (1, 2)]
    _write(tmp_path / "telegram_1.jsonl", [
        META,
        {"role": "user", "content": "read"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "A"},
        {"role": "tool", "tool_call_id": "c2", "name": "read_file", "content": "B"},
        {"role": "assistant", "content": "A and B"},
    ])
    history = SessionStore(tmp_path).get_or_create("telegram:1").get_history()
    assert [m.get("content") for m in history] == ["read", None, "A", "B", "A and B"]


def test_legacy_sessions_move_in_up_front_without_overwriting(tmp_path: Path) -> None:
    legacy = tmp_path / "legacy"
    _write(legacy / "telegram_1.jsonl", [META, {"role": "user", "content": "old"}])
    _write(legacy / "cli_direct.jsonl", [dict(META, key="cli:direct"), {"role": "user", "content": "legacy cli"}])
    workspace_sessions = tmp_path / "ws" / "sessions"
    _write(workspace_sessions / "cli_direct.jsonl", [dict(META, key="cli:direct"), {"role": "user", "content": "mine"}])
    store = SessionStore(workspace_sessions, legacy_dir=legacy)
    moved = store.migrate_legacy_sessions()
    assert [p.name for p in moved] == ["telegram_1.jsonl"]
    assert not (legacy / "telegram_1.jsonl").exists()
    assert (legacy / "cli_direct.jsonl").exists()
    assert {info.key for info in store.list_sessions()} == {"telegram:1", "cli:direct"}
    assert store.get_or_create("cli:direct").messages[0]["content"] == "mine"
