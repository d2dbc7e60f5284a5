"""The runtime block is for the model only: never in a title, preview, search result, export or branch copy.

nanobot 0.3.5 saves the block at the END of the user message (with a `_runtime_context` marker) when a
runtime-context provider adds one (its gateway: a WebUI quote, a skill's context; its `agent` command
saves none); the app's own and post4's turns put it first and strip it before saving. Both forms are
checked; the slow test adds a block-carrying turn to a session the real 0.3.5 CLI wrote, and the CLI
goes on with the branch the app makes of it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nanobot_desktop.engine.runtime_block import RUNTIME_TAG, public_message, without_runtime, without_runtime_text
from nanobot_desktop.engine.sessions.export import plain_text
from nanobot_desktop.engine.sessions.index import SessionIndex
from nanobot_desktop.engine.sessions.store import SessionStore
from tests.reference_cli import V035, onboard, run_reference_cli

BLOCK_03 = f"{RUNTIME_TAG}\nCurrent Time: 2026-11-28 10:00 (Saturday) (UTC)\nChannel: cli\nChat ID: direct\n[/Runtime Context]"
BLOCK_APP = f"{RUNTIME_TAG}\nCurrent Time: 2026-11-28 10:00 (Saturday) (UTC)\nChannel: desktop\nChat ID: x"


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_session(folder: Path, name: str, messages: list[dict], metadata: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = {"_type": "metadata", "key": name.replace("_", ":", 1), "created_at": "2026-11-28T10:00:00",
              "updated_at": "2026-11-28T10:00:05", "metadata": metadata or {}, "last_consolidated": 0}
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in [header, *messages]),
                    encoding="utf-8")
    return path


def test_both_forms_of_the_block_are_taken_out_and_other_text_is_left_alone() -> None:
    assert without_runtime_text(f"{BLOCK_APP}\n\nhello\n\nsecond") == "hello\n\nsecond"
    assert without_runtime_text(f"hello there\n\n{BLOCK_03}") == "hello there"
    assert without_runtime_text(f"hello\n\n{BLOCK_03}\n\n{BLOCK_03}") == "hello"  # two providers' blocks
    assert without_runtime_text(BLOCK_03) == "" and without_runtime_text(BLOCK_APP) == ""
    assert without_runtime_text(f"{BLOCK_03}\n\nafter") == "after"
    plain = "no block [/Runtime Context] here"
    assert without_runtime_text(plain) is plain
    quoted = f"the tag {RUNTIME_TAG} quoted mid-sentence stays"
    assert without_runtime_text(quoted) == quoted
    blocks = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
              {"type": "text", "text": BLOCK_03}]
    assert without_runtime(blocks) == blocks[:2]
    message = {"role": "user", "content": f"hi\n\n{BLOCK_03}", "_runtime_context": {"version": 1, "suffix": BLOCK_03},
               "timestamp": "t"}
    assert public_message(message) == {"role": "user", "content": "hi", "timestamp": "t"}
    assistant = {"role": "assistant", "content": BLOCK_03}
    assert public_message(assistant) is assistant


def test_previews_are_plain_text() -> None:
    assert plain_text("# Release notes\nHere is a **summary**") == "Release notes\nHere is a summary"
    assert plain_text("See [the docs](https://x.org) and ![a cat](cat.png), *really*, _truly_ ~~not~~") == \
        "See the docs and a cat, really, truly not"
    assert plain_text("> quoted\n- [x] done\n* item\n---\n```py\ncode()\n```").split() == ["quoted", "done", "item", "code()"]
    assert plain_text("| a | b |\n|---|:--:|\n| 1 | 2 |").split() == ["a", "b", "1", "2"]
    assert plain_text("snake_case_name and 2*3*4") == "snake_case_name and 2*3*4"


def test_titles_previews_search_and_exports_leave_the_block_out(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    write_session(sessions, "cli_direct", [
        {"role": "user", "content": f"hello there\n\n{BLOCK_03}",
         "_runtime_context": {"version": 1, "sources": ["runtime"], "suffix": BLOCK_03}, "timestamp": "t1"},
        {"role": "assistant", "content": "# Release notes\nHere is a **summary**", "timestamp": "t2"},
        {"role": "user", "content": f"{BLOCK_APP}\n\nwhat time is it?", "timestamp": "t3"},
    ])
    store = SessionStore(sessions)
    [info] = store.list_sessions()
    assert (info.title, info.preview) == ("hello there", "what time is it?")
    assert store.search("current time") == [] and store.search("chat id") == []
    assert store.search("hello") == [("cli:direct", "hello there")]
    markdown, document = store.export_markdown("cli:direct"), store.export_json("cli:direct")
    assert "Runtime Context" not in markdown and "Current Time" not in markdown
    assert "Runtime Context" not in document and "_runtime_context" not in document
    assert [m["content"] for m in json.loads(document)["messages"]] == [
        "hello there", "# Release notes\nHere is a **summary**", "what time is it?"]
    index = SessionIndex(sessions, tmp_path / "index.sqlite3")
    try:
        [row] = index.list_sessions()
        assert (row.title, row.preview) == ("hello there", "what time is it?")
        index.update_text()
        assert index.search("current time") == [] and index.search("runtime") == []
        assert [key for key, _ in index.search("what time")] == ["cli:direct"]
    finally:
        index.close()


async def test_a_branch_copy_leaves_the_block_out_and_the_origin_as_it_was(make_engine, fake_openai):
    engine = make_engine()
    folder = engine.sessions.path_for("desktop:origin").parent
    origin = write_session(folder, "desktop_origin", [
        {"role": "user", "content": f"hello there\n\n{BLOCK_03}",
         "_runtime_context": {"version": 1, "sources": ["runtime"], "suffix": BLOCK_03}, "timestamp": "t1"},
        {"role": "assistant", "content": "Hi!", "timestamp": "t2"},
    ])
    before = origin.read_bytes()
    key = engine.branch_session("desktop:origin", 1)
    fake_openai.add_text("Hello again!")
    await engine.loop.resend(key)
    assert origin.read_bytes() == before
    lines = lines_of(engine.sessions.path_for(key))
    assert [(m["role"], m["content"]) for m in lines[1:]] == [("user", "hello there"), ("assistant", "Hello again!")]
    assert "_runtime_context" not in lines[1] and lines[1]["timestamp"] == "t1"
    sent = fake_openai.requests[-1]["messages"][-1]["content"]
    assert sent.startswith(RUNTIME_TAG) and sent.count(RUNTIME_TAG) == 1 and sent.endswith("\n\nhello there")


@pytest.mark.slow
async def test_a_session_the_035_cli_wrote_reads_without_the_block_and_its_branch_goes_on_in_the_cli(
        fake_openai, tmp_path):
    from nanobot_desktop.engine.runtime import Engine

    home = Path(os.environ["HOME"])
    assert onboard(V035, home).returncode == 0
    config_path = home / ".nanobot" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["agents"]["defaults"].update({"model": "fake-model", "provider": "custom"})
    config["providers"]["custom"].update({"apiKey": "sk-test", "apiBase": fake_openai.base_url})
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    fake_openai.add_text("Hi from the CLI.")
    done = run_reference_cli(V035, ["agent", "-m", "hello there", "--no-markdown"], home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    # 0.3.5's `agent` command saves no block; its gateway does when a runtime-context provider adds one
    # (a WebUI quote, a skill's context): such a turn, in the shape runtime_context.py gives it
    sessions_dir = next((home / ".nanobot" / "sessions").glob("*/"))
    real = next(p for p in sessions_dir.glob("*.jsonl"))
    suffix = BLOCK_03
    with real.open("a", encoding="utf-8") as handle:
        for line in ({"role": "user", "content": f"and this one?\n\n{suffix}", "timestamp": "2026-11-28T10:05:00",
                      "_runtime_context": {"version": 1, "sources": ["webui_quote"], "suffix": suffix}},
                     {"role": "assistant", "content": "That one too.", "timestamp": "2026-11-28T10:05:04"}):
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    engine = Engine.open(config_path)
    try:
        path = engine.sessions.path_for("cli:direct")
        assert path == real and RUNTIME_TAG in path.read_text(encoding="utf-8")
        [info] = [i for i in engine.sessions.list_sessions() if i.key == "cli:direct"]
        assert info.title == "hello there" and info.preview == "That one too."
        assert engine.sessions.search("current time") == []
        assert [hit for _key, hit in engine.sessions.search("this one")] == ["and this one?"]
        assert "Runtime Context" not in engine.sessions.export_markdown("cli:direct")
        key = engine.branch_session("cli:direct", 3)
        fake_openai.add_text("Again, that one.")
        await engine.loop.resend(key)
        copied = engine.sessions.path_for(key).read_text(encoding="utf-8")
        assert RUNTIME_TAG not in copied and "_runtime_context" not in copied
        assert [(m["role"], m["content"]) for m in lines_of(engine.sessions.path_for(key))[1:]] == [
            ("user", "hello there"), ("assistant", "Hi from the CLI."), ("user", "and this one?"),
            ("assistant", "Again, that one.")]
    finally:
        await engine.shutdown()
    fake_openai.add_text("Madrid.")
    done = run_reference_cli(V035, ["agent", "-m", "and Spain?", "-s", key, "--no-markdown"], home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Madrid." in done.stdout
