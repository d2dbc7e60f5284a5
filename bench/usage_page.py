"""Opening the Usage page over 100,000 recorded calls (SPEC §5: ≤ 300 ms to the totals and chart painted).

    python bench/usage_page.py

How: a config folder with both usage files, as a person who uses the app and the nanobot CLI has them:
nanobot 0.3.5's llm_usage.sqlite3 (its schema: store.CLI_COLUMNS) with 40,000 calls of the CLI's own
and the app's last 20,000, mirrored there since it appeared; the app's desktop-usage.sqlite3 with
60,000 (those 20,000 among them); each file in time order, as recorded. 100,000 distinct calls over
the last 90 days, seven sources, six models (one without a price), 500 conversations.

The row is the page opened in a fresh process (a fresh Engine, QtCharts not loaded) by a person who
has opened it before: the app's cache folder holds the summary an earlier run kept
(engine/usage/summary_file.py), and 300 calls were recorded since (a few hours of chats, heartbeat and
cron, in both files), which the page reads and adds: the median of three such fresh processes, each
from the same files and kept summary (one sample on this 2-core VM moved by 150 ms with other load).
The first open ever (no summary kept: the month's
calls grouped from the files) is in the note, also in a fresh process. The clock runs from `show()`
to the last paint of the page once it shows the summary (totals, tables and chart) and has settled
(no repaint for 200 ms: the tables size their columns and the chart lays out after the first paint),
so it includes importing QtCharts and building the chart, which happen then. Opening it again in
one process (a new page, QtCharts already loaded) with a fresh engine, a new page with the engine
that read the record before, and the same page hidden and shown again (as the app re-opens it) are
in the note, with the process's CPU time.

The paint probe (qt_support.PaintProbe) filters every event of the application in Python. Its own
one-time cost is paid before the clock (`pay_probe_once`): the first object of a class PySide does
not know (one of Qt's private classes) that reaches Python makes shiboken resolve every class of the
Qt modules loaded, ~290 Python enums and 60-120 ms of the GUI thread, which the page met when QChart
made its private objects. The app has no application-wide Python filter, so opening its page never
pays this; the figure with it in the clock (a third fresh process, same files and summary) is in the
note. The probe's per-event cost stays in every figure.
"""

from __future__ import annotations

import logging
import os
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BenchResult, bench_main, log, median, verdict, write_config
from qt_support import PaintProbe, application, asyncio_on_qt, close_asyncio_on_qt, process_events_for, run_coroutine, wait_until

CALLS = 100_000
SINCE = 300  # calls recorded since the page was last opened (in the app's earlier run)
FIRST_RUNS = 3  # fresh processes opening it so: the row is their median
OPEN_FLAG = "--open-once"
UNPAID_FLAG = "--probe-unpaid"
CLI_ONLY = 40_000
MIRRORED = 20_000
DAYS = 90
TARGET_S = 0.3
SETTLED_S = 0.2
KINDS = ("chat", "chat", "chat", "heartbeat", "cron", "subagent", "consolidation")
CLI_SOURCES = ("user", "user", "cron", "dream", "api")
MODELS = ("gpt-4o-mini", "gpt-4.1", "claude-sonnet-4", "deepseek-chat", "qwen3:8b", "gpt-5-mini")


