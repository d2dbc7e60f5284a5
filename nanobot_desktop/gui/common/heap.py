"""A window that stays open for days gives its large transient buffers back to the system.

glibc's malloc serves a block of 128 KiB or more with its own mmap, returned to the system when it is
freed, and then raises that threshold to the freed block's size (up to 32 MiB, "dynamic mmap
threshold"). After the first megabyte-sized buffer was freed (a page of a long session read, a
request body), every later buffer up to that size is carved from the heap instead, between
long-lived objects, and what it leaves behind cannot be returned: bench/long_session_memory.py
measured malloc's free-but-kept memory going from 6 MB to 32 MB over 36 turns (mallinfo2), which
`malloc_trim` could not give back (2 MB). Holding the threshold at its default keeps it at 3–5 MB
over the same turns; the price is one mmap/munmap per large buffer, a few microseconds each.

Each thread that mallocs gets an arena of its own (up to 8 per core), and what an executor thread
leaves in its arena — a session line parsed there, a buffer freed between long-lived blocks — stays
resident: with the worker threads each on their own arena, bench/long_session_memory.py measured
+0.5 to +0.57 MB over 90 turns (~6 kB a turn, three times the Python objects the turns keep), and
+0.04 to +0.14 MB with one arena for all (MALLOC_ARENA_MAX=1). `share_one_arena` sets that at start,
before the window makes its threads. The cost is a lock the threads share; they hold Python's GIL
for nearly every allocation anyway.

Each thread also keeps a cache of small blocks it freed (glibc's tcache, up to ~240 kB a thread),
counted as in use and out of `malloc_trim`'s reach until the thread ends. The app's own pools' workers
end after half a second without a job (engine/idle_threads.py): before that, the inspector's spill
thread and the usage recorder's had ~125 kB more in those caches after 90 turns than after 10 (qasync's
ten loop workers ~130 kB more; they stay, see gui/common/qt_asyncio.py); now the pools' caches are back
in the heap by the time the trim below runs.

Freed small blocks stay in the heap too (glibc gives back only the free pages at its top): once the
window has been idle for `TRIM_AFTER_IDLE_MS` after a turn, `IdleHeapTrim` asks `malloc_trim(0)` to
return every whole free page (0.2–1 ms after a turn of bench/long_session_memory.py, 0.3–1.7 MB given
back; 8 ms after the 64k streamed reply of bench/stream_stall.py). It runs in the executor (ctypes lets
go of the GIL for the call): on the GUI thread those 8 ms were one stall of the loop, a second after the
reply ended. A malloc of the GUI thread meanwhile still waits for the arena's lock, but an idle window
makes few. It runs in the app for every turn; the bench waits for it (its `trimmed` signal, emitted on
the GUI thread) the same way after turn 10 and turn 100.

Linux with glibc only (`mallopt` and `malloc_trim` are glibc's; musl and other systems have their own
allocators).
"""

from __future__ import annotations

import ctypes
import logging
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from nanobot_desktop.engine import events as ev
from nanobot_desktop.gui.common.libc_malloc import M_MMAP_THRESHOLD, libc, mallopt

if TYPE_CHECKING:
    from nanobot_desktop.gui.common.bridge import EngineBridge

log = logging.getLogger(__name__)

LARGE_BLOCK_BYTES = 128 * 1024  # glibc's default threshold, now kept fixed
TRIM_AFTER_IDLE_MS = 1000  # no turn for this long after one ended: give free pages back


def keep_large_blocks_mapped() -> bool:
    """Tell glibc's malloc to keep serving large blocks with mmap; True when it took the setting."""
    taken = mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES)
    if not taken:
        log.info("the C library did not take a fixed mmap threshold (not glibc?)")
    return taken


def give_back_free_memory() -> bool:
    """`malloc_trim(0)`: hand every whole free page of the heap back to the system; True when glibc did
    (it returns 1 when it released something)."""
    trim = getattr(libc(), "malloc_trim", None)
    if trim is None:
        return False
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return bool(trim(0))


class IdleHeapTrim(QObject):
    """Gives the heap's free pages back once no turn has run for TRIM_AFTER_IDLE_MS after one ended: a
    turn frees what it built (a request body, parsed chunks, widgets far up the chat), and a window left
    open for days should not keep that room. Never while a turn runs (no work in the middle of a stream)."""

    trimmed = Signal(float)
    """(milliseconds the trim took): the free pages were handed back."""

    def __init__(self, bridge: EngineBridge, parent: QObject) -> None:
        from nanobot_desktop.gui.common.owned import OwnedWork  # made with the engine, after the first paint

        super().__init__(parent)
        self._running: set[str] = set()  # turn ids started and not ended
        self._trimming = False  # a trim is under way in the executor
        self._work = OwnedWork(self)  # a trim under way is dropped with this object
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TRIM_AFTER_IDLE_MS)
        self._timer.timeout.connect(self._trim)
        bridge.subscribe({ev.TurnStarted: self._started, ev.TurnFinished: self._ended,
                          ev.TurnFailed: self._ended, ev.TurnCancelled: self._ended}, self)

    def _started(self, event: ev.TurnStarted) -> None:
        self._running.add(event.turn_id)
        self._timer.stop()

    def _ended(self, event: ev.TurnFinished | ev.TurnFailed | ev.TurnCancelled) -> None:
        self._running.discard(event.turn_id)
        if not self._running:
            self._timer.start()

    def _trim(self) -> None:
        if self._running or self._trimming:
            return
        self._trimming = True
        self._work.spawn(self._trim_off_the_gui_thread())

    async def _trim_off_the_gui_thread(self) -> None:
        """malloc_trim in the event loop's default executor (ctypes lets go of the GIL for it), reported back here by
        asyncio, as every result of the window's executor work is."""
        import asyncio

        started = time.perf_counter()
        try:
            await asyncio.get_running_loop().run_in_executor(None, give_back_free_memory)
        finally:
            self._trimming = False
        took_ms = (time.perf_counter() - started) * 1000
        log.debug("gave free heap pages back in %.2f ms", took_ms)
        self.trimmed.emit(took_ms)
