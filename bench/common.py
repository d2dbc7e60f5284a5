"""What every benchmark shares: the result row, the table, the JSON hand-off to run.py, and setup helpers.

Each benchmark is a module under bench/ that runs alone (`python bench/<name>.py`, printing its own
table) and, with `--json`, prints one `BENCH-RESULT {...}` line per row on stdout so that
`bench/run.py` can run it in a fresh process and collect the rows. A fresh process per benchmark
keeps them from disturbing each other (one QApplication each, cold caches, an honest peak RSS).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "bench"
RESULT_PREFIX = "BENCH-RESULT "

if str(ROOT) not in sys.path:  # `python bench/x.py` puts bench/ first on the path, not the repo root
    sys.path.insert(0, str(ROOT))

PASS, FAIL, INFO, NOT_AVAILABLE = "PASS", "FAIL", "info", "n/a"


@dataclass
class BenchResult:
    """One row of the table: what was measured, the figure, the SPEC §5 target and the verdict."""

    name: str
    figure: str
    target: str
    verdict: str
    note: str = ""
    numbers: dict[str, Any] = field(default_factory=dict)


def verdict(ok: bool) -> str:
    return PASS if ok else FAIL


def not_available(name: str, target: str, why: str) -> BenchResult:
    return BenchResult(name, "not available yet", target, NOT_AVAILABLE, note=why)


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (no interpolation: the figure is a value that really occurred)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[rank]


# --- output ----------------------------------------------------------------------------------------


def format_table(results: list[BenchResult]) -> str:
    """A Markdown table (it reads fine in a terminal too)."""
    header = ("Benchmark", "Measured", "SPEC §5 target", "Result")
    rows = [header] + [(r.name, r.figure, r.target, r.verdict) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells)) + " |"

    separator = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    return "\n".join([line(rows[0]), separator, *(line(row) for row in rows[1:])])


def format_notes(results: list[BenchResult]) -> str:
    notes = [f"- {r.name}: {r.note}" for r in results if r.note]
    return "\n".join(notes)


def machine_summary() -> str:
    try:
        from PySide6 import __version__ as pyside_version
    except ImportError:
        pyside_version = "not installed"
    cpu = ""
    try:
        for raw in Path("/proc/cpuinfo").read_text().splitlines():
            if raw.startswith("model name"):
                cpu = raw.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores{f' ({cpu})' if cpu else ''}, "
            f"Python {platform.python_version()}, PySide6 {pyside_version}")


def bench_main(run: Callable[[], list[BenchResult]]) -> int:
    """Entry point of a benchmark module: `--json` for run.py, a readable table otherwise."""
    as_json = "--json" in sys.argv[1:]
    started = time.perf_counter()
    results = run()
    elapsed = time.perf_counter() - started
    if as_json:
        for result in results:
            print(RESULT_PREFIX + json.dumps(asdict(result)), flush=True)
    else:
        print(format_table(results))
        notes = format_notes(results)
        if notes:
            print("\n" + notes)
        print(f"\n({elapsed:.1f} s)")
    return 0


def log(message: str) -> None:
    """Progress goes to stderr, so stdout stays the result channel."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --- setup helpers -----------------------------------------------------------------------------------


def app_environment(home: Path) -> dict[str, str]:
    """The environment of an app started as a person starts it, with `home` as its own HOME (and
    XDG folders), offscreen, and none of the caller's NANOBOT_* settings."""
    runtime = home / "run"
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    # PYTHONDONTWRITEBYTECODE is dropped so the warm-up start leaves the app's bytecode cached, as
    # an installed app always has it (pip and PyInstaller compile it): inherited from the shell, it
    # made every start recompile the app's ~90 modules (~0.3 s) on some machines and not on others.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("NANOBOT_") and key != "PYTHONDONTWRITEBYTECODE"}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(home), USERPROFILE=str(home), XDG_RUNTIME_DIR=str(runtime),
               XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_CACHE_HOME=str(home / ".cache"))
    return env


def write_config(path: Path, base_url: str, workspace: Path, **agent_defaults: Any) -> Path:
    """The tests' fake-endpoint config (tests/fake_openai.py), with the workspace restriction on."""
    from tests.fake_openai import write_fake_config

    return write_fake_config(path, base_url, workspace, api_key="sk-bench", restrict_to_workspace=True,
                             **agent_defaults)


@contextmanager
def fake_server_process(*, text: str = "Hello from the benchmark.", chunk_size: int | None = None,
                        delay_ms: float = 0.0, fast: bool = False) -> Iterator[str]:
    """A loopback fake OpenAI endpoint in its own process; yields its base URL.

    Its own process, so that serving the stream does not compete for the GIL of the process being
    measured. Every chat request gets the same streamed `text`, from the tests' fake
    (tests/fake_openai.py, through bench/fake_server.py): `chunk_size` characters per chunk, word by
    word when None, `delay_ms` apart; `fast=True` sends it word by word with no delay in one write,
    for timing what happens around a zero-latency call.
    """
    spec = json.dumps({"text": text, "chunk_size": chunk_size, "delay_ms": 0.0 if fast else delay_ms,
                       "one_write": fast})
    command = [sys.executable, str(BENCH_DIR / "fake_server.py"), spec]
    process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("http://"):
            raise RuntimeError(f"the fake server did not start (it said {line!r})")
        yield line
    finally:
        if process.stdin is not None:
            process.stdin.close()  # the server stops when its stdin closes
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB, from /proc (Linux)."""
    current = peak = float("nan")
    try:
        for raw in Path("/proc/self/status").read_text().splitlines():
            if raw.startswith("VmRSS:"):
                current = int(raw.split()[1]) / 1024
            elif raw.startswith("VmHWM:"):
                peak = int(raw.split()[1]) / 1024
    except OSError:
        pass
    return current, peak


def bytes_written_by_this_process() -> int:
    """`wchar` of /proc/self/io: every byte this process passed to write()/pwrite() (sockets excluded)."""
    for raw in Path("/proc/self/io").read_text().splitlines():
        if raw.startswith("wchar:"):
            return int(raw.split()[1])
    raise RuntimeError("/proc/self/io has no wchar line")


# --- what the machine itself adds ----------------------------------------------------------------------


@dataclass
class FixedWork:
    """The same few milliseconds of pure-Python work, timed over and over with no app and no event loop:
    how far this machine alone stretches a fixed piece of work (a VM host taking the CPU, other load), for
    the stall rows to put beside their own worst gap."""

    steps: int
    cpu_median_ms: float
    cpu_max_ms: float
    wall_median_ms: float
    wall_max_ms: float

    def told(self) -> str:
        return (f"the same {self.cpu_median_ms:.1f} ms of Python work, {self.steps} times with no app: at most "
                f"{self.wall_max_ms:.0f} ms on the clock (median {self.wall_median_ms:.1f} ms) and at most "
                f"{self.cpu_max_ms:.1f} ms of CPU")


def _work_unit(rounds: int) -> int:
    total = 0
    for number in range(rounds):
        total += number * number
    return total


def fixed_work(seconds: float, unit_rounds: int = 30_000, pause_s: float = 0.002) -> FixedWork:
    """Run one fixed unit of work (about 3 ms here), pausing between units as a loop waits for its next
    event, for `seconds`; each unit's wall and CPU time."""
    walls: list[float] = []
    cpus: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        _work_unit(unit_rounds)
        cpus.append((time.thread_time() - cpu0) * 1000)
        walls.append((time.perf_counter() - wall0) * 1000)
        time.sleep(pause_s)
    return FixedWork(len(walls), median(cpus), max(cpus), median(walls), max(walls))
