"""Conflict copies of text files wait for the person (nothing overwritten); history copies are merged."""

from __future__ import annotations

import json
from pathlib import Path

from nanobot_desktop.engine.events import SyncCopyMerged, SyncTextConflict
from nanobot_desktop.engine.layout import LayoutKind, detect_layout, prepare_workspace
from nanobot_desktop.engine.memory.store import MemoryStore
from nanobot_desktop.engine.sync.texts import merge_history_copies, resolve_text_conflict, text_conflicts, trash_folder
from nanobot_desktop.engine.workspace import Workspace


def _memory(tmp_path: Path, kind: LayoutKind) -> tuple[Path, MemoryStore]:
    root = tmp_path / "ws"
    prepare_workspace(root, kind)
    return root, MemoryStore(Workspace.at(root), detect_layout(root, tmp_path / "config.json"))


def test_a_memory_conflict_shows_both_versions_the_base_and_the_device_and_waits(tmp_path: Path) -> None:
    root, memory = _memory(tmp_path, LayoutKind.POST4)
    memory.write_long_term("# Memory\n\n- likes tea\n")
    memory.write_long_term("# Memory\n\n- likes tea\n- lives in Lisbon\n")  # this machine's edit
    copy = memory.memory_file.with_name("MEMORY.sync-conflict-20991128-101500-BBBBBBB.md")
    copy.write_text("# Memory\n\n- likes tea\n- has a dog\n")  # the other machine's edit
    (conflict,) = text_conflicts(root, memory)
    assert conflict.name == "memory/MEMORY.md" and conflict.conflict.device == "BBBBBBB"
    assert conflict.ours().endswith("- lives in Lisbon\n") and conflict.theirs().endswith("- has a dog\n")
    assert conflict.base_text == "# Memory\n\n- likes tea\n" and conflict.base_label.startswith("saved 20")
    assert memory.read_long_term().endswith("- lives in Lisbon\n")  # nothing overwritten while it waits

    chosen = "# Memory\n\n- likes tea\n- lives in Lisbon\n- has a dog\n"
    moved = resolve_text_conflict(conflict, chosen, root, memory)
    assert memory.read_long_term() == chosen and not copy.exists()
    assert moved.parent == trash_folder(root) and moved.read_text().endswith("- has a dog\n")
    newest = memory.list_versions()[0]  # the text the choice replaced is kept as a version
    assert newest.source == "merge" and memory.read_version(newest).endswith("- lives in Lisbon\n")
    assert text_conflicts(root, memory) == []


def test_bootstrap_heartbeat_and_skill_copies_are_listed_without_a_base(tmp_path: Path) -> None:
    root, memory = _memory(tmp_path, LayoutKind.POST4)
    (root / "HEARTBEAT.md").write_text("- [ ] water the plants\n")
    (root / "HEARTBEAT (Ann's conflicted copy 2026-11-28).md").write_text("- [ ] feed the cat\n")
    (root / "skills" / "weather").mkdir(parents=True)
    (root / "skills" / "weather" / "SKILL.md").write_text("mine")
    (root / "skills" / "weather" / "SKILL.sync-conflict-20261128-101500-BBBBBBB.md").write_text("theirs")
    (root / "notes.sync-conflict-20261128-101500-BBBBBBB.md").write_text("an orphan")  # notes.md does not exist
    found = {c.copy.name: c for c in text_conflicts(root, memory)}
    assert set(found) == {"HEARTBEAT (Ann's conflicted copy 2026-11-28).md", "SKILL.sync-conflict-20261128-101500-BBBBBBB.md"}
    heartbeat = found["HEARTBEAT (Ann's conflicted copy 2026-11-28).md"]
    assert heartbeat.conflict.device == "Ann" and heartbeat.base_text is None
    resolve_text_conflict(heartbeat, heartbeat.theirs(), root, memory)
    assert (root / "HEARTBEAT.md").read_text() == "- [ ] feed the cat\n"


def test_history_md_copies_are_merged_in_time_order(tmp_path: Path) -> None:
    root, memory = _memory(tmp_path, LayoutKind.POST4)
    memory.append_history("[2026-11-28 09:00] planned the trip")
    memory.append_history("[2026-11-28 10:00] chose Lisbon")
    copy = memory.history_file.with_name("HISTORY.sync-conflict-20261128-101500-BBBBBBB.md")
    copy.write_text("[2026-11-28 09:00] planned the trip\n\n[2026-11-28 09:30] packed a coat\n\n[2026-11-28 11:00] booked\n\n")
    (result,) = merge_history_copies(root, memory)
    assert (result.outcome, result.added) == ("merged", 2)
    assert memory.read_history().split("\n\n")[:4] == ["[2026-11-28 09:00] planned the trip", "[2026-11-28 10:00] chose Lisbon",
                                                       "[2026-11-28 09:30] packed a coat", "[2026-11-28 11:00] booked"]
    assert not copy.exists() and merge_history_copies(root, memory) == []


def test_history_jsonl_copies_get_new_cursors(tmp_path: Path) -> None:
    root, memory = _memory(tmp_path, LayoutKind.V03)
    assert memory.journal is not None
    memory.journal.append("[2026-11-28 09:00] planned the trip")
    memory.journal.append("[2026-11-28 10:00] chose Lisbon")  # cursor 2 here
    copy = memory.history_file.with_name("history.sync-conflict-20261128-101500-BBBBBBB.jsonl")
    copy.write_text("\n".join(json.dumps(r) for r in [
        {"cursor": 1, "timestamp": "2026-11-28 09:00", "content": "planned the trip"},
        {"cursor": 2, "timestamp": "2026-11-28 09:30", "content": "packed a coat"},  # cursor 2 there
    ]) + "\n")
    (result,) = merge_history_copies(root, memory)
    assert (result.outcome, result.added) == ("merged", 1)
    entries = memory.journal.entries()
    assert [(e.cursor, e.timestamp, e.content) for e in entries] == [
        (1, "2026-11-28 09:00", "planned the trip"), (2, "2026-11-28 10:00", "chose Lisbon"),
        (3, "2026-11-28 09:30", "packed a coat")]
    assert memory.journal.cursor_file.read_text() == "3"


async def test_the_engine_says_which_text_files_wait_and_takes_the_choice(make_engine) -> None:
    engine = make_engine()
    root = engine.workspace.root
    (root / "USER.md").write_text("name: Ann\n")
    (root / "USER.sync-conflict-20261128-101500-BBBBBBB.md").write_text("name: Ann Lee\n")
    seen: list[object] = []
    engine.bus.subscribe(seen.append)
    assert engine.merge_sync_copies() == []
    (event,) = [e for e in seen if isinstance(e, SyncTextConflict)]
    assert (event.file_name, event.device, event.tool) == ("USER.md", "BBBBBBB", "Syncthing")
    engine.resolve_text_conflict(event.copy_name, "name: Ann Lee\n")
    assert (root / "USER.md").read_text() == "name: Ann Lee\n" and engine.text_conflicts() == []
    assert not [e for e in seen if isinstance(e, SyncCopyMerged)]
