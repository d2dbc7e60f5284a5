"""A window that stays open for days gives its large transient buffers back to the system.

glibc's malloc serves a block of 128 KiB or more with its own mmap, returned to the system when it is
freed, and then raises that threshold to the freed block's size (up to 32 MiB, "dynamic mmap
threshold"). After the first megabyte-sized buffer was freed (a page of a long session read, a
request body), every later buffer up to that size is carved from the heap instead, between
long-lived objects, and what it leaves behind cannot be returned: bench/long_session_memory.py
measured malloc's free-but-kept memory going from 6 MB to 32 MB over 36 turns (mallinfo2), which
`malloc_trim` could not give back (2 MB). Holding the threshold at its default keeps it at 3–5 MB
over the same turns; the price is one mmap/munmap per large buffer, a few microseconds each.

Linux with glibc only (`mallopt` is glibc's; musl and other systems have their own allocators).
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>: setting it also turns the dynamic adjustment off
LARGE_BLOCK_BYTES = 128 * 1024  # glibc's default threshold, now kept fixed


def keep_large_blocks_mapped() -> bool:
    """Tell glibc's malloc to keep serving large blocks with mmap; True when it took the setting."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    taken = bool(mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES))
    if not taken:
        log.info("the C library did not take a fixed mmap threshold (not glibc?)")
    return taken
