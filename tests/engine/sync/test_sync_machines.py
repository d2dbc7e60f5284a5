"""Exactly one machine runs the background work of a shared workspace, decided from files alone;
the app's per-machine files are kept out of a Syncthing folder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nanobot_desktop.engine.events import BackgroundOwnerChanged
from nanobot_desktop.engine.sync.folder import BLOCK_START, IGNORED, ensure_stignore, synced_folder
from nanobot_desktop.engine.sync.machines import Machines, keep_beating, this_machine_id


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _pair(workspace: Path, clock: Clock, takeover_s: float = 300) -> tuple[Machines, Machines]:
    laptop = Machines(workspace, machine_id="a" * 32, name="laptop", takeover_s=takeover_s, clock=clock)
    desktop = Machines(workspace, machine_id="b" * 32, name="desktop", takeover_s=takeover_s, clock=clock)
    return laptop, desktop


def test_one_runner_agreed_by_both_and_taken_over_when_it_falls_silent(tmp_path: Path) -> None:
    clock = Clock()
    laptop, desktop = _pair(tmp_path, clock)
    laptop.beat()
    desktop.beat()
    assert laptop.runner().machine_id == desktop.runner().machine_id == "a" * 32  # the smallest id
    assert laptop.background_owner() is None
    owner = desktop.background_owner()
    assert owner is not None and owner.startswith("laptop (seen 0 s ago) runs the heartbeat and scheduled jobs")
    assert "takes over when it has not been seen for 5 min" in owner

    clock.now += 299  # the laptop is silent, but not yet for the take-over time
    desktop.beat()
    assert desktop.background_owner() is not None
    clock.now += 2
    desktop.beat()
    assert desktop.background_owner() is None  # the desktop runs it now
    assert laptop.background_owner() is None  # and the laptop, cut off, would too (documented)
    laptop.beat()  # the laptop is back: the smallest id runs it again, on both
    assert laptop.background_owner() is None and desktop.background_owner() is not None


def test_the_person_s_choice_wins_while_that_machine_is_seen(tmp_path: Path) -> None:
    clock = Clock()
    laptop, desktop = _pair(tmp_path, clock)
    laptop.beat()
    desktop.beat()
    laptop.choose("b" * 32)
    assert desktop.background_owner() is None and "desktop (seen" in (laptop.background_owner() or "")
    desktop.leave()  # the desktop app quits: the laptop takes over at once
    assert laptop.background_owner() is None
    assert json.loads((tmp_path / ".nanobot-desktop" / "background.json").read_text()) == {"machine": "b" * 32}


def test_unreadable_or_half_synced_files_are_ignored(tmp_path: Path) -> None:
    clock = Clock()
    laptop, _desktop = _pair(tmp_path, clock)
    folder = tmp_path / ".nanobot-desktop" / "machines"
    folder.mkdir(parents=True)
    (folder / ("0" * 32 + ".json")).write_text('{"id": "00000')  # cut off mid-sync
    (folder / "stray.json").write_text(json.dumps({"id": "0" * 32, "name": "x", "seen": clock.now}))  # name ≠ id
    assert [m.machine_id for m in laptop.known()] == ["a" * 32]
    assert laptop.background_owner() is None


def test_the_machine_id_is_made_once_and_kept_outside_the_workspace(tmp_path: Path) -> None:
    first = this_machine_id(tmp_path / "state")
    assert len(first) == 32 and this_machine_id(tmp_path / "state") == first
    assert this_machine_id(tmp_path / "other") != first


def test_an_unsynced_workspace_gets_no_file(tmp_path: Path) -> None:
    machines = Machines(tmp_path / "ws", machine_id="a" * 32, name="laptop")
    (tmp_path / "ws").mkdir()
    assert not machines.in_use()
    (tmp_path / ".stfolder").mkdir()  # the workspace lies inside a Syncthing folder
    assert machines.in_use()


async def test_keep_beating_reports_changes_and_leaves_when_cancelled(tmp_path: Path) -> None:
    (tmp_path / ".stfolder").mkdir()
    clock = Clock()
    laptop, desktop = _pair(tmp_path, clock)
    laptop.beat()
    answers: list[str | None] = []
    changed = asyncio.Event()

    def report(owner: str | None) -> None:
        answers.append(owner)
        changed.set()

    task = asyncio.create_task(keep_beating(desktop, report, beat_s=3600))
    await asyncio.wait_for(changed.wait(), 10)
    assert answers and answers[0] is not None and answers[0].startswith("laptop")
    assert (tmp_path / ".nanobot-desktop" / "machines" / ("b" * 32 + ".json")).exists()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert laptop.known()[1].seen == 0  # the desktop said it left


async def test_the_engine_leaves_cron_and_the_heartbeat_to_the_other_machine(make_engine) -> None:
    engine = make_engine()
    root = engine.workspace.root
    (root / ".stfolder").mkdir()
    other = Machines(root, machine_id="0" * 32, name="desktop")  # a smaller id than any random one but this
    other.beat()
    seen: list[object] = []
    told = asyncio.Event()
    engine.bus.subscribe(lambda event: (seen.append(event), told.set() if isinstance(event, BackgroundOwnerChanged) else None))
    await engine.start_services()
    try:
        await asyncio.wait_for(told.wait(), 10)  # the first look runs off the loop
        owner = engine._background_owner()
        assert owner is not None and owner.startswith("desktop (seen")
        assert engine.cron.defer_to is not None and engine.cron.defer_to() == owner
        assert any(isinstance(e, BackgroundOwnerChanged) and e.owner == owner for e in seen)
        text = (root / ".stignore").read_text()
        assert text.startswith(BLOCK_START) and all(line in text for line in IGNORED)
    finally:
        await engine.shutdown()


def test_stignore_block_is_appended_once_and_the_person_s_lines_are_kept(tmp_path: Path) -> None:
    (tmp_path / ".stfolder").mkdir()
    (tmp_path / "ws").mkdir()
    assert synced_folder(tmp_path / "ws") is not None and synced_folder(tmp_path / "ws").root == tmp_path.resolve()
    (tmp_path / ".stignore").write_text("// mine\n*.bak")  # no newline at the end
    assert ensure_stignore(tmp_path) is True
    assert ensure_stignore(tmp_path) is False
    text = (tmp_path / ".stignore").read_text()
    assert text.startswith("// mine\n*.bak\n" + BLOCK_START) and text.count(BLOCK_START) == 1
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / ".stignore").write_bytes(b"\xff\xfe")
    assert ensure_stignore(tmp_path / "bad") is False
    assert (tmp_path / "bad" / ".stignore").read_bytes() == b"\xff\xfe"
