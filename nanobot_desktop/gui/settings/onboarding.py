"""First run: choose the workspace, find or enter a model endpoint, write the config.

Shown by the main window when no config file exists (`needs_onboarding` in gui/shell/startup.py). Like Settings it is
non-modal: callers `open()` it and wait for `finished_setup`. The folder chooser is a non-modal
QFileDialog too, and local-server discovery and the connection test run as asyncio tasks, so the
event loop is never blocked or nested.

Nothing is overwritten: a chosen folder that already is a nanobot workspace is used as it is (only
missing template files are added), and if a config file appeared meanwhile it is loaded and only
the provider and workspace settings are changed in it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Sequence
from urllib.parse import urlsplit

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox, QDialog, QFileDialog, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem,
    QPushButton, QStackedWidget, QVBoxLayout, QWidget,
)

from nanobot_desktop.engine import (DEFAULT_CANDIDATES, ConfigError, LayoutKind, LocalServer, Workspace,
                                    default_config_path, detect_layout, discover_local_servers, load_config,
                                    patch_settings, prepare_workspace)
from nanobot_desktop.gui.settings.provider_choice import provider_patch
from nanobot_desktop.gui.settings.provider_form import InlineError, ProviderForm, one_line
from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.common.i18n import translate

log = logging.getLogger(__name__)

DEFAULT_WORKSPACE = "~/.nanobot/workspace"
# Which preset a discovered server's name maps to (anything else is "custom"); each is written as `custom`.
SERVER_PRESETS = {"Ollama": "ollama", "LM Studio": "lmstudio", "vLLM": "vllm", "llama.cpp": "llamacpp"}
ServerRole = Qt.ItemDataRole.UserRole


def _port_of(url: str) -> str:
    try:
        return str(urlsplit(url).port or 80)
    except ValueError:
        return "?"


def describe_workspace(text: str) -> tuple[str, bool]:
    """(what choosing this folder means, whether it can be used). Reads only a few directory entries."""
    note, usable, _existing = _workspace_state(text)
    return note, usable


def _workspace_state(text: str) -> tuple[str, bool, bool]:
    """describe_workspace's (note, usable), and whether the folder is an existing nanobot workspace."""
    if not text.strip():
        return translate("Onboarding", "Choose a folder for the workspace."), False, False
    path = Path(text.strip()).expanduser()
    if path.exists() and not path.is_dir():
        return translate("Onboarding", "{path} is a file, not a folder: choose a folder.").format(path=path), False, False
    if not path.exists():
        return translate("Onboarding", "A new workspace will be created in this folder."), True, False
    workspace = Workspace.at(path)
    if detect_layout(workspace.root, default_config_path(), new_workspace="post4").is_v03:
        return translate("Onboarding", "Existing nanobot 0.3 workspace found — it will be used as is, in nanobot 0.3's "
                                       "layout."), True, True
    if workspace.looks_like_nanobot_workspace():
        parts = []
        if workspace.sessions_dir.is_dir():
            sessions = sum(1 for entry in os.scandir(workspace.sessions_dir) if entry.name.endswith(".jsonl"))
            parts.append(translate("Onboarding", "%n session(s)", None, sessions))
        if workspace.memory_file.is_file() or workspace.history_file.is_file():
            parts.append(translate("Onboarding", "memory"))
        if workspace.skills_dir.is_dir():
            skills = sum(1 for entry in os.scandir(workspace.skills_dir)
                         if entry.is_dir() and (Path(entry.path) / "SKILL.md").is_file())
            parts.append(translate("Onboarding", "%n skill(s)", None, skills))
        if parts:
            return translate("Onboarding", "Existing nanobot workspace found: {contents} — it will be used as is.").format(
                contents=translate("Onboarding", ", ").join(parts)), True, True
        return translate("Onboarding", "Existing nanobot workspace found — it will be used as is."), True, True
    if any(path.iterdir()):
        return translate("Onboarding", "This folder is not empty. The workspace files will be added next to what is there; "
                                       "nothing in it is changed."), True, False
    return translate("Onboarding", "This empty folder will become the workspace."), True, False


