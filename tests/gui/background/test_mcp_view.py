"""The MCP panel driven as a person would: add a server, see it ready with its tools, run a turn whose
approval card names the MCP tool, import pasted JSON, switch a server off, set a tool's policy."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from nanobot_desktop.engine.config import app_settings_path
from nanobot_desktop.gui.background.mcp_dialogs import McpImportDialog, McpServerDialog
from nanobot_desktop.gui.chat.model import ApprovalCard
from nanobot_desktop.gui.inspector.model import NAME_COLUMN
from tests.gui.window_fixtures import WAIT_MS, open_window, send, wait_idle

__all__ = ["open_window"]  # a fixture: imported so pytest finds it
from tests.mcp_servers.support import SDK_SERVER, left_processes

SLOW_MS = 60_000  # starting a Python server process on a busy 2-core machine


@pytest.fixture
def pid_dir(tmp_path: Path):
    folder = tmp_path / "pids"
    yield folder
    assert left_processes(folder) == []  # torn down after the window (and its engine) has quit


def open_mcp_panel(qtbot, window):
    """Ctrl+8 shows the MCP dock (View menu); waits until its panel is built."""
    qtbot.waitUntil(lambda: window.panel("mcp_view") is not None, timeout=WAIT_MS)
    window.actions.dock_toggles["mcpPage"].trigger()
    view = window.panel("mcp_view")
    qtbot.waitUntil(view.isVisible, timeout=WAIT_MS)
    return view


def click(qtbot, widget) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def state_of(view, name: str) -> str:
    row = view.model.row_of(name)
    return view.model.index(row, view.model.STATE).data() if row >= 0 else ""


def test_add_a_server_see_it_ready_and_approve_its_tool(qtbot, pid_dir, open_window, fake_openai):
    window = open_window(start_services=True)
    view = open_mcp_panel(qtbot, window)
    assert view.empty_label.isVisible()
    click(qtbot, view.add_button)
    dialog = view._dialog
    assert isinstance(dialog, McpServerDialog) and dialog.isVisible()
    qtbot.keyClicks(dialog.name_edit, "tester")
    qtbot.keyClicks(dialog.command_edit, sys.executable)
    qtbot.keyClicks(dialog.args_edit, f"{SDK_SERVER} stdio {pid_dir}")
    click(qtbot, dialog.save_button)
    assert not dialog.isVisible()
    saved = json.loads(Path(window.engine.config_path).read_text(encoding="utf-8"))
    assert saved["tools"]["mcpServers"]["tester"]["args"] == [str(SDK_SERVER), "stdio", str(pid_dir)]
    qtbot.waitUntil(lambda: state_of(view, "tester") == "ready (7 tools)", timeout=SLOW_MS)
    assert view.selected_name() == "tester" and view.tools_list.count() == 7
    names = [view.tools_list.item(row).text() for row in range(view.tools_list.count())]
    assert "mcp_tester_echo" in names
    view.tools_list.setCurrentRow(names.index("mcp_tester_echo"))
    assert view.tool_description.text() == "Return the text unchanged."
    assert json.loads(view.schema_view.toPlainText())["required"] == ["text"]

    fake_openai.add_tool_calls([("mcp_tester_echo", {"text": "from the window"})])
    fake_openai.add_text("The server echoed.")
    send(qtbot, window, "Use the echo tool")
    qtbot.waitUntil(lambda: bool(window.chat.pending_approvals(window.current_key)), timeout=WAIT_MS)
    call_id = window.chat.pending_approvals(window.current_key)[0]
    row = window.chat.model.row_of_call(call_id, "approval")
    card = window.chat.model.item(row)
    assert isinstance(card, ApprovalCard) and card.arguments == {"text": "from the window"}
    card_widget = window.chat_view.widget_for_row(row)
    assert card_widget.title_label.text() == "Allow the tool “mcp_tester_echo” from MCP server 'tester' to run?"
    click(qtbot, card_widget.allow_always_button)
    wait_idle(qtbot, window)
    app_file = json.loads(app_settings_path(Path(window.engine.config_path)).read_text(encoding="utf-8"))
    assert app_file["toolApproval"]["mcp_tester_echo"] == "allow"  # remembered (desktop.json), for this tool only
    assert view.tools_list.currentItem().text() == "mcp_tester_echo"
    assert view.tool_policy.currentData() == "allow" and view.server_policy.currentData() == "ask"
    tool_messages = [m for m in fake_openai.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["echo: from the window"]
    inspector = window.panel("inspector")
    titles = [inspector.model.index(r, NAME_COLUMN).data(Qt.ItemDataRole.DisplayRole) for r in range(inspector.model.rowCount())]
    assert any("mcp_tester_echo" in str(t) and "[MCP server 'tester']" in str(t) for t in titles), titles


def test_import_json_switch_off_and_set_a_tool_policy(qtbot, pid_dir, open_window, tmp_path):
    window = open_window(start_services=True)
    view = open_mcp_panel(qtbot, window)
    config_path = Path(window.engine.config_path)

    click(qtbot, view.import_button)
    dialog = view._dialog
    assert isinstance(dialog, McpImportDialog)
    before = config_path.read_bytes()
    qtbot.keyClicks(dialog.text_edit, '{"mcpServers": {"broken": {"env": {}}}}')
    click(qtbot, dialog.import_button)
    assert "neither a command nor a url" in dialog.message_label.text() and dialog.isVisible()
    assert config_path.read_bytes() == before  # nothing written
    dialog.text_edit.clear()
    pasted = {"mcpServers": {"imported": {"command": sys.executable, "args": [str(SDK_SERVER), "stdio", str(pid_dir)]},
                             "missing": {"command": "nanobot-no-such-mcp-server"}}}
    qtbot.keyClicks(dialog.text_edit, json.dumps(pasted))
    click(qtbot, dialog.import_button)
    assert not dialog.isVisible()
    qtbot.waitUntil(lambda: state_of(view, "imported").startswith("ready"), timeout=SLOW_MS)
    qtbot.waitUntil(lambda: state_of(view, "missing") == "failed", timeout=SLOW_MS)
    view.select("missing")
    assert "command not found: nanobot-no-such-mcp-server" in view.state_label.text()

    view.select("imported")
    view.tools_list.setCurrentRow(0)
    tool = view.tools_list.currentItem().data(Qt.ItemDataRole.UserRole)
    view.tool_policy.setCurrentIndex(view.tool_policy.findData("allow"))
    view.tool_policy.activated.emit(view.tool_policy.currentIndex())  # as a click on the item does
    app_file = json.loads(app_settings_path(config_path).read_text(encoding="utf-8"))
    assert app_file["toolApproval"][tool.qualified_name] == "allow"
    assert "approval" not in json.loads(config_path.read_text(encoding="utf-8"))["tools"]  # nothing app-only there
    assert window.engine.policy.decision_for(tool.qualified_name) == "allow"

    click(qtbot, view.enabled_check)  # off
    qtbot.waitUntil(lambda: state_of(view, "imported") == "disabled", timeout=WAIT_MS)
    assert not [n for n in window.engine.tools.names() if n.startswith("mcp_imported_")]
    qtbot.waitUntil(lambda: left_processes(pid_dir) == [], timeout=SLOW_MS)
    click(qtbot, view.enabled_check)  # on again, without restarting the app
    qtbot.waitUntil(lambda: state_of(view, "imported").startswith("ready"), timeout=SLOW_MS)
    assert "mcp_imported_echo" in window.engine.tools.names()

    click(qtbot, view.tabs.tabBar())  # (focus) then the Log tab shows the server's stderr
    view.tabs.setCurrentIndex(1)
    assert "test server" in view.log_view.toPlainText() and "starting:" in view.log_view.toPlainText()
    click(qtbot, view.remove_button)
    box = view._dialog
    qtbot.waitUntil(box.isVisible, timeout=WAIT_MS)
    click(qtbot, box.button(box.StandardButton.Yes))
    qtbot.waitUntil(lambda: view.model.row_of("imported") < 0, timeout=WAIT_MS)
    assert "imported" not in json.loads(config_path.read_text(encoding="utf-8"))["tools"]["mcpServers"]
    assert QApplication.activeModalWidget() is None


def test_an_image_from_an_mcp_tool_is_shown_in_the_inspector(qtbot, pid_dir, open_window, fake_openai):
    from nanobot_desktop.engine.mcp import settings

    window = open_window(start_services=True)
    settings.save_server(window.engine, "pics", {"command": sys.executable,
                                                  "args": [str(SDK_SERVER), "stdio", str(pid_dir)]})
    settings.set_decision(window.engine, settings.server_key("pics"), "allow")  # no card this time
    qtbot.waitUntil(lambda: window.engine.mcp.status("pics").state == "ready", timeout=SLOW_MS)
    fake_openai.add_tool_calls([("mcp_pics_image", {})])
    fake_openai.add_text("A red square.")
    send(qtbot, window, "Draw")
    wait_idle(qtbot, window)
    inspector = window.panel("inspector")
    qtbot.mouseClick(window.toolbar.widgetForAction(window.docking.drawer_action), Qt.MouseButton.LeftButton)  # the drawer
    qtbot.waitUntil(inspector.isVisible, timeout=WAIT_MS)
    row = next(r for r in range(inspector.model.rowCount())
               if "mcp_pics_image" in str(inspector.model.index(r, NAME_COLUMN).data()))
    index = inspector.model.index(row, NAME_COLUMN)
    qtbot.mouseClick(inspector.timeline.viewport(), Qt.MouseButton.LeftButton,
                     pos=inspector.timeline.visualRect(index).center())
    images = inspector.tool_detail.images
    qtbot.waitUntil(images.isVisible, timeout=WAIT_MS)
    [label] = images.labels
    assert not label.pixmap().isNull() and label.pixmap().width() == 48  # the 2x2 PNG, drawn bigger
    assert label.toolTip().endswith(".png") and Path(label.toolTip()).is_file()
