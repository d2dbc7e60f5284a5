"""The provider form shared by Settings and first-run onboarding: preset, base URL, key, model.

Endpoint checks ("Refresh models", "Test connection") run as asyncio tasks on the Qt loop with no
retries and a short timeout: a person is waiting for the answer and can simply click again. Every
failure becomes one line (the engine's `ProviderError` message), never a traceback.
"""

from __future__ import annotations

import asyncio
import logging

import shiboken6
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QFormLayout, QHBoxLayout, QLabel, QLayout, QLineEdit, QProgressBar, QPushButton, QStyle, QToolButton,
    QVBoxLayout, QWidget,
)

from nanobot_desktop.engine import (LOCAL_KEY_PLACEHOLDER, PROVIDER_PRESETS, AppSettings, Config, ProviderError,
                                    ProviderPreset, preset_entry, provider_entry)
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.common.palette import error_color
from nanobot_desktop.gui.settings.provider_choice import (PRESETS, ProviderChoice, base_url_problem, preset_label,
                                                          preset_name_for, serving_entry_text)

log = logging.getLogger(__name__)

CHECK_TIMEOUT_S = 15.0


# ----------------------------------------------------------------------------------------- helpers


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


class InlineError(QLabel):
    """A red one-liner under a field; hidden while empty. The red is chosen for the current palette."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._color = ""
        self._restyle()
        self.hide()

    def show_error(self, message: str | None) -> None:
        self.setText(message or "")
        self.setVisible(bool(message))

    def _restyle(self) -> None:
        color = error_color(self.palette()).name()
        if color != self._color:
            self._color = color
            self.setStyleSheet(f"color: {color};")

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()


def with_error(field: QWidget | QLayout, error: InlineError) -> QVBoxLayout:
    """A field with its inline error right under it (a hidden error takes no space)."""
    column = QVBoxLayout()
    column.setSpacing(2)
    if isinstance(field, QLayout):
        column.addLayout(field)
    else:
        column.addWidget(field)
    column.addWidget(error)
    return column


class StatusLine(QWidget):
    """Icon + text for the result of an endpoint check, with a busy bar while one runs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.icon = QLabel(self)
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setFixedWidth(60)
        self.busy.hide()
        self.label = QLabel(self)
        self.label.setAccessibleName(translate("Settings", "Connection status"))
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # word-wrapped labels may be given room for two lines: keep the text at the top, by its icon
        self.label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.busy, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.label, 1)

    def text(self) -> str:
        return self.label.text()

    def set_busy(self, message: str) -> None:
        self.icon.hide()
        self.busy.show()
        self.label.setText(message)

    def set_result(self, ok: bool, message: str) -> None:
        self.busy.hide()
        pixmap = QStyle.StandardPixmap.SP_DialogApplyButton if ok else QStyle.StandardPixmap.SP_MessageBoxCritical
        size = self.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize)
        self.icon.setPixmap(self.style().standardIcon(pixmap).pixmap(size, size))
        self.icon.show()
        self.label.setText(message)


