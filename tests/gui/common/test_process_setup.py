"""The GUI paints on its own thread: Qt's helper threads for large fills are turned off (process_setup.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PAINT_SCRIPT = textwrap.dedent("""
    import os, sys
    if sys.argv[1] == "prepared":
        from nanobot_desktop.gui.common.process_setup import prepare_gui_process
        prepare_gui_process()
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    image = QImage(1600, 1200, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(image)
    painter.fillRect(0, 0, 1600, 1200, QColor(40, 90, 200, 128))  # blended: Qt splits it over its pool
    painter.end()
    threads = [open(f"/proc/self/task/{task}/comm").read().strip() for task in os.listdir("/proc/self/task")]
    print(sum(name.startswith("Thread (pooled)") for name in threads))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="thread names are read from /proc")
@pytest.mark.parametrize(("mode", "pool_threads"), [
    pytest.param("as Qt starts", "nonzero", marks=pytest.mark.skipif((os.cpu_count() or 1) < 2,
                                                                    reason="Qt splits fills only over 2+ cores")),
    ("prepared", "0")])
def test_a_large_blended_fill_uses_no_helper_thread_once_the_process_is_prepared(mode, pool_threads):
    """Waiting for a pool thread the host was not running made the streaming row's worst stalls."""
    env = {key: value for key, value in os.environ.items() if key != "QT_NO_GUI_THREADPOOL"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    done = subprocess.run([sys.executable, "-c", PAINT_SCRIPT, mode], capture_output=True, text=True, timeout=60,
                          check=True, env=env)
    count = int(done.stdout.split()[-1])
    assert (count > 0) if pool_threads == "nonzero" else count == 0
