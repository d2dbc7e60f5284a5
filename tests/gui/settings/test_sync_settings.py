"""Settings → Heartbeat says which machine of a shared workspace runs the background work, and changes it."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from nanobot_desktop.engine.sync.machines import Machines
from tests.gui.window_fixtures import open_window

__all__ = ["open_window"]  # the fixture


def test_the_person_chooses_which_machine_runs_the_heartbeat(qtbot, open_window, make_engine):
    engine = make_engine()
    root = engine.workspace.root
    (root / ".stfolder").mkdir()  # a Syncthing folder
    desktop = Machines(root, machine_id="f" * 32, name="desktop")
    desktop.beat()
    window = open_window(engine)
    dialog = window.commands.open_settings()
    combo = dialog.runner_combo
    labels = [combo.itemText(i) for i in range(combo.count())]
    assert labels[0].startswith("Automatically") and "desktop" in labels
    assert any(label.startswith("This machine (") for label in labels)
    combo.setCurrentIndex(labels.index("desktop"))
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert json.loads((root / ".nanobot-desktop" / "background.json").read_text()) == {"machine": "f" * 32}
    owner = engine.cron.defer_to() if engine.cron.defer_to else None
    assert owner is not None and owner.startswith("desktop (seen")


def test_an_unshared_workspace_shows_no_machine_choice(qtbot, open_window, make_engine):
    window = open_window(make_engine())
    dialog = window.commands.open_settings()
    assert dialog.findChild(type(dialog.theme_combo), "backgroundMachine") is None
    dialog.reject()


def test_the_pages_of_the_machine_that_runs_the_work_say_so(qtbot, open_window, make_engine):
    engine = make_engine()
    root = engine.workspace.root
    (root / ".stfolder").mkdir()
    Machines(root, machine_id="f" * 32, name="desktop").beat()  # a larger id: this machine runs the work
    window = open_window(engine, start_services=True)
    qtbot.waitUntil(lambda: engine.runs_for_others() == ["desktop"])
    window.docking.show_page("cron_view")
    qtbot.waitUntil(lambda: window.panel("cron_view") is not None)
    window.panel("cron_view").refresh()
    assert window.panel("cron_view").banner.text() == "This machine runs these jobs for the workspace it shares with desktop."
    assert window.panel("cron_view").banner.isVisibleTo(window.panel("cron_view"))