class OnboardingDialog(QDialog):
    """Two steps: the workspace folder, then the model endpoint; Finish writes config + workspace."""

    finished_setup = Signal(object, object)
    """(config_path: Path, workspace: Path): the config was written and the workspace is ready."""

    def __init__(self, config_path: Path | None = None, workspace: str | Path | None = None, *,
                 candidates: Sequence[tuple[str, str]] = DEFAULT_CANDIDATES, scan_timeout_s: float = 0.5,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._work = OwnedWork(self)
        self.setObjectName("onboardingDialog")
        self.setWindowTitle(translate("Onboarding", "Welcome to nanobot"))
        self.config_path = Path(config_path).expanduser() if config_path else default_config_path()
        self._candidates = tuple(candidates)
        self._scan_timeout_s = scan_timeout_s
        self._scan_task: asyncio.Task[None] | None = None
        self._scanned = False
        self.servers: list[LocalServer] = []

        self.step_label = QLabel(self)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(self._workspace_page(str(workspace) if workspace else DEFAULT_WORKSPACE))
        self.pages.addWidget(self._model_page())
        self.finish_error = InlineError(self)
        self.back_button = QPushButton(translate("Onboarding", "Back"), self)
        self.next_button = QPushButton(translate("Onboarding", "Next"), self)
        self.finish_button = QPushButton(translate("Onboarding", "Finish"), self)
        self.cancel_button = QPushButton(translate("Onboarding", "Cancel"), self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        for button in (self.back_button, self.next_button, self.finish_button):
            buttons.addWidget(button)
        for button in (self.back_button, self.cancel_button):  # Enter means Next/Finish, even after a click here
            button.setAutoDefault(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.step_label)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.finish_error)
        layout.addLayout(buttons)

        self.back_button.clicked.connect(lambda: self.go_to(0))
        self.next_button.clicked.connect(self.next_page)
        self.finish_button.clicked.connect(self.finish)
        self.cancel_button.clicked.connect(self.reject)
        self.go_to(0)
        self.resize(640, 560)

    # --- page 1: workspace -------------------------------------------------------------------------------

    def _workspace_page(self, initial: str) -> QWidget:
        page = QWidget(self)
        intro = QLabel(translate("Onboarding", "The workspace is the folder where the agent keeps its memory, skills, sessions "
                                               "and instructions, as plain Markdown and JSONL files. An existing nanobot "
                                               "workspace works unchanged."), page)
        intro.setWordWrap(True)
        self.workspace_edit = QLineEdit(initial, page)
        self.choose_button = QPushButton(translate("Onboarding", "Choose…"), page)
        self.workspace_note = QLabel(page)
        self.workspace_note.setWordWrap(True)
        self.workspace_error = InlineError(page)
        row = QHBoxLayout()
        row.addWidget(self.workspace_edit, 1)
        row.addWidget(self.choose_button)
        layout = QVBoxLayout(page)
        layout.addWidget(intro)
        layout.addSpacing(8)
        layout.addWidget(QLabel(translate("Onboarding", "Workspace folder:"), page))
        layout.addLayout(row)
        layout.addWidget(self.workspace_note)
        layout.addWidget(self.workspace_error)
        self.v03_check = QCheckBox(translate("Onboarding", "Set up a new workspace in nanobot 0.3's layout (for the nanobot "
                                                           "0.3.x command-line tool)"), page)
        self.v03_check.setObjectName("onboardingV03")
        self.v03_check.setToolTip(translate("Onboarding", "Sessions beside the config, memory/history.jsonl and a git repository "
                                                          "for Dream's versions. Leave it off for the nanobot 0.1.4 layout."))
        layout.addWidget(self.v03_check)
        hint = QLabel(translate("Onboarding", "The default, {folder}, is also where the nanobot command-line tool keeps its "
                                              "workspace, so both share the same memory and sessions.").format(folder=DEFAULT_WORKSPACE),
                      page)
        hint.setWordWrap(True)
        hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        layout.addSpacing(12)
        layout.addWidget(hint)
        layout.addStretch(1)
        self.folder_dialog: QFileDialog | None = None
        self.choose_button.clicked.connect(self.choose_folder)
        self.workspace_edit.textChanged.connect(self._update_workspace_note)
        self._update_workspace_note()
        return page

    def choose_folder(self) -> QFileDialog:
        """Open a non-modal folder picker; its `fileSelected` fills the path."""
        if self.folder_dialog is None:
            self.folder_dialog = QFileDialog(self, translate("Onboarding", "Choose the workspace folder"))
            self.folder_dialog.setFileMode(QFileDialog.FileMode.Directory)
            self.folder_dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
            self.folder_dialog.fileSelected.connect(self.workspace_edit.setText)
        start = self.workspace_path()
        while not start.is_dir() and start != start.parent:
            start = start.parent
        self.folder_dialog.setDirectory(str(start))
        self.folder_dialog.open()
        return self.folder_dialog

    def workspace_path(self) -> Path:
        return Path(self.workspace_edit.text().strip() or DEFAULT_WORKSPACE).expanduser()

    def _update_workspace_note(self) -> bool:
        note, usable, existing = _workspace_state(self.workspace_edit.text())
        self.v03_check.setEnabled(usable and not existing)  # an existing workspace keeps its own layout
        self.workspace_note.setText(note if usable else "")
        self.workspace_error.show_error(None if usable else note)
        return usable

    # --- page 2: model -------------------------------------------------------------------------------------

    def _model_page(self) -> QWidget:
        page = QWidget(self)
        local = QGroupBox(translate("Onboarding", "Model servers on this computer"), page)
        self.scan_status = QLabel(local)
        self.scan_status.setWordWrap(True)
        self.server_list = QListWidget(local)
        self.server_list.setMaximumHeight(110)
        self.scan_button = QPushButton(translate("Onboarding", "Scan again"), local)
        local_layout = QVBoxLayout(local)
        status_row = QHBoxLayout()
        status_row.addWidget(self.scan_status, 1)
        status_row.addWidget(self.scan_button)
        local_layout.addLayout(status_row)
        local_layout.addWidget(self.server_list)
        endpoint = QGroupBox(translate("Onboarding", "Endpoint"), page)
        self.provider_form = ProviderForm(endpoint)
        self.provider_form.set_choice("openai")
        endpoint_layout = QVBoxLayout(endpoint)
        endpoint_layout.addWidget(self.provider_form)
        layout = QVBoxLayout(page)
        layout.addWidget(local)
        layout.addWidget(endpoint)
        layout.addStretch(1)
        self.scan_button.clicked.connect(self.scan)
        self.server_list.currentItemChanged.connect(self._server_chosen)
        return page

    def scan(self) -> asyncio.Task[None]:
        """Look for local OpenAI-compatible servers (all candidates at once, short timeouts)."""
        if self._scan_task is not None and not self._scan_task.done():
            return self._scan_task
        self._scanned = True
        self.scan_button.setEnabled(False)
        names = ", ".join(dict.fromkeys(name for name, _url in self._candidates))
        self.scan_status.setText(translate("Onboarding", "Looking for {servers} on this computer…").format(servers=names))
        task = self._work.spawn(self._scan())
        self._scan_task = task
        return task

    async def _scan(self) -> None:
        try:
            servers = await discover_local_servers(self._candidates, self._scan_timeout_s)
        except Exception as error:  # discovery is best effort; say so and go on
            log.warning("local server discovery failed", exc_info=True)
            if shiboken6.isValid(self):
                self.scan_status.setText(translate("Onboarding", "Could not look for local servers: {error}").format(error=one_line(error)))
                self.scan_button.setEnabled(True)
            return
        if shiboken6.isValid(self):  # not deleted while the probes ran
            self._show_servers(servers)
            self.scan_button.setEnabled(True)

    def _show_servers(self, servers: list[LocalServer]) -> None:
        self.servers = servers
        self.server_list.clear()
        for server in servers:
            models = ", ".join(server.models[:3]) + (", …" if len(server.models) > 3 else "")
            count = len(server.models)
            detail = (translate("Onboarding", "%n model(s): {models}", None, count).format(models=models) if server.models
                      else translate("Onboarding", "no models yet"))
            item = QListWidgetItem(f"{server.name} — {server.base_url} — {detail}", self.server_list)
            item.setData(ServerRole, server)
            item.setToolTip("\n".join([server.base_url, *server.models]))
        if len(servers) == 1 and self._form_untouched():
            # The one server there is: chosen for the person, the form filled for it (provider, URL, a model).
            self.server_list.setCurrentRow(0)
            self.scan_status.setText(translate("Onboarding", "Found {server} on this computer and selected it. You can enter "
                                               "another endpoint below instead.").format(server=servers[0].name))
        elif servers:
            count = len(servers)
            self.scan_status.setText(translate("Onboarding", "Found %n server(s). Choose one to use it, or enter an endpoint below.",
                                               None, count))
        else:
            looked = ", ".join(f"{name} ({_port_of(url)})" for name, url in self._candidates)
            self.scan_status.setText(translate("Onboarding", "No local model server found (looked for {servers}). Enter an endpoint "
                                               "and key below.").format(servers=looked) if looked else
                                     translate("Onboarding", "No local model server found. Enter an endpoint and key below."))
        self.server_list.setVisible(bool(servers))

    def _form_untouched(self) -> bool:
        """The endpoint form still shows what the dialog started with (OpenAI, no key, no model typed)."""
        choice = self.provider_form.choice()
        return choice.name == "openai" and not choice.api_key and not choice.model

    def _server_chosen(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        if item is None:
            return
        server: LocalServer = item.data(ServerRole)
        self.provider_form.set_choice(SERVER_PRESETS.get(server.name, "custom"), base_url=server.base_url,
                                      api_key="", model=server.models[0] if server.models else "")
        self.provider_form.set_models(server.models)

    # --- navigation and finish --------------------------------------------------------------------------------

    def go_to(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        self.step_label.setText([translate("Onboarding", "<b>Step 1 of 2 — Workspace</b>"),
                                 translate("Onboarding", "<b>Step 2 of 2 — Model</b>")][index])
        self.back_button.setVisible(index > 0)
        self.next_button.setVisible(index == 0)
        self.finish_button.setVisible(index == 1)
        (self.next_button if index == 0 else self.finish_button).setDefault(True)
        self.finish_error.show_error(None)
        if index == 1 and not self._scanned:
            self.scan()

    def next_page(self) -> None:
        if self._update_workspace_note():
            self.go_to(1)

    def finish(self) -> bool:
        """Create the workspace (missing files only), write the config, emit `finished_setup`."""
        self.finish_error.show_error(None)
        if not self._update_workspace_note():
            self.go_to(0)
            return False
        if not self.provider_form.validate():
            return False
        workspace_text = self.workspace_edit.text().strip() or DEFAULT_WORKSPACE
        workspace = Workspace.at(workspace_text)
        try:
            config = load_config(self.config_path)  # defaults, or a file that appeared meanwhile
            patch = {"agents.defaults.workspace": workspace_text, **provider_patch(config, self.provider_form.choice())}
            chosen = LayoutKind.V03.value if self.v03_check.isChecked() else LayoutKind.POST4.value
            layout = detect_layout(workspace.root, self.config_path, new_workspace=chosen)
            prepare_workspace(workspace.root, layout.kind)  # missing files only, in the workspace's layout
            patch_settings(self.config_path, patch)
        except (ConfigError, OSError, ValueError) as error:
            log.warning("first-run setup failed: %s", error)
            self.finish_error.show_error(translate("Onboarding", "Setup could not finish: {error}").format(error=one_line(error)))
            return False
        self.finished_setup.emit(self.config_path, workspace.root)
        self.accept()
        return True

    def done(self, result: int) -> None:  # Qt override: every way of closing ends here
        self.provider_form.cancel_check()
        if self._scan_task is not None and not self._scan_task.done():
            self._scan_task.cancel()
        if self.folder_dialog is not None:
            self.folder_dialog.close()
        super().done(result)
