"""Listing 2,000 sessions (SPEC §5: under 0.5 s).

    python bench/session_list.py

How: 2,000 session files of 20 messages each (the engine's exact format) in a temporary workspace.
A fresh Engine (so no cached summaries) and the app's SessionsPanel (the session list: it lists with
`SessionStore.list_sessions` in an executor and syncs its SessionListModel) are shown offscreen; the
clock runs from `refresh_now()` to the first paint of the list after it shows the sessions.
Median of 3, each with a new Engine and panel. The bare `list_sessions` time of a fresh store is
reported beside it. When the panel does not exist yet, the store + SessionListModel are timed.
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BenchResult, bench_main, log, median, verdict, write_config
from qt_support import (PaintProbe, application, asyncio_on_qt, close_asyncio_on_qt, optional_class,
                        process_events_for, wait_until)
from sessions_data import write_many_sessions

SESSIONS = 2_000
REPEATS = 3
TARGET_S = 0.5


def _store_listing_s(sessions_dir: Path) -> float:
    from nanobot_desktop.engine.sessions.store import SessionStore

    store = SessionStore(sessions_dir)
    started = time.perf_counter()
    infos = store.list_sessions()
    elapsed = time.perf_counter() - started
    if len(infos) != SESSIONS:
        raise RuntimeError(f"listed {len(infos)} sessions, expected {SESSIONS}")
    return elapsed


def _panel_listing_s(config: Path, panel_class: Any) -> tuple[float, float]:
    """(seconds to the model showing the listing, seconds to the first paint after it)."""
    from nanobot_desktop.engine.runtime import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge

    engine = Engine.open(config)
    panel = panel_class(engine, EngineBridge(engine))
    panel.resize(320, 900)
    panel.show()
    process_events_for(0.2)
    refreshed: list[float] = []
    panel.refreshed.connect(lambda: refreshed.append(time.perf_counter()))
    probe = PaintProbe(panel.view)
    probe.arm()
    started = time.perf_counter()
    panel.refresh_now()
    wait_until(lambda: bool(refreshed), 30)
    probe.arm()  # the paint that counts is the one showing the listing
    wait_until(lambda: probe.painted, 10)
    assert probe.painted_at is not None
    elapsed = (refreshed[0] - started, probe.painted_at - started)
    shown = len(panel.model.keys())
    probe.close()
    panel.close()
    panel.deleteLater()
    if shown != SESSIONS:
        raise RuntimeError(f"the panel shows {shown} sessions, expected {SESSIONS}")
    return elapsed


def _model_listing_s(sessions_dir: Path, model_class: Any) -> tuple[float, float]:
    from PySide6.QtWidgets import QTreeView

    from nanobot_desktop.engine.sessions.store import SessionStore

    model = model_class()
    view = QTreeView()
    view.setModel(model)
    view.resize(320, 900)
    view.show()
    process_events_for(0.1)
    probe = PaintProbe(view)
    started = time.perf_counter()
    model.set_sessions(SessionStore(sessions_dir).list_sessions())
    modelled = time.perf_counter()
    view.expandAll()
    probe.arm()
    wait_until(lambda: probe.painted, 10)
    assert probe.painted_at is not None
    probe.close()
    view.close()
    return modelled - started, probe.painted_at - started


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)
    application()
    loop = asyncio_on_qt()
    panel_class = optional_class("nanobot_desktop.gui.sessions.panel", "SessionsPanel")
    model_class = optional_class("nanobot_desktop.gui.sessions.model", "SessionListModel")
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-list-") as tmp:
        workdir = Path(tmp)
        sessions_dir = workdir / "ws" / "sessions"
        log(f"session list: writing {SESSIONS} session files")
        write_many_sessions(sessions_dir, SESSIONS)
        config = write_config(workdir / "config.json", "http://127.0.0.1:9/v1", workdir / "ws")
        store_s = median([_store_listing_s(sessions_dir) for _ in range(REPEATS)])
        if panel_class is not None:
            how = "SessionsPanel (executor listing + SessionListModel + QTreeView paint)"
            runs = [_panel_listing_s(config, panel_class) for _ in range(REPEATS)]
        elif model_class is not None:
            how = "SessionStore + SessionListModel in a QTreeView (SessionsPanel not available)"
            runs = [_model_listing_s(sessions_dir, model_class) for _ in range(REPEATS)]
        else:
            how = "SessionStore only (the session list model is not available)"
            runs = [(store_s, store_s)]
    close_asyncio_on_qt(loop)
    shown_s = [painted for _modelled, painted in runs]
    total = median(shown_s)
    modelled = median([modelled for modelled, _painted in runs])
    figure = (f"{total * 1000:.0f} ms to listed and painted (list_sessions alone {store_s * 1000:.0f} ms, "
              f"in the model at {modelled * 1000:.0f} ms)")
    return [BenchResult(f"List {SESSIONS:,} sessions", figure, f"< {TARGET_S:g} s", verdict(total < TARGET_S),
                        note=f"{how}; median of {len(shown_s)}: {[round(s * 1000) for s in shown_s]} ms",
                        numbers={"shown_s": shown_s, "store_s": store_s, "modelled_s": modelled})]


if __name__ == "__main__":
    sys.exit(bench_main(run))
