"""The tray controller without a tray (offscreen), its pure rules, the log file, and autostart."""

from __future__ import annotations

import logging
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QMainWindow

from nanobot_desktop.engine.events import CronJobRan, HeartbeatRan, OutboundMessage
from nanobot_desktop.engine.background.heartbeat import TickRecord
from nanobot_desktop.gui.shell.autostart import autostart_file, default_command, is_start_at_login, set_start_at_login
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.shell.logging_setup import LOG_FILE_NAME, redact, setup_logging
from nanobot_desktop.gui.window.tray import (
    Notification, TrayController, notification_for, tooltip_text, tray_icon_path, tray_state,
)




# --- without a tray --------------------------------------------------------------------------------

OFFSCREEN_RAISE = pytest.mark.qt_log_ignore("This plugin does not support raise")  # no window stacking offscreen


@OFFSCREEN_RAISE
def test_offscreen_there_is_no_tray_and_the_window_behaves_normally(qtbot, tray_env):
    _engine, _bridge, window, tray = tray_env
    assert tray.available is False
    assert tray.icon is None
    assert tray.should_close_to_tray() is False  # closing the window quits, as without any tray
    assert tray.may_start_hidden() is False  # never start hidden when nothing could bring the window back
    assert QApplication.quitOnLastWindowClosed() is True
    assert tray.state == "idle"

    assert [a.text() for a in tray.menu.actions() if not a.isSeparator()] == [
        "Show window", "New chat", "Run heartbeat now", "Pause heartbeat", "Quit"]
    tray.actions["toggle_window"].trigger()
    assert window.isVisible()
    tray.update_menu_texts()
    assert tray.actions["toggle_window"].text() == "Hide window"
    tray.actions["toggle_window"].trigger()
    assert not window.isVisible()

    with qtbot.waitSignal(tray.new_chat_requested):
        tray.actions["new_chat"].trigger()
    assert window.isVisible()


def test_pause_action_pauses_the_heartbeat_and_shows_paused(qtbot, tray_env):
    engine, _bridge, _window, tray = tray_env
    with qtbot.waitSignal(tray.state_changed) as changed:
        tray.actions["heartbeat_pause"].trigger()
    assert changed.args == ["paused"]
    assert engine.heartbeat.paused
    assert tray.actions["heartbeat_pause"].text() == "Resume heartbeat"
    tray.actions["heartbeat_pause"].trigger()
    assert not engine.heartbeat.paused
    assert tray.state == "idle"
    assert tray.actions["heartbeat_pause"].text() == "Pause heartbeat"


def test_a_failure_shows_error_until_the_next_success_or_the_menu_is_opened(qtbot, tray_env):
    _engine, bridge, _window, tray = tray_env
    bridge.deliver(HeartbeatRan("heartbeat", decision="error", tasks="x", result=None, error="endpoint down"))
    assert tray.state == "error"
    bridge.deliver(HeartbeatRan("heartbeat", decision="skip", tasks="", result=None))
    assert tray.state == "idle"

    bridge.deliver(CronJobRan("cron:ab12", job_id="ab12", name="daily", status="error", result=None, error="boom"))
    assert tray.state == "error"
    tray.menu.aboutToShow.emit()  # the person looked
    assert tray.state == "idle"


@OFFSCREEN_RAISE
def test_notification_click_shows_the_window_and_asks_for_its_session(qtbot, tray_env):
    _engine, bridge, window, tray = tray_env
    bridge.deliver(CronJobRan("cron:ab12", job_id="ab12", name="daily", status="ok", result="All green."))
    assert tray.notifications_sent == [("Scheduled: daily", "All green.", "cron:ab12")]
    assert tray.messages_shown == 0  # no tray: decided and recorded, nothing shown
    with qtbot.waitSignal(tray.open_session_requested) as opened:
        tray.open_last_notification()
    assert opened.args == ["cron:ab12"]
    assert window.isVisible()


def test_no_notifications_when_they_are_turned_off(tray_env):
    engine, bridge, _window, tray = tray_env
    engine.update_config({"app.notifications": False})
    bridge.deliver(HeartbeatRan("heartbeat", decision="run", tasks="t", result="Done: sent the report."))
    assert tray.notifications_sent == []


def test_close_notice_is_shown_only_once_ever(qtbot, tray_env, tmp_path):
    engine, bridge, window, tray = tray_env
    assert tray.note_closed_to_tray() is True
    assert tray.note_closed_to_tray() is False
    again = TrayController(engine, bridge, window,
                           settings=QSettings(str(tmp_path / "tray.ini"), QSettings.Format.IniFormat))
    try:
        assert again.note_closed_to_tray() is False  # remembered in the settings file
    finally:
        again.shutdown()


def test_actions_passed_in_are_used_in_the_menu(qtbot, qloop, make_engine, tmp_path):
    engine = make_engine()
    bridge = EngineBridge(engine)
    window = QMainWindow()
    qtbot.addWidget(window)
    shared = QAction("New chat", window)
    tray = TrayController(engine, bridge, window, actions={"new_chat": shared},
                          settings=QSettings(str(tmp_path / "t.ini"), QSettings.Format.IniFormat))
    try:
        assert tray.actions["new_chat"] is shared
        assert shared in tray.menu.actions()
    finally:
        tray.shutdown()
        bridge.detach()


