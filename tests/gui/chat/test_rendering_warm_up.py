"""Markdown and Pygments load on first use (issue 17's empty-window memory budget), early enough
that the first reply never waits for them mid-stream; nor has it loaded urllib.request, ElementTree,
difflib, html or the file editor (Syncthing's status, a conflict's diff, rendering, the Memory/Files
pages load them when used).

An app at rest, every panel built and the services started, has not imported markdown or pygments
(checked in a fresh process started as a person starts it: sys.modules is shared between tests here);
the first keystroke into the composer loads them at idle; a message sent without typing (Retry,
a programmatic send) loads them before the request; a reply sent either way renders its Markdown.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.fake_openai import write_fake_config
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]

REPO = Path(__file__).resolve().parents[3]

PROBE = textwrap.dedent("""
    import json, os, sys
    from PySide6.QtCore import QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QMainWindow
    from nanobot_desktop.gui.shell.application import DesktopApplication

    app = DesktopApplication(sys.argv[:1])  # the app's own class, which the start takes over
    RENDERING = ("markdown", "pygments")
    # loaded where they are used (Syncthing's status and names, a conflict's diff, rendering, the first
    # page holding a file editor), not at rest
    ELSEWHERE = ("urllib.request", "http.client", "xml.etree.ElementTree", "difflib", "html",
                 "nanobot_desktop.gui.editor")
    seen = {}

    def loaded():
        return sorted(name for name in sys.modules if name.split(".")[0] in RENDERING)

    def window():
        for widget in app.topLevelWidgets():
            if isinstance(widget, QMainWindow) and getattr(widget, "engine", None) is not None:
                return widget
        return None

    def poll():
        w = window()
        if "at_rest" not in seen:
            panels = w.lifetime.panels if w is not None else None
            if panels is not None and not panels.pending and not w.lifetime._services_pending:
                turns[0] -= 1  # some event-loop turns more: the old warm-up ran one turn after the panels
                if turns[0] == 0:
                    seen["at_rest"] = loaded()
                    seen["at_rest_elsewhere"] = [name for name in ELSEWHERE if name in sys.modules]
                    w.composer.edit.setFocus()
                    QTest.keyClicks(w.composer.edit, "H")  # a person starts typing
        elif "pygments.lexers.python" in sys.modules:
            seen["typed"] = loaded()
            print(json.dumps(seen), flush=True)
            os._exit(0)
        QTimer.singleShot(10, poll)

    turns = [20]
    QTimer.singleShot(10, poll)
    from nanobot_desktop.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_an_app_at_rest_has_not_loaded_markdown_and_typing_loads_it(tmp_path):
    config = write_fake_config(tmp_path / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), XDG_RUNTIME_DIR=str(runtime),
               XDG_CONFIG_HOME=str(tmp_path / ".config"), XDG_CACHE_HOME=str(tmp_path / ".cache"))
    result = subprocess.run([sys.executable, "-c", PROBE, "--config", str(config), "--workspace", str(tmp_path / "ws")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["at_rest"] == []
    assert seen["at_rest_elsewhere"] == []  # issue 17's empty-window budget: ~2 MB resident between them
    assert "markdown" in seen["typed"] and "pygments.lexers" in seen["typed"]


def test_the_first_keystroke_warms_up_rendering_at_idle(qtbot, open_window, fake_openai):
    window = open_window()
    qtbot.waitUntil(lambda: window.lifetime.panels is not None and not window.lifetime.panels.pending, timeout=WAIT_MS)
    assert not window.rendering_warm_up.started
    fake_openai.add_text("A **bold** answer:\n\n```python\nprint(1)\n```\n")
    window.composer.edit.setFocus()
    qtbot.keyClicks(window.composer.edit, "H")
    assert window.rendering_warm_up.started and not window.rendering_warm_up.done  # steps run at idle
    qtbot.waitUntil(lambda: window.rendering_warm_up.done, timeout=WAIT_MS)
    send(qtbot, window, "ello")
    wait_idle(qtbot, window)
    widget = window.chat_view.widget_for_row(window.chat.model.rowCount() - 1)
    qtbot.waitUntil(lambda: "print(1)" in widget.browser.toPlainText(), timeout=WAIT_MS)
    shown = widget.browser.toPlainText()
    assert "A bold answer:" in shown and "**" not in shown and "print(1)" in shown  # Markdown, rendered


def test_a_send_without_typing_warms_up_before_the_request(qtbot, open_window, fake_openai):
    window = open_window()
    qtbot.waitUntil(lambda: window.lifetime.panels is not None and not window.lifetime.panels.pending, timeout=WAIT_MS)
    fake_openai.add_text("Done.")
    window.send_message("Retry this", [])
    assert window.rendering_warm_up.done  # before the turn even started
    assert not fake_openai.requests  # the request had not gone out yet
    wait_idle(qtbot, window)
    assert [item.text for item in window.chat.model.items()] == ["Retry this", "Done."]


def test_the_warm_up_lays_out_and_paints_a_sample_reply_of_every_kind_of_block(qtbot, open_window):
    """The first streamed reply's first document edits found each heading size, bold, monospace and the
    table new to Qt (5-9 ms an edit against ~1.5 ms); the warm-up's last steps use them first."""
    from nanobot_desktop.gui.chat import live_document

    window = open_window()
    live_document._first_formats.clear()
    renderer = window.chat_view.renderer
    renderer._skeletons.clear()
    window.rendering_warm_up.finish_now()
    opening_tags = {tag.split(" ")[0].rstrip(">") for tag in live_document._first_formats}
    assert {"<h2", "<h3", "<p"} <= opening_tags, opening_tags  # lists and tables need no first format
    assert ("```", "python") in renderer._skeletons


def test_the_warm_up_paints_a_copy_button_and_leaves_no_widget_behind(qtbot, open_window, monkeypatch):
    """The first Copy button a streamed reply made took 2.5-3.4 ms to make, show and paint (its small font,
    its icon drawn at 14 px for the first time; 0.6-1.6 ms warmed); the warm-up makes and paints one, and
    the icon keeps that drawing."""
    from PySide6.QtWidgets import QApplication

    from nanobot_desktop.gui.common import icons

    window = open_window()
    drawn: list[tuple[int, int]] = []
    draw = icons._pixmap

    copy_drawing = icons._svg_text("copy").replace("currentColor", "")

    def noted(svg: bytes, size, scale: float):
        if re.sub("#[0-9a-f]{6}", "", svg.decode()) == copy_drawing:  # the copy icon, in any colour
            drawn.append((size.width(), size.height()))
        return draw(svg, size, scale)

    monkeypatch.setattr(icons, "_pixmap", noted)
    icons._icon.cache_clear()  # a fresh icon, as on a first start
    widgets_before = len(QApplication.allWidgets())
    window.rendering_warm_up.finish_now()
    assert (14, 14) in drawn
    qtbot.waitUntil(lambda: len(QApplication.allWidgets()) == widgets_before, timeout=WAIT_MS)
    drawn.clear()
    icons.icon("copy", window.palette()).pixmap(14, 14)  # what the first streamed button will paint
    assert drawn == []  # already drawn
