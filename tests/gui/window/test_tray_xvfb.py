"""The real tray: a subprocess on Xvfb with `trayer` as the tray host, where a tray icon can exist.

Offscreen (every other test) has no system tray at all, so this is the one place the icon, its state
changes and `showMessage` are exercised for real. The fake endpoint runs in this process; the
subprocess reaches it through the config file's apiBase. Xvfb picks a free display itself
(`-displayfd`), so parallel runs never collide, and both X processes are always cleaned up.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.fake_openai import text_reply, tool_calls_reply
from tests.gui.tray_app_support import REPO, prepare_app
from tests.gui.xvfb_support import start_tray_host, start_xvfb, stop_process

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(shutil.which("Xvfb") is None or shutil.which("trayer") is None,
                       reason="needs the Xvfb and trayer binaries (apt-get install xvfb trayer) for a real tray"),
]

REPLY = "Inbox checked: one new mail from the team."

SCRIPT = '''
    config_path, settings_path = sys.argv[1], sys.argv[2]
    app = QApplication([])
    deadline = time.monotonic() + 15
    while not QSystemTrayIcon.isSystemTrayAvailable() and time.monotonic() < deadline:  # trayer starting
        app.processEvents()
        time.sleep(0.05)
    loop = QtAsyncioLoop(app)
    asyncio.set_event_loop(loop)

    async def main():
        engine, bridge, window, tray = open_tray(config_path, settings_path)
        states = [tray.state]
        tray.state_changed.connect(states.append)
        shown_after_start = tray.icon.isVisible() if tray.icon else False
        await wait_for(lambda: tray.icon is not None and tray.icon.geometry().width() > 0, 5)
        tray.actions["heartbeat_run"].trigger()
        finished = await wait_for(lambda: engine.heartbeat.last_tick is not None, 15)
        idle_again = await wait_for(lambda: tray.state == "idle", 5)
        tick = engine.heartbeat.last_tick
        geometry = tray.icon.geometry() if tray.icon else None
        result = {
            "available": tray.available,
            "icon_visible": shown_after_start,
            "geometry": [geometry.x(), geometry.y(), geometry.width(), geometry.height()] if geometry else None,
            "finished": finished,
            "idle_again": idle_again,
            "decision": tick.decision if tick else None,
            "states": states,
            "messages_shown": tray.messages_shown,
            "notifications": tray.notifications_sent,
            "tooltip": tray.icon.toolTip() if tray.icon else "",
            "quit_on_last_window_closed": QApplication.quitOnLastWindowClosed(),
            "close_to_tray": tray.should_close_to_tray(),
        }
        tray.shutdown()
        bridge.detach()
        await engine.shutdown()
        print("RESULT " + json.dumps(result), flush=True)

    with loop:
        loop.run_until_complete(main())
'''


def test_tray_icon_shows_running_during_a_heartbeat_and_notifies(fake_openai, tmp_path):
    def route(body):
        names = [tool["function"]["name"] for tool in body.get("tools") or []]
        if names == ["heartbeat"]:
            return tool_calls_reply([("heartbeat", {"action": "run", "tasks": "Check the inbox"})])
        return text_reply(REPLY)

    fake_openai.respond_with(route)
    home, config_path, script = prepare_app(tmp_path, fake_openai.base_url, "## Active Tasks\n\n- Check the inbox\n",
                                            SCRIPT, "tray_script.py")

    xvfb = trayer = None
    try:
        xvfb, display = start_xvfb()
        env = {k: v for k, v in os.environ.items() if not k.startswith("NANOBOT_")}
        env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(home), PYTHONPATH=str(REPO))
        trayer = start_tray_host(env, display, tmp_path / "trayer.log")
        run = subprocess.run([sys.executable, str(script), str(config_path), str(tmp_path / "tray.ini")],
                             env=env, cwd=REPO, capture_output=True, text=True, timeout=90)
    finally:
        stop_process(trayer)
        stop_process(xvfb)

    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and lines, f"script failed ({run.returncode}):\n{run.stdout}\n{run.stderr[-3000:]}"
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["available"] is True
    assert result["icon_visible"] is True
    assert result["geometry"][2] > 0 and result["geometry"][3] > 0  # embedded in trayer
    assert result["finished"] and result["decision"] == "run"
    assert result["states"][0] == "idle" and "running" in result["states"]
    assert result["idle_again"] and result["states"][-1] == "idle"
    assert result["messages_shown"] == 1
    assert result["notifications"] == [["Heartbeat", REPLY, "heartbeat"]]
    assert result["tooltip"].startswith("nanobot — idle · last heartbeat ") and "(ran)" in result["tooltip"]
    assert result["quit_on_last_window_closed"] is False
    assert result["close_to_tray"] is True
