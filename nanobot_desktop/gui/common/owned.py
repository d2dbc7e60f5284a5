"""Background work bound to the widget it reports to: a result never reaches a deleted widget.

A worker thread or an asyncio task that finishes after its widget was closed must drop its
result, not call into a deleted C++ object ("Internal C++ object (MessageBar) already deleted").
`OwnedWork(owner)` is a QObject child of the owner, so it lives and dies with it:

- `post(callback)`, callable from any thread, runs `callback()` on the GUI thread while the owner
  is alive; once the owner is destroyed, queued and later callbacks are dropped.
- `spawn(awaitable)` runs a task that is cancelled when the owner is destroyed, so the code
  after its `await` never runs against a deleted widget; `shutdown()` cancels and awaits them.
- `when_done(future, callback)` is for work that is not the owner's to cancel (a scheduled job
  run, a heartbeat tick, a subagent being cancelled: the engine's, which goes on whatever becomes
  of the panel that started it): `callback(future)` runs when it ends, if the owner still exists.

One mechanism for threads and tasks alike; panels use it instead of bare `asyncio.ensure_future`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, Slot

log = logging.getLogger(__name__)

T = TypeVar("T")


class OwnedWork(QObject):
    """Tasks and thread callbacks that belong to `owner` (see the module docstring)."""

    _ready = Signal(object)

    def __init__(self, owner: QObject) -> None:
        super().__init__(owner)
        self.setObjectName("ownedWork")
        self._state = _State()
        self._ready.connect(self._run, Qt.ConnectionType.QueuedConnection)
        # `destroyed` of the owner comes before its children are deleted: from then on nothing is
        # delivered, even a callback a worker thread is posting at this very moment. The slot is
        # the state's, not this object's: when the garbage collector takes an owner and this
        # object together, this object's Python side may already be gone when `destroyed` fires.
        owner.destroyed.connect(self._state.stop, Qt.ConnectionType.DirectConnection)

    @property
    def alive(self) -> bool:
        return self._state.alive

    def post(self, callback: Callable[[], None]) -> None:
        """Run `callback()` on the GUI thread later, if the owner still exists then (any thread)."""
        state = self._state
        with state.lock:
            if not state.alive:
                return
            try:
                self._ready.emit(callback)
            except RuntimeError:  # the relay itself is gone (interpreter teardown)
                state.alive = False

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """An asyncio task cancelled when the owner is destroyed; its failure is logged."""
        task = asyncio.ensure_future(coroutine)
        self.track(task)
        return task

    def track(self, future: asyncio.Future[Any]) -> None:
        """Bind a task started elsewhere to the owner the same way."""
        if not self._state.alive:
            future.cancel()
            return
        self._state.tasks.add(future)
        future.add_done_callback(self._state.task_done)

    def when_done(self, future: "asyncio.Future[T]", callback: Callable[["asyncio.Future[T]"], None]) -> None:
        """Run `callback(future)` once `future` is done, unless the owner is gone by then; the future
        itself is left alone (not cancelled with the owner, unlike `spawn` and `track`)."""
        state = self._state  # not `self`: its C++ side dies with the owner

        def done(finished: "asyncio.Future[T]") -> None:
            if state.alive:
                callback(finished)

        future.add_done_callback(done)

    @property
    def pending(self) -> list["asyncio.Future[Any]"]:
        return [task for task in self._state.tasks if not task.done()]

    def close(self) -> None:
        """Deliver nothing more and cancel the tasks, as if the owner were gone (its shutdown is done)."""
        self._state.stop()

    async def shutdown(self) -> None:
        """Cancel the tasks still running and wait until they have ended."""
        tasks = self.pending
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    @Slot(object)
    def _run(self, callback: Callable[[], None]) -> None:
        if self._state.alive:
            callback()


class _State:
    """OwnedWork's plain-Python state: whether the owner lives, and its tasks (see OwnedWork.__init__)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.alive = True
        self.tasks: set[asyncio.Future[Any]] = set()

    def stop(self, *_args: object) -> None:
        """The owner is being destroyed: deliver nothing more, cancel the tasks."""
        with self.lock:
            self.alive = False
        for task in list(self.tasks):
            task.cancel()

    def task_done(self, task: "asyncio.Future[Any]") -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work failed", exc_info=task.exception())