def write_record(folder: Path) -> None:
    """The two files, written with the app's own schema code and 0.3.5's table as it creates it."""
    from nanobot_desktop.engine.usage.store import CLI_COLUMNS, UsageRow, UsageWriter

    rng = random.Random(7)
    now_ms = int(time.time() * 1000)
    folder.mkdir(parents=True, exist_ok=True)
    cli = sqlite3.connect(folder / "llm_usage.sqlite3")
    columns = ", ".join("id INTEGER PRIMARY KEY" if name == "id" else name for name in CLI_COLUMNS)
    cli.execute("PRAGMA journal_mode = WAL")
    cli.execute(f"CREATE TABLE llm_calls ({columns})")
    cli.execute("CREATE INDEX llm_calls_started_at_idx ON llm_calls(started_at_ms)")
    cli.execute("PRAGMA user_version = 1")
    cli.commit()
    cli.close()

    def started() -> int:
        return now_ms - rng.randrange(DAYS * 86_400_000)

    app_rows = [UsageRow(started(), rng.randrange(300, 9000), "custom", rng.choice(MODELS), rng.choice(KINDS),
                         f"desktop:{rng.randrange(500):05d}", "stop", rng.randrange(500, 30_000), rng.randrange(10, 2000),
                         cache_read_tokens=rng.choice((None, 0, 1024, 4096)))
                for _ in range(CALLS - CLI_ONLY)]
    app_rows.sort(key=lambda row: row.started_at_ms)  # as recorded: in time order
    writer = UsageWriter(folder)
    # The app ran before nanobot 0.3.5 was installed (its file absent), then beside it (mirrored).
    cli_path, aside = folder / "llm_usage.sqlite3", folder / "cli.tmp"
    cli_path.rename(aside)
    writer.write(app_rows[:-MIRRORED], {})
    aside.rename(cli_path)
    writer.write(app_rows[-MIRRORED:], {})
    cli = sqlite3.connect(folder / "llm_usage.sqlite3")
    marks = ", ".join("?" for _ in CLI_COLUMNS[1:])
    cli.executemany(f"INSERT INTO llm_calls ({', '.join(CLI_COLUMNS[1:])}) VALUES ({marks})",
                    [(at, 1200, "openai", rng.choice(MODELS), rng.choice(CLI_SOURCES), 1, "stop",
                      inp, out, inp + out, None, None, inp + out, 0, None, None, None, None, None, None)
                     for at, inp, out in sorted((started(), rng.randrange(500, 30_000), rng.randrange(10, 2000))
                                                for _ in range(CLI_ONLY))])
    cli.commit()
    cli.close()


def record_more(folder: Path, count: int) -> None:
    """`count` calls of the last few hours, recorded as the app records them (both files)."""
    from nanobot_desktop.engine.usage.store import UsageRow, UsageWriter

    rng = random.Random(11)
    now_ms = int(time.time() * 1000)
    rows = sorted((UsageRow(now_ms - rng.randrange(4 * 3_600_000), rng.randrange(300, 9000), "custom", rng.choice(MODELS),
                            rng.choice(KINDS), f"desktop:{rng.randrange(500):05d}", "stop", rng.randrange(500, 30_000),
                            rng.randrange(10, 2000), cache_read_tokens=rng.choice((None, 0, 1024, 4096)))
                   for _ in range(count)), key=lambda row: row.started_at_ms)
    UsageWriter(folder).write(rows, {})


def open_in_fresh_process(config: Path, *, probe_paid: bool = True) -> dict[str, float]:
    """`open_page` in a new process (this module with OPEN_FLAG): its figures, as `open_once` prints them."""
    done = subprocess.run([sys.executable, __file__, OPEN_FLAG, str(config), *([] if probe_paid else [UNPAID_FLAG])],
                          capture_output=True, text=True, timeout=300, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"opening the page in a fresh process failed: {done.stderr[-2000:]}")
    return dict(json.loads(lines[-1]))


def open_once(config: Path, probe_paid: bool) -> None:
    """The child's part of `open_in_fresh_process`: open the page once, print the figures as JSON."""
    logging.disable(logging.WARNING)
    application()
    loop = asyncio_on_qt()
    painted_s, loaded_s, cpu_s, engine, view = open_page(config, probe_paid=probe_paid)
    calls = view.summary.month.calls
    close(engine, view)
    close_asyncio_on_qt(loop)
    print(json.dumps({"painted_s": painted_s, "loaded_s": loaded_s, "cpu_s": cpu_s, "calls": calls}), flush=True)


def pay_probe_once() -> None:
    """The paint probe's one-time cost, paid before the clock (see the module docstring): the first object
    of a class PySide does not know (a private one of Qt's) that reaches Python makes shiboken resolve
    every class of the Qt modules loaded, ~290 Python enums. The probe's application-wide filter hands
    every event of every object to Python, so it meets one as soon as anything new is made; the app
    has no such filter, so its page never pays this. Here it is met before the clock: the objects of
    the application (Qt's gesture manager among them, made with the page's tables)."""
    from PySide6.QtCore import QObject

    application().findChildren(QObject)


