"""The Usage page's chart: tokens or cost per day, stacked by source, drawn with Qt's own QtCharts.

QtCharts (PySide6-Addons) was chosen over pyqtgraph: on this machine `import PySide6.QtCharts` takes
~15 ms and a chart view ~50 ms, where pyqtgraph with numpy took ~2 s under the same load (~0.3 s
idle), which alone would break the page's 300 ms budget. Its cost is the Addons wheel (175 MB to
download, of which the app uses libQt6Charts). This is the only module that imports it, and only the
Usage page imports this module, when it is first shown: the empty window never loads it (tested).
"""

from __future__ import annotations

from PySide6.QtCharts import QBarCategoryAxis, QBarSet, QCategoryAxis, QChart, QChartView, QStackedBarSeries, QValueAxis
from PySide6.QtCore import QEvent, QMargins, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QWidget

from nanobot_desktop.gui.background.usage_model import ChartData, source_words
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.palette import palette_colors

# One colour per source, readable on light and dark bases alike (the CLI's sources in muted tones).
from nanobot_desktop.gui.common.design import USAGE_FALLBACK_COLOR as FALLBACK_COLOR
from nanobot_desktop.gui.common.design import USAGE_SOURCE_COLORS as SOURCE_COLORS


class UsageChart(QChartView):
    """A stacked bar per day; `show_data` replaces what is drawn."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usageChart")
        self.setAccessibleName(translate("Usage", "Usage per day, by source"))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setMinimumHeight(220)
        chart = QChart()
        chart.setMargins(QMargins(4, 4, 4, 4))
        chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)
        self.setChart(chart)
        self.data: ChartData | None = None

    def show_data(self, data: ChartData) -> None:
        self.data = data
        chart = self.chart()
        chart.removeAllSeries()
        for axis in chart.axes():
            chart.removeAxis(axis)
        colors = palette_colors(self.palette())
        chart.setBackgroundBrush(colors.base)
        chart.setBackgroundRoundness(0)
        chart.legend().setLabelColor(colors.text)
        series = QStackedBarSeries()
        series.setBarWidth(0.8)
        for source, values in data.series:
            bar = QBarSet(source_words(source))
            bar.append(list(values))
            bar.setColor(QColor(SOURCE_COLORS.get(source, FALLBACK_COLOR)))
            bar.setBorderColor(colors.base)
            series.append(bar)
        chart.addSeries(series)
        days_axis = QBarCategoryAxis()  # categories must differ: day and month, upright to fit 30 of them
        days_axis.append([day.strftime("%d.%m") for day in data.days])
        days_axis.setLabelsAngle(-90)
        values_axis = values_axis_for(max((data.day_total(day) for day in data.days), default=0.0), data.measure)
        for axis in (days_axis, values_axis):
            axis.setLabelsColor(colors.text)
            axis.setGridLineColor(colors.card_border)
            axis.setLinePenColor(colors.card_border)
        chart.addAxis(days_axis, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(values_axis, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(days_axis)
        series.attachAxis(values_axis)
        chart.legend().setVisible(bool(data.series))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.data is not None:
            self.show_data(self.data)  # light <-> dark: the chart's colours come from the palette


def values_axis_for(top: float, measure: str) -> QCategoryAxis:
    """The values axis: round steps above the largest day (0, 50k, 100k, …), labelled as the cards
    write numbers ("150k", "1.5M", "$0.25"), not as printf would ("150000").

    QValueAxis finds the round steps; its labels can only be printf formats, so the steps become the
    named values of a QCategoryAxis (a QValueAxis too: range and tick count stay readable)."""
    steps = QValueAxis()
    # At least one unit of the labels' precision per step (a token, a cent): an empty month or a few
    # tokens otherwise got steps of 0.2 tokens, labelled 0, 0, 0, 1, 1, 1.
    unit = 0.01 if measure == "cost" else 1.0
    steps.setRange(0, max(top, unit * (steps.tickCount() - 1)))
    steps.applyNiceNumbers()
    axis = QCategoryAxis()
    axis.setLabelsPosition(QCategoryAxis.AxisLabelsPosition.AxisLabelsPositionOnValue)
    axis.setRange(steps.min(), steps.max())
    axis.setTickCount(steps.tickCount())
    axis.setStartValue(steps.min())
    count = steps.tickCount()
    for index in range(count):
        value = steps.min() + (steps.max() - steps.min()) * index / (count - 1)
        axis.append(axis_label(value, measure), value)
    return axis


def axis_label(value: float, measure: str) -> str:
    """One step's label: "$0.25" for cost; tokens as "0", "750", "12.5k", "1.5M"."""
    if measure == "cost":
        return f"${value:.2f}"
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1_000:
        return f"{value / 1_000:g}k"
    return f"{value:g}"
