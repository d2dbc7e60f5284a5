"""SessionKey: a session's "channel:chat_id" parsed once, its string form exactly what is on disk."""

from __future__ import annotations

import json

import pytest

from nanobot_desktop.engine import SessionKey, SessionKeyError, continue_archived
from nanobot_desktop.engine.agent.loop import AgentLoop
from nanobot_desktop.engine.sessions.store import SessionStore
from tests.engine.cli.test_cli import run_cli
from tests.conftest import write_test_config


@pytest.mark.parametrize("text, channel, chat_id", [
    ("cli:direct", "cli", "direct"),
    ("telegram:123", "telegram", "123"),
    ("desktop:20261124-195728-170", "desktop", "20261124-195728-170"),
    ("matrix:!room:example.org", "matrix", "!room:example.org"),  # only the first ":" splits
    ("heartbeat", "heartbeat", None),
    ("weird:", "weird", ""),
    (":lonely", "", "lonely"),
])
def test_parse_splits_at_the_first_colon_and_prints_back_unchanged(text: str, channel: str, chat_id: str | None) -> None:
    key = SessionKey.parse(text)
    assert (key.channel, key.chat_id) == (channel, chat_id)
    assert str(key) == text
    assert SessionKey.parse(str(key)) == key


@pytest.mark.parametrize("text, words", [
    ("", "empty"), ("   ", "empty"), ("cli:a\nb", "line break"), ("cli:a\rb", "line break"), ("cli:\0", "NUL"),
])
def test_a_bad_key_is_refused_with_the_reason(text: str, words: str) -> None:
    with pytest.raises(SessionKeyError, match=words):
        SessionKey.parse(text)
    assert str(SessionKey.found(text)) == text  # a key read from another program's file is taken as it is


def test_the_key_is_a_frozen_value() -> None:
    key = SessionKey("cli", "direct")
    with pytest.raises(AttributeError):
        key.channel = "telegram"  # type: ignore[misc]
    assert key == SessionKey.parse("cli:direct") and len({key, SessionKey.parse("cli:direct")}) == 1


def test_routes_follow_the_key() -> None:
    assert SessionKey.parse("telegram:42").route("cli", "direct") == ("telegram", "42")
    assert SessionKey.parse("direct").route("cli", "direct") == ("direct", "direct")
    assert SessionKey.parse(":x").route("cli", "direct") == ("cli", "x")
    assert AgentLoop.route_for_user_turn("telegram:42") == ("telegram", "42")
    assert AgentLoop.route_for_user_turn("desktop:abc") == ("desktop", "abc")
    assert AgentLoop.route_for_user_turn("heartbeat") == ("desktop", "heartbeat")
    assert SessionKey.parse("heartbeat").moved_to("telegram") == SessionKey("telegram", "heartbeat")


def test_a_continued_archive_keeps_its_channel_on_disk(tmp_path) -> None:
    store = SessionStore(tmp_path / "sessions")
    old = store.get_or_create("telegram:42")
    store.append(old, [{"role": "user", "content": "hi"}])
    archived = store.clear(old)
    assert archived is not None
    new_key = continue_archived(store, archived.name, "desktop:20261128-140000-000")
    assert new_key == "telegram:20261128-140000-000"
    header = json.loads((tmp_path / "sessions" / "telegram_20261128-140000-000.jsonl").read_bytes().splitlines()[0])
    assert header["key"] == "telegram:20261128-140000-000"


@pytest.mark.slow
def test_the_cli_refuses_a_key_with_a_line_break_and_writes_nothing(fake_openai, tmp_path) -> None:
    config = write_test_config(tmp_path / "cfg" / "config.json", fake_openai.base_url, tmp_path / "ws")
    done = run_cli("agent", "-m", "hello", "-s", "cli:a\nb", "--config", str(config), home=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "Error: the session key 'cli:a\\nb' holds a line break: use one like cli:direct"
    assert not list((tmp_path / "ws").rglob("*.jsonl"))
    assert fake_openai.requests == []
