"""WorkspaceWatcher: real inotify events, delivered on the GUI thread, debounced and filtered.

To know that every event of an action has arrived without sleeping, a test writes a "sentinel"
file afterwards and waits for it: inotify reports events in order, so once the sentinel is seen,
everything before it has been delivered too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from PySide6.QtCore import QThread

from nanobot_desktop.engine.changes import ChangeTracker
from nanobot_desktop.engine.workspace import atomic_write_bytes, atomic_write_text
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher, is_ignored_name


class Recorder:
    """Collects every paths_changed batch, and the thread each one arrived on."""

    def __init__(self, watcher: WorkspaceWatcher) -> None:
        self.batches: list[list[Path]] = []
        self.threads: list[object] = []
        watcher.paths_changed.connect(self._record)

    def _record(self, paths: list[Path]) -> None:
        self.batches.append(list(paths))
        self.threads.append(QThread.currentThread())

    def seen(self, path: Path) -> bool:
        return any(path in batch for batch in self.batches)

    def batches_with(self, path: Path) -> int:
        return sum(path in batch for batch in self.batches)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    return root.resolve()


@pytest.fixture
def watcher(qapp):
    # A generous quiet period keeps "one burst = one batch" true on a busy 2-core machine.
    instance = WorkspaceWatcher(quiet_ms=150, max_delay_ms=2000)
    yield instance
    instance.stop()
    assert not instance.is_running


def sync_with_sentinel(qtbot, recorder: Recorder, folder: Path, name: str = "sentinel.txt") -> None:
    sentinel = folder / name
    sentinel.write_text(f"{len(recorder.batches)}", encoding="utf-8")
    qtbot.waitUntil(lambda: recorder.seen(sentinel), timeout=5000)


def test_write_from_another_thread_arrives_as_one_batch_on_gui_thread(qtbot, watcher, workspace):
    recorder = Recorder(watcher)
    watcher.watch(workspace)
    target = workspace / "memory" / "MEMORY.md"

    def writer() -> None:
        target.write_text("one\n", encoding="utf-8")
        with target.open("a", encoding="utf-8") as handle:
            handle.write("two\n")
        with target.open("a", encoding="utf-8") as handle:
            handle.write("three\n")

    thread = threading.Thread(target=writer)
    with qtbot.waitSignal(watcher.paths_changed, timeout=5000) as signal:
        thread.start()
    thread.join()
    assert signal.args == [[target]]
    sync_with_sentinel(qtbot, recorder, workspace)
    assert recorder.batches_with(target) == 1, recorder.batches
    assert all(thread is QThread.currentThread() for thread in recorder.threads), "signals must arrive on the GUI thread"


def test_write_from_another_process_is_reported(qtbot, watcher, workspace):
    recorder = Recorder(watcher)
    watcher.watch(workspace)
    target = workspace / "USER.md"
    code = f"open({str(target)!r}, 'w').write('from the nanobot CLI\\n')"
    with qtbot.waitSignal(watcher.paths_changed, timeout=5000) as signal:
        subprocess.run([sys.executable, "-c", code], check=True)
    assert signal.args == [[target]]
    assert recorder.batches == [[target]]


def test_atomic_replace_arrives_as_change_of_target_only(qtbot, watcher, workspace):
    target = workspace / "AGENTS.md"
    target.write_text("before\n", encoding="utf-8")
    recorder = Recorder(watcher)
    watcher.watch(workspace)
    atomic_write_text(target, "after, via the app's writer\n")
    temp = workspace / ".AGENTS.md.by-other-editor.tmp"  # write temp, rename over: another editor's save
    temp.write_text("after, via another editor\n", encoding="utf-8")
    os.replace(temp, target)
    sync_with_sentinel(qtbot, recorder, workspace)
    everything = [path for batch in recorder.batches for path in batch]
    assert target in everything
    assert set(everything) == {target, workspace / "sentinel.txt"}, everything
    assert recorder.batches_with(target) == 1


def test_the_watcher_reports_every_write_and_the_engine_tracker_says_whose(qtbot, watcher, workspace):
    """The watcher decides nothing: the app's own write comes through like any other, and the engine's
    change tracker (what WorkspaceSync asks) tells it from someone else's."""
    target = workspace / "memory" / "MEMORY.md"
    target.write_text("v1\n", encoding="utf-8")
    tracker = ChangeTracker()
    tracker.wrote(target)
    recorder = Recorder(watcher)
    watcher.watch(workspace)
    tracker.expect(target, b"v2 by the app\n")
    atomic_write_bytes(target, b"v2 by the app\n")
    sync_with_sentinel(qtbot, recorder, workspace)
    assert recorder.seen(target), recorder.batches
    assert not tracker.changed_outside(target)

    with qtbot.waitSignal(watcher.paths_changed, timeout=5000, check_params_cb=lambda paths: target in paths):
        target.write_text("v3 by someone else\n", encoding="utf-8")
    assert tracker.changed_outside(target)


