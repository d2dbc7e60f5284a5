"""Peak memory after a long session (no SPEC target: reported for information).

    python bench/memory_peak.py

How: a fresh process opens the real MainWindow (offscreen) on a 2,000-message session written with
the engine's SessionStore, then pages the chat all the way up, so every message has been read from
the file into the chat model and had its widget (the view keeps widgets for about a screenful above and
below what is shown: older ones are made as one scrolls up, the far end's are dropped; the bench holds
the view at its top while it pages, as a person scrolling up does). Reported: resident memory (VmRSS) after
opening, after rendering everything, and the process's peak (VmHWM).
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import INFO, BenchResult, bench_main, log, not_available, rss_mb, write_config
from qt_support import PaintProbe, application, process_events_for, wait_until
from sessions_data import write_session

MESSAGES = 2_000
NAME = "Peak RSS, 2,000-msg session rendered"


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)
    application()
    from window_support import open_window

    key = "desktop:long-conversation"
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-memory-") as tmp:
        workdir = Path(tmp)
        write_session(workdir / "ws" / "sessions", key, MESSAGES)
        config = write_config(workdir / "home" / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", workdir / "ws")
        started_mb, _ = rss_mb()
        opened = open_window(config, workdir / "settings.ini")
        if opened is None:
            return [not_available(NAME, "report only", "nanobot_desktop.gui.window.main_window.MainWindow does not exist yet")]
        window = opened.window
        empty_window_mb, _ = rss_mb()
        try:
            loaded: list[str] = []
            window.chat.session_loaded.connect(loaded.append)
            window.open_session(key)
            wait_until(lambda: key in loaded, 30)
            probe = PaintProbe(window.chat_view)
            probe.arm()
            wait_until(lambda: probe.painted, 10)
            opened_mb, _ = rss_mb()
            log("memory: rendering every page of the chat")
            view = window.chat_view
            model = window.chat.model
            bar = view.scroll_area.verticalScrollBar()
            while view.first_loaded_row > 0 or model.older_end > 0:
                bar.setValue(bar.minimum())  # at the top, as a person scrolling up is: the far end is the bottom
                view.load_older()  # at the model's first row: asks the controller for the file's previous page
                process_events_for(0.01)
            process_events_for(0.3)
            widgets = model.rowCount()
            rendered_mb, peak_mb = rss_mb()
            probe.close()
        finally:
            opened.close()
    figure = (f"{rendered_mb:.0f} MB with all {widgets:,} chat items paged in, peak {peak_mb:.0f} MB "
              f"(opened {opened_mb:.0f} MB, empty window {empty_window_mb:.0f} MB)")
    return [BenchResult(NAME, figure, "report only", INFO,
                        note=f"VmRSS/VmHWM of the benchmark process ({started_mb:.0f} MB before the window, "
                             "with Python and Qt loaded)",
                        numbers={"rendered_mb": rendered_mb, "peak_mb": peak_mb, "opened_mb": opened_mb,
                                 "empty_window_mb": empty_window_mb, "widgets": widgets})]


if __name__ == "__main__":
    sys.exit(bench_main(run))
