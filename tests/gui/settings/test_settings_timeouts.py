"""Settings → Agent: how long to wait for the model, saved to the config and used by the next call."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from nanobot_desktop.engine.config.paths import app_settings_path

from tests.gui.settings.test_settings import make_dialog, retype


def test_model_timeouts_are_saved_and_reach_the_provider(qtbot, make_engine):
    engine = make_engine()
    dialog = make_dialog(qtbot, engine)
    dialog.tabs.setCurrentIndex(1)
    assert dialog.first_byte_spin.value() == 45 and dialog.idle_spin.value() == 30  # the defaults
    retype(qtbot, dialog.first_byte_spin.lineEdit(), "20")
    retype(qtbot, dialog.idle_spin.lineEdit(), "12")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    on_disk = json.loads(app_settings_path(engine.config_path).read_text())  # desktop.json: the app's own
    assert on_disk["modelFirstByteTimeout"] == 20 and on_disk["modelIdleTimeout"] == 12
    assert "modelFirstByteTimeout" not in engine.config_path.read_text()  # config.json stays the CLI's
    provider = engine.provider()
    assert provider.first_byte_timeout_s == 20 and provider.idle_timeout_s == 12
