"""Appending a turn writes only that turn's bytes, whatever the session's length (SPEC §5).

    python bench/session_append.py

How: a 10,000-message session is written with the engine's SessionStore (its last 50 messages
unconsolidated, as a long session is after consolidation). A fresh Engine then runs one real turn
in it against the fast fake endpoint (own process), and we count every byte this process passed to
write()/pwrite() during the turn (`wchar` of /proc/self/io; socket sends are not counted there).
The same is done with a 10-message session. PASS when, for both, the bytes written are the turn's
bytes (the file's growth) plus a fixed number of metadata-line rewrites (line 1 is padded to a
fixed width and updated in place), the file was never replaced (same inode), and both sessions
cost the same.
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

LONG = 10_000
SHORT = 10
REPLY = "Noted: the meeting moved to Thursday at ten, and I updated the open tasks to match."


async def _turn_cost(config: Path, key: str) -> dict[str, Any]:
    from nanobot_desktop.engine.runtime import Engine
    from nanobot_desktop.engine.sessions.file import read_first_line

    engine = Engine.open(config)
    try:
        await engine.loop.process("cli:warm-up", "warm up the imports and the connection")
        path = engine.sessions.path_for(key)
        before = path.stat()
        header_width = len(read_first_line(path))
        written_before = bytes_written_by_this_process()
        result = await engine.loop.process(key, "The meeting moved to Thursday at ten. Please note it.")
        written = bytes_written_by_this_process() - written_before
        if result.status != "ok" or result.reply != REPLY:
            raise RuntimeError(f"the turn did not come back as expected: {result}")
        after = path.stat()
        messages = len(engine.sessions.get_or_create(key).messages)
    finally:
        await engine.shutdown()
    turn_bytes = after.st_size - before.st_size
    extra = written - turn_bytes
    return {"written": written, "turn_bytes": turn_bytes, "extra": extra, "header_width": header_width,
            "header_writes": extra / header_width if header_width else float("nan"),
            "same_inode": before.st_ino == after.st_ino, "messages_after": messages}


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
    return [BenchResult("Append a turn to a 10,000-msg session", figure, "only the turn's bytes", verdict(ok),
                        note=note, numbers={"long": long, "short": short})]


if __name__ == "__main__":
    sys.exit(bench_main(run))
