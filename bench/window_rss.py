"""Resident memory of the app at rest with an empty workspace (issue 17: ≤ 100 MB).

    python bench/window_rss.py

How: the app is started as a fresh process exactly as `python -m nanobot_desktop --config FILE
--workspace DIR` starts it (`nanobot_desktop.cli.run`; offscreen, a temporary HOME, a config
pointing at a loopback address, a fresh empty workspace, no session open). A QTimer in that process
(this file, run with `--child`) waits until the main window has its engine and every panel it shows
is built (a panel whose dock is hidden or whose page is not shown is built when the person first
shows it: gui/window/panels.py; tests/gui/window/test_main_window.py checks both), lets the app run for
SETTLE_S more (services started, the first listing), then reads VmRSS from /proc/self/status and
exits. (Markdown and Pygments are not part of an empty window: the app loads them when the composer
first gets text or chat content is first rendered, gui/chat/warm_up.py;
tests/gui/chat/test_rendering_warm_up.py checks that an app at rest has not loaded them at all, so they
are not merely postponed past SETTLE_S.) Three starts; the median is compared with the target, and
the runs and the peak (VmHWM) are in the note. No model call is made: an empty window has not talked
to the model yet.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

if sys.argv[1:2] != ["--child"]:  # the measured process holds the app's modules, not the bench's (statistics,
    # decimal, fractions, random, platform: ~0.3 MB that no app start has)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import ROOT, app_environment, BenchResult, bench_main, log, median, not_available, verdict, write_config

RUNS = 3
TARGET_MB = 100.0
SETTLE_S = 2.0
NAME = "Empty window RSS"
PREFIX = "WINDOW-RSS "


def _child(argv: list[str]) -> int:
    """In the measured process: start the app, report VmRSS/VmHWM once it is built and has settled."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QMainWindow

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # as common.py does for the parent
    from nanobot_desktop.gui.shell.application import DesktopApplication

    app = DesktopApplication(sys.argv[:1])  # the app's own class: create_application takes it over

    def report() -> None:
        rows = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
        print(f"{PREFIX}{int(rows['VmRSS'].split()[0]) / 1024:.1f} {int(rows['VmHWM'].split()[0]) / 1024:.1f}",
              flush=True)
        os._exit(0)  # the measurement is over; shutting down is not part of it

    def built() -> bool:
        for window in app.topLevelWidgets():
            lifetime = getattr(window, "lifetime", None) if isinstance(window, QMainWindow) else None
            panels = getattr(lifetime, "panels", None)
            if window.isVisible() and getattr(window, "engine", None) is not None and panels is not None \
                    and not panels.pending:
                return True
        return False

    def wait_for_window() -> None:
        if built():
            QTimer.singleShot(int(SETTLE_S * 1000), report)
        else:
            QTimer.singleShot(50, wait_for_window)

    QTimer.singleShot(50, wait_for_window)
    from nanobot_desktop.cli import run

    return run(argv)


def window_rss(home: Path) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MB of a freshly started app at rest, with its own HOME and workspace."""
    home.mkdir()
    config = write_config(home / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", home / "workspace")
    result = subprocess.run([sys.executable, __file__, "--child", "--config", str(config),
                             "--workspace", str(home / "workspace")], cwd=ROOT, env=app_environment(home),
                            capture_output=True, text=True, timeout=120)
    for line in result.stdout.splitlines():
        if line.startswith(PREFIX):
            rss, peak = line[len(PREFIX):].split()
            return float(rss), float(peak)
    raise RuntimeError(f"no measurement (exit {result.returncode}): {result.stderr.strip()[-800:]}")


def run() -> list[BenchResult]:
    target = f"≤ {TARGET_MB:g} MB"
    if not Path("/proc/self/status").exists():
        return [not_available(NAME, target, "VmRSS is read from /proc (Linux only)")]
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-rss-") as tmp:
        try:
            window_rss(Path(tmp) / "warm-up")  # bytecode and disk caches, as an installed app has them
        except RuntimeError as error:
            return [not_available(NAME, target, f"the app did not come up: {error}")]
        runs: list[tuple[float, float]] = []
        for number in range(1, RUNS + 1):
            log(f"window_rss: run {number}/{RUNS}")
            runs.append(window_rss(Path(tmp) / f"run-{number}"))
    rss = median([run[0] for run in runs])
    figure = f"{rss:.1f} MB (median of {RUNS} starts, its shown panels built, {SETTLE_S:g} s after)"
    note = (f"runs {[round(run[0], 1) for run in runs]} MB, peak (VmHWM) {[round(run[1], 1) for run in runs]} MB; "
            "the app as started from the command line, empty workspace, no session open")
    return [BenchResult(NAME, figure, target, verdict(rss <= TARGET_MB), note=note,
                        numbers={"rss_mb": [run[0] for run in runs], "peak_mb": [run[1] for run in runs]})]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(_child(sys.argv[2:]))
    sys.exit(bench_main(run))
