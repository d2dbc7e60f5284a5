"""Memory with a 100,000-message session open, and over 100 turns in one session (issue 17).

    python bench/long_session_memory.py

How: a fresh process opens the real MainWindow (offscreen, the real Engine, the fake endpoint in its
own process) on a 100,000-message session written with the engine's SessionStore (the newest 60
unconsolidated). Row 1: resident memory (VmRSS) once the session is painted and one turn has run in
it (so the engine holds the session too: its unconsolidated tail), target ≤ 250 MB. Row 2: 100 more
turns are sent through the window (`send_message`, as the composer does), each waiting for its end;
the growth of VmRSS from turn 10 to turn 100 is compared with what those 90 turns added to the session
file: it may not exceed GROWTH_FACTOR × those bytes (a message is held as a dict in the engine
and a chat item in the model, each several times its JSON size; the chat keeps widgets only a
screenful above and below the viewport). The growth is the slope of VmRSS over the turns, read at
every 10th turn from 10 to 100 and fitted with the median of the slopes between every two readings
(Theil–Sen), times 90: the difference of two single readings varied from −1.4 to +0.9 MB between
runs of the same code (a reading now and then still holds a few hundred kB of an earlier turn's
heap), and one such reading in ten moves the median slope little. At each reading, the same way: a gc.collect (garbage not yet
collected does not count), then the window is left idle until it has given the heap's free pages back
(`MainWindow.heap_trim`, gui/common/heap.py: it does so after every turn once no turn has run for a
second, in the app as here), so what is measured is what the window keeps, not what a turn's
background work (the session list's summary, a request body) held at that instant.
"""

from __future__ import annotations

import gc
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BenchResult, bench_main, fake_server_process, log, not_available, rss_mb, verdict, write_config
from qt_support import PaintProbe, application, wait_until
from sessions_data import write_session

MESSAGES = 100_000
TURNS = 100
RSS_TARGET_MB = 250.0
GROWTH_FACTOR = 10
MARK_EVERY = 10  # turns between two readings of VmRSS
KEY = "desktop:long-conversation"
REPLY = "Noted. The list now has four open tasks, and the plants are on it for Friday."
OPEN_NAME = "RSS with a 100,000-msg session open"
GROWTH_NAME = "RSS growth over 100 turns in one session"


def median_slope(marks: dict[int, tuple[float, int]]) -> float:
    """MB per turn: the median of the slopes between every two readings (Theil–Sen; robust to outliers)."""
    points = sorted((turn, rss) for turn, (rss, _size) in marks.items())
    slopes = sorted((b_rss - a_rss) / (b_turn - a_turn)
                    for i, (a_turn, a_rss) in enumerate(points) for b_turn, b_rss in points[i + 1:])
    middle = len(slopes) // 2
    return slopes[middle] if len(slopes) % 2 else (slopes[middle - 1] + slopes[middle]) / 2


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)
    application()
    from nanobot_desktop.engine.events import TurnCancelled, TurnFailed, TurnFinished
    from window_support import open_window

    with tempfile.TemporaryDirectory(prefix="nanobot-bench-long-memory-") as tmp, \
            fake_server_process(text=REPLY, fast=True) as base_url:
        workdir = Path(tmp)
        log(f"long_session_memory: writing a {MESSAGES:,}-message session")
        path = write_session(workdir / "ws" / "sessions", KEY, MESSAGES, unconsolidated=60)
        config = write_config(workdir / "home" / ".nanobot" / "config.json", base_url, workdir / "ws",
                              memoryWindow=5000)
        opened = open_window(config, workdir / "settings.ini")
        if opened is None:
            return [not_available(OPEN_NAME, f"≤ {RSS_TARGET_MB:g} MB", "MainWindow does not exist yet")]
        window = opened.window
        ended: list[object] = []
        window.bridge.engine_event.connect(
            lambda event: ended.append(event) if isinstance(event, (TurnFinished, TurnFailed, TurnCancelled)) else None)

        trims: list[float] = []
        window.heap_trim.trimmed.connect(trims.append)

        def turn(number: int) -> None:
            ended.clear()
            trims.clear()
            window.send_message(f"Question {number}: add one more task to the list, please.", [])
            wait_until(lambda: bool(ended), 60)
            if not isinstance(ended[0], TurnFinished):
                raise RuntimeError(f"turn {number} did not finish: {ended[0]}")

        try:
            loaded: list[str] = []
            window.chat.session_loaded.connect(loaded.append)
            window.open_session(KEY)
            wait_until(lambda: KEY in loaded, 30)
            probe = PaintProbe(window.chat_view)
            probe.arm()
            wait_until(lambda: probe.painted, 10)
            probe.close()
            turn(0)
            gc.collect()
            open_mb, _ = rss_mb()
            engine_messages = len(window.engine.sessions.get_or_create(KEY).messages)
            log(f"long_session_memory: {TURNS} turns")
            marks: dict[int, tuple[float, int]] = {}  # turn: (VmRSS MB, file bytes)
            started = time.perf_counter()
            for number in range(1, TURNS + 1):
                turn(number)
                if number % MARK_EVERY == 0:
                    gc.collect()
                    wait_until(lambda: bool(trims), 30)  # the window idle after the turn (see the docstring)
                    marks[number] = (rss_mb()[0], path.stat().st_size)
            turns_s = time.perf_counter() - started
            items = window.chat.model.rowCount()
            widgets = len(window.chat_view.loaded_widgets())
        finally:
            opened.close()
    (rss10, size10), (rss100, size100) = marks[MARK_EVERY], marks[TURNS]
    growth_mb, added_mb = median_slope(marks) * (TURNS - MARK_EVERY), (size100 - size10) / 1e6
    readings = ", ".join(f"{rss:.1f}" for rss, _size in marks.values())
    allowed_mb = GROWTH_FACTOR * added_mb
    return [
        BenchResult(OPEN_NAME, f"{open_mb:.0f} MB", f"≤ {RSS_TARGET_MB:g} MB", verdict(open_mb <= RSS_TARGET_MB),
                    note=f"VmRSS after the session was painted and one turn ran in it; the engine holds "
                         f"{engine_messages} messages of it (the unconsolidated tail), the chat the newest page",
                    numbers={"open_mb": open_mb, "engine_messages": engine_messages}),
        BenchResult(GROWTH_NAME, f"{growth_mb:+.2f} MB from turn 10 to turn {TURNS} ({added_mb * 1000:.0f} kB "
                                 f"added to the file)",
                    f"≤ {GROWTH_FACTOR}× the turns' bytes", verdict(growth_mb <= allowed_mb),
                    note=f"VmRSS after gc.collect at turns {MARK_EVERY}, {2 * MARK_EVERY}, … {TURNS}: {readings} MB "
                         f"(the two ends alone: {rss100 - rss10:+.2f} MB); "
                         f"{TURNS} turns in {turns_s:.0f} s; the chat holds {items} items and {widgets} widgets",
                    numbers={"rss10_mb": rss10, "rss100_mb": rss100, "growth_mb": growth_mb, "added_mb": added_mb,
                             "readings_mb": [rss for rss, _size in marks.values()], "items": items,
                             "widgets": widgets}),
    ]


if __name__ == "__main__":
    sys.exit(bench_main(run))
