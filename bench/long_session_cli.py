"""A headless CLI turn in a 100,000-message session vs the same turn in a 10-message one (issue 17: ≤ 1.1×).

    python bench/long_session_cli.py

How: two workspaces, each with a `cli:direct` session written by the engine's SessionStore: one of
10 messages, one of 100,000 whose `last_consolidated` leaves the same newest 10 unconsolidated (as
consolidation would), so both turns send the same amount of history and only the file's size
differs. `python -m nanobot_desktop agent -m "Hello"` (fresh process, temporary HOME, the fake
endpoint in its own process) is timed from spawn to exit in each, alternating, one warm-up each, then
5 runs each (every run appends its two lines, in both). Reported: the ratio of the median wall times,
and CPU times in the note (steadier on a shared machine). The 100k turn reads the whole file once,
counts its lines and checks that each is a message line (two bytes.count passes, no parsing), and
parses only the unconsolidated tail.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BenchResult, bench_main, fake_server_process, log, median, not_available, verdict, write_config
from sessions_data import write_session
from startup_headless import _environment, seconds_to_exit

RUNS = 5
TARGET_RATIO = 1.1
SMALL, BIG = 10, 100_000
NAME = "Headless turn in a 100,000-msg session vs a 10-msg one"


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)
    target = f"≤ {TARGET_RATIO:g}×"
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-long-cli-") as tmp, \
            fake_server_process(text="Hello.", fast=True) as base_url:
        root = Path(tmp)
        setups: dict[int, tuple[list[str], dict[str, str]]] = {}
        size_mb = 0.0
        for count in (SMALL, BIG):
            home = root / f"home-{count}"
            workspace = home / "workspace"
            config = write_config(home / ".nanobot" / "config.json", base_url, workspace)
            log(f"long_session_cli: writing a {count:,}-message session")
            path = write_session(workspace / "sessions", "cli:direct", count, unconsolidated=SMALL)
            size_mb = max(size_mb, path.stat().st_size / 1e6)
            setups[count] = (["-m", "nanobot_desktop", "agent", "--config", str(config), "--workspace",
                              str(workspace), "-m", "Hello"], _environment(home))
        try:
            for count in (SMALL, BIG):
                seconds_to_exit(*setups[count])
        except RuntimeError as error:
            return [not_available(NAME, target, f"the turn failed: {error}")]
        runs: dict[int, list[tuple[float, float]]] = {SMALL: [], BIG: []}
        for number in range(RUNS):
            log(f"long_session_cli: run {number + 1}/{RUNS}")
            for count in (SMALL, BIG):
                runs[count].append(seconds_to_exit(*setups[count]))

    def wall(count: int) -> float:
        return median([r[0] for r in runs[count]])

    def cpu(count: int) -> float:
        return median([r[1] for r in runs[count]])

    ratio = wall(BIG) / wall(SMALL)
    figure = f"{ratio:.2f}× (100k: {wall(BIG) * 1000:.0f} ms, 10: {wall(SMALL) * 1000:.0f} ms; medians of {RUNS})"
    note = (f"100k runs {[round(r[0] * 1000) for r in runs[BIG]]} ms, 10-message runs "
            f"{[round(r[0] * 1000) for r in runs[SMALL]]} ms; CPU time: {cpu(BIG) * 1000:.0f} ms vs "
            f"{cpu(SMALL) * 1000:.0f} ms = {cpu(BIG) / cpu(SMALL):.2f}×; the 100k file is {size_mb:.1f} MB")
    return [BenchResult(NAME, figure, target, verdict(ratio <= TARGET_RATIO), note=note,
                        numbers={"ratio": ratio, "big_s": runs[BIG], "small_s": runs[SMALL], "file_mb": size_mb})]


if __name__ == "__main__":
    sys.exit(bench_main(run))