class ProviderForm(QWidget):
    """Preset, base URL, API key and model, with "Refresh models" and "Test connection"."""

    check_finished = Signal(bool, str)
    """(ok, message): a model refresh or connection test ended; the message is what the status line shows."""
    models_loaded = Signal(list)
    """The endpoint's model ids, after a successful refresh or test."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._work = OwnedWork(self)
        self._task: asyncio.Task[None] | None = None
        self._stored: dict[str, tuple[str, str]] = {p.name: (p.api_base or "", "") for p in PROVIDER_PRESETS}
        self._current: str | None = None  # the preset shown; None while nothing is worth remembering
        self.v03 = False  # a nanobot 0.3.x workspace: Ollama and LM Studio are written under their own names

        self.preset_combo = QComboBox(self)
        for preset in PROVIDER_PRESETS:
            self.preset_combo.addItem(preset_label(preset), preset.name)
        self.base_url_edit = QLineEdit(self)
        self.base_url_edit.setPlaceholderText("https://…/v1")
        self.base_url_error = InlineError(self)
        self.api_key_edit = QLineEdit(self)
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.show_key_button = QToolButton(self)
        self.show_key_button.setText(translate("Settings", "Show"))
        self.show_key_button.setCheckable(True)
        self.show_key_button.setToolTip(translate("Settings", "Show or hide the API key"))
        self.api_key_error = InlineError(self)
        self.model_combo = QComboBox(self)
        self.model_combo.setEditable(True)
        self.model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        line_edit = self.model_combo.lineEdit()
        if line_edit is not None:  # always, for an editable combo box
            line_edit.setPlaceholderText(translate("Settings", "Model id, e.g. gpt-4.1-mini"))
            line_edit.setAccessibleName(translate("Settings", "Model"))
        self.model_error = InlineError(self)
        self.refresh_button = QPushButton(translate("Settings", "Refresh models"), self)
        self.test_button = QPushButton(translate("Settings", "Test connection"), self)
        self.status = StatusLine(self)
        self.serving_label = QLabel(self)
        self.serving_label.setObjectName("servingEntry")
        self.serving_label.setWordWrap(True)
        self.serving_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        key_row = QHBoxLayout()
        key_row.addWidget(self.api_key_edit, 1)
        key_row.addWidget(self.show_key_button)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_combo, 1)
        model_row.addWidget(self.refresh_button)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow(translate("Settings", "Provider:"), self.preset_combo)
        form.addRow(translate("Settings", "Base URL:"), with_error(self.base_url_edit, self.base_url_error))
        form.addRow(translate("Settings", "API key:"), with_error(key_row, self.api_key_error))
        form.addRow(translate("Settings", "Model:"), with_error(model_row, self.model_error))
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addStretch(1)
        form.addRow("", test_row)
        form.addRow("", self.status)
        form.addRow(translate("Settings", "Saved as:"), self.serving_label)

        self.preset_combo.currentIndexChanged.connect(self._preset_changed)
        self.show_key_button.toggled.connect(self._toggle_key_visible)
        self.refresh_button.clicked.connect(self.refresh_models)
        self.test_button.clicked.connect(self.test_connection)
        self.base_url_edit.textEdited.connect(lambda _text: self.base_url_error.show_error(None))
        self.api_key_edit.textEdited.connect(lambda _text: self.api_key_error.show_error(None))
        self.model_combo.editTextChanged.connect(lambda _text: self.model_error.show_error(None))
        self._select_preset("custom")

    # --- values ---------------------------------------------------------------------------------------

    def load(self, config: Config, app: AppSettings | None = None) -> None:
        """Show the config's provider; each preset remembers its own stored URL and key."""
        shown = preset_name_for(config, app)
        for preset in PROVIDER_PRESETS:
            entry, _ = provider_entry(config, preset.entry)
            entry_base = entry.api_base if entry is not None else None
            key = entry.api_key.get_secret_value() if entry is not None else ""
            if preset.entry == "custom" and preset.name != shown:
                entry_base, key = None, ""  # the one custom entry belongs to the preset it was saved for
            if key == LOCAL_KEY_PLACEHOLDER:
                key = ""
            self._stored[preset.name] = (entry_base or preset.api_base or "", key)
        self._current = None  # what the fields show now is not a draft of any preset
        self.set_choice(shown, model=config.agents.defaults.model)
        self.serving_label.setText(serving_entry_text(config))

    def set_choice(self, name: str, base_url: str | None = None, api_key: str | None = None,
                   model: str | None = None) -> None:
        """Select a preset and optionally override its URL, key and model (a discovered local server)."""
        self._select_preset(name)
        if base_url is not None:
            self.base_url_edit.setText(base_url)
        if api_key is not None:
            self.api_key_edit.setText(api_key)
        if model is not None:
            self.model_combo.setEditText(model)

    def choice(self) -> ProviderChoice:
        return ProviderChoice(name=self._current or "custom", base_url=self.base_url_edit.text().strip(),
                              api_key=self.api_key_edit.text().strip(), model=self.model_combo.currentText().strip())

    def validate(self, *, need_model: bool = True, need_key: bool = True) -> bool:
        """Show an inline message under each field that is wrong; True when all are fine."""
        choice = self.choice()
        url_problem = base_url_problem(choice.base_url)
        key_problem = None
        if need_key and PRESETS[choice.name].needs_key and not choice.api_key:
            key_problem = translate("Settings", "{provider} needs an API key (or choose a local server preset)").format(
                provider=preset_label(PRESETS[choice.name]))
        model_problem = None
        if need_model and not choice.model:
            model_problem = translate("Settings", "Enter a model id, or pick one after \"Refresh models\"")
        self.base_url_error.show_error(url_problem)
        self.api_key_error.show_error(key_problem)
        self.model_error.show_error(model_problem)
        return not (url_problem or key_problem or model_problem)

    def _select_preset(self, name: str) -> None:
        index = self.preset_combo.findData(name)
        if index == self.preset_combo.currentIndex():
            self._preset_changed(index)
        else:
            self.preset_combo.setCurrentIndex(index)  # emits -> _preset_changed

    def _preset_changed(self, index: int) -> None:
        if self._current is not None:  # switching presets keeps what was typed for the previous one
            self._stored[self._current] = (self.base_url_edit.text(), self.api_key_edit.text())
        name = self.preset_combo.itemData(index)
        self._current = name
        base_url, key = self._stored[name]
        self.base_url_edit.setText(base_url)
        self.api_key_edit.setText(key)
        needs_key = PRESETS[name].needs_key
        self.api_key_edit.setPlaceholderText("sk-…" if needs_key else translate("Settings", "Not needed for a local server (optional)"))
        entry = provider_entry_alias(PRESETS[name], self.v03)
        if entry == "custom":
            saved_as = translate("Settings", "providers.{entry}, a form both the app and the nanobot CLI run (a local "
                                 "server gets the placeholder key \"no-key\"); agents.defaults.provider stays \"auto\" "
                                 "when nanobot's rules pick it for the model")
        else:
            saved_as = translate("Settings", "providers.{entry}, a form both the app and the nanobot CLI run; "
                                 "agents.defaults.provider stays \"auto\" when nanobot's rules pick it for the model")
        self.serving_label.setText(saved_as.format(entry=entry))
        for error in (self.base_url_error, self.api_key_error):
            error.show_error(None)

    def _toggle_key_visible(self, visible: bool) -> None:
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.Normal if visible else QLineEdit.EchoMode.Password)
        self.show_key_button.setText(translate("Settings", "Hide") if visible else translate("Settings", "Show"))

    # --- endpoint checks ---------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def refresh_models(self) -> asyncio.Task[None] | None:
        """Fill the model list from the endpoint's /models (runs in the background)."""
        return self._start(test=False)

    def test_connection(self) -> asyncio.Task[None] | None:
        """List the endpoint's models and say plainly whether that worked."""
        return self._start(test=True)

    def cancel_check(self) -> None:
        """Stop a running check; the widgets are reset here, since a task cancelled before its
        first step never runs its own clean-up."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            self._set_busy(False)
            self.status.set_result(False, translate("Settings", "Cancelled."))

    def _start(self, *, test: bool) -> asyncio.Task[None] | None:
        if not self.validate(need_model=False, need_key=False):
            return None
        self.cancel_check()
        self._set_busy(True)
        self.status.set_busy(translate("Settings", "Testing the connection…") if test else translate("Settings", "Loading models…"))
        task = self._work.spawn(self._check(self.choice(), test))
        self._task = task
        return task

    async def _check(self, choice: ProviderChoice, test: bool) -> None:
        models: list[str] | None = None
        try:
            models = await fetch_models(choice)
        except ProviderError as error:
            ok, message = False, error.message
        except Exception as error:  # anything else still becomes one line, never a traceback
            log.warning("model list from %s failed", choice.base_url, exc_info=True)
            ok, message = False, translate("Settings", "The endpoint check failed: {reason}").format(reason=one_line(error))
        else:
            ok, message = True, _describe_models(models, choice.model, test)
        if not shiboken6.isValid(self):  # the dialog was deleted while the endpoint answered
            return
        if models is not None:
            self.set_models(models)
            self.models_loaded.emit(models)
        self._set_busy(False)
        self.status.set_result(ok, message)
        self.check_finished.emit(ok, message)

    def _set_busy(self, busy: bool) -> None:
        self.refresh_button.setEnabled(not busy)
        self.test_button.setEnabled(not busy)

    def set_models(self, models: list[str]) -> None:
        """Offer these model ids in the model list, keeping the typed model (or taking the first)."""
        typed = self.model_combo.currentText()
        self.model_combo.clear()
        self.model_combo.addItems(models)
        self.model_combo.setEditText(typed or (models[0] if models else ""))


def provider_entry_alias(preset: ProviderPreset, v03: bool) -> str:
    """The `providers.<key>` a preset is written to, as the file spells it."""
    name = preset_entry(preset, v03)
    return {"lm_studio": "lmStudio", "azure_openai": "azureOpenai"}.get(name, name)


def _describe_models(models: list[str], model: str, test: bool) -> str:
    if not models:
        if test:
            return translate("Settings", "Connected: 0 models (the server has none yet; for Ollama run "
                             "`ollama pull <model>` first)")
        return translate("Settings", "Loaded 0 models from the endpoint (the server has none yet; for Ollama run "
                         "`ollama pull <model>` first)")
    count = len(models)  # pyside6-lupdate sees a plural only when its count is a plain name
    if test:
        text = translate("Settings", "Connected: %n model(s)", None, count)
    else:
        text = translate("Settings", "Loaded %n model(s) from the endpoint", None, count)
    if model and model not in models:
        return translate("Settings", "{result}; '{model}' is not one of them").format(result=text, model=model)
    return text


async def fetch_models(choice: ProviderChoice) -> list[str]:
    """The endpoint's model ids, one attempt with a short timeout; raises ProviderError."""
    from nanobot_desktop.engine import make_provider

    provider = make_provider(choice.name, choice.api_key, choice.base_url, choice.model)
    provider.max_retries = 0
    provider.timeout_s = CHECK_TIMEOUT_S
    try:
        return await provider.list_models()
    finally:
        await provider.close()
