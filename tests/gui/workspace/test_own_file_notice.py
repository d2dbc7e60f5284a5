"""The engine's notices reach the window's notice bar (issue 28): a workspace file linked out of the
workspace is named there after a turn, and a refused desktop.json setting from the start."""

from __future__ import annotations

import json

from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]  # the fixture


def test_a_memory_file_linked_out_of_the_workspace_is_named_in_the_notice_bar(qtbot, open_window, make_engine,
                                                                            fake_openai):
    engine = make_engine()
    memory = engine.workspace.root / "memory" / "MEMORY.md"
    memory.unlink()
    memory.symlink_to(engine.config_path)
    window = open_window(engine)
    fake_openai.add_text("hello")
    send(qtbot, window, "hi")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: "MEMORY.md was not read" in window.notice_bar.text(), timeout=WAIT_MS)
    assert str(engine.config_path.resolve()) in window.notice_bar.text()
    assert "sk-test" not in json.dumps(fake_openai.requests[-1]["messages"])


def test_a_refused_exec_allow_from_desktop_json_is_told_when_the_window_opens(qtbot, open_window, make_engine):
    first = make_engine(restrict_to_workspace=False)
    first.config_path.with_name("desktop.json").write_text(json.dumps({"toolApproval": {"exec": "allow"}}))
    window = open_window(make_engine(restrict_to_workspace=False))
    assert "exec to allow, but commands are not sandboxed" in window.notice_bar.text()
