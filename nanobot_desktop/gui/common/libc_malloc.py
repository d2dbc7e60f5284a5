"""The process's C library and glibc's malloc settings, in one place (why each is set: heap.py's
docstring). A module of its own, with no import of the engine or Qt, because the app's start sets one
arena for all threads before its first paint (test_startup_order)."""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import Any

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>: setting it also turns the dynamic adjustment off
M_ARENA_MAX = -8  # glibc's <malloc.h>: how many arenas the threads may use


@functools.cache
def libc() -> Any | None:
    """The process's C library, opened once (the idle trim asks for it after every turn); None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None)  # the process's own C library
    except OSError:
        return None


def mallopt(parameter: int, value: int) -> bool:
    """glibc's `mallopt`; True when the C library took the setting (False: not glibc, or refused)."""
    function = getattr(libc(), "mallopt", None)
    if function is None:
        return False
    function.argtypes = (ctypes.c_int, ctypes.c_int)
    function.restype = ctypes.c_int
    return bool(function(parameter, value))


def share_one_arena() -> bool:
    """Serve every thread from one malloc arena; True when glibc took the setting. Threads that already
    have an arena keep it: call this before threads are made."""
    return mallopt(M_ARENA_MAX, 1)
