"""The running app names itself by its own id, and its settings live under its own name."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings

from nanobot_desktop.gui.shell.app import LEGACY_ORGANIZATION, create_application
from nanobot_desktop.identity import APP_ID, APP_NAME, FOLDER_NAME


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
