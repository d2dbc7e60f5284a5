"""A window keeps large buffers out of its heap (gui/common/heap.py): after a big block was freed, glibc
would carve every later buffer up to that size from the heap, where what it leaves behind is never
given back (bench/long_session_memory.py). Checked in a fresh process, because the setting is the
process's: before the window, a 512 KiB buffer that follows a freed 4 MiB one comes from the heap;
once the real window has its engine, it gets its own mapping (mallinfo2's count of mapped blocks)."""

from __future__ import annotations

import platform
import sys
import textwrap

import pytest

from tests.gui.window_process import run_window_script

SCRIPT = textwrap.dedent("""
    import asyncio, ctypes
    from nanobot_desktop.engine import Engine
    from tests.fake_openai import write_fake_config
    from tests.gui.window_process import close_window, open_window, run_and_print

    class MallInfo(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                          "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo

    def mapped_after_a_big_free() -> int:
        big = bytearray(4 << 20)
        del big
        before = libc.mallinfo2().hblks
        buffer = bytearray(512 << 10)
        grew = libc.mallinfo2().hblks - before
        del buffer
        return grew

    async def main(home):
        facts = {"before": mapped_after_a_big_free()}
        engine = Engine.open(write_fake_config(home / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", home / "ws"))
        window, lifecycle = open_window(engine, home)
        window.show()
        await asyncio.sleep(0.2)
        facts["with_window"] = mapped_after_a_big_free()
        await close_window(window, lifecycle)
        return facts

    run_and_print(main)
""")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_the_window_serves_large_buffers_from_their_own_mappings(tmp_path):
    facts = run_window_script(SCRIPT, tmp_path, {})
    assert facts == {"before": 0, "with_window": 1}
