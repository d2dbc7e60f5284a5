"""The providers configured beside the default one (Settings → Providers): each with its own key and URL.

Every row is one `providers.<entry>` block: its models appear in the model switcher, grouped under
its name, and a chat that picks one of them is sent to that endpoint with that key. What the rows
mean for the file is `provider_choice.provider_patch`; this module is only the widgets.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QToolButton, QVBoxLayout, QWidget,
)

from nanobot_desktop.engine import (LOCAL_KEY_PLACEHOLDER, PROVIDER_PRESETS, AppSettings, Config, preset_entry,
                                    provider_entries)
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.settings.provider_choice import (PRESETS, ProviderChoice, base_url_problem, duplicate_problem,
                                                          entry_preset, preset_label)
from nanobot_desktop.gui.settings.provider_form import InlineError


class ProviderRow(QWidget):
    """One more provider: preset, base URL, API key and a Remove button."""

    remove_requested = Signal(object)
    """This row (the list takes it away and remembers the block it stood for)."""

    def __init__(self, parent: QWidget | None = None, loaded_entry: str | None = None) -> None:
        super().__init__(parent)
        self.loaded_entry = loaded_entry  # the registry name of the block it was loaded from, if any
        self.preset_combo = QComboBox(self)
        self.preset_combo.setAccessibleName(translate("Settings", "Provider"))
        for preset in PROVIDER_PRESETS:
            self.preset_combo.addItem(preset_label(preset), preset.name)
        self.base_url_edit = QLineEdit(self)
        self.base_url_edit.setAccessibleName(translate("Settings", "Base URL"))
        self.base_url_edit.setPlaceholderText("https://…/v1")
        self.api_key_edit = QLineEdit(self)
        self.api_key_edit.setAccessibleName(translate("Settings", "API key"))
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.remove_button = QToolButton(self)
        self.remove_button.setText(translate("Settings", "Remove"))
        self.remove_button.setToolTip(translate("Settings", "Remove this provider (its key is cleared when you save)"))
        self.error = InlineError(self)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.preset_combo, 0, 0)
        grid.addWidget(self.base_url_edit, 0, 1)
        grid.addWidget(self.api_key_edit, 0, 2)
        grid.addWidget(self.remove_button, 0, 3)
        grid.addWidget(self.error, 1, 0, 1, 4)
        grid.setColumnStretch(1, 3)
        grid.setColumnStretch(2, 2)
        self.preset_combo.currentIndexChanged.connect(self._preset_changed)
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit(self))
        self.base_url_edit.textEdited.connect(lambda _text: self.error.show_error(None))
        self.api_key_edit.textEdited.connect(lambda _text: self.error.show_error(None))
        self._preset_changed(self.preset_combo.currentIndex())

    def set_values(self, preset: str, base_url: str, api_key: str) -> None:
        self.preset_combo.setCurrentIndex(self.preset_combo.findData(preset))
        self.base_url_edit.setText(base_url)
        self.api_key_edit.setText("" if api_key == LOCAL_KEY_PLACEHOLDER else api_key)

    def choice(self) -> ProviderChoice:
        return ProviderChoice(name=self.preset_combo.currentData(), base_url=self.base_url_edit.text().strip(),
                              api_key=self.api_key_edit.text().strip(), model="")

    def validate(self) -> bool:
        choice = self.choice()
        problem = base_url_problem(choice.base_url)
        if problem is None and PRESETS[choice.name].needs_key and not choice.api_key:
            problem = translate("Settings", "{provider} needs an API key").format(provider=preset_label(PRESETS[choice.name]))
        self.error.show_error(problem)
        return problem is None

    def _preset_changed(self, index: int) -> None:
        preset = PRESETS[self.preset_combo.itemData(index)]
        self.base_url_edit.setText(preset.api_base or "")
        self.api_key_edit.setPlaceholderText(
            "sk-…" if preset.needs_key else translate("Settings", "Not needed for a local server (optional)"))
        self.error.show_error(None)


class MoreProviders(QWidget):
    """The list of providers beside the default one, with "Add a provider"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ProviderRow] = []
        self._removed: list[str] = []
        self.v03 = False  # a nanobot 0.3.x workspace (Ollama and LM Studio have blocks of their own)
        title = QLabel(translate("Settings", "More providers"), self)
        title.setObjectName("sectionTitle")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        note = QLabel(translate("Settings", "Each keeps its own key and URL; their models appear in the model switcher "
                                "beside the default's."), self)
        note.setWordWrap(True)
        self.add_button = QPushButton(translate("Settings", "Add a provider"), self)
        self.error = InlineError(self)
        self._rows_box = QVBoxLayout()
        self._rows_box.setContentsMargins(0, 0, 0, 0)
        add_row = QHBoxLayout()
        add_row.addWidget(self.add_button)
        add_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(note)
        layout.addLayout(self._rows_box)
        layout.addWidget(self.error)
        layout.addLayout(add_row)
        self.add_button.clicked.connect(lambda: self.add_row())

    def load(self, config: Config, app: AppSettings | None, default_entry: str) -> None:
        """One row for every configured block except the default's."""
        for entry in provider_entries(config):
            if entry.name == default_entry:
                continue
            row = self.add_row(loaded_entry=entry.name)
            spec_base = PRESETS[entry_preset(config, entry, app)].api_base or ""
            row.set_values(entry_preset(config, entry, app), entry.api_base or spec_base, entry.api_key)
        self._removed.clear()

    def add_row(self, loaded_entry: str | None = None) -> ProviderRow:
        row = ProviderRow(self, loaded_entry)
        row.remove_requested.connect(self._remove)
        self.rows.append(row)
        self._rows_box.addWidget(row)
        row.show()  # at once, not on the layout's next pass: a Save clicked right away checks it
        if loaded_entry is None:
            row.preset_combo.setFocus()
        return row

    def _remove(self, row: ProviderRow) -> None:
        if row.loaded_entry is not None:
            self._removed.append(row.loaded_entry)
        self.rows.remove(row)
        row.hide()
        row.deleteLater()
        self.error.show_error(None)

    def choices(self) -> tuple[ProviderChoice, ...]:
        return tuple(row.choice() for row in self.rows)

    def removed(self) -> tuple[str, ...]:
        """The blocks taken off the list: rows removed, and rows switched to another provider."""
        switched = [row.loaded_entry for row in self.rows
                    if row.loaded_entry is not None and preset_entry(PRESETS[row.choice().name], self.v03) != row.loaded_entry]
        return tuple(dict.fromkeys([*self._removed, *switched]))

    def validate(self, default: ProviderChoice, v03: bool) -> bool:
        """Inline messages under each wrong row, and under the list when two rows share one block."""
        rows_ok = all([row.validate() for row in self.rows])  # every row shows its own problem
        problem = duplicate_problem([default, *self.choices()], v03)
        self.error.show_error(problem)
        return rows_ok and problem is None
