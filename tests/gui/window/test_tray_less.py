"""A desktop without a tray (offscreen has none): the first close asks whether to keep running.

The same with real processes, a real X server and `--toggle` from a second launch is in
test_instance_processes.py; here the two answers are driven in one process with the mouse.
"""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from nanobot_desktop.gui.shell.single_instance import InstanceServer, apply_instance_command, send_command, server_name
from nanobot_desktop.gui.window.tray_less import ASKED_KEY

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")  # offscreen: no window stacking


@pytest.fixture
def restore_quit_on_close():
    yield
    QApplication.setQuitOnLastWindowClosed(True)


def question(qtbot) -> QMessageBox:
    found: list[QMessageBox] = []

    def shown() -> bool:
        found[:] = [w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.objectName() == "keepRunningQuestion" and w.isVisible()]
        return bool(found)

    qtbot.waitUntil(shown, timeout=5000)
    return found[0]


def click(qtbot, box: QMessageBox, name: str) -> None:
    button = box.findChild(QPushButton, name)
    assert button is not None and button.isVisible()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_keep_running_hides_the_window_and_toggle_brings_it_back(qtbot, tray_env, restore_quit_on_close, tmp_path):
    engine, _bridge, window, tray = tray_env
    assert tray.available is False
    window.show()
    quits: list[bool] = []

    assert tray.handle_close(lambda: quits.append(True)) is True  # the app stays while it asks
    box = question(qtbot)
    assert "no tray" in box.text() and "--toggle" in box.informativeText()
    assert window.isVisible()  # nothing happens until the person answers
    click(qtbot, box, "keepRunningButton")

    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
    assert quits == [] and tray.running_in_background
    assert QApplication.quitOnLastWindowClosed() is False  # the hidden window does not end the app
    assert tray._settings.value(ASKED_KEY, False, type=bool) is True
    assert engine.app_settings.close_to_tray is True
    assert engine.app_settings.keep_running_without_tray is True

    # `nanobot-desktop --toggle` (or the menu entry's Show or Hide action) reaches the instance's server.
    server = InstanceServer(server_name(tmp_path / "config.json"))
    assert server.listen()
    server.command_received.connect(lambda command: apply_instance_command(window, command))
    try:
        assert send_command(server.name, "toggle") is True
        qtbot.waitUntil(window.isVisible, timeout=5000)
    finally:
        server.close()

    assert tray.handle_close(lambda: quits.append(True)) is True  # asked once: the second close just hides
    assert not window.isVisible() and quits == []
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def test_quit_quits_and_is_saved_where_settings_shows_it(qtbot, tray_env, restore_quit_on_close):
    engine, _bridge, window, tray = tray_env
    window.show()
    quits: list[bool] = []

    assert tray.handle_close(lambda: quits.append(True)) is True
    click(qtbot, question(qtbot), "quitButton")

    qtbot.waitUntil(lambda: quits == [True], timeout=5000)
    saved = json.loads((engine.config_path.parent / "desktop.json").read_text(encoding="utf-8"))
    assert saved["keepRunningWithoutTray"] is False
    assert "closeToTray" not in saved and engine.app_settings.close_to_tray is True  # a tray desktop keeps its choice
    assert tray.handle_close(lambda: quits.append(True)) is False  # from now on closing quits at once
    assert quits == [True]

    from nanobot_desktop.gui.settings.dialog import SettingsDialog

    dialog = SettingsDialog(engine)
    qtbot.addWidget(dialog)
    assert dialog.background_check.isChecked() is False and dialog.tray_check.isChecked() is True


def test_the_tray_less_answer_leaves_a_desktop_with_a_tray_alone(qtbot, tray_env, restore_quit_on_close):
    """The same desktop.json on a desktop with a tray (a laptop with KDE, say) still closes to the tray."""
    engine, _bridge, window, tray = tray_env
    engine.update_config({"app.keepRunningWithoutTray": False})  # Quit was answered on a tray-less desktop
    window.show()
    quits: list[bool] = []
    tray.available = True  # this desktop has a tray host
    assert tray.handle_close(lambda: quits.append(True)) is True
    assert not window.isVisible() and quits == []  # hidden to the tray, not quit
    tray.available = False  # and on the tray-less desktop the answer holds
    window.show()
    assert tray.handle_close(lambda: quits.append(True)) is False


def test_settings_says_there_is_no_tray_and_how_to_come_back(qtbot, tray_env):
    from nanobot_desktop.gui.settings.dialog import SettingsDialog

    engine, _bridge, _window, _tray = tray_env
    dialog = SettingsDialog(engine)
    qtbot.addWidget(dialog)
    text = dialog.tray_status.text()
    assert text.startswith("Not available on this desktop")
    assert "Show or Hide the Window" in text and "--toggle" in text
