"""Start-up order (SPEC §5, issue 14): the window's frame paints before the engine exists.

`nanobot-desktop` is started in a fresh process exactly as a person starts it (`cli.run`), with an
event filter on the main window (installed as it is shown) that, at its first paint, lists what is
imported by then and exits. The frame must be on screen before asyncio, qasync, pydantic, openai
or any engine module is loaded; the engine then arrives into that same window.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.fake_openai import write_fake_config

REPO = Path(__file__).resolve().parents[3]

PROBE = textwrap.dedent("""
    import gc, json, os, sys
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QMainWindow, QWidget

    class FirstPaint(QObject):
        def eventFilter(self, watched, event):
            if event.type() == QEvent.Type.Paint:
                window = watched
                print(json.dumps({"modules": sorted(sys.modules), "title": window.windowTitle(),
                                  "docks": sorted(d.objectName() for d in window.findChildren(QWidget)
                                                  if type(d).__name__ == "QDockWidget"),
                                  "menus": [a.text() for a in window.menuBar().actions()],
                                  "window_lightness": window.palette().color(window.backgroundRole()).lightness(),
                                  "text_lightness": window.palette().color(window.foregroundRole()).lightness(),
                                  "collecting": gc.isenabled(),
                                  "qt_types": sorted(name for module in ("QtCore", "QtGui", "QtWidgets")
                                                     for name in vars(sys.modules["PySide6." + module]))}),
                      flush=True)
                if "--after-paint" not in sys.argv:
                    os._exit(0)
                window.removeEventFilter(self)
                QTimer.singleShot(0, after_paint)
            return False

    def after_paint(turns=[0]):  # the start goes on past the paint: is the collector running again?
        turns[0] += 1
        if not gc.isenabled() and turns[0] < 500:  # not yet: look again at the next turn of the event loop
            QTimer.singleShot(1, after_paint)
            return
        print(json.dumps({"collecting": gc.isenabled(), "frozen": gc.get_freeze_count()}), flush=True)
        if "--after-open" in sys.argv:
            QTimer.singleShot(1, after_open)
            return
        os._exit(0)

    def after_open(turns=[0]):  # the engine opened into the frame: what it made is frozen too
        from PySide6.QtWidgets import QApplication
        turns[0] += 1
        opened = [w for w in QApplication.topLevelWidgets() if getattr(w, "engine", None) is not None]
        if not opened and turns[0] < 5000:
            QTimer.singleShot(1, after_open)
            return
        QTimer.singleShot(0, lambda: report_open(bool(opened)))

    def report_open(opened):
        from PySide6.QtWidgets import QApplication
        engine_class = type(next(w for w in QApplication.topLevelWidgets() if getattr(w, "engine", None)).engine)
        walked = {id(obj) for obj in gc.get_objects()}
        print(json.dumps({"opened": opened, "frozen": gc.get_freeze_count(),
                          "engine_class_walked": id(engine_class) in walked}), flush=True)
        os._exit(0)

    hook = FirstPaint()
    show = QMainWindow.show

    def show_watched(window):  # a filter on the window alone: an application-wide one would also see
        window.installEventFilter(hook)  # objects the app never hands to Python (its QStyle) and wrap them
        show(window)

    QMainWindow.show = show_watched
    from nanobot_desktop.cli import run
    sys.exit(run([argument for argument in sys.argv[1:] if argument not in ("--after-paint", "--after-open")]))