# --- pure rules ------------------------------------------------------------------------------------

@pytest.mark.parametrize("event, expected", [
    (HeartbeatRan("heartbeat", decision="skipped", tasks="", result=None), None),
    (HeartbeatRan("heartbeat", decision="skip", tasks="", result=None), None),
    (HeartbeatRan("heartbeat", decision="run", tasks="t", result=None), None),  # nothing to tell
    (HeartbeatRan("heartbeat", decision="run", tasks="t", result="  "), None),
    (HeartbeatRan("heartbeat", decision="run", tasks="t", result="Sent the\nreport."),
     Notification("Heartbeat", "Sent the report.", "heartbeat")),
    (HeartbeatRan("heartbeat", decision="error", tasks="", result=None, error="429 slow down"),
     Notification("Heartbeat failed", "429 slow down", "heartbeat", True)),
    (HeartbeatRan("heartbeat", decision="error", tasks="", result=None, error="cancelled (heartbeat stopped)"), None),
    (CronJobRan("cron:j1", job_id="j1", name="plants", status="ok", result=None), None),
    (CronJobRan("cron:j1", job_id="j1", name="plants", status="ok", result="Water them."),
     Notification("Scheduled: plants", "Water them.", "cron:j1")),
    (CronJobRan("cron:j1", job_id="j1", name="plants", status="error", result=None, error="timeout"),
     Notification("Scheduled task failed: plants", "timeout", "cron:j1", True)),
    (OutboundMessage("heartbeat", channel="cli", chat_id="direct", content="Reminder: stand up"),
     Notification("Heartbeat", "Reminder: stand up", "heartbeat")),
    (OutboundMessage("desktop:1", channel="cli", chat_id="direct", content="chat reply"), None),
])
def test_notification_only_when_there_is_something_to_tell(event, expected):
    assert notification_for(event) == expected


def test_long_notification_text_is_shortened():
    text = notification_for(HeartbeatRan("heartbeat", decision="run", tasks="t", result="word " * 200)).text
    assert len(text) == 240 and text.endswith("…")


def test_state_priority_and_icons_exist():
    assert tray_state(busy=True, failed=True, paused=True) == "running"
    assert tray_state(busy=False, failed=True, paused=True) == "error"
    assert tray_state(busy=False, failed=False, paused=True) == "paused"
    assert tray_state(busy=False, failed=False, paused=False) == "idle"
    for state in ("idle", "running", "error", "paused"):
        svg = tray_icon_path(state).read_text(encoding="utf-8")
        assert svg.startswith("<svg") and "viewBox" in svg
    with pytest.raises(ValueError, match="unknown tray state"):
        tray_icon_path("sleepy")


def _luminance(color: QColor) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.red()) + 0.7152 * channel(color.green()) + 0.0722 * channel(color.blue())


