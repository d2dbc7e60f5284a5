"""Help → Check for updates and the daily check, in a real window against a signed channel on 127.0.0.1.

The channel is a tufup repository made with keys in the test's temporary folder (tests/update_support.py),
named to the app through NANOBOT_DESKTOP_UPDATE_CHANNEL. This copy runs from a git checkout, so a
newer version is only announced with how to get it; the bundle's download and switch are covered
end to end by tests/test_updates.py.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from packaging.version import Version
from PySide6.QtCore import QPoint, Qt

from nanobot_desktop import __version__
from nanobot_desktop.updates.channel import CHANNEL_ENV
from tests.gui.window_fixtures import WAIT_MS, open_window
from tests.update_support import make_bundle, update_repo, write_channel

__all__ = ["open_window"]

NEXT = f"{Version(__version__).major}.{Version(__version__).minor}.{Version(__version__).micro + 1}"


@pytest.fixture
def channel(tmp_path: Path, update_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The next version published on the loopback server; the app pointed at that channel."""
    url, served = update_server
    keys = tmp_path / "keys"
    update_repo.open_repository(served, keys)
    folder = write_channel(tmp_path / "channel", url, served / "metadata" / "root.json")
    update_repo.publish_bundle(served, keys, make_bundle(tmp_path / "build" / "nanobot-desktop", NEXT, folder), NEXT)
    monkeypatch.setenv(CHANNEL_ENV, str(folder))
    return folder


def _help_action(window, name: str):
    """The Help menu's entry, as the person finds it there."""
    help_menu = window.menus["help"]
    matches = [action for action in help_menu.actions() if action is getattr(window.actions, name)]
    assert len(matches) == 1 and matches[0].isEnabled()
    return matches[0]


def test_check_for_updates_says_a_new_version_exists_and_how_to_get_it(qtbot, open_window, channel):
    window = open_window()
    _help_action(window, "check_updates").trigger()
    qtbot.waitUntil(lambda: window.updates.box is not None, timeout=WAIT_MS * 3)
    box = window.updates.box
    assert box.isVisible()
    assert box.text() == f"Version {NEXT} is available (this is {__version__}). Get it with: git pull in the " \
                         "checkout, then python3 dev.py"
    box.accept()
    qtbot.waitUntil(lambda: window.updates.box is None, timeout=WAIT_MS)


def test_no_server_is_one_sentence_and_nothing_changes(qtbot, open_window, tmp_path, monkeypatch, channel):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    offline = write_channel(tmp_path / "offline", f"http://127.0.0.1:{port}", channel / "root.json")
    monkeypatch.setenv(CHANNEL_ENV, str(offline))
    window = open_window()
    _help_action(window, "check_updates").trigger()
    qtbot.waitUntil(lambda: window.updates.box is not None, timeout=WAIT_MS * 3)
    assert window.updates.box.text() == (f"Could not reach the update server (127.0.0.1:{port}: connection refused); "
                                         "nothing was changed.")


def test_the_daily_check_is_off_until_turned_on_then_runs_once_a_day(qtbot, open_window, channel):
    window = open_window()
    assert window.engine.app_settings.check_for_updates is False
    assert window.updates.check_if_due() is False  # off: no network at all
    window.engine.update_config({"app.checkForUpdates": True})
    with qtbot.waitSignal(window.updates.finished, timeout=WAIT_MS * 3) as done:
        assert window.updates.check_if_due() is True
    assert done.args[0].new == NEXT
    qtbot.waitUntil(lambda: window.notice_bar.isVisible(), timeout=WAIT_MS)
    assert window.notice_bar.text().startswith(f"Version {NEXT} is available")
    assert window.updates.box is None  # the daily check does not interrupt with a box
    assert window.updates.check_if_due() is False  # the next one a day later


def test_roll_back_on_a_checkout_says_to_use_its_own_tool(qtbot, open_window):
    window = open_window()
    _help_action(window, "roll_back").trigger()
    qtbot.waitUntil(lambda: window.updates.box is not None, timeout=WAIT_MS)
    assert window.updates.box.text() == "This copy was installed with git; go back to an older version with that tool."


def test_settings_turns_the_daily_check_on_in_desktop_json(qtbot, open_window):
    import json

    from nanobot_desktop.gui.settings.dialog import SettingsDialog

    window = open_window()
    dialog = SettingsDialog(window.engine)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    assert dialog.updates_check.isChecked() is False  # off until the person turns it on
    dialog.tabs.setCurrentIndex(dialog.tabs.indexOf(dialog.updates_check.parentWidget()))
    qtbot.waitUntil(dialog.updates_check.isVisible, timeout=WAIT_MS)
    qtbot.mouseClick(dialog.updates_check, Qt.MouseButton.LeftButton,
                     pos=dialog.updates_check.rect().topLeft() + QPoint(8, dialog.updates_check.height() // 2))
    assert dialog.updates_check.isChecked() is True
    assert dialog.save() is True
    saved = json.loads((window.engine.config_path.parent / "desktop.json").read_text(encoding="utf-8"))
    assert saved["checkForUpdates"] is True and window.engine.app_settings.check_for_updates is True
