"""The Usage page: what the agent's model calls cost, per day, source, model and conversation.

It reads the usage record (the app's calls and the nanobot CLI's, engine/usage) in an executor each
time it is shown and whenever new rows were written while it is shown, so the GUI thread never waits
on SQLite. The chart (usage_chart.py, QtCharts) is built with the first summary the page shows, so
neither the empty window nor a page nobody opens loads QtCharts.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFrame, QGridLayout, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QSplitter, QVBoxLayout, QWidget)

from nanobot_desktop.engine import BudgetCrossed, UsageRecorded, atomic_write_text
from nanobot_desktop.gui.background.panel import BackgroundPanel
from nanobot_desktop.gui.background.usage_model import (UsageTableModel, chart_data, format_cost, format_share,
                                                        format_tokens, model_lines, session_lines)
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.keyed_table import KeyedTableView

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine, UsageSummary
    from nanobot_desktop.gui.background.usage_chart import UsageChart
    from collections.abc import Mapping

    from nanobot_desktop.gui.common.bridge import EngineBridge, Handler

log = logging.getLogger(__name__)

REFRESH_DELAY_MS = 800  # rows written in a burst (a turn's several calls) refresh the page once


class TotalsCard(QFrame):
    """One period's totals: tokens, cost, calls."""

    def __init__(self, title: str, object_name: str) -> None:
        super().__init__()
        self.setObjectName(object_name)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        self.title = QLabel(title)
        self.tokens = QLabel("–")
        self.tokens.setObjectName(f"{object_name}Tokens")
        font = self.tokens.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        self.tokens.setFont(font)
        self.cost = QLabel("–")
        self.cost.setObjectName(f"{object_name}Cost")
        for label in (self.title, self.tokens, self.cost):
            layout.addWidget(label)

    def show_totals(self, totals: Any) -> None:
        self.tokens.setText(translate("Usage", "{tokens} tokens").format(tokens=format_tokens(totals.tokens)))
        calls = totals.calls  # a plain name: pyside6-lupdate skips a plural whose count is an attribute
        self.cost.setText(translate("Usage", "{cost} · %n call(s)", None, calls).format(cost=format_cost(totals)))
        self.setAccessibleName(f"{self.title.text()}: {self.tokens.text()}, {self.cost.text()}")


