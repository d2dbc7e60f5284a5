"""A headless turn against the bare `import openai` floor (issue 14: ≤ 1.3×).

    python bench/startup_headless.py

How: `nanobot-desktop agent -m "Hello"` is started as a fresh process (`python -m nanobot_desktop`,
a temporary HOME, a config pointing at the fake endpoint in its own process, a workspace that
exists: the warm-up start made it, as a person's workspace exists before their turn; the first-ever
start also writes the workspace's template files, which is not a turn's work) and timed from spawn
to exit: it reads the config, opens the engine, streams one reply and appends it to the session
(one more turn each start, in the same CLI session). The floor is `python -c "import openai"`, the one import no turn can do without. One
warm-up start each (disk and bytecode caches), then 5 starts each, alternating; the medians and their
ratio are reported. The notes add CPU times (steadier than wall time on a shared machine), a second
floor (the smallest openai program that streams one reply: what no turn can avoid), and the
engine's slowest imports (`python -X importtime`).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (ROOT, BenchResult, bench_main, fake_server_process, log, median, not_available,
                    verdict, write_config)

RUNS = 5
TARGET_RATIO = 1.3
NAME = "Headless turn (agent -m)"


def _environment(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("NANOBOT_") and key != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(home), USERPROFILE=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    return env


# The smallest program that does what a turn cannot avoid: the client, one streamed reply.
MINIMAL_TURN = """
import sys, openai
client = openai.OpenAI(api_key="sk-bench", base_url=sys.argv[1], max_retries=0)
stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hello"}], stream=True)
print("".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices))
"""


def seconds_to_exit(arguments: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of `python ARGS` from spawn to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, *arguments], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"exit {result.returncode}: {result.stderr.strip()[-800:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def slowest_imports(arguments: list[str], env: dict[str, str], count: int = 8) -> str:
    """The turn's own slowest top-level imports besides openai (python -X importtime, cumulative)."""
    result = subprocess.run([sys.executable, "-X", "importtime", *arguments], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    rows = []
    for line in result.stderr.splitlines():
        parts = line.split(":", 1)[1].split("|") if line.startswith("import time:") else []
        if len(parts) == 3 and parts[1].strip().isdigit() and parts[2].strip().startswith("nanobot_desktop.engine.") \
                and parts[2].strip().count(".") == 2:
            rows.append((int(parts[1]), parts[2].strip()))
    rows.sort(reverse=True)
    return ", ".join(f"{name} {us / 1000:.0f} ms" for us, name in rows[:count])


def run() -> list[BenchResult]:
    target = f"≤ {TARGET_RATIO:g}× import openai"
    with tempfile.TemporaryDirectory(prefix="nanobot-bench-headless-") as tmp, \
            fake_server_process(text="Hello.", fast=True) as base_url:
        root = Path(tmp)
        floor = ["-c", "import openai"]
        minimal = ["-c", MINIMAL_TURN, base_url]

        def turn_arguments(number: int) -> tuple[list[str], dict[str, str]]:
            home = root / f"home-{number}"
            home.mkdir()
            config = write_config(home / ".nanobot" / "config.json", base_url, home / "workspace")
            return (["-m", "nanobot_desktop", "agent", "--config", str(config), "--workspace", str(home / "workspace"),
                     "-m", "Hello"], _environment(home))

        floor_env = _environment(root)
        existing = turn_arguments(0)  # the workspace the warm-up start creates; the timed turns use it
        try:
            seconds_to_exit(*existing)
        except RuntimeError as error:
            return [not_available(NAME, target, f"the turn failed: {error}")]
        seconds_to_exit(floor, floor_env)
        seconds_to_exit(minimal, floor_env)
        floor_s: list[tuple[float, float]] = []
        minimal_s: list[tuple[float, float]] = []
        turn_s: list[tuple[float, float]] = []
        for number in range(1, RUNS + 1):
            log(f"startup_headless: run {number}/{RUNS}")
            floor_s.append(seconds_to_exit(floor, floor_env))
            turn_s.append(seconds_to_exit(*existing))
            minimal_s.append(seconds_to_exit(minimal, floor_env))
        imports = slowest_imports(*turn_arguments(RUNS + 1))

    def wall(runs: list[tuple[float, float]]) -> float:
        return median([run[0] for run in runs])

    def cpu(runs: list[tuple[float, float]]) -> float:
        return median([run[1] for run in runs])

    ratio = wall(turn_s) / wall(floor_s)
    figure = (f"{ratio:.2f}× (turn {wall(turn_s) * 1000:.0f} ms, `import openai` {wall(floor_s) * 1000:.0f} ms; "
              f"medians of {RUNS})")
    note = (f"turn runs {[round(r[0] * 1000) for r in turn_s]} ms, floor runs {[round(r[0] * 1000) for r in floor_s]} ms; "
            f"CPU time (less sensitive to other load): turn {cpu(turn_s) * 1000:.0f} ms = "
            f"{cpu(turn_s) / cpu(floor_s):.2f}× `import openai` ({cpu(floor_s) * 1000:.0f} ms) and "
            f"{cpu(turn_s) / cpu(minimal_s):.2f}× the smallest openai program that streams one reply "
            f"({cpu(minimal_s) * 1000:.0f} ms CPU, {wall(minimal_s) * 1000:.0f} ms wall); "
            f"the package's slowest imports: {imports}")
    return [BenchResult(NAME, figure, target, verdict(ratio <= TARGET_RATIO), note=note,
                        numbers={"turn_s": turn_s, "floor_s": floor_s, "minimal_s": minimal_s, "ratio": ratio})]


if __name__ == "__main__":
    sys.exit(bench_main(run))
