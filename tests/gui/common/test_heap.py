"""A window keeps large buffers out of its heap (gui/common/heap.py): after a big block was freed, glibc
would carve every later buffer up to that size from the heap, where what it leaves behind is never
given back (bench/long_session_memory.py). Checked in a fresh process, because the setting is the
process's: before the window, a 3 MiB buffer that follows a freed 8 MiB one comes from the heap;
once the real window has its engine, it gets its own mapping (mallinfo2's count of mapped blocks). (A
buffer of 512 KiB made this flaky: a free chunk that size left in the heap serves it before any
mapping is tried.) And the
window hands free heap pages back (malloc_trim, in a thread of its own) once it is idle after a turn, never
while one runs."""

from __future__ import annotations

import platform
import sys
import textwrap

import pytest

from tests.gui.window_fixtures import open_window
from tests.gui.window_process import run_window_script

__all__ = ["open_window"]  # the fixture, used by name

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
        big = bytearray(8 << 20)
        del big
        before = libc.mallinfo2().hblks
        buffer = bytearray(3 << 20)
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


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_the_window_gives_free_heap_pages_back_once_a_turn_has_ended_and_it_is_idle(qtbot, open_window, fake_openai,
                                                                                    monkeypatch):
    """... in a thread of its own (8 ms after a long streamed reply: a stall of the loop on the GUI thread),
    and says so on the GUI thread."""
    import threading

    from nanobot_desktop.engine.events import TurnFinished, TurnStarted
    from nanobot_desktop.gui.common import heap
    from nanobot_desktop.gui.common.heap import TRIM_AFTER_IDLE_MS
    from tests.gui.window_fixtures import WAIT_MS, send, wait_idle

    trim_threads: list[threading.Thread] = []
    trim = heap.give_back_free_memory

    def recorded_trim() -> bool:
        trim_threads.append(threading.current_thread())
        return trim()

    monkeypatch.setattr(heap, "give_back_free_memory", recorded_trim)
    window = open_window()
    seen: list[str] = []
    told_on: list[threading.Thread] = []
    window.bridge.engine_event.connect(lambda event: seen.append(type(event).__name__)
                                       if isinstance(event, (TurnStarted, TurnFinished)) else None)
    window.heap_trim.trimmed.connect(lambda took_ms: seen.append(f"trimmed in {took_ms:.1f} ms"))
    window.heap_trim.trimmed.connect(lambda _took_ms: told_on.append(threading.current_thread()))
    fake_openai.add_text("Noted.", delay_s=2 * TRIM_AFTER_IDLE_MS / 1000)  # a turn longer than the idle time
    send(qtbot, window, "remember the plants")
    wait_idle(qtbot, window)
    with qtbot.waitSignal(window.heap_trim.trimmed, timeout=WAIT_MS):
        pass
    assert seen[:2] == ["TurnStarted", "TurnFinished"]  # not while the turn ran, only once it had ended
    assert len(seen) == 3 and seen[2].startswith("trimmed in ")
    assert float(seen[2].split()[2]) < 50  # a glance at the heap, not a stall
    assert len(trim_threads) == 1 and trim_threads[0] is not threading.main_thread()
    assert told_on == [threading.main_thread()]


ARENA_SCRIPT = textwrap.dedent("""
    import ctypes, sys, threading
    from nanobot_desktop.gui.common.libc_malloc import share_one_arena

    shared = sys.argv[1] == "shared" and share_one_arena()
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = (ctypes.c_size_t,)
    got = {}
    thread = threading.Thread(target=lambda: got.update(address=libc.malloc(1000)))
    thread.start()
    thread.join()
    heap = next(line.split()[0] for line in open("/proc/self/maps") if line.rstrip().endswith("[heap]"))
    low, high = (int(part, 16) for part in heap.split("-"))
    print(shared, low <= got["address"] < high)
""")


@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
@pytest.mark.parametrize(("mode", "printed"), [("own", "False False"), ("shared", "True True")])
def test_a_thread_mallocs_from_the_main_heap_once_one_arena_is_shared(mode, printed):
    """What each executor thread kept in an arena of its own made a long conversation grow the window by
    ~6 kB a turn (heap.py): with `share_one_arena`, a new thread's block comes from the main heap."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", ARENA_SCRIPT, mode], capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.split() == printed.split()
