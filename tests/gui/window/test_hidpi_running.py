"""HiDPI with the engine attached (issue 26): at QT_SCALE_FACTOR 1.5 and 2 on a 1920×1080 screen, the
running window — engine, chat, a reply with code and a table streamed from the loopback endpoint —
fits the screen, the chat keeps its reading column, and the app's icons are drawn at the screen's
resolution (enough device pixels, never a 1x drawing scaled up). One process per scale: the scale is
read when Qt starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

RUNNING_SCRIPT = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path

    import qasync
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QToolButton

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.window.main_window import MainWindow
    from tests.fake_openai import FakeOpenAIServer, write_fake_config

    REPLY = ("Here it is:\\n\\n```python\\nprint('hello')\\n```\\n\\n| a | b |\\n|---|---|\\n| 1 | 2 |\\n")

    async def until(check, seconds=20.0):
        for _ in range(int(seconds / 0.05)):
            if check():
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("the window did not get there")

    async def main(home: Path) -> dict:
        with FakeOpenAIServer() as server:
            engine = Engine.open(write_fake_config(home / ".nanobot" / "config.json", server.base_url, home / "ws"))
            lifecycle = Lifecycle()
            window = MainWindow(engine, lifecycle, settings=QSettings(str(home / "window.ini"), QSettings.Format.IniFormat),
                                start_services=False, use_tray=False)
            window.show()
            await asyncio.sleep(0.3)
            server.add_text(REPLY)
            window.send_message("show me", [])
            key = window.current_key
            await until(lambda: window.chat_model.rowCount() >= 2 and not window.chat.is_busy(key))
            await asyncio.sleep(0.3)
            reply = window.chat_view.widget_for_row(window.chat_model.rowCount() - 1)
            reply.copy_button.setVisible(True)  # shown on hover; its icon is what is measured
            ratio = window.devicePixelRatio()
            buttons = [window.toolbar.widgetForAction(action) for action in window.toolbar.actions()]
            buttons = [b for b in buttons if isinstance(b, QToolButton) and not b.icon().isNull()] + [reply.copy_button]
            icons = []
            for button in buttons:
                size = button.iconSize()
                pixmap = button.icon().pixmap(size, ratio)
                icons.append([button.objectName() or button.toolTip()[:20], size.width(), pixmap.width(),
                              pixmap.devicePixelRatio()])
            screen = window.screen()
            available, frame = screen.availableGeometry(), window.frameGeometry()
            facts = {"ratio": ratio, "screen": [available.width(), available.height()],
                     "frame": [frame.x(), frame.y(), frame.width(), frame.height()],
                     "column": window.chat_view.column_width(), "char": window.chat_view.fontMetrics().averageCharWidth(),
                     "composer_visible": window.composer.isVisible() and not window.composer.visibleRegion().isEmpty(),
                     "icons": icons}
            lifecycle.request_quit()
            await until(lambda: lifecycle.is_finished)
            window.close()
            return facts

    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        print(json.dumps(loop.run_until_complete(main(Path(sys.argv[1])))))
""")


@pytest.mark.slow
@pytest.mark.parametrize("scale", ["1.5", "2"])
def test_the_running_window_fits_and_draws_crisp_icons_at_scale(tmp_path, scale):
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "big", "x": 0, "y": 0, "width": 1920, "height": 1080,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}", QT_SCALE_FACTOR=scale, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", RUNNING_SCRIPT, str(tmp_path)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    ratio = float(scale)
    assert facts["ratio"] == ratio
    screen_w, screen_h = facts["screen"]
    assert (screen_w, screen_h) == (round(1920 / ratio), round(1080 / ratio))
    x, y, width, height = facts["frame"]
    assert x >= 0 and y >= 0 and x + width <= screen_w and y + height <= screen_h, facts
    assert facts["composer_visible"], facts
    assert 60 * facts["char"] <= facts["column"] <= 80 * facts["char"], facts  # the reading column, in logical pixels
    assert len(facts["icons"]) >= 4, facts
    for name, size, pixels, pixmap_ratio in facts["icons"]:
        assert pixmap_ratio >= ratio and pixels >= size * ratio, (name, size, pixels, pixmap_ratio)
