"""The MCP panel: the user's MCP servers, their state and tools, and everything to manage them.

The engine's `McpServersChanged` snapshots are the truth; the table shows them and the detail pane
the selected server: where it runs, its state (with the reason and the last lines of its stderr when
it failed), its tools with their descriptions and input schemas, allow / ask / deny for the server
and for each tool, and its log. Add, edit, import, enable/disable and remove save the config through
the engine, which applies the change at once (no restart).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from nanobot_desktop.engine import McpServersChanged, ServerStatus, ToolCallFinished, mcp_settings
from nanobot_desktop.gui.background.mcp_dialogs import McpImportDialog, McpServerDialog
from nanobot_desktop.gui.background.mcp_model import McpServersModel, state_text
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.common.palette import error_color

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge

log = logging.getLogger(__name__)

LOG_TAIL_BYTES = 64_000
DECISION_CHOICES = (("ask", QT_TRANSLATE_NOOP("MCP", "Ask first")), ("allow", QT_TRANSLATE_NOOP("MCP", "Allow")),
                    ("deny", QT_TRANSLATE_NOOP("MCP", "Deny")))  # translated where shown


def _decision_combo(default_label: str | None) -> QComboBox:
    combo = QComboBox()
    if default_label is not None:
        combo.addItem(default_label, None)
    for value, label in DECISION_CHOICES:
        combo.addItem(translate("MCP", label), value)
    return combo


class McpView(QWidget):
    """The MCP servers panel (a dock of the main window)."""

    panel_title = "MCP"  # a name: the same in every language

    def __init__(self, engine: Engine, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.setObjectName("mcpView")
        self._work = OwnedWork(self)  # a test or restart in progress: its message never reaches a deleted panel
        self._dialog: Any = None
        self.model = McpServersModel(self)

        self.add_button = QPushButton(translate("MCP", "Add server…"))
        self.import_button = QPushButton(translate("MCP", "Import JSON…"))
        top = QHBoxLayout()
        top.addWidget(self.add_button)
        top.addWidget(self.import_button)
        top.addStretch(1)

        self.table = QTableView()
        self.table.setObjectName("mcpServers")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(self.model.STATE, QHeaderView.ResizeMode.Stretch)
        self.empty_label = QLabel(translate("MCP", "No MCP servers yet. Add one, or import the JSON another app uses."))
        self.empty_label.setWordWrap(True)

        self.detail = self._build_detail()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table, 1)
        left_layout.addWidget(self.empty_label)
        splitter.addWidget(left)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)

        self.add_button.clicked.connect(lambda: self.open_editor(None))
        self.import_button.clicked.connect(self.open_import)
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._show_selected())
        bridge.subscribe({McpServersChanged: self._on_servers_changed, ToolCallFinished: self._on_tool_call_finished}, self)
        self._refresh(engine.mcp.statuses())

    # --- building -------------------------------------------------------------------------------------------

    def _build_detail(self) -> QWidget:
        detail = QWidget()
        self.name_label = QLabel()
        font = self.name_label.font()
        font.setBold(True)
        self.name_label.setFont(font)
        self.target_label = QLabel()
        self.target_label.setWordWrap(True)
        self.target_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.state_label = QLabel()
        self.state_label.setObjectName("mcpState")
        self.state_label.setWordWrap(True)
        self.error_view = QPlainTextEdit()
        self.error_view.setObjectName("mcpError")
        self.error_view.setReadOnly(True)
        self.error_view.setMaximumHeight(110)
        self.enabled_check = QCheckBox(translate("MCP", "Enabled"))
        self.edit_button = QPushButton(translate("MCP", "Edit…"))
        self.test_button = QPushButton(translate("MCP", "Test"))
        self.restart_button = QPushButton(translate("MCP", "Restart"))
        self.remove_button = QPushButton(translate("MCP", "Remove"))
        buttons = QHBoxLayout()
        for widget in (self.enabled_check, self.edit_button, self.test_button, self.restart_button, self.remove_button):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        self.server_policy = _decision_combo(None)
        self.server_policy.setObjectName("mcpServerPolicy")
        policy_row = QHBoxLayout()
        policy_row.addWidget(QLabel(translate("MCP", "Before its tools run:")))
        policy_row.addWidget(self.server_policy)
        policy_row.addStretch(1)
        self.message_label = QLabel()
        self.message_label.setObjectName("mcpMessage")
        self.message_label.setWordWrap(True)

        self.tools_list = QListWidget()
        self.tools_list.setObjectName("mcpTools")
        self.tool_description = QLabel()
        self.tool_description.setWordWrap(True)
        self.tool_description.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tool_policy = _decision_combo(translate("MCP", "Same as the server"))
        self.tool_policy.setObjectName("mcpToolPolicy")
        self.schema_view = QPlainTextEdit()
        self.schema_view.setObjectName("mcpSchema")
        self.schema_view.setReadOnly(True)
        tool_detail = QWidget()
        tool_layout = QVBoxLayout(tool_detail)
        tool_layout.setContentsMargins(0, 0, 0, 0)
        tool_layout.addWidget(self.tool_description)
        tool_policy_row = QHBoxLayout()
        tool_policy_row.addWidget(QLabel(translate("MCP", "This tool:")))
        tool_policy_row.addWidget(self.tool_policy)
        tool_policy_row.addStretch(1)
        tool_layout.addLayout(tool_policy_row)
        tool_layout.addWidget(QLabel(translate("MCP", "Input schema")))
        tool_layout.addWidget(self.schema_view, 1)
        tools_split = QSplitter(Qt.Orientation.Horizontal)
        tools_split.addWidget(self.tools_list)
        tools_split.addWidget(tool_detail)
        self.log_view = QPlainTextEdit()
        self.log_view.setObjectName("mcpLog")
        self.log_view.setReadOnly(True)
        self.log_refresh_button = QPushButton(translate("MCP", "Refresh"))
        log_tab = QWidget()
        log_layout = QVBoxLayout(log_tab)
        log_layout.addWidget(self.log_view, 1)
        log_layout.addWidget(self.log_refresh_button, 0, Qt.AlignmentFlag.AlignRight)
        self.tabs = QTabWidget()
        self.tabs.addTab(tools_split, translate("MCP", "Tools"))
        self.tabs.addTab(log_tab, translate("MCP", "Log"))

        layout = QVBoxLayout(detail)
        layout.setContentsMargins(6, 0, 0, 0)
        for part in (self.name_label, self.target_label, self.state_label, self.error_view):
            layout.addWidget(part)
        layout.addLayout(buttons)
        layout.addLayout(policy_row)
        layout.addWidget(self.message_label)
        layout.addWidget(self.tabs, 1)

        self.enabled_check.toggled.connect(self._set_enabled)
        self.edit_button.clicked.connect(lambda: self.open_editor(self.selected_name()))
        self.test_button.clicked.connect(self._test)
        self.restart_button.clicked.connect(self._restart)
        self.remove_button.clicked.connect(self._confirm_remove)
        self.server_policy.activated.connect(lambda _i: self._set_server_policy())
        self.tool_policy.activated.connect(lambda _i: self._set_tool_policy())
        self.tools_list.currentRowChanged.connect(lambda _row: self._show_tool())
        self.log_refresh_button.clicked.connect(self._show_log)
        self.tabs.currentChanged.connect(lambda index: self._show_log() if index == 1 else None)
        return detail

    # --- state ------------------------------------------------------------------------------------------------

    def _on_servers_changed(self, event: McpServersChanged) -> None:
        self._refresh(list(event.servers))

    def _on_tool_call_finished(self, event: ToolCallFinished) -> None:
        if event.origin:  # "Always allow" may have changed a policy
            self._show_tool()

    def _refresh(self, statuses: list[ServerStatus]) -> None:
        selected = self.selected_name()
        self.model.set_statuses(statuses)
        self.empty_label.setVisible(not statuses)
        self.table.setVisible(bool(statuses))
        row = self.model.row_of(selected) if selected else -1
        if row < 0 and statuses:
            row = 0
        if row >= 0 and self.table.currentIndex().row() != row:
            self.table.selectRow(row)
        self._show_selected()

    def selected_name(self) -> str | None:
        row = self.table.currentIndex().row()
        return self.model.statuses[row].name if 0 <= row < len(self.model.statuses) else None

    def selected_status(self) -> ServerStatus | None:
        row = self.model.row_of(self.selected_name() or "")
        return self.model.statuses[row] if row >= 0 else None

    def _show_selected(self) -> None:
        status = self.selected_status()
        self.detail.setVisible(status is not None)
        if status is None:
            return
        kind = {"stdio": translate("MCP", "local command"), "sse": "HTTP (SSE)", "streamableHttp": "HTTP"}.get(
            status.transport or "", "")
        self.name_label.setText(status.name)
        self.target_label.setText(f"{kind}: {status.target}" if kind else status.target)
        state = state_text(status) if status.state != "failed" or not status.enabled \
            else translate("MCP", "failed — {error}").format(error=status.error)
        self.state_label.setText(translate("MCP", "State: {state}").format(state=state))
        failed = status.enabled and status.state == "failed"
        self.error_view.setVisible(failed and bool(status.stderr_tail))
        if failed:
            self.error_view.setPlainText(translate("MCP", "Last lines of its stderr:") + "\n" + "\n".join(status.stderr_tail))
        self.enabled_check.blockSignals(True)
        self.enabled_check.setChecked(status.enabled)
        self.enabled_check.blockSignals(False)
        configured = status.name in self.engine.config.tools.mcp_servers
        for button in (self.edit_button, self.test_button, self.remove_button):
            button.setEnabled(configured)
        self.restart_button.setEnabled(status.enabled and status.state != "connecting")
        server_decision = self.engine.policy.overrides.get(mcp_settings.server_key(status.name), "ask")
        self.server_policy.setCurrentIndex(self.server_policy.findData(server_decision))
        current_tool = self.tools_list.currentItem().data(Qt.ItemDataRole.UserRole) if self.tools_list.currentItem() else None
        self.tools_list.blockSignals(True)
        self.tools_list.clear()
        for tool in status.tools:
            first_line = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
            item = QListWidgetItem(tool.qualified_name if tool.offered
                                   else translate("MCP", "{tool}  (not offered: enabledTools)").format(tool=tool.qualified_name))
            item.setToolTip(first_line)
            item.setData(Qt.ItemDataRole.UserRole, tool)
            self.tools_list.addItem(item)
            if current_tool is not None and tool.name == current_tool.name:
                self.tools_list.setCurrentItem(item)
        if self.tools_list.currentRow() < 0 and status.tools:
            self.tools_list.setCurrentRow(0)
        self.tools_list.blockSignals(False)
        self._show_tool()
        if self.tabs.currentIndex() == 1:
            self._show_log()

    def _show_tool(self) -> None:
        item = self.tools_list.currentItem()
        tool = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        self.tool_policy.setEnabled(tool is not None)
        if tool is None:
            self.tool_description.setText(translate("MCP", "No tools listed yet.") if self.selected_status() else "")
            self.schema_view.setPlainText("")
            return
        self.tool_description.setText(tool.description)
        self.schema_view.setPlainText(json.dumps(tool.input_schema, indent=2, ensure_ascii=False))
        own = self.engine.policy.overrides.get(tool.qualified_name)
        self.tool_policy.setCurrentIndex(self.tool_policy.findData(own))

    def _show_log(self) -> None:
        name = self.selected_name()
        path = self.engine.mcp.log_path(name) if name else None
        text = ""
        if path is not None:
            try:
                with path.open("rb") as handle:
                    handle.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
                    text = handle.read().decode("utf-8", errors="replace")
            except OSError:
                text = ""
        self.log_view.setPlainText(text or translate("MCP", "(nothing logged yet: a local server's stderr appears here)"))
        self.log_view.verticalScrollBar().setValue(self.log_view.verticalScrollBar().maximum())

    def show_message(self, text: str, error: bool = False) -> None:
        self.message_label.setText(text)
        self.message_label.setStyleSheet(f"color: {error_color(self.palette()).name()};" if error else "")

    # --- actions ----------------------------------------------------------------------------------------------

    def open_editor(self, name: str | None) -> McpServerDialog:
        dialog = McpServerDialog(self.engine, name, self)
        dialog.saved.connect(lambda saved: self.select(saved))
        self._dialog = dialog
        dialog.open()
        return dialog

    def open_import(self) -> McpImportDialog:
        dialog = McpImportDialog(self.engine, self)
        dialog.imported.connect(lambda names: self.select(names[0]) if names else None)
        self._dialog = dialog
        dialog.open()
        return dialog

    def select(self, name: str) -> None:
        row = self.model.row_of(name)
        if row >= 0:
            self.table.selectRow(row)
            self._show_selected()

    def _apply(self, change: Any, *args: Any) -> None:
        try:
            change(self.engine, *args)
        except Exception as error:  # the config could not be saved: say so, nothing changed
            log.exception("MCP settings change failed")
            self.show_message(translate("MCP", "Not saved: {error}").format(error=error), error=True)

    def _set_enabled(self, enabled: bool) -> None:
        name = self.selected_name()
        if name:
            self._apply(mcp_settings.set_server_enabled, name, enabled)

    def _set_server_policy(self) -> None:
        name = self.selected_name()
        if name:
            self._apply(mcp_settings.set_decision, mcp_settings.server_key(name), self.server_policy.currentData())

    def _set_tool_policy(self) -> None:
        item = self.tools_list.currentItem()
        if item is not None:
            tool = item.data(Qt.ItemDataRole.UserRole)
            self._apply(mcp_settings.set_decision, tool.qualified_name, self.tool_policy.currentData())

    def _confirm_remove(self) -> None:
        name = self.selected_name()
        if not name:
            return
        box = QMessageBox(QMessageBox.Icon.Question, translate("MCP", "Remove MCP server"),
                          translate("MCP", "Remove the MCP server “{name}” from the config? Its tools go away at once.").format(
                              name=name),
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("mcpRemoveConfirm")
        box.accepted.connect(lambda: self._apply(mcp_settings.remove_server, name))
        self._dialog = box
        box.open()

    def _spawn(self, coroutine: Any) -> None:
        self._work.spawn(coroutine)

    def _test(self) -> None:
        name = self.selected_name()
        if name:
            self.show_message(translate("MCP", "Testing {name}: starting it separately and listing its tools…").format(name=name))
            self._spawn(self._run_test(name))

    async def _run_test(self, name: str) -> None:
        status = await self.engine.mcp.test(name, mcp_settings.server_entry(self.engine.config, name))
        if status.state == "ready":
            count = len(status.tools)
            self.show_message(translate("MCP", "Test of {name}: connected, %n tool(s).", None, count).format(name=name))
        else:
            self.show_message(translate("MCP", "Test of {name}: could not connect: {error}").format(name=name, error=status.error),
                              error=True)

    def _restart(self) -> None:
        name = self.selected_name()
        if name:
            self.show_message(translate("MCP", "Restarting {name}…").format(name=name))
            self._spawn(self._run_restart(name))

    async def _run_restart(self, name: str) -> None:
        status = await self.engine.mcp.restart(name)
        self.show_message(f"{name}: {state_text(status)}", error=status.state == "failed")

    def shutdown(self) -> None:
        self._work.close()  # cancels a test or restart still running
