"""An executor whose threads end once they have had nothing to do for a moment.

Why: glibc gives every thread its own cache of freed small blocks (tcache: up to 7 blocks of each of
64 sizes, ~240 kB a thread). A block a thread frees stays in that thread's cache, counted as in use,
until the same thread asks for a block of that size again or ends; `malloc_trim` cannot give its page
back. A pool thread that runs now and then (a session write, a turn's spill, a usage row) fills its
cache a little more each time and keeps it for the whole run: measured over 90 turns of
bench/long_session_memory.py, the caches of the inspector's spill thread (+101 kB), the usage
recorder's (+25 kB) and the loop's ten default workers (+~130 kB; qasync's, kept: see
gui/common/qt_asyncio.py) grew by ~250 kB, most of the row's growth. A thread that ends hands its
cache back to the heap, and the idle trim (gui/common/heap.py) can then return those pages.

So a worker here waits `idle_s` for the next job and then ends; the next job starts a new one. That
start costs the submitting thread 0.15–1 ms on this project's 2-core machine (`Thread.start` waits
until the new thread runs), against jobs that read or write files. With `max_workers=1` the jobs run
one at a time in the order they were submitted, like a one-thread `ThreadPoolExecutor`, which the
callers that need order (the spill file, the usage database, the memory repository) rely on.

Workers are daemon threads, and an exit hook shuts every executor down and waits for the job running,
so the interpreter neither waits `idle_s` for an idle worker nor cuts a write off halfway.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

__all__ = ["IDLE_S", "IdleExitingExecutor"]

T = TypeVar("T")

IDLE_S = 0.5  # a worker with no job for this long ends (the idle heap trim runs 1 s after a turn)

_Job = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]
_executors: weakref.WeakSet[IdleExitingExecutor] = weakref.WeakSet()


class IdleExitingExecutor(Executor):
    """Up to `max_workers` threads, each ending after `idle_s` without a job; FIFO job order."""

    def __init__(self, max_workers: int = 1, *, name: str = "worker", idle_s: float = IDLE_S) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers, self.name, self.idle_s = max_workers, name, idle_s
        self._lock = threading.Lock()
        self._job_waiting = threading.Condition(self._lock)
        self._jobs: deque[_Job] = deque()
        self._workers: set[threading.Thread] = set()
        self._idle = 0  # workers waiting for a job
        self._started = 0  # threads started so far (names them, and tells tests a worker came back)
        self._shut = False
        _executors.add(self)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError(f"{self.name}: cannot take a job after shutdown")
            self._jobs.append((future, fn, args, kwargs))
            # Jobs not yet taken outnumber the idle workers (a notified one has not taken its job yet).
            if len(self._jobs) > self._idle and len(self._workers) < self.max_workers:
                self._start_worker()
            else:
                self._job_waiting.notify()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shut = True
            if cancel_futures:
                while self._jobs:
                    self._jobs.popleft()[0].cancel()
            self._job_waiting.notify_all()
            workers = list(self._workers)
        if wait:
            for worker in workers:
                if worker is not threading.current_thread():
                    worker.join()

    def threads_started(self) -> int:
        """How many worker threads this executor has started in all."""
        with self._lock:
            return self._started

    def live_threads(self) -> int:
        with self._lock:
            return len(self._workers)

    def _start_worker(self) -> None:  # with the lock held
        self._started += 1
        worker = threading.Thread(target=self._work, name=f"{self.name}-{self._started}", daemon=True)
        self._workers.add(worker)
        worker.start()

    def _next_job(self) -> _Job | None:
        """The next job, or None when this worker should end (idle for `idle_s`, or shut down and drained)."""
        with self._lock:
            while not self._jobs:
                if self._shut:
                    break
                self._idle += 1
                try:
                    woken = self._job_waiting.wait(self.idle_s)
                finally:
                    self._idle -= 1
                if not woken and not self._jobs:
                    break
            if not self._jobs:
                self._workers.discard(threading.current_thread())
                return None
            return self._jobs.popleft()

    def _work(self) -> None:
        while (job := self._next_job()) is not None:
            future, fn, args, kwargs = job
            del job
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:  # noqa: BLE001 - handed to whoever waits on the future
                    future.set_exception(error)
                    del error
                else:
                    future.set_result(result)
                    del result
            del future, fn, args, kwargs  # nothing of a finished job is held while the worker waits


@atexit.register
def _shut_down_all() -> None:
    """At exit: let each executor's running job finish (its workers are daemons: nothing else waits)."""
    for executor in list(_executors):
        executor.shutdown(wait=True)
