"""Start to first painted window: nanobot Desktop against a bare PySide6 window (SPEC §5: ≤ 1.5×).

    python bench/startup.py            (add --imports to list the slowest imports of the app)

How: each program is started as a fresh process (offscreen, a temporary HOME, the fake endpoint in
its own process, a config pointing at it, a fresh workspace), and the clock runs from just before
the process is spawned to the first paint event of its main window, reported by
bench/first_paint_probe.py. One warm-up start each (disk cache, bytecode cache), then RUNS (11) starts each,
alternating; the medians and their ratio are reported. The note adds each program's CPU time to its
first paint (user + system, from the child's rusage): steadier than wall time on a shared machine.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (BENCH_DIR, ROOT, app_environment, BenchResult, bench_main, fake_server_process, log, median,
                    not_available, verdict, write_config)
from first_paint_probe import PREFIX

RUNS = 11  # the median of 11 alternated starts: 5 swung by ±0.2× between full runs on a quiet machine
TARGET_RATIO = 1.5
NAME = "Start to first painted window"


def time_to_first_paint(arguments: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning `python first_paint_probe.py ARGS` to its first painted main window."""
    return timed_first_paint(arguments, env)[0]


def timed_first_paint(arguments: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds to the first paint, CPU seconds the process used until then)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    result = subprocess.run([sys.executable, str(BENCH_DIR / "first_paint_probe.py"), *arguments], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    for line in result.stdout.splitlines():
        if line.startswith(PREFIX):
            return float(line[len(PREFIX):]) - started, cpu
    raise RuntimeError(f"no first paint (exit {result.returncode}): {result.stderr.strip()[-800:]}")


def slowest_imports(arguments: list[str], env: dict[str, str], count: int = 20) -> str:
    """The app's slowest imports by cumulative time (python -X importtime), nesting shown by indent."""
    result = subprocess.run([sys.executable, "-X", "importtime", str(BENCH_DIR / "first_paint_probe.py"),
                             *arguments], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    rows = []
    for line in result.stderr.splitlines():
        parts = line.split(":", 1)[1].split("|") if line.startswith("import time:") else []
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2][1:].rstrip()))
    rows.sort(key=lambda row: row[0], reverse=True)
    return "\n".join(f"{us / 1000:8.1f} ms  {name}" for us, name in rows[:count])


def run() -> list[BenchResult]:
    target = f"≤ {TARGET_RATIO:g}× bare"
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-start-") as tmp, \
            fake_server_process(text="Hello.", fast=True) as base_url:
        root = Path(tmp)
        bare_env = app_environment(root / "bare-home")

        def app_arguments(run_number: int) -> tuple[list[str], dict[str, str]]:
            home = root / f"app-home-{run_number}"
            home.mkdir()
            config = write_config(home / ".nanobot" / "config.json", base_url, home / "workspace")
            return ["app", "--config", str(config), "--workspace", str(home / "workspace")], app_environment(home)

        try:
            time_to_first_paint(*app_arguments(0))
        except RuntimeError as error:
            return [not_available(NAME, target, f"the app did not paint a window: {error}")]
        time_to_first_paint(["bare"], bare_env)
        bare_s: list[float] = []
        app_s: list[float] = []
        bare_cpu: list[float] = []
        app_cpu: list[float] = []
        for number in range(1, RUNS + 1):
            log(f"startup: run {number}/{RUNS}")
            wall, cpu = timed_first_paint(["bare"], bare_env)
            bare_s.append(wall)
            bare_cpu.append(cpu)
            wall, cpu = timed_first_paint(*app_arguments(number))
            app_s.append(wall)
            app_cpu.append(cpu)
        if "--imports" in sys.argv[1:]:
            print(slowest_imports(*app_arguments(RUNS + 1)), file=sys.stderr)
    ratio = median(app_s) / median(bare_s)
    figure = (f"{ratio:.2f}× (app {median(app_s) * 1000:.0f} ms, bare QMainWindow "
              f"{median(bare_s) * 1000:.0f} ms; medians of {RUNS})")
    note = (f"app runs {[round(s * 1000) for s in app_s]} ms, bare runs {[round(s * 1000) for s in bare_s]} ms; "
            f"CPU time to the first paint (less sensitive to other load): app {median(app_cpu) * 1000:.0f} ms, "
            f"bare {median(bare_cpu) * 1000:.0f} ms = {median(app_cpu) / median(bare_cpu):.2f}×; "
            "run `python bench/startup.py --imports` to list the slowest imports")
    return [BenchResult(NAME, figure, target, verdict(ratio <= TARGET_RATIO), note=note,
                        numbers={"app_s": app_s, "bare_s": bare_s, "ratio": ratio, "app_cpu_s": app_cpu,
                                 "bare_cpu_s": bare_cpu})]


if __name__ == "__main__":
    sys.exit(bench_main(run))
