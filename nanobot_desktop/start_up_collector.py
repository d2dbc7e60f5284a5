"""The cyclic garbage collector is held off while the program starts.

Starting allocates a few hundred thousand objects that live as long as the process: modules,
classes, the SDK's and the config's pydantic validators, Qt wrappers. Left on, the cyclic collector
walks them again and again while they are being made and frees next to nothing: ~45 ms of a
headless turn, a tenth of it. So the process entry (`cli.run`) calls `hold()` first thing, and
`release()` runs once the program has shown its first result — the window's first paint, the
headless turn's first model reply, or the command's end. Releasing freezes what exists
(`gc.freeze`: those objects move to a generation no collection walks again, which also keeps later
full collections short) and lets collection resume.

`cli.main` called as a library (the tests do) never holds the collector, and then `release()` does
nothing: freezing a test process's objects would keep them from ever being collected.
"""

from __future__ import annotations

import gc

_held = False


def hold() -> None:
    """Pause the cyclic collector for the start (only if it runs: a caller that turned it off keeps it off)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """Start-up is over: freeze what it made and resume collecting. Does nothing unless `hold()` paused it."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


def held() -> bool:
    """Whether `hold()` has paused the collector and nothing has released it yet."""
    return _held
