"""What the real-desktop tray tests (test_tray_xvfb, test_notifications_dbus) share: the app run as a
subprocess with the real tray controller, engine and qasync loop, against the loopback fake endpoint.

`APP_PRELUDE` starts each test's script: imports, `wait_for` (polls a condition on the running loop)
and `open_tray` (engine, bridge, window and tray as the app makes them). `prepare_app` writes the
config on the fake endpoint, the workspace's HEARTBEAT.md and the script into the test's tmp_path.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import write_test_config

REPO = Path(__file__).resolve().parents[2]

APP_PRELUDE = textwrap.dedent('''
    import asyncio, json, sys, time
    from nanobot_desktop.gui.common.qt_asyncio import QtAsyncioLoop
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QSystemTrayIcon
    from nanobot_desktop.engine.runtime import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge
    from nanobot_desktop.gui.window.tray import TrayController

    async def wait_for(condition, timeout):
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                return False
            await asyncio.sleep(0.02)
        return True

    def open_tray(config_path, settings_path):
        """(engine, bridge, window, tray): the engine on the config, the real tray controller."""
        engine = Engine.open(config_path)
        bridge = EngineBridge(engine)
        window = QMainWindow()
        window.setCentralWidget(QLabel("nanobot"))
        tray = TrayController(engine, bridge, window, settings=QSettings(settings_path, QSettings.Format.IniFormat))
        return engine, bridge, window, tray
''')


def prepare_app(tmp_path: Path, base_url: str, heartbeat: str, script: str, script_name: str) -> tuple[Path, Path, Path]:
    """(home, config path, script path): a HOME whose config talks to `base_url`, a workspace whose
    HEARTBEAT.md holds `heartbeat`, and the app's script (`APP_PRELUDE` + `script`)."""
    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    config_path = write_test_config(home / ".nanobot" / "config.json", base_url, workspace)
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "HEARTBEAT.md").write_text(heartbeat, encoding="utf-8")
    path = tmp_path / script_name
    path.write_text(APP_PRELUDE + textwrap.dedent(script), encoding="utf-8")
    return home, config_path, path
