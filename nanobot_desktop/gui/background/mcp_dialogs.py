"""The MCP page's dialogs: add or edit one server, and import servers from pasted JSON.

Both are opened with `open()` (never `exec()`), test and save through the engine, and show what is
wrong in the dialog itself: a bad entry never reaches the config file.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from nanobot_desktop.engine import ConfigError, McpSpecError, entry_from_fields, mcp_settings, parse_pasted_servers
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.palette import error_color

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

TRANSPORT_LABELS = (("stdio", QT_TRANSLATE_NOOP("MCP", "Local command (stdio)")),
                    ("streamableHttp", QT_TRANSLATE_NOOP("MCP", "HTTP (streamable)")),
                    ("sse", "HTTP (SSE)"))  # translated where shown
IMPORT_EXAMPLE = '{\n  "mcpServers": {\n    "time": {"command": "uvx", "args": ["mcp-server-time"]}\n  }\n}'


def _pairs_text(pairs: dict[str, str], separator: str) -> str:
    return "\n".join(f"{key}{separator}{value}" for key, value in pairs.items())


def _parse_pairs(text: str, separator: str, what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, found, value = line.partition(separator)
        if not found or not key.strip():
            raise McpSpecError(f"{what} line {number}: expected NAME{separator.strip() or separator}VALUE")
        pairs[key.strip()] = value.strip()
    return pairs


class McpServerDialog(QDialog):
    """Add a server (`name` None) or edit one; Test connects with what the form says, Save applies it."""

    saved = Signal(str)
    """The server's name, after the config was saved and the server (re)started."""

    def __init__(self, engine: Engine, name: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.original_name = name
        self.setObjectName("mcpServerDialog")
        self.setWindowTitle(translate("MCP", "Edit MCP server") if name else translate("MCP", "Add MCP server"))
        self.setMinimumWidth(520)
        entry: dict[str, Any] = mcp_settings.server_entry(engine.config, name) if name else {}
        self._base = entry
        self._task: asyncio.Task[Any] | None = None

        form = QFormLayout()
        self.name_edit = QLineEdit(name or "")
        self.name_edit.setPlaceholderText(translate("MCP", "letters, digits, _ and - (part of the tool names)"))
        self.type_combo = QComboBox()
        for value, label in TRANSPORT_LABELS:
            self.type_combo.addItem(translate("MCP", label), value)
        self.command_edit = QLineEdit(str(entry.get("command", "")))
        self.command_edit.setPlaceholderText(translate("MCP", "e.g. uvx, npx, or a full path"))
        self.args_edit = QLineEdit(shlex.join(entry.get("args") or []))
        self.args_edit.setPlaceholderText(translate("MCP", 'e.g. mcp-server-time --local-timezone "Europe/Paris"'))
        self.env_edit = QPlainTextEdit(_pairs_text(entry.get("env") or {}, "="))
        self.env_edit.setPlaceholderText(translate("MCP", "NAME=value, one per line"))
        self.env_edit.setFixedHeight(70)
        self.url_edit = QLineEdit(str(entry.get("url", "")))
        self.url_edit.setPlaceholderText("https://host/mcp")
        self.headers_edit = QPlainTextEdit(_pairs_text(entry.get("headers") or {}, ": "))
        self.headers_edit.setPlaceholderText(translate("MCP", "Name: value, one per line (e.g. Authorization: Bearer …)"))
        self.headers_edit.setFixedHeight(70)
        self.timeout_spin = QSpinBox()
        self.timeout_spin.setRange(1, 3600)
        self.timeout_spin.setSuffix(translate("MCP", " s"))
        self.timeout_spin.setValue(int(entry.get("toolTimeout") or 30))
        form.addRow(translate("MCP", "Name"), self.name_edit)
        form.addRow(translate("MCP", "Type"), self.type_combo)
        self._rows: dict[str, list[QWidget]] = {"stdio": [self.command_edit, self.args_edit, self.env_edit],
                                                "http": [self.url_edit, self.headers_edit]}
        for label, widget in ((translate("MCP", "Command"), self.command_edit), (translate("MCP", "Arguments"), self.args_edit),
                              (translate("MCP", "Environment"), self.env_edit), ("URL", self.url_edit),
                              (translate("MCP", "Headers"), self.headers_edit)):
            form.addRow(label, widget)
        form.addRow(translate("MCP", "Tool timeout"), self.timeout_spin)
        self._form = form

        self.message_label = QLabel()
        self.message_label.setObjectName("mcpDialogMessage")
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(self.message_label.textInteractionFlags()
                                                   | self.message_label.textInteractionFlags().TextSelectableByMouse)
        self.test_button = QPushButton(translate("MCP", "Test"))
        self.test_button.setToolTip(translate("MCP", "Start the server with these settings, list its tools, stop it again"))
        self.save_button = QPushButton(translate("MCP", "Save"))
        self.save_button.setDefault(True)
        self.cancel_button = QPushButton(translate("MCP", "Cancel"))
        buttons = QHBoxLayout()
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.message_label)
        layout.addLayout(buttons)

        kind = entry.get("type") or ("stdio" if entry.get("command") or not entry.get("url") else
                                     ("sse" if str(entry.get("url", "")).rstrip("/").endswith("/sse") else "streamableHttp"))
        self.type_combo.setCurrentIndex(max(0, self.type_combo.findData(kind)))
        self.type_combo.currentIndexChanged.connect(self._show_rows)
        self._show_rows()
        self.test_button.clicked.connect(self._test)
        self.save_button.clicked.connect(self._save)
        self.cancel_button.clicked.connect(self.reject)

    def _show_rows(self) -> None:
        stdio = self.type_combo.currentData() == "stdio"
        for group, widgets in self._rows.items():
            for widget in widgets:
                self._form.setRowVisible(widget, (group == "stdio") == stdio)

    def entry(self) -> dict[str, Any]:
        """The config entry the form describes; McpSpecError says what is wrong."""
        try:
            args = shlex.split(self.args_edit.text())
        except ValueError as error:
            raise McpSpecError(f"arguments: {error}") from None
        return entry_from_fields(
            self.type_combo.currentData(), command=self.command_edit.text(), args=args,
            env=_parse_pairs(self.env_edit.toPlainText(), "=", "environment"), url=self.url_edit.text(),
            headers=_parse_pairs(self.headers_edit.toPlainText(), ":", "headers"),
            tool_timeout=self.timeout_spin.value(), base=self._base)

    def show_message(self, text: str, error: bool = False) -> None:
        self.message_label.setText(text)
        self.message_label.setProperty("error", error)
        self.message_label.setStyleSheet(f"color: {error_color(self.palette()).name()};" if error else "")

    def _test(self) -> None:
        try:
            entry = self.entry()
        except McpSpecError as error:
            self.show_message(str(error), error=True)
            return
        self.show_message(translate("MCP", "Testing: starting the server and listing its tools…"))
        self.test_button.setEnabled(False)
        self._task = asyncio.ensure_future(self._run_test(self.name_edit.text().strip() or "test", entry))

    async def _run_test(self, name: str, entry: dict[str, Any]) -> None:
        try:
            status = await self.engine.mcp.test(name, entry)
        finally:
            self.test_button.setEnabled(True)
        if status.state == "ready":
            names = ", ".join(tool.name for tool in status.tools) or translate("MCP", "no tools")
            count = len(status.tools)
            self.show_message(translate("MCP", "Connected: %n tool(s) ({names}).", None, count).format(names=names))
        else:
            tail = "\n".join(status.stderr_tail)
            self.show_message(translate("MCP", "Could not connect: {error}").format(error=status.error) + (f"\n{tail}" if tail else ""),
                              error=True)

    def _save(self) -> None:
        name = self.name_edit.text().strip()
        try:
            mcp_settings.save_server(self.engine, name, self.entry(), previous=self.original_name)
        except (McpSpecError, ConfigError, ValueError, OSError) as error:
            self.show_message(translate("MCP", "Not saved: {error}").format(error=error), error=True)
            return
        self.saved.emit(name)
        self.accept()

    def done(self, result: int) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        super().done(result)


