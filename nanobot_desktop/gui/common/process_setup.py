"""What the GUI sets for the whole process before Qt and the engine make their threads.

- One malloc arena for every thread (libc_malloc.share_one_arena; why: heap.py).
- No helper threads for painting (`QT_NO_GUI_THREADPOOL`). Qt's raster engine splits a large blended
  fill (a scroll bar's groove, a card's background) over a pool of threads and waits for them. On a
  2-core machine whose host takes the CPU away now and then, the GUI thread then waited for a pool
  thread that was not running: the streaming row's worst loop stalls held 14-26 voluntary waits
  and 5-9 ms of the loop's own CPU (bench/stream_stall.py). Painted on the GUI thread alone, those
  gaps hold no wait at all. Qt reads the variable once, when it first wants the pool.

No import of Qt or the engine here: the app's start calls this before its first paint (test_startup_order).
"""

from __future__ import annotations

import os

from nanobot_desktop.gui.common.libc_malloc import share_one_arena


def prepare_gui_process() -> None:
    """Call before Qt paints and before the engine starts its executors (a variable set by the person wins)."""
    share_one_arena()
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")
