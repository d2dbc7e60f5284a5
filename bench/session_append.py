"""Appending a turn writes only that turn's bytes to its session, whatever the session's length
(SPEC §5), and the usage record's row of the turn costs a bounded, separate number of bytes.

    python bench/session_append.py

How: a 10,000-message session is written with the engine's SessionStore (its last 50 messages
unconsolidated, as a long session is after consolidation). A fresh Engine then runs one real turn
in it against the fast fake endpoint (own process), and we count every byte this process passed to
write()/pwrite() from before the turn until the usage record has written the turn's row (`wchar` of
/proc/self/io; socket sends are not counted there). The same is done with a 10-message session.

Two rows, because the turn writes two different things. Since issue 31 every model call also adds a
row to the usage record (engine/usage: SQLite beside the config, written by the recorder's own
thread). Those bytes belong to the turn, but not to the session: SPEC §5's "only the turn's bytes"
is about the session file, which must not be rewritten as it grows; SQLite's cost per row is the
pages a commit touches (WAL frames of the table and its two indexes, then their checkpoint into the
file), whatever the session's length. So the recorder thread's own bytes are counted apart: `wchar`
of /proc/thread-self/io before and after each job the recorder's worker runs (the worker ends when
idle, engine/idle_threads.py, so no one thread's counter spans the turn):
- "Session-file bytes per turn": every byte the process wrote minus the recorder thread's. PASS
  when, for both sessions, that is the turn's bytes (the file's growth) plus a fixed number of
  metadata-line rewrites (line 1 is padded to a fixed width and updated in place), the file was
  never replaced (same inode), and both sessions cost the same.
- "Usage-record bytes per model call": the recorder thread's bytes for the turn's one call, written
  alone (the worst case: a busy moment's calls share one commit, recorder.BATCH_DELAY_S). Target
  USAGE_TARGET_PAGES SQLite pages: the one-row commit's WAL frames for the table and its two
  indexes (3 pages and their frame headers, plus a WAL header), their checkpoint into the file when
  the connection closes (3 more), and slack for one b-tree split; it must not depend on the session.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (BenchResult, bench_main, bytes_written_by_this_process, fake_server_process,
                    log, verdict, write_config)
from sessions_data import write_session

USAGE_PAGE = 4096  # SQLite's default page size, which the usage files use
USAGE_TARGET_PAGES = 8

LONG = 10_000
SHORT = 10
REPLY = "Noted: the meeting moved to Thursday at ten, and I updated the open tasks to match."


async def _turn_cost(config: Path, key: str) -> dict[str, Any]:
    from nanobot_desktop.engine.runtime import Engine
    from nanobot_desktop.engine.sessions.file import read_first_line

    engine = Engine.open(config)
    try:
        await engine.loop.process("cli:warm-up", "warm up the imports and the connection")
        await engine.usage.flush()  # the warm-up's row: the usage file and the recorder's executor exist now
        recorder_jobs = _count_recorder_writes(engine)
        path = engine.sessions.path_for(key)
        before = path.stat()
        header_width = len(read_first_line(path))
        written_before = bytes_written_by_this_process()
        result = await engine.loop.process(key, "The meeting moved to Thursday at ten. Please note it.")
        await engine.usage.flush()  # the turn's row, which the recorder may hold back to batch it
        usage_written = sum(recorder_jobs)
        written = bytes_written_by_this_process() - written_before - usage_written
        if result.status != "ok" or result.reply != REPLY:
            raise RuntimeError(f"the turn did not come back as expected: {result}")
        after = path.stat()
        messages = len(engine.sessions.get_or_create(key).messages)
    finally:
        await engine.shutdown()
    turn_bytes = after.st_size - before.st_size
    extra = written - turn_bytes
    return {"written": written, "usage_written": usage_written, "turn_bytes": turn_bytes, "extra": extra, "header_width": header_width,
            "header_writes": extra / header_width if header_width else float("nan"),
            "same_inode": before.st_ino == after.st_ino, "messages_after": messages}


def _count_recorder_writes(engine: Any) -> list[int]:
    """From now on, the bytes each job of the usage recorder's worker writes (its thread's `wchar`
    around the job), in a list that grows as jobs run."""
    written: list[int] = []
    executor = engine.usage._worker()  # the recorder's own executor (engine/usage/recorder.py)
    submit = executor.submit

    def counted(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        def job() -> Any:
            before = _thread_bytes_written()
            try:
                return fn(*args, **kwargs)
            finally:
                written.append(_thread_bytes_written() - before)
        return submit(job)

    executor.submit = counted
    return written


def _thread_bytes_written() -> int:
    """`wchar` of the calling thread (/proc/thread-self/io)."""
    for raw in Path("/proc/thread-self/io").read_text().splitlines():
        if raw.startswith("wchar:"):
            return int(raw.split()[1])
    raise RuntimeError("/proc/thread-self/io has no wchar line")


def _prepare(workdir: Path, base_url: str, key: str, count: int) -> Path:
    from nanobot_desktop.engine.sessions.store import SessionStore

    workspace = workdir / "ws"
    write_session(workspace / "sessions", key, count)
    store = SessionStore(workspace / "sessions")
    session = store.get_or_create(key)
    store.set_last_consolidated(session, max(0, count - 50))
    return write_config(workdir / "home" / ".nanobot" / "config.json", base_url, workspace)


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)  # a log line on stderr would count as written bytes
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True  # lazy imports must not write .pyc files during the turn
    costs: dict[int, dict[str, Any]] = {}
    with fake_server_process(text=REPLY, fast=True) as base_url:
        for count in (LONG, SHORT):
            with tempfile.TemporaryDirectory(prefix="nanobot-bench-append-") as tmp:
                key = f"desktop:append-{count}"
                config = _prepare(Path(tmp), base_url, key, count)
                log(f"one turn appended to a {count}-message session")
                costs[count] = asyncio.run(_turn_cost(config, key))
    long, short = costs[LONG], costs[SHORT]
    width = long["header_width"]
    ok = (long["same_inode"] and short["same_inode"] and long["extra"] == short["extra"]
          and long["extra"] % width == 0 and long["turn_bytes"] > 0)
    figure = (f"{long['written']:,} B written = turn {long['turn_bytes']:,} B + "
              f"{long['header_writes']:g} × {width} B metadata line (10-msg session: "
              f"{short['written']:,} B = {short['turn_bytes']:,} + {short['extra']:,})")
    note = ("file never replaced (same inode)" if long["same_inode"] and short["same_inode"]
            else "the session file was REPLACED during the turn")
    usage_target = USAGE_TARGET_PAGES * USAGE_PAGE
    usage_ok = 0 < long["usage_written"] <= usage_target and 0 < short["usage_written"] <= usage_target
    usage_figure = (f"{long['usage_written']:,} B = {long['usage_written'] / USAGE_PAGE:.2f} pages of "
                    f"{USAGE_PAGE:,} B (10-msg session: {short['usage_written']:,} B)")
    usage_note = ("the recorder thread's own writes (desktop-usage.sqlite3 and its WAL) for the turn's one call, "
                  "written alone; calls close together share one commit")
    return [BenchResult("Session-file bytes per turn (10,000-msg session)", figure, "only the turn's bytes",
                        verdict(ok), note=note, numbers={"long": long, "short": short}),
            BenchResult("Usage-record bytes per model call", usage_figure,
                        f"≤ {USAGE_TARGET_PAGES} pages ({usage_target // 1024} KiB)", verdict(usage_ok),
                        note=usage_note)]


if __name__ == "__main__":
    sys.exit(bench_main(run))
