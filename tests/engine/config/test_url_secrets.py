"""Credentials in an apiBase URL never appear in a message or the log (issue 28)."""

from __future__ import annotations

import json
import socket

from nanobot_desktop.engine import events as ev
from nanobot_desktop.engine.url_secrets import hide_url_secrets
from nanobot_desktop.gui.shell.logging_setup import redact

SECRET = "pa55-in-the-url-8c1f"


def test_user_info_and_secret_query_values_are_hidden() -> None:
    assert hide_url_secrets(f"Could not connect to https://me:{SECRET}@api.example/v1 (refused)") == \
        "Could not connect to https://***@api.example/v1 (refused)"
    assert hide_url_secrets(f"http://h/v1?api_key={SECRET}&model=x") == "http://h/v1?api_key=***&model=x"
    assert hide_url_secrets("http://localhost:11434/v1 is fine") == "http://localhost:11434/v1 is fine"
    assert SECRET not in redact(f"GET https://{SECRET}@host/v1 failed")


async def test_a_failed_call_to_an_api_base_with_credentials_does_not_show_them(make_engine, tmp_path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    engine = make_engine()
    engine.update_config({"providers.custom.apiBase": f"http://user:{SECRET}@127.0.0.1:{port}/v1"})
    seen: list[ev.Event] = []
    engine.bus.subscribe(seen.append)
    result = await engine.loop.process("desktop:url", "hi")
    assert result.status == "failed"
    assert "127.0.0.1" in (result.error or "") and SECRET not in (result.error or "")
    assert SECRET not in repr(seen)
    session = next((engine.workspace.root / "sessions").glob("*.jsonl"), None)
    assert session is None or SECRET not in session.read_text()
    assert SECRET not in json.dumps([str(e) for e in seen])
