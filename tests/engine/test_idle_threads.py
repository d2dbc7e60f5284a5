"""The executor whose workers end when idle (engine/idle_threads.py): order, parallelism, errors,
shutdown, and a worker that really ends and is replaced."""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError

import pytest

from nanobot_desktop.engine import IdleExitingExecutor

WAIT_S = 10  # a generous bound on waits that end far sooner; only a broken executor reaches it


def _current() -> threading.Thread:
    return threading.current_thread()


def test_one_worker_runs_jobs_in_the_order_submitted_across_idle_ends() -> None:
    with IdleExitingExecutor(1, name="ordered", idle_s=0.05) as executor:
        done: list[int] = []
        first = [executor.submit(done.append, number) for number in range(50)]
        worker = executor.submit(_current).result(WAIT_S)
        assert all(future.result(WAIT_S) is None for future in first)
        worker.join(WAIT_S)  # idle for 0.05 s: it ends
        assert not worker.is_alive()
        assert executor.live_threads() == 0
        second = executor.submit(_current).result(WAIT_S)
        assert second is not worker and second.name == "ordered-2"
        executor.submit(done.extend, range(50, 60)).result(WAIT_S)
        assert done == list(range(60))
        assert executor.threads_started() == 2


def test_a_worker_busy_more_often_than_its_idle_time_keeps_its_thread() -> None:
    with IdleExitingExecutor(1, name="busy", idle_s=WAIT_S) as executor:
        threads = {executor.submit(_current).result(WAIT_S) for _ in range(20)}
        assert len(threads) == 1
        assert executor.threads_started() == 1


def test_a_second_job_gets_its_own_worker_while_the_first_blocks() -> None:
    with IdleExitingExecutor(2, name="pair", idle_s=WAIT_S) as executor:
        executor.submit(int).result(WAIT_S)  # one idle worker now
        both = threading.Barrier(2, timeout=WAIT_S)  # broken unless the two jobs run at the same time
        jobs = [executor.submit(both.wait) for _ in range(2)]
        assert sorted(job.result(WAIT_S) for job in jobs) == [0, 1]
        assert executor.threads_started() == 2


def test_never_more_threads_than_max_workers() -> None:
    executor = IdleExitingExecutor(2, name="capped", idle_s=WAIT_S)
    release = threading.Event()
    changed = threading.Condition()
    running: list[threading.Thread] = []
    most = 0
    try:
        def hold() -> None:
            nonlocal most
            with changed:
                running.append(threading.current_thread())
                most = max(most, len(running))
                changed.notify_all()
            release.wait(WAIT_S)
            with changed:
                running.remove(threading.current_thread())

        jobs = [executor.submit(hold) for _ in range(6)]
        with changed:
            assert changed.wait_for(lambda: len(running) == 2, WAIT_S)
        assert executor.live_threads() == 2
        release.set()
        for job in jobs:
            job.result(WAIT_S)
        assert most == 2 and executor.threads_started() == 2
    finally:
        release.set()
        executor.shutdown()


def test_an_error_reaches_the_future_and_the_worker_goes_on() -> None:
    with IdleExitingExecutor(1, name="errors", idle_s=WAIT_S) as executor:
        failing = executor.submit(int, "not a number")
        with pytest.raises(ValueError, match="not a number"):
            failing.result(WAIT_S)
        assert executor.submit(int, "42").result(WAIT_S) == 42


def test_shutdown_runs_what_was_queued_then_refuses_new_jobs() -> None:
    executor = IdleExitingExecutor(1, name="closing", idle_s=WAIT_S)
    gate = threading.Event()
    done: list[int] = []
    executor.submit(gate.wait, WAIT_S)
    queued = [executor.submit(done.append, number) for number in range(3)]
    worker_started = executor.live_threads()
    gate.set()
    executor.shutdown(wait=True)
    assert worker_started == 1
    assert done == [0, 1, 2] and all(job.done() for job in queued)
    assert executor.live_threads() == 0
    with pytest.raises(RuntimeError, match="closing: cannot take a job after shutdown"):
        executor.submit(int)


def test_shutdown_can_cancel_what_has_not_started() -> None:
    executor = IdleExitingExecutor(1, name="cancelling", idle_s=WAIT_S)
    started, gate = threading.Event(), threading.Event()

    def run() -> bool:
        started.set()
        return gate.wait(WAIT_S)

    running = executor.submit(run)
    queued = executor.submit(int, "7")
    assert started.wait(WAIT_S)
    executor.shutdown(wait=False, cancel_futures=True)
    gate.set()
    assert running.result(WAIT_S) is True
    with pytest.raises(CancelledError):
        queued.result(WAIT_S)


def test_max_workers_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_workers must be at least 1, got 0"):
        IdleExitingExecutor(0)
