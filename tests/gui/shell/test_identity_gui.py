"""The running app names itself by its own id, and its settings live under its own name."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QSettings

from nanobot_desktop.gui.shell.app import LEGACY_ORGANIZATION, create_application
from nanobot_desktop.identity import APP_ID, APP_NAME, FOLDER_NAME
from tests.gui.dbus_desktop import DesktopSession, missing


def test_the_application_carries_the_id_and_keeps_settings_under_its_own_name(qapp, tmp_path) -> None:
    # Qt remembers the settings folder of the first QSettings in the process: point it at this test's.
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "config"))
    earlier = QSettings(LEGACY_ORGANIZATION, APP_NAME)  # what versions before the id wrote
    earlier.setValue("window/geometry", b"saved-geometry")
    earlier.setValue("tray/closeNoticeShown", True)
    earlier.sync()

    app = create_application()

    assert app.desktopFileName() == APP_ID
    assert QCoreApplication.organizationName() == FOLDER_NAME
    settings = QSettings()
    assert Path(settings.fileName()) == tmp_path / "config" / FOLDER_NAME / f"{APP_NAME}.conf"
    assert settings.value("window/geometry") == b"saved-geometry"  # carried over once
    assert settings.value("tray/closeNoticeShown", False, type=bool) is True
    assert Path(settings.fileName()).is_file()

    settings.setValue("window/geometry", b"newer")
    settings.sync()
    create_application()  # a second start does not carry the old values over again
    assert QSettings().value("window/geometry") == b"newer"


def _name_owner(session, name: str) -> str:
    import subprocess

    done = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                           "org.freedesktop.DBus.NameHasOwner", f"string:{name}"],
                          env=session.env, capture_output=True, text=True, timeout=10)
    return done.stdout


@pytest.mark.xvfb
@pytest.mark.skipif(bool(missing()), reason=f"needs {', '.join(missing())} (dev.py test installs them)")
def test_notifications_take_the_application_id_as_their_name_on_the_session_bus(qtbot, qloop, tmp_path, monkeypatch):
    """The desktop tells which app sends a notification by the D-Bus name and the desktop-entry hint:
    both are the application id (never upstream's)."""
    import asyncio

    from nanobot_desktop.gui.window.dbus_notifier import DBusNotifier

    session = DesktopSession(tmp_path)
    try:
        session.start()
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", session.env["DBUS_SESSION_BUS_ADDRESS"])
        assert "boolean false" in _name_owner(session, APP_ID)
        notifier = DBusNotifier()
        started = asyncio.ensure_future(notifier.start())
        qtbot.waitUntil(started.done, timeout=15_000)
        assert started.result() is True
        assert "boolean true" in _name_owner(session, APP_ID)
        sent = asyncio.ensure_future(notifier.notify("Heartbeat", "done"))
        qtbot.waitUntil(sent.done, timeout=15_000)
        qtbot.waitUntil(lambda: bool(session.notifications()), timeout=10_000)
        assert f'string "{APP_ID}"' in session.notifications()[-1][1]  # the desktop-entry hint
        stopped = asyncio.ensure_future(notifier.stop())
        qtbot.waitUntil(stopped.done, timeout=15_000)
        qtbot.waitUntil(lambda: "boolean false" in _name_owner(session, APP_ID), timeout=10_000)
    finally:
        session.stop()
