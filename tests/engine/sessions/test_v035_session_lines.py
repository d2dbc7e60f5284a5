"""nanobot 0.3.5's internal session lines (issue 29): `provider_state` records and `_hidden_history`
messages stay byte for byte through the app's turns and are never shown (titles, previews, chat)."""

from __future__ import annotations

import json

from nanobot_desktop.engine.layout import LayoutKind, encode_session_key, prepare_workspace

HEADER = {"_type": "metadata", "key": "cli:direct", "created_at": "2026-11-28T09:00:00",
          "updated_at": "2026-11-28T09:01:00", "metadata": {}, "last_archived": 0, "last_consolidated": 0}
PROVIDER_STATE = {"_type": "provider_state", "provider": "openai", "state": {"previous_response_id": "resp_1"}}
HIDDEN = {"role": "user", "content": "Continue from the summary above.", "_hidden_history": True,
          "timestamp": "2026-11-28T09:00:30"}


async def test_internal_lines_are_kept_byte_for_byte_and_never_shown(make_engine, fake_openai, tmp_path):
    prepare_workspace(tmp_path / "ws", LayoutKind.V03)
    engine = make_engine()
    path = engine.sessions.sessions_dir / f"{encode_session_key('cli:direct')}.jsonl"
    lines = [HEADER, {"role": "user", "content": "plan the trip", "timestamp": "2026-11-28T09:00:00"},
             PROVIDER_STATE, HIDDEN,
             {"role": "assistant", "content": "Day one: the coast.", "timestamp": "2026-11-28T09:00:40"}]
    original = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original)
    [info] = engine.sessions.list_sessions()
    assert info.title == "plan the trip" and info.preview == "Day one: the coast."
    fake_openai.add_text("Day two: the hills.")
    result = await engine.loop.process("cli:direct", "and then?", channel="cli", chat_id="direct")
    assert result.status == "ok", result.error
    after = path.read_bytes().split(b"\n")
    assert after[1:5] == original.split(b"\n")[1:5]  # every line the CLI wrote, byte for byte
    sent = fake_openai.requests[-1]["messages"]
    assert not any("provider_state" in json.dumps(m) for m in sent)  # a record, not a message
    await engine.shutdown()
