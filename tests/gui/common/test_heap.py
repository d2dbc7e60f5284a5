"""A window keeps large buffers out of its heap (gui/common/heap.py): after a big block was freed, glibc
would carve every later buffer up to that size from the heap, where what it leaves behind is never
given back (bench/long_session_memory.py). Checked in a fresh process, because the setting is the
process's: before the window, a 512 KiB buffer that follows a freed 4 MiB one comes from the heap;
once the real window has its engine, it gets its own mapping (mallinfo2's count of mapped blocks). And the
window hands free heap pages back (malloc_trim) once it is idle after a turn, never while one runs."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.gui.window_fixtures import open_window

__all__ = ["open_window"]

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent("""
    import asyncio, ctypes, json, sys
    from pathlib import Path
    import qasync
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.window.main_window import MainWindow
    from tests.fake_openai import write_fake_config

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

    async def main(home: Path) -> dict:
        facts = {"before": mapped_after_a_big_free()}
        engine = Engine.open(write_fake_config(home / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", home / "ws"))
        lifecycle = Lifecycle()
        window = MainWindow(engine, lifecycle, settings=QSettings(str(home / "window.ini"), QSettings.Format.IniFormat),
                            start_services=False, use_tray=False)
        window.show()
        await asyncio.sleep(0.2)
        facts["with_window"] = mapped_after_a_big_free()
        lifecycle.request_quit()
        while not lifecycle.is_finished:
            await asyncio.sleep(0.05)
        window.close()
        return facts

    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        print(json.dumps(loop.run_until_complete(main(Path(sys.argv[1])))))
""")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_the_window_serves_large_buffers_from_their_own_mappings(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts == {"before": 0, "with_window": 1}


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_the_window_gives_free_heap_pages_back_once_a_turn_has_ended_and_it_is_idle(qtbot, open_window, fake_openai):
    from nanobot_desktop.engine.events import TurnFinished, TurnStarted
    from nanobot_desktop.gui.common.heap import TRIM_AFTER_IDLE_MS
    from tests.gui.window_fixtures import WAIT_MS, send, wait_idle

    window = open_window()
    seen: list[str] = []
    window.bridge.engine_event.connect(lambda event: seen.append(type(event).__name__)
                                       if isinstance(event, (TurnStarted, TurnFinished)) else None)
    window.heap_trim.trimmed.connect(lambda took_ms: seen.append(f"trimmed in {took_ms:.1f} ms"))
    fake_openai.add_text("Noted.", delay_s=2 * TRIM_AFTER_IDLE_MS / 1000)  # a turn longer than the idle time
    send(qtbot, window, "remember the plants")
    wait_idle(qtbot, window)
    with qtbot.waitSignal(window.heap_trim.trimmed, timeout=WAIT_MS):
        pass
    assert seen[:2] == ["TurnStarted", "TurnFinished"]  # not while the turn ran, only once it had ended
    assert len(seen) == 3 and seen[2].startswith("trimmed in ")
    assert float(seen[2].split()[2]) < 50  # a glance at the heap, not a stall
