"""HiDPI with the engine attached (issue 26): at QT_SCALE_FACTOR 1.5 and 2 on a 1920×1080 screen, the
running window — engine, chat, a reply with code and a table streamed from the loopback endpoint —
fits the screen, the chat keeps its reading column, and the app's icons are drawn at the screen's
resolution (enough device pixels, never a 1x drawing scaled up). One process per scale: the scale is
read when Qt starts."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.gui.window_process import run_window_script

RUNNING_SCRIPT = textwrap.dedent("""
    import asyncio
    from PySide6.QtWidgets import QToolButton
    from nanobot_desktop.engine import Engine
    from tests.fake_openai import FakeOpenAIServer, write_fake_config
    from tests.gui.window_process import close_window, open_window, run_and_print, until

    REPLY = ("Here it is:\\n\\n```python\\nprint('hello')\\n```\\n\\n| a | b |\\n|---|---|\\n| 1 | 2 |\\n")

    async def main(home):
        with FakeOpenAIServer() as server:
            engine = Engine.open(write_fake_config(home / ".nanobot" / "config.json", server.base_url, home / "ws"))
            window, lifecycle = open_window(engine, home)
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
            await close_window(window, lifecycle)
            return facts

    run_and_print(main)
""")


@pytest.mark.slow
@pytest.mark.parametrize("scale", ["1.5", "2"])
def test_the_running_window_fits_and_draws_crisp_icons_at_scale(tmp_path, scale):
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "big", "x": 0, "y": 0, "width": 1920, "height": 1080,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    facts = run_window_script(RUNNING_SCRIPT, tmp_path,
                              {"QT_QPA_PLATFORM": f"offscreen:configfile={config}", "QT_SCALE_FACTOR": scale})
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
