"""The engine's one change tracker (engine/changes.py): for each kind of file it owns, its own write is
not reported as outside, someone else's is, once. Real files in tmp_path, real Engine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nanobot_desktop.engine import CronSchedule, FileChanged, LayoutKind, SessionChanged, prepare_workspace
from nanobot_desktop.engine.changes import ChangeTracker
from nanobot_desktop.engine.workspace import atomic_write_text


def _recorded(engine) -> list[object]:
    seen: list[object] = []
    engine.bus.subscribe(lambda event: seen.append(event) if isinstance(event, (FileChanged, SessionChanged)) else None)
    return seen


def _file_events(seen: list[object], path: Path) -> list[tuple[str, bool]]:
    return [(e.kind, e.outside) for e in seen if isinstance(e, FileChanged) and Path(e.path) == path]


def _touch_later(path: Path, text: str) -> None:
    """Someone else's write, whose mtime differs from the engine's even on a coarse clock."""
    path.write_text(text, encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


def test_tracker_on_real_files(tmp_path: Path) -> None:
    tracker = ChangeTracker()
    target = tmp_path / "notes.md"
    assert tracker.changed_outside(target), "a file never seen is someone else's, even when it is gone"
    atomic_write_text(target, "ours\n")
    tracker.wrote(target)
    assert tracker.verdict(target) == "unchanged"
    _touch_later(target, "theirs\n")
    assert tracker.changed_outside(target)
    assert not tracker.changed_outside(target), "one outside change is reported once"

    tracker.expect(target, "announced by an editor\n")
    atomic_write_text(target, "announced by an editor\n")
    assert tracker.verdict(target) == "announced"
    assert tracker.verdict(target) == "announced", "every event of the announced write is the app's"
    _touch_later(target, "someone after the editor\n")
    assert tracker.changed_outside(target)
    target.unlink()
    assert tracker.changed_outside(target), "a removal by someone else is a change too"
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    atomic_write_text(target, "again\n")
    tracker.wrote(link / "notes.md")  # the same file under another name (a watcher reports resolved paths)
    assert not tracker.changed_outside(target)


async def test_each_kind_of_file_own_write_is_not_outside_and_another_write_is(make_engine, fake_openai, tmp_path):
    engine = make_engine()
    seen = _recorded(engine)
    memory = engine.memory

    # MEMORY.md and its versions
    memory.write_long_term("first\n")
    memory.write_long_term("second\n")  # keeps "first" as a version under memory/.versions/
    version = next(memory.versions_dir.iterdir())
    assert engine.notice_files([memory.memory_file, version]) == [memory.memory_file, version]  # views follow it
    assert _file_events(seen, memory.memory_file) == [("memory", False)]
    assert _file_events(seen, version) == [("memory", False)]
    _touch_later(memory.memory_file, "edited in another editor\n")
    assert engine.notice_files([memory.memory_file]) == [memory.memory_file]
    assert _file_events(seen, memory.memory_file)[-1] == ("memory", True)
    assert memory.memory_file.read_text(encoding="utf-8") == "edited in another editor\n"

    # HISTORY.md
    memory.append_history("[2026-11-28 10:00] we talked")
    assert engine.notice_files([memory.history_file]) == [memory.history_file]
    with memory.history_file.open("a", encoding="utf-8") as handle:
        handle.write("[2026-11-28 11:00] the CLI consolidated\n\n")
    assert engine.notice_files([memory.history_file]) == [memory.history_file]
    assert _file_events(seen, memory.history_file) == [("history", False), ("history", True)]

    # the cron store: the engine's own save is not re-read as outside, a hand edit is
    job = engine.cron.add_job("water", CronSchedule(kind="every", every_ms=3_600_000), "water the plants")
    store = engine.cron.store_path
    assert engine.notice_files([store]) == [store]
    data = json.loads(store.read_text(encoding="utf-8"))
    data["jobs"][0]["name"] = "water the garden"
    _touch_later(store, json.dumps(data))
    assert engine.notice_files([store]) == [store]
    assert _file_events(seen, store) == [("cron", False), ("cron", True)]
    assert [j.name for j in engine.cron.list_jobs(include_disabled=True) if j.id == job.id] == ["water the garden"]

    # a skill: the app's announced write is its own, a later edit is not
    skill = engine.workspace.skills_dir / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    text = "---\nname: demo\ndescription: a demo\n---\nDo it.\n"
    engine.expect_write(skill, text)
    atomic_write_text(skill, text)
    assert engine.notice_files([skill]) == [], "the echo of the app's announced write goes nowhere"
    _touch_later(skill, text + "More.\n")
    assert engine.notice_files([skill]) == [skill]
    assert _file_events(seen, skill) == [("skills", False), ("skills", True)]

    # a session: the store's append is its own, the CLI's append is outside (SessionChanged)
    session = engine.sessions.get_or_create("cli:direct")
    engine.sessions.append(session, [{"role": "user", "content": "hi"}])
    seen.clear()
    assert engine.notice_files([session.path]) == []
    assert not [e for e in seen if isinstance(e, SessionChanged)]
    with session.path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"role": "assistant", "content": "from the CLI"}) + "\n")
    assert engine.notice_files([session.path]) == []  # sessions are told by event, not routed
    outside = [e for e in seen if isinstance(e, SessionChanged)]
    assert [(e.session_key, e.outside) for e in outside] == [("cli:direct", True)]
    await engine.shutdown()


async def test_history_jsonl_of_a_0_3_workspace(make_engine, fake_openai, tmp_path):
    prepare_workspace(tmp_path / "ws", LayoutKind.V03)
    engine = make_engine()
    seen = _recorded(engine)
    journal = engine.memory.journal
    assert journal is not None
    engine.memory.append_history("an entry of ours")
    entry = journal.entries()[-1]
    journal.edit(entry.cursor, "an entry of ours, edited here")
    assert engine.notice_files([journal.file, journal.cursor_file]) == [journal.file, journal.cursor_file]
    assert _file_events(seen, journal.cursor_file) == [("history", False)]
    before = journal.file.read_bytes()
    with journal.file.open("ab") as handle:
        handle.write(json.dumps({"cursor": entry.cursor + 1, "timestamp": "2026-11-28 12:00",
                                 "content": "Dream wrote this"}).encode() + b"\n")
    assert engine.notice_files([journal.file]) == [journal.file]
    assert _file_events(seen, journal.file) == [("history", False), ("history", True)]
    assert journal.file.read_bytes().startswith(before)
    await engine.shutdown()


@pytest.mark.parametrize("kind", ["memory", "history"])
async def test_consolidation_writes_are_the_engines_own(make_engine, fake_openai, tmp_path, kind):
    engine = make_engine()
    engine.memory.commit_consolidation("[2026-11-28 10:00] summary", "# Memory\nfacts\n")
    path = engine.memory.memory_file if kind == "memory" else engine.memory.history_file
    seen = _recorded(engine)
    engine.notice_files([path])
    assert _file_events(seen, path) == [(kind, False)]
    await engine.shutdown()


async def test_a_restore_is_current_until_anyone_writes_the_file(make_engine, fake_openai, tmp_path):
    """What ends the memory view's "Restored" line is the engine's answer, whoever wrote after it."""
    engine = make_engine()
    memory = engine.memory
    memory.write_long_term("first\n")
    memory.write_long_term("second\n")
    assert not memory.restore_still_current(), "nothing restored yet"
    memory.restore_version(memory.list_versions()[0])
    assert memory.memory_file.read_text(encoding="utf-8") == "first\n"
    assert memory.restore_still_current()
    memory.commit_consolidation(None, "from consolidation\n")  # the engine's own later write
    assert not memory.restore_still_current()

    memory.restore_version(memory.list_versions()[0])
    assert memory.restore_still_current()
    _touch_later(memory.memory_file, "another program\n")
    assert not memory.restore_still_current()
    await engine.shutdown()
