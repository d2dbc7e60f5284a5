import json, shutil, os
from pathlib import Path
from nanobot_desktop.engine.runtime import Engine
from tests.gui.window_fixtures import open_window  # noqa: F401

def test_shot(qtbot, qloop, open_window, tmp_path):
    home = Path(os.environ["HOME"])
    shutil.copytree("/tmp/l03/home/.nanobot", home / ".nanobot")
    ws = home / ".nanobot" / "workspace"
    for marker in (home / ".nanobot" / "sessions").glob("*/.workspace"):
        marker.write_text(f"{ws}\n")
    (ws / "memory" / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in [
        {"cursor": 1, "timestamp": "2026-11-20 09:12", "content": "The user planned a vegetable garden: tomatoes, beans and basil along the south fence."},
        {"cursor": 2, "timestamp": "2026-11-22 18:40", "content": "Fixed the bicycle brakes together; the user wants a reminder to oil the chain monthly."},
        {"cursor": 3, "timestamp": "2026-11-24 08:05", "content": "Discussed switching the agent to nanobot 0.3; sessions now live beside the config."}]))
    engine = Engine.open(home / ".nanobot" / "config.json")
    window = open_window(engine)
    window.resize(1400, 860)
    qtbot.waitUntil(lambda: window.sessions_panel.model.rowCount() > 0 if hasattr(window.sessions_panel, "model") else True, timeout=5000)
    qtbot.wait(800)
    window.grab().save("/tmp/shots/v03_main.png")
    window.actions_for_docks = None
    from nanobot_desktop.gui.workspace.memory_view import MemoryView
    from nanobot_desktop.gui.common.bridge import EngineBridge
    view = MemoryView(engine, EngineBridge(engine))
    qtbot.addWidget(view); view.resize(1300, 650); view.show()
    qtbot.waitUntil(lambda: view.history_search.model.rowCount() == 3 and view.versions_model.rowCount() >= 1)
    view.versions_table.selectRow(0)
    qtbot.wait(500)
    view.grab().save("/tmp/shots/v03_memory.png")
    from nanobot_desktop.gui.settings.dialog import SettingsDialog
    d = SettingsDialog(engine); qtbot.addWidget(d); d.open(); d.tabs.setCurrentIndex(d.tabs.count()-1); qtbot.wait(300)
    d.grab().save("/tmp/shots/v03_settings.png")
    view.shutdown()
