"""The Usage page's dialogs: the price table and the budget.

Both are opened with `open()` (never `exec()`) and save through `Engine.update_config` into the app's
own desktop.json (`usagePrices`, `usageBudget`); a value that is not a number is shown in the dialog
and nothing is saved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from nanobot_desktop.engine import DEFAULT_PRICES, ConfigError, ModelPrice, model_key
from nanobot_desktop.gui.common.i18n import translate

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

PRICE_FIELDS = ("input", "output", "cacheRead", "cacheWrite")


def _number(text: str) -> float | None:
    return None if not text.strip() else float(text.strip().replace(",", "."))


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


class PricesDialog(QDialog):
    """One row per model: US dollars per million tokens; the defaults are listed and may be changed."""

    def __init__(self, engine: Engine, parent: QWidget | None = None, extra_models: list[str] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usagePricesDialog")
        self.setWindowTitle(translate("Usage", "Prices per million tokens (US dollars)"))
        self.engine = engine
        own = {model_key(name): price for name, price in engine.app_settings.usage_prices.items()}
        models = sorted({*DEFAULT_PRICES, *own, *(model_key(m) for m in extra_models or [])})
        self.table = QTableWidget(len(models), 5)
        self.table.setObjectName("usagePriceTable")
        self.table.setAccessibleName(translate("Usage", "Prices"))
        self.table.setHorizontalHeaderLabels([translate("Usage", "Model"), translate("Usage", "Input"),
                                              translate("Usage", "Output"), translate("Usage", "Cache read"),
                                              translate("Usage", "Cache write")])
        self.table.verticalHeader().hide()
        for row, model in enumerate(models):
            price = own.get(model)
            values = ((price.input, price.output, price.cache_read, price.cache_write) if price is not None else
                      _default_values(model))
            self.table.setItem(row, 0, QTableWidgetItem(model))
            for column, value in enumerate(values, 1):
                self.table.setItem(row, column, QTableWidgetItem(_cell(value)))
        self.table.resizeColumnsToContents()
        add = QPushButton(translate("Usage", "Add a model"))
        add.setObjectName("usageAddPrice")
        add.clicked.connect(self._add_row)
        note = QLabel(translate("Usage", "An empty input or output price means no price: those calls show "
                                         "\"no price\", not $0. An empty cache price bills cached tokens as input."))
        note.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("usagePricesError")
        self.error.setWordWrap(True)
        self.error.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (note, self.table, add, self.error, buttons):
            layout.addWidget(widget)
        self.resize(640, 480)

    def _add_row(self) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column in range(5):
            self.table.setItem(row, column, QTableWidgetItem(""))
        self.table.setCurrentCell(row, 0)
        first = self.table.item(row, 0)
        if first is not None:
            self.table.editItem(first)

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def prices(self) -> dict[str, dict[str, float]]:
        """The rows that differ from the defaults (raises ValueError naming the bad cell)."""
        own: dict[str, dict[str, float]] = {}
        for row in range(self.table.rowCount()):
            model = model_key(self._text(row, 0))
            texts = [self._text(row, column) for column in range(1, 5)]
            try:
                values = [_number(text) for text in texts]
            except ValueError:
                raise ValueError(translate("Usage", "Row {row} ({model}): a price must be a number").format(
                    row=row + 1, model=model or "?")) from None
            if not model or values[0] is None or values[1] is None:
                continue  # no price for this model
            if any(v is not None and v < 0 for v in values):
                raise ValueError(translate("Usage", "Row {row} ({model}): a price cannot be negative").format(
                    row=row + 1, model=model))
            if tuple(values) == _default_values(model):
                continue
            own[model] = {name: value for name, value in zip(PRICE_FIELDS, values, strict=True) if value is not None}
        return own

    def save(self) -> None:
        try:
            self.engine.update_config({"app.usagePrices": self.prices()})
        except (ValueError, ConfigError) as error:
            self.error.setText(str(error))
            self.error.show()
            return
        self.accept()


def _default_values(model: str) -> tuple[float | None, ...]:
    price: ModelPrice | None = DEFAULT_PRICES.get(model)
    return (None, None, None, None) if price is None else (price.input, price.output, price.cache_read, price.cache_write)


class BudgetDialog(QDialog):
    """A daily and a monthly limit in US dollars (0: none)."""

    def __init__(self, engine: Engine, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usageBudgetDialog")
        self.setWindowTitle(translate("Usage", "Usage budget"))
        self.engine = engine
        budget = engine.app_settings.usage_budget
        self.daily = self._spin("usageDailyLimit", budget.daily)
        self.monthly = self._spin("usageMonthlyLimit", budget.monthly)
        form = QFormLayout()
        form.addRow(translate("Usage", "Daily limit"), self.daily)
        form.addRow(translate("Usage", "Monthly limit"), self.monthly)
        note = QLabel(translate("Usage", "At 80 % you get a notification. At 100 % the heartbeat, scheduled jobs and "
                                         "subagents wait until you resume them on the Usage page; chats are never "
                                         "stopped. Only calls with a price count."))
        note.setWordWrap(True)
        note.setTextFormat(Qt.TextFormat.PlainText)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(buttons)

    def _spin(self, name: str, value: float | None) -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setObjectName(name)
        spin.setRange(0, 1_000_000)
        spin.setDecimals(2)
        spin.setPrefix("$")
        spin.setSpecialValueText(translate("Usage", "no limit"))
        spin.setValue(value or 0)
        return spin

    def save(self) -> None:
        budget = {name: spin.value() for name, spin in (("daily", self.daily), ("monthly", self.monthly))
                  if spin.value() > 0}
        self.engine.update_config({"app.usageBudget": budget})
        self.accept()