class UsageView(BackgroundPanel):
    """The page (see the module docstring)."""

    panel_title = QT_TRANSLATE_NOOP("Panels", "Usage")  # the dock's title (the window translates it)
    open_session_requested = Signal(str)
    """A conversation was double-clicked in the by-conversation table: show it in the chat."""
    loaded = Signal()
    """A summary was read and shown (tests, the benchmark)."""

    def __init__(self, engine: Engine, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(engine, bridge, "usageView", REFRESH_DELAY_MS, parent)
        self._timer.setSingleShot(True)
        self.summary: UsageSummary | None = None
        self.chart: UsageChart | None = None
        self._loading: asyncio.Task[Any] | None = None
        self._again = False

        self.day_card = TotalsCard(translate("Usage", "Today"), "usageToday")
        self.week_card = TotalsCard(translate("Usage", "Last 7 days"), "usageWeek")
        self.month_card = TotalsCard(translate("Usage", "Last 30 days"), "usageMonth")
        self.cache_label = QLabel()
        self.cache_label.setObjectName("usageCacheShare")
        self.cache_label.setWordWrap(True)
        cards = QGridLayout()
        for column, card in enumerate((self.day_card, self.week_card, self.month_card)):
            cards.addWidget(card, 0, column)
        cards.addWidget(self.cache_label, 1, 0, 1, 3)

        self.notice = QLabel()
        self.notice.setObjectName("usageNotice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        self.resume_button = QPushButton(translate("Usage", "Resume background work"))
        self.resume_button.setObjectName("usageResume")
        self.resume_button.setToolTip(translate("Usage", "Let the heartbeat, scheduled jobs and subagents run again "
                                                         "although the budget is spent"))
        self.resume_button.clicked.connect(self._resume)
        self.resume_button.hide()
        notice_row = QHBoxLayout()
        notice_row.addWidget(self.notice, 1)
        notice_row.addWidget(self.resume_button)

        self.measure = QComboBox()
        self.measure.setObjectName("usageMeasure")
        self.measure.setAccessibleName(translate("Usage", "Chart shows"))
        self.measure.addItem(translate("Usage", "Tokens per day"), "tokens")
        self.measure.addItem(translate("Usage", "Cost per day"), "cost")
        self.measure.currentIndexChanged.connect(self._show_chart)
        self.prices_button = QPushButton(translate("Usage", "Prices…"))
        self.prices_button.setObjectName("usagePrices")
        self.prices_button.clicked.connect(self.open_prices)
        self.budget_button = QPushButton(translate("Usage", "Budget…"))
        self.budget_button.setObjectName("usageBudget")
        self.budget_button.clicked.connect(self.open_budget)
        self.export_button = QPushButton(translate("Usage", "Export CSV…"))
        self.export_button.setObjectName("usageExport")
        self.export_button.clicked.connect(self._choose_export_file)
        toolbar = QHBoxLayout()
        toolbar.addWidget(self.measure)
        toolbar.addStretch(1)
        for button in (self.prices_button, self.budget_button, self.export_button):
            toolbar.addWidget(button)

        self.chart_holder = QVBoxLayout()
        self.models = UsageTableModel(self)
        self.model_table = KeyedTableView(self.models, "usageByModel")
        self.model_table.setAccessibleName(translate("Usage", "Usage by model"))
        self.sessions = UsageTableModel(self)
        self.session_table = KeyedTableView(self.sessions, "usageBySession")
        self.session_table.setAccessibleName(translate("Usage", "Usage by conversation"))
        self.session_table.setToolTip(translate("Usage", "Double-click a conversation to open it"))
        self.session_table.doubleClicked.connect(self._open_session)
        for table in (self.model_table, self.session_table):
            header = table.horizontalHeader()
            header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            # Sized by the rows in view, not by every row: Qt's default (1,000 rows) asked the model for
            # each cell's text, font, alignment... of every conversation, ~60,000 Python calls and most of
            # a second of the GUI thread over 500 conversations (bench/usage_page.py).
            header.setResizeContentsPrecision(0)
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the name takes what is left
        tables = QSplitter()
        for title, table in ((translate("Usage", "By model"), self.model_table),
                             (translate("Usage", "By conversation"), self.session_table)):
            box = QWidget()
            box_layout = QVBoxLayout(box)
            box_layout.setContentsMargins(0, 0, 0, 0)
            box_layout.addWidget(QLabel(title))
            box_layout.addWidget(table)
            tables.addWidget(box)

        layout = QVBoxLayout(self)
        layout.addLayout(cards)
        layout.addLayout(notice_row)
        layout.addLayout(toolbar)
        layout.addLayout(self.chart_holder, 3)
        layout.addWidget(tables, 2)
        self.setAccessibleName(translate("Usage", "Usage"))
        self._dialogs: list[QWidget] = []
        self._listen()

    # --- loading -------------------------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.refresh()

    def refresh(self) -> None:
        """Read the record again (in an executor) and show it; one read at a time, the last one wins."""
        if self._loading is not None and not self._loading.done():
            self._again = True
            return
        self._again = False
        usage = self.engine.usage
        loop = asyncio.get_running_loop()
        # Handed to the executor now, not when the task first runs: the reading overlaps what the GUI
        # thread does next (laying out and painting the page as it is shown).
        reading = asyncio.gather(loop.run_in_executor(None, usage.reader.summary, usage.prices()),
                                 loop.run_in_executor(None, self._titles))
        self._loading = self._work.spawn(self._load(reading))

    async def _load(self, reading: Awaitable[tuple[UsageSummary, dict[str, str]]]) -> None:
        summary, titles = await reading
        self._show(summary, titles)
        if self._again:  # asked again while reading: once this task is done, read once more
            self._again = False
            self._work.post(self.refresh)

    def _titles(self) -> dict[str, str]:
        """Session key -> title, from the session index (worker thread; it has a lock of its own)."""
        try:
            return {info.key: info.title for info in self.engine.session_index.list_sessions(check=False)}
        except Exception:  # titles are a nicety: the keys are shown instead
            log.debug("no session titles for the usage page", exc_info=True)
            return {}

    def _show(self, summary: UsageSummary, titles: dict[str, str]) -> None:
        self.summary = summary
        self.day_card.show_totals(summary.day)
        self.week_card.show_totals(summary.week)
        self.month_card.show_totals(summary.month)
        self.cache_label.setText(translate("Usage", "Input read from the prompt cache (30 days): {share}").format(
            share=format_share(summary.month.cached_share)))
        self.model_table.show_records(model_lines(summary))
        self.session_table.show_records(session_lines(summary, titles))
        self._show_notice()
        self._show_chart()
        self.loaded.emit()

    def _show_chart(self) -> None:
        if self.summary is None:
            return
        if self.chart is None:
            # QtCharts is loaded and the chart built with the first summary, not before it: built while
            # the record is read, the two took turns on the GIL and each waited for the other.
            from nanobot_desktop.gui.background.usage_chart import UsageChart  # QtCharts: first shown only

            self.chart = UsageChart(self)
            self.chart_holder.addWidget(self.chart)
        data = chart_data(self.summary, str(self.measure.currentData()))
        if data != self.chart.data:  # the page shown again with nothing new: the chart's items stay
            self.chart.show_data(data)

    def _show_notice(self) -> None:
        usage = self.engine.usage
        held = usage.budget_hold()
        lines = [translate("Usage", "Background work is paused: {why}.").format(why=held)] if held else []
        if usage.problem:
            lines.append(translate("Usage", "Usage record: {problem}").format(problem=usage.problem))
        if self.summary is not None:
            lines += self.summary.notes
        self.notice.setText("\n".join(lines))
        self.notice.setVisible(bool(lines))
        self.resume_button.setVisible(bool(held))

    def _handlers(self) -> Mapping[type, Handler]:
        return {UsageRecorded: self._on_usage_recorded, BudgetCrossed: lambda _event: self._show_notice()}

    def _on_usage_recorded(self, _event: UsageRecorded) -> None:
        if self.isVisible():
            self._timer.start()  # refresh once the burst is over
        else:
            self._show_notice()

    # --- actions ---------------------------------------------------------------------------------------------

    def _resume(self) -> None:
        self.engine.usage.resume_background()
        self._show_notice()

    def _open_session(self, index: Any) -> None:
        key = self.session_table.selected_key()
        if key:
            self.open_session_requested.emit(key)

    def _choose_export_file(self) -> None:
        dialog = QFileDialog(self, translate("Usage", "Export usage as CSV"), str(Path.home() / "nanobot-usage.csv"),
                             translate("Usage", "CSV files (*.csv)"))
        dialog.setObjectName("usageExportDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("csv")
        dialog.fileSelected.connect(lambda path: self._work.spawn(self.export_csv(Path(path))))
        self._dialogs.append(dialog)
        dialog.open()  # never exec(): the event loop keeps running

    async def export_csv(self, path: Path) -> None:
        """Every recorded call into `path` (written atomically), off the GUI thread; the notice says how it went."""
        usage = self.engine.usage
        prices = usage.prices()

        def write() -> None:
            atomic_write_text(path, usage.reader.export_csv(prices))

        try:
            await asyncio.get_running_loop().run_in_executor(None, write)
        except OSError as error:
            self.notice.setText(translate("Usage", "The CSV file was not written: {why}").format(why=error))
            self.notice.show()
            return
        self.notice.setText(translate("Usage", "Exported to {path}").format(path=path))
        self.notice.show()

    def open_prices(self) -> None:
        from nanobot_desktop.gui.background.usage_dialogs import PricesDialog

        seen = [model for model, _totals in self.summary.by_model] if self.summary is not None else []
        dialog = PricesDialog(self.engine, self, seen)
        dialog.finished.connect(lambda _result: self.refresh())
        self._dialogs.append(dialog)
        dialog.open()

    def open_budget(self) -> None:
        from nanobot_desktop.gui.background.usage_dialogs import BudgetDialog

        dialog = BudgetDialog(self.engine, self)
        dialog.finished.connect(lambda _result: self._after_budget())
        self._dialogs.append(dialog)
        dialog.open()

    def _after_budget(self) -> None:
        self._work.spawn(self._check_budget())

    async def _check_budget(self) -> None:
        await self.engine.usage.check_budget()
        self.refresh()
