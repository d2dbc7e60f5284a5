"""A 100,000-message session written by hand in nanobot 0.1.4.post4's format: the engine loads only its
unconsolidated tail, a turn appends only its own bytes, and the real post4 CLI still reads the file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest


from nanobot_desktop.cli import main as desktop_cli
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.engine.sessions.paging import read_page, read_tail
from nanobot_desktop.engine.sessions.store import SessionStore
from tests.reference_cli import POST4, run_reference_cli

MESSAGES = 100_000
UNCONSOLIDATED = 40


def post4_lines(count: int, last_consolidated: int) -> bytes:
    """A session file as nanobot 0.1.4.post4's SessionManager.save writes it (unpadded metadata line,
    `json.dumps(..., ensure_ascii=False)` per line), built here without any of the engine's code."""
    header = {"_type": "metadata", "key": "cli:direct", "created_at": "2026-03-08T14:36:46.279485",
              "updated_at": "2026-03-09T10:00:00.000000", "metadata": {}, "last_consolidated": last_consolidated}
    lines = [json.dumps(header, ensure_ascii=False)]
    for number in range(count // 2):
        stamp = f"2026-03-08T15:{number // 600 % 60:02d}:{number // 10 % 60:02d}.{number:06d}"
        lines.append(json.dumps({"role": "user", "content": f"frage {number} – ü", "timestamp": stamp},
                                ensure_ascii=False))
        lines.append(json.dumps({"role": "assistant", "content": f"answer {number}", "timestamp": stamp},
                                ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.mark.heavy
@pytest.mark.slow
def test_a_turn_in_a_100k_session_appends_only_its_lines_and_the_post4_cli_reads_them(home: Path, fake_openai) -> None:
    assert desktop_cli(["onboard"]) == 0
    config_path = home / ".nanobot" / "config.json"
    engine = Engine.open(config_path)
    engine.update_config({"providers.custom.apiKey": "sk-fake", "providers.custom.apiBase": fake_openai.base_url,
                          "agents.defaults.provider": "custom", "agents.defaults.model": "fake-model"})
    path = engine.sessions.path_for("cli:direct")
    path.parent.mkdir(parents=True, exist_ok=True)
    original = post4_lines(MESSAGES, MESSAGES - UNCONSOLIDATED)
    path.write_bytes(original)

    async def turn() -> None:
        try:
            fake_openai.add_text("the app's answer")
            result = await engine.loop.process("cli:direct", "the app's question", channel="cli", chat_id="direct")
            assert result.status == "ok", result.error
            session = engine.sessions.get_or_create("cli:direct")
            assert session.base == MESSAGES - UNCONSOLIDATED  # only the tail was parsed
            assert len(session.messages) == UNCONSOLIDATED + 2 and session.count == MESSAGES + 2
        finally:
            await engine.shutdown()

    asyncio.run(turn())
    sent = fake_openai.requests[-1]["messages"]
    assert [m["content"] for m in sent[1:3]] == [f"frage {n} – ü" if i == 0 else f"answer {n}"
                                                 for i, n in enumerate([(MESSAGES - UNCONSOLIDATED) // 2] * 2)]
    assert len(sent) == 1 + UNCONSOLIDATED + 1  # system, the unconsolidated tail, the new question

    after = path.read_bytes()
    first_end = original.index(b"\n") + 1
    # Line 1 became a padded metadata line once (its body still post4's keys); every message byte is kept
    # and the turn added exactly its two lines.
    header = json.loads(after[: after.index(b"\n")])
    assert header["last_consolidated"] == MESSAGES - UNCONSOLIDATED and header["key"] == "cli:direct"
    body = after[after.index(b"\n") + 1:]
    assert body.startswith(original[first_end:])
    added = body[len(original) - first_end:].decode("utf-8").splitlines()
    assert [json.loads(line)["content"] for line in added] == ["the app's question", "the app's answer"]

    # The real post4 CLI reads the same file: the history it sends ends with the app's turn.
    fake_openai.add_text("the CLI's answer")
    result = run_reference_cli(POST4, ["agent", "-m", "from the terminal", "--no-markdown"], home=home, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the CLI's answer" in result.stdout
    cli_sent = fake_openai.requests[-1]["messages"]
    assert [m["content"] for m in cli_sent[-3:-1]] == ["the app's question", "the app's answer"]
    assert "from the terminal" in str(cli_sent[-1]["content"])


def test_the_fast_tail_count_agrees_with_the_full_parser_and_falls_back_on_odd_lines(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    path = sessions / "cli_direct.jsonl"
    data = post4_lines(20_000, 19_990)
    path.write_bytes(data)
    store = SessionStore(sessions)
    tail = store.get_or_create("cli:direct")
    full = store.load("cli:direct")
    assert full is not None and tail.base == 19_990 and full.base == 0
    assert tail.messages == full.messages[19_990:] and tail.title == full.title == "frage 0 – ü"
    assert tail.get_history(100) == full.get_history(100)

    # A torn line in the middle (a crash, then more appends): the full parser skips it, so the fast
    # count would number the messages differently; the store parses everything instead.
    lines = data.split(b"\n")
    lines[5] = lines[5][:20]
    path.write_bytes(b"\n".join(lines))
    assert read_tail(path, path.read_bytes()) is None
    again = SessionStore(sessions).get_or_create("cli:direct")
    assert again.base == 0 and len(again.messages) == 19_999


@pytest.mark.parametrize("odd", ["blank line", "other record", "first message", "last message", "space"])
def test_the_fast_tail_count_falls_back_on_any_line_that_is_not_a_plain_message(tmp_path: Path, odd: str) -> None:
    """Each line is checked (its start, its end), the first and the last ones included."""
    lines = post4_lines(20_000, 19_990).split(b"\n")  # [header, 20,000 messages, b""]
    assert read_tail(tmp_path / "x.jsonl", b"\n".join(lines)) is not None
    if odd == "blank line":
        lines.insert(500, b"")
    elif odd == "other record":
        lines.insert(500, b'{"_type": "note", "text": "}"}')
    elif odd == "first message":
        lines[1] = b" " + lines[1]
    elif odd == "last message":
        lines[-2] = lines[-2] + b" "
    else:
        lines[700] = lines[700].replace(b'{"role": "', b'{ "role": "', 1)
    assert read_tail(tmp_path / "x.jsonl", b"\n".join(lines)) is None


def test_pages_read_backwards_cover_the_file_in_order_and_start_at_user_turns(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(post4_lines(3_000, 0) + b'{"role": "user", "content": "torn')  # a torn last line
    texts: list[str] = []
    end: int | None = None
    while True:
        page = read_page(path, end, 100)
        # (the last page may be empty: only the metadata line was left before the one above it)
        assert page.at_file_start or (len(page.messages) >= 100 and page.messages[0]["role"] == "user")
        texts[:0] = [m["content"] for m in page.messages]
        if page.at_file_start:
            break
        end = page.start
    assert texts == [m["content"] for m in SessionStore(tmp_path).load("s").messages]
    assert len(texts) == 3_000
