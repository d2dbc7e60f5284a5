"""Tool cards end to end (issue 15): a call waiting for the person says so, its duration leaves the
wait out, the answered approval folds to one line and unfolds again, and a Deny can say why — the
model reads the reason in the tool result of its next request to the (loopback fake) endpoint."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt

from nanobot_desktop.engine import ToolCallFinished
from nanobot_desktop.gui.chat.cards import ApprovalCardWidget
from nanobot_desktop.gui.chat.model import ApprovalCard, ToolCard
from nanobot_desktop.gui.chat.widgets import ToolCardWidget
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle

__all__ = ["open_window"]

LEFT = Qt.MouseButton.LeftButton


def _pending_call(qtbot, window) -> str:
    qtbot.waitUntil(lambda: bool(window.chat.pending_approvals(window.current_key)), timeout=WAIT_MS)
    return window.chat.pending_approvals(window.current_key)[0]


def test_a_card_waits_for_approval_then_runs_and_its_duration_leaves_the_wait_out(qtbot, open_window, fake_openai,
                                                                                  tmp_path):
    window = open_window()
    window.resize(1000, 700)
    finished: list[ToolCallFinished] = []
    window.bridge.engine_event.connect(lambda e: finished.append(e) if isinstance(e, ToolCallFinished) else None)
    fake_openai.add_tool_calls([("exec", {"command": "echo hi"})])
    fake_openai.add_text("It printed hi.")
    send(qtbot, window, "Run echo hi")
    call_id = _pending_call(qtbot, window)
    model = window.chat.model
    tool_row = model.row_of_call(call_id, "tool")
    tool_card = model.item(tool_row)
    assert isinstance(tool_card, ToolCard) and tool_card.status == "waiting"
    tool_widget = window.chat_view.widget_for_row(tool_row)
    assert isinstance(tool_widget, ToolCardWidget)
    assert tool_widget.duration_label.text() == "waiting for your approval"  # not "running…"
    statuses: list[str] = []
    model.dataChanged.connect(lambda top, _bottom, _roles: statuses.append(model.item(top.row()).status)
                              if top.row() == tool_row else None)

    qtbot.wait(400)  # the person takes their time (Qt's event loop keeps running)
    window.grab().save(str(tmp_path / "waiting-card.png"))
    card_widget = window.chat_view.widget_for_row(model.row_of_call(call_id, "approval"))
    clicked_at = time.monotonic()
    qtbot.mouseClick(card_widget.allow_once_button, LEFT)
    wait_idle(qtbot, window)
    done_at = time.monotonic()

    assert statuses[:2] == ["running", "ok"] and statuses[-1] == "ok"
    event = next(e for e in finished if e.call_id == call_id)
    assert event.waited_s >= 0.4  # the wait is reported apart …
    assert event.duration_s <= done_at - clicked_at  # … and the duration counts only what ran after the click
    assert tool_card.duration_s == event.duration_s
    assert tool_widget.duration_label.text().startswith("ok · ")


def test_an_answered_card_folds_to_one_line_and_unfolds(qtbot, open_window, fake_openai, tmp_path):
    window = open_window()
    window.resize(1000, 700)
    workspace = Path(window.engine.workspace.root)
    notes = workspace / "notes.md"
    notes.write_text("old line\n", encoding="utf-8")
    fake_openai.add_tool_calls([("write_file", {"path": str(notes), "content": "new line\n"})])
    fake_openai.add_text("Updated.")
    send(qtbot, window, "Update my notes")
    call_id = _pending_call(qtbot, window)
    row = window.chat.model.row_of_call(call_id, "approval")
    widget = window.chat_view.widget_for_row(row)
    assert isinstance(widget, ApprovalCardWidget)
    # The diff shows the change; the raw arguments (the same content again) wait behind a button.
    assert widget.diff_view is not None
    qtbot.waitUntil(widget.diff_view.isVisible, timeout=WAIT_MS)
    assert widget.arguments_view.isHidden() and widget.arguments_button is not None
    qtbot.mouseClick(widget.arguments_button, LEFT)
    assert widget.arguments_view.isVisible() and '"content": "new line\\n"' in widget.arguments_view.toPlainText()
    qtbot.mouseClick(widget.arguments_button, LEFT)
    assert widget.arguments_view.isHidden()

    qtbot.mouseClick(widget.allow_once_button, LEFT)
    wait_idle(qtbot, window)
    assert notes.read_text(encoding="utf-8") == "new line\n"
    card = window.chat.model.item(row)
    assert isinstance(card, ApprovalCard) and card.state == "allowed" and not card.expanded
    # The turn is over: its steps (the call and its answered card) fold behind one row; unfolded, as a person does.
    [steps] = window.chat_view.step_groups.headers()
    assert steps.text() == "1 step" and steps.isVisible() and not widget.isVisible()
    qtbot.mouseClick(steps, LEFT)
    assert widget.summary_row.isVisible() and widget.body.isHidden()
    assert widget.summary_label.full_text == f"Allowed once: write_file {notes}"
    assert widget.sizeHint().height() < 3 * widget.fontMetrics().height() + 30  # one line, not the whole card
    qtbot.wait(50)
    window.grab().save(str(tmp_path / "collapsed-card.png"))

    qtbot.mouseClick(widget.details_button, LEFT)
    assert card.expanded and widget.body.isVisible() and widget.diff_view.isVisible()
    assert widget.details_button.text() == "Hide details ▴"
    assert all(b.isHidden() for b in (widget.allow_once_button, widget.deny_button, widget.reason_edit))
    qtbot.mouseClick(widget.details_button, LEFT)
    assert not card.expanded and widget.body.isHidden()


def test_deny_with_a_reason_reaches_the_models_next_request(qtbot, open_window, fake_openai):
    window = open_window()
    workspace = Path(window.engine.workspace.root)
    notes = workspace / "notes.txt"
    notes.write_bytes(b"keep me\n")
    fake_openai.add_tool_calls([("write_file", {"path": str(notes), "content": "overwritten\n"})])
    fake_openai.add_text("Understood, I left your notes alone.")
    send(qtbot, window, "Overwrite my notes")
    call_id = _pending_call(qtbot, window)
    row = window.chat.model.row_of_call(call_id, "approval")
    widget = window.chat_view.widget_for_row(row)
    qtbot.keyClicks(widget.reason_edit, "those notes are  my diary")
    qtbot.mouseClick(widget.deny_button, LEFT)
    wait_idle(qtbot, window)

    assert notes.read_bytes() == b"keep me\n"
    tool_messages = [m for m in fake_openai.requests[-1]["messages"] if m.get("role") == "tool"]
    assert tool_messages[-1]["tool_call_id"] == call_id
    assert tool_messages[-1]["content"].startswith(
        "Error: the user denied running 'write_file' with these arguments and said: “those notes are my diary”.")
    saved = [m for m in session_lines(window) if m.get("role") == "tool"][-1]
    assert "“those notes are my diary”" in saved["content"]
    assert window.chat.model.item(window.chat.model.row_of_call(call_id, "tool")).status == "denied"
    assert widget.summary_label.full_text == f"Denied: write_file {notes} — “those notes are my diary”"


def test_deny_without_a_reason_says_only_that(qtbot, open_window, fake_openai):
    window = open_window()
    fake_openai.add_tool_calls([("exec", {"command": "rm -rf build"})])
    fake_openai.add_text("Fine.")
    send(qtbot, window, "Clean up")
    call_id = _pending_call(qtbot, window)
    widget = window.chat_view.widget_for_row(window.chat.model.row_of_call(call_id, "approval"))
    qtbot.mouseClick(widget.deny_button, LEFT)
    wait_idle(qtbot, window)
    tool_messages = [m for m in fake_openai.requests[-1]["messages"] if m.get("role") == "tool"]
    assert tool_messages[-1]["content"].startswith("Error: the user denied running 'exec' with these arguments.")
    assert "said" not in tool_messages[-1]["content"]
    assert widget.summary_label.full_text == "Denied: exec rm -rf build"