def _contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio (1 … 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _rendered_on(path: Path, background: QColor, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_RGB32)
    image.fill(background)
    painter = QPainter(image)
    QSvgRenderer(str(path)).render(painter)
    painter.end()
    return image


@pytest.mark.parametrize("state", ["idle", "running", "error", "paused", "waiting"])
@pytest.mark.parametrize("size", [22, 32])
def test_tray_icon_stands_out_on_light_and_dark_panels(qapp, state, size):
    """The icon does not follow the app's theme (the panel's colour is unknown): rendered on a white, a
    light grey, a dark grey and a black panel, its outline is seen all round and its face is solid."""
    path = tray_icon_path(state)
    for panel in ("#ffffff", "#dcdcdc", "#2d2d2d", "#000000"):
        background = QColor(panel)
        image = _rendered_on(path, background, size)
        pixels = [image.pixelColor(x, y) for y in range(size) for x in range(size)]
        clear = [pixel for pixel in pixels if _contrast(pixel, background) >= 3.0]
        assert len(clear) >= 0.20 * size * size, f"{state} on {panel}: only {len(clear)} pixels stand out"
        # Visible all round: the outermost pixels of the face's outline, left, right, top and bottom.
        xs = [i % size for i, pixel in enumerate(pixels) if _contrast(pixel, background) >= 3.0]
        ys = [i // size for i, pixel in enumerate(pixels) if _contrast(pixel, background) >= 3.0]
        assert min(xs) <= size * 0.2 and max(xs) >= size * 0.8 and min(ys) <= size * 0.2 and max(ys) >= size * 0.8, panel



def test_tooltip_text():
    started = datetime(2026, 11, 3, 14, 5)
    tick = TickRecord(started, "skip", "", None, None, 0.4)
    assert tooltip_text("idle", tick, started + timedelta(minutes=30), paused=False, enabled=True) == \
        "nanobot — idle · last heartbeat 14:05 (skip) · next 14:35"
    assert tooltip_text("paused", tick, None, paused=True, enabled=True) == \
        "nanobot — paused · last heartbeat 14:05 (skip) · heartbeat paused"
    assert tooltip_text("idle", None, None, paused=False, enabled=False) == "nanobot — idle · heartbeat off"


# --- the log file --------------------------------------------------------------------------------

def test_log_file_redacts_configured_keys_and_key_shaped_strings(make_engine):
    engine = make_engine()
    config = engine.config_path.read_text(encoding="utf-8").replace('"sk-test"', '"my-configured-secret-42"')
    engine.config_path.write_text(config, encoding="utf-8")
    folder = setup_logging(engine.config_path)
    try:
        assert folder == engine.config_path.parent / "logs"
        log = logging.getLogger("nanobot_desktop.test")
        log.warning("calling the endpoint with key %s", "my-configured-secret-42")
        log.warning("header Authorization: Bearer abcDEF123456ghi and sk-proj-AbCdEf0123456789xyz")
        log.warning('payload {"apiKey": "unconfigured-value-9"}')
        try:
            raise RuntimeError("bad key my-configured-secret-42")
        except RuntimeError:
            log.exception("request failed")
        for handler in logging.getLogger().handlers:
            handler.flush()
        text = (folder / LOG_FILE_NAME).read_text(encoding="utf-8")
    finally:
        _remove_file_handler()
    assert "my-configured-secret-42" not in text
    assert "abcDEF123456ghi" not in text
    assert "AbCdEf0123456789xyz" not in text
    assert "unconfigured-value-9" not in text
    assert "calling the endpoint with key [redacted]" in text
    assert "Bearer [redacted]" in text
    assert "RuntimeError: bad key [redacted]" in text  # the traceback is scrubbed too


def test_setup_logging_twice_keeps_one_handler(make_engine):
    engine = make_engine()
    try:
        setup_logging(engine.config_path)
        setup_logging(engine.config_path)
        ours = [h for h in logging.getLogger().handlers if getattr(h, "_nanobot_desktop_file_handler", False)]
        assert len(ours) == 1
    finally:
        _remove_file_handler()


def test_redact_leaves_ordinary_text_alone():
    assert redact("the task took 3 s; skip-list has 4 items", ["abc"]) == "the task took 3 s; skip-list has 4 items"


def _remove_file_handler() -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_nanobot_desktop_file_handler", False):
            root.removeHandler(handler)
            handler.close()


# --- start at login (Linux / XDG) -----------------------------------------------------------------

def test_start_at_login_writes_and_removes_the_xdg_autostart_entry(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    path = autostart_file("linux")
    assert path == Path.home() / ".config" / "autostart" / "nanobot-desktop.desktop"
    assert not is_start_at_login("linux")

    set_start_at_login(True, platform="linux")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("[Desktop Entry]\n")
    assert "\nExec=nanobot-desktop\n" in text and "\nType=Application\n" in text
    assert is_start_at_login("linux")

    set_start_at_login(False, platform="linux")
    assert not path.exists()
    assert not is_start_at_login("linux")
    set_start_at_login(False, platform="linux")  # already off: no error


def test_start_at_login_honours_xdg_config_home_and_quotes_the_command(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    set_start_at_login(True, command=["/opt/nano bot/nanobot-desktop", "--config", "/x/100%.json"], platform="linux")
    text = (tmp_path / "cfg" / "autostart" / "nanobot-desktop.desktop").read_text(encoding="utf-8")
    assert '\nExec="/opt/nano bot/nanobot-desktop" --config /x/100%%.json\n' in text


def test_an_autostart_entry_disabled_by_the_desktop_counts_as_off(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    set_start_at_login(True, platform="linux")
    path = autostart_file("linux")
    path.write_text(path.read_text(encoding="utf-8") + "Hidden=true\n", encoding="utf-8")
    assert not is_start_at_login("linux")


def test_a_packaged_bundle_starts_at_login_through_its_launcher_on_path(monkeypatch, tmp_path):
    """The .deb's /usr/bin/nanobot-desktop links to the bundle: the entry names the link, which
    upgrades keep; a bundle that nothing on PATH points to names its own executable."""
    bundle = tmp_path / "usr" / "lib" / "nanobot-desktop"
    bundle.mkdir(parents=True)
    executable = bundle / "nanobot-desktop"
    executable.write_text("#!/bin/sh\n", encoding="utf-8")
    executable.chmod(0o755)
    bin_dir = tmp_path / "usr" / "bin"
    bin_dir.mkdir()
    (bin_dir / "nanobot-desktop").symlink_to("../lib/nanobot-desktop/nanobot-desktop")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(executable))
    monkeypatch.setenv("PATH", str(bin_dir))
    assert default_command() == [str(bin_dir / "nanobot-desktop")]

    monkeypatch.setenv("PATH", str(tmp_path))  # the tarball's per-user install elsewhere, or none at all
    assert default_command() == [str(executable)]
    monkeypatch.delattr(sys, "frozen")
    assert default_command() == ["nanobot-desktop"]