""")


def _first_paint(tmp_path: Path, config: Path, *, after_paint: bool = False, after_open: bool = False) -> dict:
    """Start the app as a person does and report what its first paint showed (see PROBE), or with
    `after_paint` the collector's state once the start has gone on past the paint, or with
    `after_open` once the engine has opened into the window."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), XDG_RUNTIME_DIR=str(runtime),
               XDG_CONFIG_HOME=str(tmp_path / ".config"))
    result = subprocess.run([sys.executable, "-c", PROBE, "--config", str(config), "--workspace", str(tmp_path / "ws"),
                             *(["--after-paint"] if after_paint or after_open else []),
                             *(["--after-open"] if after_open else [])], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    painted: dict = json.loads(result.stdout.strip().splitlines()[-1])
    return painted


# The engine modules the start may load before the first paint: the public surface and the settings
# paths, to read the saved theme from desktop.json (json only; pydantic stays out, checked below).
EARLY_ENGINE_MODULES = {"nanobot_desktop.engine", "nanobot_desktop.engine.surface", "nanobot_desktop.engine.config",
                        "nanobot_desktop.engine.config.paths",
                        "nanobot_desktop.engine.config.peek"}


def test_the_frame_paints_before_asyncio_the_engine_and_its_config_models_are_imported(tmp_path):
    config = write_fake_config(tmp_path / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws")
    painted = _first_paint(tmp_path, config)
    modules = painted["modules"]
    loaded_too_early = [name for name in modules
                        if name.split(".")[0] in ("asyncio", "qasync", "pydantic", "openai", "hashlib")  # hashlib: OpenSSL's start, 6-8 ms
                        or (name.startswith("nanobot_desktop.engine") and name not in EARLY_ENGINE_MODULES)
                        or name.startswith("nanobot_desktop.gui.chat")]
    assert loaded_too_early == []
    assert "nanobot_desktop.gui.window.main_window" in modules  # the real window, not a stand-in
    # What was painted is the real window's frame: every dock in its place, the menus.
    assert "sessionsDock" in painted["docks"] and "inspectorDock" in painted["docks"]
    assert len(painted["menus"]) >= 4
    assert painted["title"].startswith("nanobot")
    assert painted["collecting"] is False  # the garbage collector is held off until the paint (start_up_collector.py)
    # PySide creates a class's Python type (and its enums) on first use; these two cost ~6 ms and the
    # frame needs neither (its menus show no icons; Fusion is chosen when the QApplication is made).
    assert "QMainWindow" in painted["qt_types"]
    assert "QStyle" not in painted["qt_types"] and "QIcon" not in painted["qt_types"]


def test_the_collector_runs_again_once_the_frame_has_painted(tmp_path):
    config = write_fake_config(tmp_path / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws")
    after = _first_paint(tmp_path, config, after_paint=True)
    assert after["collecting"] is True and after["frozen"] > 10_000  # start-up's objects: frozen, not walked again


def test_what_the_engine_brings_into_the_window_is_frozen_as_well(tmp_path):
    """The window, the engine and their imports come after the paint and live as long as the process:
    frozen too, so that no full collection walks them again while a reply streams (start_up_collector.settle)."""
    config = write_fake_config(tmp_path / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws")
    at_paint = _first_paint(tmp_path, config, after_paint=True)
    opened = _first_paint(tmp_path, config, after_open=True)
    assert opened["opened"] is True
    assert opened["frozen"] > at_paint["frozen"] + 10_000
    assert opened["engine_class_walked"] is False  # imported after the paint (see the test above)


def test_the_saved_theme_is_applied_before_the_first_paint(tmp_path):
    """Issue 15: the theme saved in Settings is the one the window first paints in, at every start."""
    from nanobot_desktop.engine import patch_settings

    config = write_fake_config(tmp_path / ".nanobot" / "config.json", "http://127.0.0.1:9/v1", tmp_path / "ws")
    patch_settings(config, {"app.theme": "dark"})  # what Settings saves
    dark = _first_paint(tmp_path, config)
    assert dark["window_lightness"] < 100 and dark["text_lightness"] > 180, dark

    patch_settings(config, {"app.theme": "light"})
    light = _first_paint(tmp_path, config)
    assert light["window_lightness"] > 180 and light["text_lightness"] < 100, light
    assert json.loads((config.parent / "desktop.json").read_text(encoding="utf-8"))["theme"] == "light"