def test_temp_swap_backup_git_and_pycache_are_ignored_but_versions_are_not(qtbot, watcher, workspace):
    recorder = Recorder(watcher)
    (workspace / ".git").mkdir()
    (workspace / "skills" / "demo" / "__pycache__").mkdir(parents=True)
    versions = workspace / "memory" / ".versions"
    versions.mkdir()
    watcher.watch(workspace)
    noise = [
        workspace / ".MEMORY.md.abc123.tmp",
        workspace / ".SOUL.md.swp",
        workspace / "SOUL.md~",
        workspace / ".#SOUL.md",
        workspace / "4913",
        workspace / ".git" / "index",
        workspace / "skills" / "demo" / "__pycache__" / "x.cpython-311.pyc",
    ]
    for path in noise:
        path.write_text("noise", encoding="utf-8")
    version = versions / "MEMORY.2026-01-01T00-00-00.md"
    version.write_text("old memory", encoding="utf-8")
    sync_with_sentinel(qtbot, recorder, workspace)
    everything = {path for batch in recorder.batches for path in batch}
    assert not everything & set(noise), everything
    assert version in everything


def test_non_recursive_watch_sees_only_direct_children(qtbot, watcher, tmp_path):
    config_cron = tmp_path / "cron"
    (config_cron / "nested").mkdir(parents=True)
    config_cron = config_cron.resolve()
    recorder = Recorder(watcher)
    watcher.watch(config_cron, recursive=False)
    (config_cron / "nested" / "deep.json").write_text("{}", encoding="utf-8")
    jobs = config_cron / "jobs.json"
    atomic_write_text(jobs, '{"version": 1, "jobs": []}')
    sync_with_sentinel(qtbot, recorder, config_cron)
    everything = {path for batch in recorder.batches for path in batch}
    assert jobs in everything
    assert config_cron / "nested" / "deep.json" not in everything


def test_deleted_file_is_reported_and_paths_are_resolved(qtbot, watcher, workspace, tmp_path):
    target = workspace / "HEARTBEAT.md"
    target.write_text("- task\n", encoding="utf-8")
    link = tmp_path / "ws-link"
    link.symlink_to(workspace)
    recorder = Recorder(watcher)
    watcher.watch(link)  # a symlinked workspace is watched at its real location
    assert watcher.watched_folders() == [workspace]
    with qtbot.waitSignal(watcher.paths_changed, timeout=5000) as signal:
        target.unlink()
    assert signal.args == [[target]]
    assert recorder.batches == [[target]]


def test_watch_rejects_missing_folders_and_files(watcher, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        watcher.watch(tmp_path / "nope")
    a_file = tmp_path / "jobs.json"
    a_file.write_text("{}", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match="watch its folder"):
        watcher.watch(a_file)


def test_stop_joins_the_observer_thread(qapp, workspace):
    instance = WorkspaceWatcher()
    instance.watch(workspace)
    assert instance.is_running
    instance.stop()
    assert not instance.is_running
    instance.stop()  # twice is harmless
    with pytest.raises(RuntimeError):
        instance.watch(workspace)


@pytest.mark.parametrize("name, ignored", [
    (".MEMORY.md.x1y2.tmp", True), ("notes.md.swp", True), ("notes.md~", True), (".#notes.md", True),
    ("MEMORY.md", False), ("jobs.json", False), ("report.tmp", False), ("SKILL.md", False),
])
def test_ignored_names(name, ignored):
    assert is_ignored_name(name) is ignored


def test_watcher_drives_editor_hot_reload_without_echoing_its_saves(qtbot, watcher, workspace):
    target = workspace / "SOUL.md"
    target.write_text("calm\n", encoding="utf-8")
    editor = MarkdownEditor()
    qtbot.addWidget(editor)
    tracker = ChangeTracker()  # the engine's, as WorkspaceSync wires it: editors announce, the tracker decides
    editor.expect_write = tracker.expect
    reloads: list[Path] = []

    def route(paths: list[Path]) -> None:
        if target in paths and tracker.changed_outside(target):
            reloads.append(target)
            editor.on_file_changed_on_disk()

    watcher.paths_changed.connect(route)
    recorder = Recorder(watcher)
    watcher.watch(workspace)
    try:
        with qtbot.waitSignal(editor.loaded):
            editor.open_file(target)
        with qtbot.waitSignal(editor.loaded, timeout=5000):
            target.write_text("curious\n", encoding="utf-8")  # the agent edits the file
        assert editor.text() == "curious\n"

        editor.replace_all_text("curious and kind\n")
        with qtbot.waitSignal(editor.saved):
            editor.save()
        sync_with_sentinel(qtbot, recorder, workspace)
        assert reloads == [target], "the editor's own save must not come back as someone else's"
        assert target.read_text(encoding="utf-8") == "curious and kind\n"
    finally:
        editor.shutdown()


def test_a_folder_registered_twice_by_watchdog_warns_nobody(watcher, workspace):
    """A folder made together with its parent under the watched workspace can be registered twice by
    watchdog (the walk after the parent's creation, then its own creation event); the second time
    replaces the first. Driven through watchdog's own registration of that folder: no warning
    reaches the person, and the folder is still watched."""
    from watchdog.observers.inotify import InotifyWatchGroup
    from watchdog.observers.inotify_c import InotifyConstants, InotifyFD

    watcher.watch(workspace)
    folder = workspace / "uploads" / "mcp"
    folder.mkdir(parents=True)
    group = InotifyWatchGroup(InotifyFD.get_instance(), os.fsencode(workspace), InotifyConstants.IN_CREATE,
                              is_recursive=True)  # registers every folder below, "mcp" included
    try:
        with warnings.catch_warnings(record=True) as caught:
            group._add_callback(os.fsencode(folder))  # what the folder's own creation event does
        assert [str(warning.message) for warning in caught] == []
        assert os.fsencode(folder) in group._active_callbacks_by_path
    finally:
        group.deactivate()
