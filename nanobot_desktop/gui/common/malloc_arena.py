"""One malloc arena for every thread (why: gui/common/heap.py's docstring). A module of its own, with no
import of the engine or Qt, because the app's start calls it before its first paint (test_startup_order)."""

from __future__ import annotations

import ctypes
import sys

M_ARENA_MAX = -8  # glibc's <malloc.h>: how many arenas the threads may use


def share_one_arena() -> bool:
    """Tell glibc's malloc to serve every thread from one arena (why: heap.py); True when it
    took the setting. Threads that already have an arena keep it: call this before threads are made."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)  # the process's own C library
    except OSError:
        return False
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, 1))
