"""The app's asyncio loop on Qt lets go of a cancelled timer at once (gui/common/qt_asyncio.py).

qasync alone keeps a cancelled `call_later` handle, its context and its Qt timer until the delay
has passed; a model call's stall watchdog cancels several such handles a turn.
"""

from __future__ import annotations

import asyncio
from typing import Any

from nanobot_desktop.gui.common.qt_asyncio import QtAsyncioLoop


def test_a_cancelled_call_later_is_dropped_with_its_timer_and_never_runs(qtbot: Any, qloop: QtAsyncioLoop) -> None:
    ran: list[str] = []
    before = qloop.pending_timers()
    handle = qloop.call_later(60, ran.append, "late")
    assert isinstance(handle, asyncio.TimerHandle)
    assert qloop.pending_timers() == before + 1
    handle.cancel()
    assert qloop.pending_timers() == before
    soon = qloop.call_later(0.01, ran.append, "soon")
    qtbot.waitUntil(lambda: ran == ["soon"])
    assert soon.when() <= qloop.time()
    assert qloop.pending_timers() == before


def test_a_timeout_that_ends_early_leaves_no_timer_behind(qtbot: Any, qloop: QtAsyncioLoop) -> None:
    async def quick_calls() -> int:
        for _ in range(20):
            async with asyncio.timeout(120):  # as the engine's stall watchdog does around a model call
                await asyncio.sleep(0)
        return qloop.pending_timers()

    task = qloop.create_task(quick_calls())
    qtbot.waitUntil(task.done)
    assert task.result() <= 1  # at most the sleep's own wake-up still queued, never 20 two-minute timers


def test_call_at_runs_its_callback_once_at_its_time(qtbot: Any, qloop: QtAsyncioLoop) -> None:
    ran: list[float] = []
    when = qloop.time() + 0.05
    qloop.call_at(when, lambda: ran.append(qloop.time()))
    qtbot.waitUntil(lambda: bool(ran))
    assert ran[0] >= when - 0.01  # Qt's coarse timers may fire a few ms early, as qasync's did
    assert len(ran) == 1
