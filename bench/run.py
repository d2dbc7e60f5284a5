"""Run every benchmark and print one table (SPEC §5's targets, PASS/FAIL); write it to bench/RESULTS.md.

    python bench/run.py                 every benchmark (a few minutes on a 2-core machine)
    python bench/run.py startup append  only those (matched against the module names); RESULTS.md is
                                        then left alone
    python3 dev.py bench                the same through the project's virtualenv
    python bench/run.py --help          this text and the list of benchmarks

Each benchmark is its own module in bench/ and runs in a fresh process (`python bench/<module>.py
--json`), so one cannot disturb another's timing or memory figure. A benchmark that crashes gets a
row saying so, with the end of its error output below the table; the others still run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (BENCH_DIR, RESULT_PREFIX, ROOT, BenchResult, fixed_work, format_notes, format_table,
                    machine_summary)

# (module, what its row is about) in SPEC §5's order.
BENCHMARKS = [
    ("startup", "Start to first painted window"),
    ("startup_headless", "Headless turn (agent -m)"),
    ("stream_stall", "Event-loop stall while streaming"),
    ("render_cost", "Streamed render cost vs length"),
    ("session_open", "Open + paint a 10,000/100,000-msg session; scroll stall"),
    ("session_list", "List and search 20,000 sessions"),
    ("hot_reload", "Hot reload: outside write → editor"),
    ("engine_overhead", "Engine overhead per turn"),
    ("session_append", "Bytes written per turn: session file, usage record"),
    ("memory_peak", "Peak RSS, 2,000-msg session rendered"),
    ("window_rss", "Empty window RSS"),
    ("long_session_memory", "RSS with a 100,000-msg session; growth over 100 turns"),
    ("long_session_cli", "Headless turn in a 100,000-msg session vs a 10-msg one"),
    ("mcp_servers", "MCP servers: start to ready, per-call overhead"),
    ("usage_page", "Open the Usage page over 100,000 calls"),
]
TIMEOUT_S = 240
RESULTS_FILE = BENCH_DIR / "RESULTS.md"


def run_module(module: str, title: str) -> tuple[list[BenchResult], str]:
    """Rows of one benchmark, and its error output when it failed."""
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["PYTHONUNBUFFERED"] = "1"
    started = time.perf_counter()
    try:
        result = subprocess.run([sys.executable, str(BENCH_DIR / f"{module}.py"), "--json"], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [BenchResult(title, f"timed out after {TIMEOUT_S} s", "", "ERROR")], ""
    rows = [BenchResult(**json.loads(line[len(RESULT_PREFIX):]))
            for line in result.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    elapsed = time.perf_counter() - started
    print(f"[bench] {module}: {elapsed:.0f} s", file=sys.stderr, flush=True)
    if result.returncode != 0 or not rows:
        errors = "\n".join(line for line in result.stderr.splitlines() if "propagateSizeHints" not in line)
        return rows or [BenchResult(title, f"crashed (exit {result.returncode})", "", "ERROR")], errors[-1500:]
    return rows, ""


def machine_speed() -> str:
    """How fast this machine runs Python right now: a VM's speed moves from day to day (the same run
    measured a bare window in 93 ms one morning and in 160-270 ms from that afternoon on), and the rows
    with a target in milliseconds move with it; the ratio rows do not."""
    unit = fixed_work(1.0)
    return (f"a fixed unit of Python work (the stall rows' 30,000-round loop) took {unit.cpu_median_ms:.2f} ms "
            f"of CPU (median of {unit.steps})")


def write_results(results: list[BenchResult], started: datetime, load: str, seconds: float, speed: str) -> None:
    notes = format_notes(results)
    text = (
        "# Benchmark results\n\n"
        f"Measured {started:%Y-%m-%d %H:%M} on {machine_summary()}; load average at the start {load}; "
        f"{speed}; the whole run took {seconds:.0f} s. Written by `python bench/run.py` (also `python3 dev.py bench`); "
        "each row's method is in its module's docstring (bench/*.py).\n\n"
        f"{format_table(results)}\n\n"
        + (f"Notes:\n\n{notes}\n" if notes else "")
    )
    RESULTS_FILE.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    if {"-h", "--help"} & set(argv):  # say what there is; run nothing
        print((__doc__ or "").strip() + "\n\nbenchmarks:\n" + "\n".join(f"  {module:<22}{title}" for module, title in BENCHMARKS))
        return 0
    wanted = [name for name in argv if not name.startswith("-")]
    chosen = [(module, title) for module, title in BENCHMARKS
              if not wanted or any(name in module for name in wanted)]
    if not chosen:
        print(f"no benchmark matches {wanted}; they are: {', '.join(m for m, _ in BENCHMARKS)}", file=sys.stderr)
        return 2
    started_at = datetime.now()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    speed = machine_speed()
    started = time.perf_counter()
    results: list[BenchResult] = []
    failures: list[tuple[str, str]] = []
    for module, title in chosen:
        rows, errors = run_module(module, title)
        results += rows
        if errors:
            failures.append((module, errors))
    seconds = time.perf_counter() - started
    print(format_table(results))
    notes = format_notes(results)
    if notes:
        print("\n" + notes)
    for module, errors in failures:
        print(f"\n--- {module} failed:\n{errors}", file=sys.stderr)
    print(f"\n({seconds:.0f} s; load average at the start {load}; {speed})")
    if not wanted:
        write_results(results, started_at, load, seconds, speed)
        print(f"written to {RESULTS_FILE.relative_to(ROOT)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
