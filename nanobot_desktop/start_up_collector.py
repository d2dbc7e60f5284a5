"""The cyclic garbage collector is held off while the program starts.

Starting allocates a few hundred thousand objects that live as long as the process: modules,
classes, the SDK's and the config's pydantic validators, Qt wrappers. Left on, the cyclic collector
walks them again and again while they are being made and frees next to nothing: ~45 ms of a
headless turn, a tenth of it. So the process entry (`cli.run`) calls `hold()` first thing, and
`release()` runs once the program has shown its first result — the window's first paint, the
headless turn's first model reply, or the command's end. Releasing freezes what exists
(`gc.freeze`: those objects move to a generation no collection walks again, which also keeps later
full collections short) and lets collection resume.

Two more bursts of such objects come after the first result: the main window opened into its frame,
and the model SDK imported at the first message (openai and its pydantic models). `settle()` freezes
those as well. Left unfrozen, a full collection walked them mid-stream: 50–110 ms in one loop turn,
the longest stall of a streaming reply (bench/stream_stall.py). Freezing is O(1); the price is that
cyclic garbage made just before a freeze is never freed, so `settle()` first collects the young
generations (a few milliseconds, twice in a process's life).

`cli.main` called as a library (the tests do) never holds the collector, and then `release()` and
`settle()` do nothing: freezing a test process's objects would keep them from ever being collected.
"""

from __future__ import annotations

import gc

_held = False
_managed = False  # the process entry held the collector: freezing long-lived objects is ours to do


def hold() -> None:
    """Pause the cyclic collector for the start (only if it runs: a caller that turned it off keeps it off)."""
    global _held, _managed
    if gc.isenabled():
        gc.disable()
        _held = _managed = True


def release() -> None:
    """Start-up is over: freeze what it made and resume collecting. Does nothing unless `hold()` paused it."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


def settle() -> None:
    """Objects that live as long as the process were just made after start-up: collect the young
    garbage, then freeze what is left. Does nothing unless the process entry held the collector, nor
    while it is still held (`release()` freezes them then), nor when something turned it off since."""
    if _managed and not _held and gc.isenabled():
        gc.collect(1)
        gc.freeze()


def held() -> bool:
    """Whether `hold()` has paused the collector and nothing has released it yet."""
    return _held
