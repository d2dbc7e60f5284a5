"""WorkspaceSync: real inotify events routed to editors, skills, sessions and cron, on a real engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nanobot_desktop.engine.config import cron_store_path
from nanobot_desktop.engine.events import SessionChanged
from nanobot_desktop.engine.workspace import append_text, atomic_write_text
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher
from nanobot_desktop.gui.workspace.sync import WorkspaceSync


@pytest.fixture
def synced(qtbot, make_engine):
    """(engine, sync, watcher) with the workspace watched; everything stopped afterwards."""
    engine = make_engine()
    watcher = WorkspaceWatcher(quiet_ms=50)
    sync = WorkspaceSync(engine, watcher)
    yield engine, sync, watcher
    sync.close()
    watcher.stop()


def user_line(text: str) -> str:
    return json.dumps({"role": "user", "content": text, "timestamp": "2026-11-22T10:00:00"}) + "\n"


def test_watches_workspace_builtins_and_cron_folder_creating_it(synced):
    engine, sync, watcher = synced
    cron_folder = cron_store_path(engine.config_path).parent
    assert cron_folder.is_dir(), "the cron folder is created so it can be watched"
    folders = watcher.watched_folders()
    assert engine.workspace.root in folders and cron_folder.resolve() in folders
    assert Path(engine.skills.builtin_dir).resolve() in folders
    assert sync.watch_errors == []


def test_open_editor_follows_outside_write_and_reports_it_applied(qtbot, synced):
    engine, sync, _watcher = synced
    editor = MarkdownEditor()
    qtbot.addWidget(editor)
    try:
        sync.register_editor(editor)
        assert editor.expect_write == engine.expect_write
        target = engine.workspace.root / "USER.md"
        with qtbot.waitSignal(editor.loaded):
            editor.open_file(target)
        with qtbot.waitSignal(sync.changed_applied, timeout=5000) as applied:
            atomic_write_text(target, "# User\n\nName: Ada\n")
        assert applied.args == [target]
        assert editor.text() == "# User\n\nName: Ada\n"

        sync.unregister_editor(editor)
        with qtbot.waitSignal(sync.workspace_files_changed, timeout=5000):
            atomic_write_text(target, "# User\n\nName: Grace\n")
        assert editor.text() == "# User\n\nName: Ada\n", "an unregistered editor is left alone"
    finally:
        editor.shutdown()


def test_skill_folder_from_outside_emits_skills_changed_and_reaches_the_prompt(qtbot, synced):
    engine, sync, _watcher = synced
    skill = engine.workspace.skills_dir / "hello" / "SKILL.md"
    with qtbot.waitSignal(sync.skills_changed, timeout=5000):
        skill.parent.mkdir(parents=True)
        skill.write_text('---\nname: hello\ndescription: "Say hello."\n---\n# hello\n', encoding="utf-8")
    assert "<name>hello</name>" in engine.context.build_system_prompt()


def _session_events(engine) -> list[SessionChanged]:
    seen: list[SessionChanged] = []
    engine.bus.subscribe(lambda event: seen.append(event) if isinstance(event, SessionChanged) else None)
    return seen


def test_session_appended_outside_is_published_by_the_engine_and_next_turn_rereads(qtbot, qloop, synced,
                                                                                  fake_openai):
    engine, _sync, _watcher = synced
    key = "telegram:12345"
    fake_openai.add_text("First reply.")
    turn = engine.loop.submit(key, "hello")
    qtbot.waitUntil(turn.done, timeout=10000)
    cached = engine.sessions.get_or_create(key)
    path = engine.sessions.path_for(key)
    seen = _session_events(engine)

    append_text(path, user_line("typed in the nanobot CLI"))  # a real inotify event, through the watcher
    qtbot.waitUntil(lambda: any(event.outside for event in seen), timeout=5000)
    assert [(event.session_key, event.reason, event.outside) for event in seen] == [(key, "changed", True)]
    fresh = engine.sessions.get_or_create(key)  # as the loop does when the next turn starts
    assert fresh is not cached
    assert fresh.messages[-1]["content"] == "typed in the nanobot CLI"

    fake_openai.add_text("Second reply.")
    turn = engine.loop.submit(key, "and now?")
    qtbot.waitUntil(turn.done, timeout=10000)
    sent = [m["content"] for m in fake_openai.requests[-1]["messages"] if m["role"] == "user"]
    assert any("typed in the nanobot CLI" in str(content) for content in sent)


def test_engine_own_turn_does_not_bounce_back_as_an_outside_change(qtbot, qloop, synced, fake_openai):
    engine, _sync, _watcher = synced
    key = "desktop:own"
    seen = _session_events(engine)
    fake_openai.add_text("Reply.")
    turn = engine.loop.submit(key, "hello")
    qtbot.waitUntil(turn.done, timeout=10000)
    cached = engine.sessions.get_or_create(key)
    # One outside change after the turn: once it is reported, the watcher's events for the turn's own
    # writes (which came first) have surely been handled too.
    append_text(engine.sessions.sessions_dir / "other.jsonl", user_line("x"))
    qtbot.waitUntil(lambda: any(event.outside for event in seen), timeout=5000)
    assert [event.session_key for event in seen if event.outside] == ["other"]
    assert [event.reason for event in seen if event.session_key == key] == ["appended", "appended"]
    assert engine.sessions.get_or_create(key) is cached, "the engine's own write forced a re-read"


def test_busy_session_is_reread_only_when_its_next_turn_starts(qtbot, qloop, synced, fake_openai):
    engine, _sync, _watcher = synced
    key = "desktop:busy"
    fake_openai.add_text("Ready.")
    first = engine.loop.submit(key, "start")
    qtbot.waitUntil(first.done, timeout=10000)
    fake_openai.add_hang("Thinking")
    running = engine.loop.submit(key, "a long one")
    qtbot.waitUntil(lambda: engine.loop.is_busy(key) and len(fake_openai.requests) == 2, timeout=10000)
    seen = _session_events(engine)

    append_text(engine.sessions.path_for(key), user_line("from outside while busy"))
    qtbot.waitUntil(lambda: any(event.outside for event in seen), timeout=5000)
    stop = qloop.create_task(engine.loop.stop(key))
    qtbot.waitUntil(lambda: stop.done() and running.done(), timeout=10000)
    lines = engine.sessions.path_for(key).read_text(encoding="utf-8").splitlines()
    assert any("from outside while busy" in line for line in lines)
    assert '"stopped": true' in lines[-1], "the stopped turn appended after the outside line, losing nothing"

    fake_openai.add_text("Next.")
    nxt = engine.loop.submit(key, "next")
    qtbot.waitUntil(nxt.done, timeout=10000)
    sent = [m["content"] for m in fake_openai.requests[-1]["messages"] if m["role"] == "user"]
    assert any("from outside while busy" in str(content) for content in sent)


def test_cron_jobs_edited_outside_are_reloaded(qtbot, synced):
    engine, sync, _watcher = synced
    assert engine.cron.list_jobs(include_disabled=True) == []
    store = {"version": 1, "jobs": [{
        "id": "ab12cd34", "name": "Stretch", "enabled": True,
        "schedule": {"kind": "every", "atMs": None, "everyMs": 3_600_000, "expr": None, "tz": None},
        "payload": {"kind": "agent_turn", "message": "Time to stretch", "deliver": False, "channel": None, "to": None},
        "state": {"nextRunAtMs": None, "lastRunAtMs": None, "lastStatus": None, "lastError": None},
        "createdAtMs": 1, "updatedAtMs": 1, "deleteAfterRun": False}]}
    with qtbot.waitSignal(sync.cron_changed, timeout=5000):
        atomic_write_text(cron_store_path(engine.config_path), json.dumps(store, indent=2))
    assert [job.name for job in engine.cron.list_jobs(include_disabled=True)] == ["Stretch"]


def test_memory_changes_are_reported(qtbot, synced):
    engine, sync, _watcher = synced
    with qtbot.waitSignal(sync.memory_changed, timeout=5000) as changed:
        engine.memory.append_history("[2026-11-22 10:00] Something happened.")
    assert engine.memory.history_file in changed.args[0]