class McpImportDialog(QDialog):
    """Paste `{"mcpServers": {...}}` (as other desktop apps keep it) and add those servers."""

    imported = Signal(list)
    """The names of the servers added."""

    def __init__(self, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.setObjectName("mcpImportDialog")
        self.setWindowTitle(translate("MCP", "Import MCP servers"))
        self.setMinimumSize(520, 320)
        self.text_edit = QPlainTextEdit()
        self.text_edit.setPlaceholderText(IMPORT_EXAMPLE)
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.import_button = QPushButton(translate("MCP", "Import"))
        self.import_button.setDefault(True)
        cancel = QPushButton(translate("MCP", "Cancel"))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(cancel)
        buttons.addWidget(self.import_button)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(translate("MCP", "Paste the JSON of one or more servers, in the mcpServers shape:")))
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.message_label)
        layout.addLayout(buttons)
        self.import_button.clicked.connect(self._import)
        cancel.clicked.connect(self.reject)

    def _import(self) -> None:
        try:
            servers = parse_pasted_servers(self.text_edit.toPlainText())
            names = mcp_settings.add_servers(self.engine, servers)
        except (McpSpecError, ConfigError, ValueError, OSError) as error:
            self.message_label.setText(translate("MCP", "Not imported: {error}").format(error=error))
            self.message_label.setStyleSheet(f"color: {error_color(self.palette()).name()};")
            return
        self.imported.emit(names)
        self.accept()