def open_page(config: Path, engine: Any = None, *, probe_paid: bool = True) -> tuple[float, float, float, Any, Any]:
    """(seconds from show() to the page painted with its summary, to the summary in the page, CPU seconds
    of the whole process meanwhile (the reading threads too: a loaded machine inflates it less); engine, page).
    A fresh Engine unless `engine` is given (the app's own, which has read the record before).
    `probe_paid`: the probe's own one-time cost is paid before the clock (`pay_probe_once`)."""
    from nanobot_desktop.engine.runtime import Engine
    from nanobot_desktop.gui.background.usage_view import UsageView
    from nanobot_desktop.gui.common.bridge import EngineBridge

    # Loaded by the window at start (the chat view draws with them), so not part of opening the page.
    import nanobot_desktop.gui.common.design
    import nanobot_desktop.gui.common.palette  # noqa: F401

    engine = engine or Engine.open(config)
    view = UsageView(engine, EngineBridge(engine))
    view.resize(1000, 760)
    if probe_paid:
        pay_probe_once()
    return (*show_page(view), engine, view)


def show_page(view: Any) -> tuple[float, float, float]:
    """Show the page: (seconds to painted, to the summary in, process CPU seconds), as `open_page`."""
    probe = PaintProbe(view)
    loaded: list[float] = []

    def shown() -> None:
        loaded.append(time.perf_counter())
        probe.arm()  # the paint that counts is the first one showing the summary

    view.loaded.connect(shown)
    started = time.perf_counter()
    cpu_started = time.process_time()
    view.show()
    wait_until(lambda: bool(loaded), 60)
    wait_until(lambda: probe.painted, 10)
    # Painted means settled: the tables size their columns and the chart lays out after the first
    # paint, and repaint; the page is shown when it has been quiet (no paint) for SETTLED_S.
    wait_until(lambda: time.perf_counter() - (probe.last_painted_at or 0.0) >= SETTLED_S, 10)
    assert probe.last_painted_at is not None and probe.cpu_at_last_paint is not None
    cpu = probe.cpu_at_last_paint - cpu_started
    probe.close()
    if view.summary is None or view.summary.month.calls == 0:
        raise RuntimeError("the page shows no calls")
    return probe.last_painted_at - started, loaded[0] - started, cpu


def close(engine: Any, view: Any) -> None:
    close_page(view)
    run_coroutine(engine.shutdown())


