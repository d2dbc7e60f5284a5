"""Open and paint a 10,000-message session (SPEC §5: under 0.5 s).

    python bench/session_open.py

How: a 10,000-message session (tool calls, tool results, Markdown answers) is written with the
engine's SessionStore. The real MainWindow is shown offscreen on a new empty chat; the clock runs
from `open_session(key)` (what clicking it in the session list does: the history is read and turned
into chat items in an executor, the chat model filled, the newest page of widgets built) to the first
paint of the chat view after the session is in it. Median of 5 (switching to an empty chat in
between, so each open reads the file again).
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BenchResult, bench_main, log, median, not_available, verdict, write_config
from qt_support import PaintProbe, application, process_events_for, wait_until
from sessions_data import write_session

MESSAGES = 10_000
REPEATS = 5
TARGET_S = 0.5
NAME = "Open + paint a 10,000-msg session"


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)
    application()
    from window_support import open_window

    target = f"< {TARGET_S:g} s"
    key = "desktop:long-conversation"
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-open-") as tmp:
        workdir = Path(tmp)
        log(f"session open: writing a {MESSAGES:,}-message session")
        path = write_session(workdir / "ws" / "sessions", key, MESSAGES)
        size_mb = path.stat().st_size / 1e6
        config = write_config(workdir / "home" / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", workdir / "ws")
        opened = open_window(config, workdir / "settings.ini")
        if opened is None:
            return [not_available(NAME, target, "nanobot_desktop.gui.window.main_window.MainWindow does not exist yet")]
        window = opened.window
        probe = PaintProbe(window.chat_view)
        seconds: list[float] = []
        loaded_s: list[float] = []
        rows = 0
        try:
            for number in range(REPEATS):
                window.open_session(window.engine.new_session_key())  # an empty chat in between
                process_events_for(0.3)
                loaded: list[float] = []
                window.chat.session_loaded.connect(lambda k: k == key and loaded.append(time.perf_counter()))  # noqa: B023 - this iteration's list
                started = time.perf_counter()
                window.open_session(key)
                wait_until(lambda: bool(loaded), 30)  # noqa: B023 - called in this iteration
                probe.arm()  # the paint that counts shows the loaded session
                wait_until(lambda: probe.painted, 10)
                assert probe.painted_at is not None
                seconds.append(probe.painted_at - started)
                loaded_s.append(loaded[0] - started)
                rows = window.chat.model.rowCount()
                window.chat.session_loaded.disconnect()
                log(f"session open: run {number + 1}: {seconds[-1] * 1000:.0f} ms ({rows} chat items)")
        finally:
            probe.close()
            opened.close()
    middle = median(seconds)
    figure = f"{middle * 1000:.0f} ms (runs {', '.join(f'{s * 1000:.0f}' for s in seconds)} ms)"
    return [BenchResult(NAME, figure, target, verdict(middle < TARGET_S),
                        note=f"MainWindow.open_session; file {size_mb:.1f} MB, {rows:,} chat items; "
                             f"in the chat model after {median(loaded_s) * 1000:.0f} ms (median)",
                        numbers={"seconds": seconds, "loaded_s": loaded_s, "file_mb": size_mb, "chat_items": rows})]


if __name__ == "__main__":
    sys.exit(bench_main(run))
