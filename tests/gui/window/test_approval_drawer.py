"""An approval that needs the drawer opens it (issue 26): a file edit whose diff is longer than the card
shows opens the inspector at that call; answering closes a drawer that was closed before, and leaves
open one the person had open. A short edit does not open it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from nanobot_desktop.gui.inspector.panel import InspectorPanel
from nanobot_desktop.gui.window.approval_drawer import CARD_DIFF_LINES
from tests.gui.chat.test_tool_cards import _pending_call
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]

LEFT = Qt.MouseButton.LeftButton


def answer(qtbot, window, call_id: str) -> None:
    row = window.chat.model.row_of_call(call_id, "approval")
    qtbot.mouseClick(window.chat_view.widget_for_row(row).allow_once_button, LEFT)
    wait_idle(qtbot, window)


def long_edit(fake_openai, path: Path) -> None:
    content = "".join(f"line {n} changed\n" for n in range(CARD_DIFF_LINES + 10))
    fake_openai.add_tool_calls([("write_file", {"path": str(path), "content": content})])
    fake_openai.add_text("Rewritten.")


def test_a_long_diff_opens_the_drawer_at_its_call_and_answering_closes_it_back(qtbot, open_window, fake_openai):
    window = open_window()
    window.resize(1280, 800)
    notes = Path(window.engine.workspace.root) / "notes.md"
    notes.write_text("old\n", encoding="utf-8")
    assert not window.docking.drawer_open()
    long_edit(fake_openai, notes)
    send(qtbot, window, "Rewrite my notes")
    call_id = _pending_call(qtbot, window)
    qtbot.waitUntil(window.docking.drawer_open, timeout=WAIT_MS)
    inspector = window.panel("inspector")
    assert isinstance(inspector, InspectorPanel)
    assert window.docks["inspectorDock"].isVisible()
    assert inspector.show_call(call_id)  # the call is there, with its whole diff
    answer(qtbot, window, call_id)
    qtbot.waitUntil(lambda: not window.docking.drawer_open(), timeout=WAIT_MS)  # closed back, as it was
    assert notes.read_text(encoding="utf-8").startswith("line 0 changed")

    # the drawer open already (the person opened it): answering leaves it open
    window.docking.toggle_drawer()
    assert window.docking.drawer_open()
    long_edit(fake_openai, notes)
    send(qtbot, window, "Once more")
    call_id = _pending_call(qtbot, window)
    answer(qtbot, window, call_id)
    assert window.docking.drawer_open()


def test_a_short_edit_is_answered_on_its_card_alone(qtbot, open_window, fake_openai):
    window = open_window()
    notes = Path(window.engine.workspace.root) / "notes.md"
    fake_openai.add_tool_calls([("write_file", {"path": str(notes), "content": "one line\n"})])
    fake_openai.add_text("Written.")
    send(qtbot, window, "Write a note")
    call_id = _pending_call(qtbot, window)
    assert not window.docking.drawer_open()
    answer(qtbot, window, call_id)
    assert not window.docking.drawer_open()
