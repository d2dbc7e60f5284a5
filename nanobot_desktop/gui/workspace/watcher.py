"""Hot reload: one watchdog observer over the workspace, reporting changes on the GUI thread.

The observer runs on its own thread; its callback only filters out noise (temp and swap files,
.git, __pycache__) and hands the raw event to the GUI thread through a queued Qt signal. There the
events are debounced and coalesced, so a burst of writes, or another editor's "write temp, rename
over the file", becomes one `paths_changed([file])`. It reports every change, the app's own included:
who made a change is the engine's to say (engine/changes.py, asked by WorkspaceSync).
"""

from __future__ import annotations

import os
import re
import time
import warnings
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent
    from watchdog.observers.api import BaseObserver, ObservedWatch

# watchdog (with ctypes and inotify) costs ~40 ms to import: it is imported by the first `watch`,
# which the main window makes after its first paint, not when a watcher is created.

IGNORED_DIRS = frozenset({".git", "__pycache__"})
# atomic_write's ".NAME.XXXX.tmp", vim swap files and its "4913" probe, "name~" backups, emacs
# ".#name" locks, gedit's ".goutputstream-XXXX".
_IGNORED_NAME = re.compile(r"^\..*\.tmp$|\.sw[a-p]$|~$|^\.#|^4913$|^\.goutputstream-")


@cache
def _interesting_events() -> list[type[FileSystemEvent]]:
    """Content changes only: reading a file (opened / closed without writing) and chmod are not
    changes, and reporting reads would make an editor that re-reads on change loop forever."""
    from watchdog.events import (DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileClosedEvent,
                                 FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent)

    return [FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent, FileClosedEvent,
            DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


def ignore_double_registration_warning() -> None:
    """watchdog registers a folder made together with its parent (`uploads/mcp` made at once under the
    watched workspace) twice: once in the walk that follows the parent's creation, once for the folder's
    own creation event. The second registration replaces the first, as it should, but watchdog says so
    with a RuntimeWarning ("Callback with id ... already exists for watch ... It will be Overwritten.")
    that would reach the terminal and the log for nothing (2 of 30 such folders in a quick check)."""
    warnings.filterwarnings("ignore", message=r"Callback with id '.*' already exists for watch",
                            category=RuntimeWarning, module=r"watchdog\.observers\.inotify$")


def is_ignored_name(name: str) -> bool:
    """Temp, swap and backup files that never mean "the file the person cares about changed"."""
    return bool(_IGNORED_NAME.search(name))


class _Bridge(QObject):
    """Created on the GUI thread; emitting `raw` from the observer thread queues the slot there."""

    raw = Signal(str)


@cache
def _handler_class() -> type:
    """The observer-thread handler class (defined on first use, so watchdog is imported then)."""
    from watchdog.events import FileSystemEventHandler

    class Handler(FileSystemEventHandler):
        """Runs on the observer thread: drop noise, pass the rest on. Nothing else happens here."""

        def __init__(self, root: Path, bridge: _Bridge) -> None:
            super().__init__()
            self._root = root
            self._bridge = bridge

        def on_any_event(self, event: FileSystemEvent) -> None:
            for raw_path in (event.src_path, getattr(event, "dest_path", "")):
                if not raw_path:
                    continue
                path = os.fsdecode(raw_path)
                if self._is_noise(path):
                    continue
                try:
                    self._bridge.raw.emit(path)
                except RuntimeError:
                    return  # the watcher was destroyed while the observer was still stopping

        def _is_noise(self, path: str) -> bool:
            if is_ignored_name(os.path.basename(path)):
                return True
            try:
                relative = Path(path).relative_to(self._root)
            except ValueError:
                return False
            return any(part in IGNORED_DIRS for part in relative.parts)

    return Handler


class WorkspaceWatcher(QObject):
    """Watches folders and emits debounced, coalesced `paths_changed` on the GUI thread."""

    paths_changed = Signal(list)
    """list[Path]: resolved, de-duplicated paths that changed on disk (created, modified, deleted or
    renamed; a folder appears when it was created, deleted or renamed), whoever changed them."""

    def __init__(self, parent: QObject | None = None, *, quiet_ms: int = 50, max_delay_ms: int = 250) -> None:
        super().__init__(parent)
        self._quiet_ms = quiet_ms
        self._max_delay_ms = max_delay_ms
        self._observer: BaseObserver | None = None
        self._watches: dict[tuple[Path, bool], ObservedWatch] = {}
        self._pending: dict[str, None] = {}
        self._first_pending_at = 0.0
        self._stopped = False
        self._bridge = _Bridge()
        self._bridge.raw.connect(self._on_raw_event, Qt.ConnectionType.QueuedConnection)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.flush)

    # ---- what to watch --------------------------------------------------------------------------
    def watch(self, path: Path, recursive: bool = True) -> None:
        """Watch a folder (and below it when `recursive`). For one file, watch its folder, non-recursive."""
        if self._stopped:
            raise RuntimeError("the watcher was stopped; create a new one")
        root = Path(path).expanduser().resolve()
        if not root.exists():
            raise FileNotFoundError(f"cannot watch {root}: it does not exist (create the folder first)")
        if not root.is_dir():
            raise NotADirectoryError(f"cannot watch {root}: it is a file; watch its folder with recursive=False")
        key = (root, recursive)
        if key in self._watches:
            return
        if self._observer is None:
            from watchdog.observers import Observer

            ignore_double_registration_warning()
            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        self._watches[key] = self._observer.schedule(_handler_class()(root, self._bridge), str(root),
                                                     recursive=recursive, event_filter=_interesting_events())

    def unwatch(self, path: Path) -> None:
        """Stop watching a folder given to `watch` (e.g. when the workspace changes)."""
        root = Path(path).expanduser().resolve()
        for key in [key for key in self._watches if key[0] == root]:
            watch = self._watches.pop(key)
            if self._observer is not None:
                self._observer.unschedule(watch)

    def watched_folders(self) -> list[Path]:
        return sorted({root for root, _recursive in self._watches})

    # ---- event flow (GUI thread) ----------------------------------------------------------------
    @Slot(str)
    def _on_raw_event(self, path: str) -> None:
        if self._stopped:
            return
        now = time.monotonic()
        if not self._pending:
            self._first_pending_at = now
        self._pending[path] = None
        waited_ms = (now - self._first_pending_at) * 1000
        # Trailing debounce, but never hold a change back longer than max_delay_ms in a busy burst.
        self._timer.start(max(0, min(self._quiet_ms, int(self._max_delay_ms - waited_ms))))

    def flush(self) -> None:
        """Emit what has gathered now (the timer calls this; tests and shutdown may too)."""
        self._timer.stop()
        if not self._pending:
            return
        raw_paths, self._pending = list(self._pending), {}
        changed: dict[Path, None] = {}
        for raw in raw_paths:
            changed[Path(raw).resolve()] = None
        self.paths_changed.emit(list(changed))

    # ---- shutdown -------------------------------------------------------------------------------
    def stop(self, timeout: float = 5.0) -> None:
        """Stop the observer thread and wait for it (the app's shutdown owner calls this)."""
        if self._stopped:
            return
        self._stopped = True
        self._timer.stop()
        self._pending.clear()
        observer, self._observer = self._observer, None
        self._watches.clear()
        if observer is not None:
            observer.stop()
            observer.join(timeout)

    @property
    def is_running(self) -> bool:
        return self._observer is not None and self._observer.is_alive()