def close_page(view: Any) -> None:
    view.shutdown()
    view.close()
    view.deleteLater()
    process_events_for(0.05)


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)
    application()
    loop = asyncio_on_qt()
    cache_home = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-usage-") as tmp:
        workdir = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(workdir / "cache")  # where the summary is kept (the children's too)
        try:
            config = write_config(workdir / "home" / "config.json", "http://127.0.0.1:9/v1", workdir / "ws")
            log(f"usage page: writing {CALLS:,} calls into both usage files")
            started = time.perf_counter()
            write_record(config.parent)
            write_s = time.perf_counter() - started
            sizes = {path.name: path.stat().st_size / 1e6 for path in config.parent.glob("*.sqlite3")}
            ever = open_in_fresh_process(config)  # the first open ever: no summary kept yet
            record_more(config.parent, SINCE)
            kept = workdir / "cache-before"  # the summary as the earlier run left it, for each child
            shutil.copytree(workdir / "cache", kept)

            def from_kept_summary(probe_paid: bool = True) -> dict[str, float]:
                shutil.rmtree(workdir / "cache")
                shutil.copytree(kept, workdir / "cache")
                return open_in_fresh_process(config, probe_paid=probe_paid)

            # The row: opened before, SINCE calls recorded since; the median of FIRST_RUNS fresh processes.
            firsts = [from_kept_summary() for _ in range(FIRST_RUNS)]
            first = sorted(firsts, key=lambda run: run["painted_s"])[len(firsts) // 2]
            unpaid = from_kept_summary(probe_paid=False)  # the same, the probe's cost in the clock
            first_s, first_loaded_s, first_cpu_s = first["painted_s"], first["loaded_s"], first["cpu_s"]
            engine, view = None, None
            again, again_cpu = [], []
            for _ in range(3):
                painted_s, _loaded_s, cpu_s, engine, view = open_page(config)
                again.append(painted_s)
                again_cpu.append(cpu_s)
                counted = view.summary.month.calls + 0
                total = engine.usage.reader.count()
                close(engine, view)
            # As in the app: the page opened again with the engine that read the record before (it extends
            # what it read by the rows written since, none here).
            same, same_cpu = [], []
            _painted_s, _loaded_s, _cpu_s, engine, view = open_page(config)
            for _ in range(3):
                close_page(view)
                painted_s, _loaded_s, cpu_s, engine, view = open_page(config, engine)
                same.append(painted_s)
                same_cpu.append(cpu_s)
            # And as the app shows its page again: the same page hidden and shown (its chart kept when the
            # figures are the same).
            again_shown = []
            for _ in range(3):
                view.hide()
                process_events_for(0.05)
                again_shown.append(show_page(view)[0])
            close(engine, view)
        finally:
            if cache_home is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = cache_home
    close_asyncio_on_qt(loop)
    if total != CALLS + SINCE:
        raise RuntimeError(f"the record holds {total} calls, expected {CALLS + SINCE}")
    if not {run["calls"] for run in firsts} == {unpaid["calls"], counted, ever["calls"] + SINCE}:
        raise RuntimeError(f"the page counted {ever['calls']}, then {first['calls']} and {counted} calls")
    load = os.getloadavg()[0]
    return [BenchResult(
        f"Open the Usage page over {CALLS:,} calls", f"{first_s * 1000:.0f} ms to painted (median of {FIRST_RUNS}; summary in at "
        f"{first_loaded_s * 1000:.0f} ms; QtCharts imported then)", f"≤ {TARGET_S * 1000:g} ms", verdict(first_s <= TARGET_S),
        note=(f"first open in a fresh process after an earlier run opened it ({SINCE} calls recorded since, read and "
              f"added to the kept summary), QtCharts and the chart built then: runs "
              f"{[round(run['painted_s'] * 1000) for run in firsts]} ms, CPU {[round(run['cpu_s'] * 1000) for run in firsts]} ms; "
              f"the same with the probe's one-time cost "
              f"inside the clock {unpaid['painted_s'] * 1000:.0f} ms (summary in at {unpaid['loaded_s'] * 1000:.0f} ms, "
              f"CPU {unpaid['cpu_s'] * 1000:.0f} ms); the first open ever (no summary kept, "
              f"the month grouped from the files) {ever['painted_s'] * 1000:.0f} ms (summary in at "
              f"{ever['loaded_s'] * 1000:.0f} ms, CPU {ever['cpu_s'] * 1000:.0f} ms); opened again with a fresh engine "
              f"{[round(s * 1000) for s in again]} ms (median {median(again) * 1000:.0f} ms), with the engine that read it "
              f"before {[round(s * 1000) for s in same]} ms, the same page shown again (as the app does) "
              f"{[round(s * 1000) for s in again_shown]} ms; process CPU to painted: first "
              f"{first_cpu_s * 1000:.0f} ms, again {[round(s * 1000) for s in again_cpu]} ms, same engine "
              f"{[round(s * 1000) for s in same_cpu]} ms; {counted:,} calls in the last 30 days; files "
              + ", ".join(f"{name} {mb:.1f} MB" for name, mb in sorted(sizes.items()))
              + f" (written in {write_s:.1f} s); load average {load:.1f}"),
        numbers={"first_s": first_s, "first_loaded_s": first_loaded_s, "first_cpu_s": first_cpu_s,
                 "first_runs_s": [run["painted_s"] for run in firsts],
                 "probe_unpaid_s": unpaid["painted_s"], "probe_unpaid_cpu_s": unpaid["cpu_s"],
                 "first_ever_s": ever["painted_s"], "first_ever_loaded_s": ever["loaded_s"], "first_ever_cpu_s": ever["cpu_s"],
                 "again_s": again, "again_cpu_s": again_cpu, "same_engine_s": same, "same_engine_cpu_s": same_cpu,
                 "shown_again_s": again_shown, "load": load})]


if __name__ == "__main__":
    if sys.argv[1:2] == [OPEN_FLAG]:
        open_once(Path(sys.argv[2]), UNPAID_FLAG not in sys.argv[3:])
    else:
        sys.exit(bench_main(run))
