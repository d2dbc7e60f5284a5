"""Branches (Edit and resend, Regenerate), Retry without a second user line, and /new's way out, against the fake
endpoint and the real nanobot CLIs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nanobot_desktop.engine import events as ev
from tests.reference_cli import POST4, V035, onboard, run_reference_cli


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def texts(request: dict) -> list[tuple[str, str]]:
    """(role, text) of each history message of a request (the system prompt and runtime block left out)."""
    out = []
    for message in request["messages"][1:]:
        content = message.get("content")
        out.append((message["role"], content.rsplit("\n\n", 1)[-1] if isinstance(content, str) else str(content)))
    return out


async def two_turns(engine, fake_openai, key: str) -> None:
    fake_openai.add_text("Paris.")
    await engine.loop.process(key, "capital of France?")
    fake_openai.add_text("Berlin.")
    await engine.loop.process(key, "capital of Germany?")


async def test_a_branch_copies_the_prefix_into_a_new_file_and_leaves_the_origin_alone(make_engine, fake_openai):
    engine = make_engine()
    await two_turns(engine, fake_openai, "desktop:origin")
    origin_path = engine.sessions.path_for("desktop:origin")
    before = origin_path.read_bytes()
    key = engine.branch_session("desktop:origin", 2)
    assert key.startswith("desktop:") and key != "desktop:origin"
    fake_openai.add_text("Rome.")
    result = await engine.loop.process(key, "capital of Italy?")
    assert result.reply == "Rome."
    assert origin_path.read_bytes() == before
    lines = lines_of(engine.sessions.path_for(key))
    assert lines[0]["metadata"]["branch_of"] == {"key": "desktop:origin", "at": 2}
    origin = lines_of(origin_path)
    assert lines[1:3] == origin[1:3]  # copied as they are, timestamps included
    assert [(m["role"], m["content"]) for m in lines[3:]] == [("user", "capital of Italy?"), ("assistant", "Rome.")]
    assert texts(fake_openai.requests[-1]) == [("user", "capital of France?"), ("assistant", "Paris."),
                                               ("user", "capital of Italy?")]
    points = engine.branch_points(key)
    assert [(p.at, p.keys, p.index) for p in points] == [(2, ("desktop:origin", key), 1)]
    assert [(p.at, p.index) for p in engine.branch_points("desktop:origin")] == [(2, 0)]


async def test_branch_refuses_a_position_past_the_end_and_a_missing_origin(make_engine, fake_openai):
    engine = make_engine()
    await two_turns(engine, fake_openai, "desktop:short")
    with pytest.raises(ValueError, match=r"copies 0\.\.4 messages, not 9"):
        engine.branch_session("desktop:short", 9)
    with pytest.raises(Exception, match="no session 'desktop:none' to branch from"):
        engine.branch_session("desktop:none", 0)
    assert sorted(p.name for p in engine.sessions.sessions_dir.glob("*.jsonl")) == ["desktop_short.jsonl"]


async def test_resend_answers_the_saved_message_without_a_second_user_line(make_engine, fake_openai):
    engine = make_engine()
    seen: list[ev.Event] = []
    engine.bus.subscribe(seen.append)
    fake_openai.add_text("Paris.")
    await engine.loop.process("desktop:retry", "capital of France?")
    fake_openai.add_error(400, "the endpoint refused this once")
    failed = await engine.loop.process("desktop:retry", "and of Spain?")
    assert failed.status == "failed"
    path = engine.sessions.path_for("desktop:retry")
    assert [m["content"] for m in lines_of(path)[1:]] == ["capital of France?", "Paris.", "and of Spain?"]
    fake_openai.add_text("Madrid.")
    result = await engine.loop.resend("desktop:retry")
    assert result.status == "ok" and result.reply == "Madrid."
    assert [m["content"] for m in lines_of(path)[1:]] == ["capital of France?", "Paris.", "and of Spain?", "Madrid."]
    assert path.read_bytes().count(b'"and of Spain?"') == 1
    assert texts(fake_openai.requests[-1]) == [("user", "capital of France?"), ("assistant", "Paris."),
                                               ("user", "and of Spain?")]
    started = [e for e in seen if isinstance(e, ev.TurnStarted)]
    assert started[-1].resend and started[-1].user_text == "and of Spain?"


async def test_resend_in_an_empty_session_says_there_is_nothing_to_send(make_engine, fake_openai):
    engine = make_engine()
    result = await engine.loop.resend("desktop:empty")
    assert result.status == "failed" and result.error == "There is no saved message in this conversation to send again."
    assert fake_openai.requests == []


async def test_new_with_a_failing_consolidation_says_why_and_keeps_everything(make_engine, fake_openai):
    engine = make_engine()
    await two_turns(engine, fake_openai, "desktop:keep")
    path = engine.sessions.path_for("desktop:keep")
    before = path.read_bytes()
    fake_openai.add_text("I will not call the tool")
    result = await engine.loop.process("desktop:keep", "/new")
    assert result.status == "failed" and result.kind == "new_blocked"
    assert "because saving it to memory failed: the model did not" in result.error
    assert path.read_bytes() == before


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.parametrize("version", [POST4])
async def test_the_cli_continues_a_branch_as_a_plain_session(make_engine, fake_openai, tmp_path, version):
    engine = make_engine()
    await two_turns(engine, fake_openai, "desktop:cli")
    key = engine.branch_session("desktop:cli", 2)
    fake_openai.add_text("Rome.")
    await engine.loop.process(key, "capital of Italy?")
    await engine.shutdown()
    branch_path = engine.sessions.path_for(key)
    fake_openai.add_text("Madrid.")
    done = run_reference_cli(version, ["agent", "-m", "and Spain?", "-s", key, "--no-markdown"],
                             home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Madrid." in done.stdout
    assert texts(fake_openai.requests[-1]) == [
        ("user", "capital of France?"), ("assistant", "Paris."), ("user", "capital of Italy?"), ("assistant", "Rome."),
        ("user", "and Spain?")]
    lines = lines_of(branch_path)
    assert lines[0]["metadata"]["branch_of"] == {"key": "desktop:cli", "at": 2}
    assert [m["content"] for m in lines[1:]][-2:] == ["and Spain?", "Madrid."]


@pytest.mark.slow
async def test_the_cli_035_continues_a_branch_in_a_03_workspace(fake_openai, tmp_path):
    import os

    from nanobot_desktop.engine.runtime import Engine

    home = Path(os.environ["HOME"])
    done = onboard(V035, home)
    assert done.returncode == 0, done.stdout + done.stderr
    config_path = home / ".nanobot" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["agents"]["defaults"].update({"model": "fake-model", "provider": "custom"})
    config["providers"]["custom"].update({"apiKey": "sk-test", "apiBase": fake_openai.base_url})
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    engine = Engine.open(config_path)
    await two_turns(engine, fake_openai, "cli:origin")
    key = engine.branch_session("cli:origin", 2)
    assert key.startswith("desktop:")
    fake_openai.add_text("Rome.")
    await engine.loop.process(key, "capital of Italy?")
    branch_path = engine.sessions.path_for(key)
    assert [(p.at, p.keys) for p in engine.branch_points(key)] == [(2, ("cli:origin", key))]
    await engine.shutdown()
    fake_openai.add_text("Madrid.")
    done = run_reference_cli(V035, ["agent", "-m", "and Spain?", "-s", key, "--no-markdown"], home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Madrid." in done.stdout
    history = texts(fake_openai.requests[-1])
    assert history[:4] == [("user", "capital of France?"), ("assistant", "Paris."), ("user", "capital of Italy?"),
                           ("assistant", "Rome.")]
    assert history[-1][1].endswith("and Spain?")
    assert "Berlin." not in json.dumps(fake_openai.requests[-1])
    assert lines_of(branch_path)[0]["metadata"]["branch_of"] == {"key": "cli:origin", "at": 2}


async def test_branch_points_come_from_the_session_index_and_read_only_the_files_that_changed(
        make_engine, fake_openai, monkeypatch):
    from nanobot_desktop.engine.sessions import branches as branches_module
    from nanobot_desktop.engine.sessions import index as index_module

    engine = make_engine()
    await two_turns(engine, fake_openai, "desktop:origin")
    for n in range(30):  # the rest of the workspace: sessions that never forked
        engine.sessions.append(engine.sessions.get_or_create(f"desktop:other-{n}"), [{"role": "user", "content": f"q{n}"}])
    first = engine.branch_session("desktop:origin", 2)
    assert [(p.at, p.keys) for p in engine.branch_points("desktop:origin")] == [(2, ("desktop:origin", first))]
    reads: list[str] = []  # every session file read for the answer, by either way of reading one

    def counted(function):
        def reading(path, *args):
            reads.append(Path(path).name)
            return function(path, *args)
        return reading

    monkeypatch.setattr(branches_module, "read_first_line", counted(branches_module.read_first_line))
    monkeypatch.setattr(index_module, "summarize", counted(index_module.summarize))
    for _ in range(3):  # the switchers refresh after every reply: no file is read again
        assert [(p.at, p.index) for p in engine.branch_points(first)] == [(2, 1)]
    assert reads == []
    second = engine.branch_session("desktop:origin", 2)  # the store reports the new file to the index
    assert [(p.at, p.keys) for p in engine.branch_points("desktop:origin")] == [(2, ("desktop:origin", first, second))]
    assert reads == [engine.sessions.path_for(second).name]
    # the files stay the truth: a branch written by another program is found once the index is gone
    header = {"_type": "metadata", "key": "desktop:by-hand", "created_at": "2099-01-01T00:00:00",
              "updated_at": "2099-01-01T00:00:00", "metadata": {"branch_of": {"key": "desktop:origin", "at": 2}}}
    engine.sessions.path_for("desktop:by-hand").write_text(json.dumps(header) + "\n", encoding="utf-8")
    engine.session_index.close()
    engine.session_index.index_path.unlink()
    assert [(p.at, p.keys) for p in engine.branch_points("desktop:origin")] == [
        (2, ("desktop:origin", first, second, "desktop:by-hand"))]


def test_branch_points_follow_the_line_of_origins():
    from nanobot_desktop.engine.sessions.branches import BranchRecord, branch_points

    records = [BranchRecord("b1", "o", 2, "2026-11-24T10:00"), BranchRecord("b0", "o", 2, "2026-11-24T09:00"),
               BranchRecord("b2", "b1", 3, "2026-11-24T11:00"), BranchRecord("far", "b1", 5, "2026-11-24T12:00")]
    point = {"branch_of": {"key": "b1", "at": 3}}
    # b2 shows its own fork (3: b1 or b2) and, inside what it copied, b1's fork off o (2: o, b0 or b1's line)
    assert [(p.at, p.keys, p.index) for p in branch_points("b2", point, records)] == [
        (2, ("o", "b0", "b2"), 2), (3, ("b1", "b2"), 1)]
    assert [(p.at, p.keys, p.index) for p in branch_points("o", {}, records)] == [(2, ("o", "b0", "b1"), 0)]
    assert [(p.at, p.keys, p.index) for p in branch_points("b1", {"branch_of": {"key": "o", "at": 2}}, records)] == [
        (2, ("o", "b0", "b1"), 2), (3, ("b1", "b2"), 0), (5, ("b1", "far"), 0)]
    loop = [BranchRecord("x", "y", 1, ""), BranchRecord("y", "x", 0, "")]
    assert [(p.at, p.keys) for p in branch_points("x", {"branch_of": {"key": "y", "at": 1}}, loop)] == [
        (0, ("x", "y")), (1, ("y", "x"))]


async def test_new_in_an_app_chat_keeps_it_listed_and_goes_on_in_a_new_session(make_engine, fake_openai):
    engine = make_engine()
    seen: list[ev.Event] = []
    engine.bus.subscribe(seen.append)
    await two_turns(engine, fake_openai, "desktop:old")
    path = engine.sessions.path_for("desktop:old")
    before = path.read_bytes()
    fake_openai.add_tool_calls([("save_memory", {"history_entry": "[2026-11-24 10:00] Capitals.",
                                                 "memory_update": "# Memory\nLikes capitals."})])
    result = await engine.loop.process("desktop:old", "/new")
    assert result.status == "command" and result.reply == "New session started."
    finished = [e for e in seen if isinstance(e, ev.TurnFinished)][-1]
    assert finished.continued_in.startswith("desktop:") and finished.continued_in != "desktop:old"
    after = path.read_bytes()
    assert after[512:] == before[512:]  # the messages are untouched; only the metadata line changed
    assert lines_of(path)[0]["last_consolidated"] == 4
    assert "desktop:old" in [info.key for info in engine.sessions.list_sessions()]
    assert not (engine.sessions.sessions_dir / ".archive").exists()
    fake_openai.add_text("Hello again.")
    await engine.loop.process(finished.continued_in, "let us talk about rivers")
    titles = {info.key: info.title for info in engine.sessions.list_sessions()}
    assert titles[finished.continued_in] == "let us talk about rivers"
    assert titles["desktop:old"] == "capital of France?"
