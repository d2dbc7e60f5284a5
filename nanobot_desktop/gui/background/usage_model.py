"""What the Usage page shows, from the engine's UsageSummary: the chart's series, the tables, the words.

Kept apart from the chart (usage_chart.py, the only module that imports QtCharts) so the numbers the
chart draws are tested without drawing it, and so the page can show its totals before the charting
library is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt

from nanobot_desktop.engine import SessionKey, Totals, UsageSummary
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.keyed_table import Index, KeyedTableModel

CONTEXT = "Usage"
# The app's own sources first, then the nanobot CLI's (its rows carry 0.3.5's source vocabulary).
SOURCE_WORDS: dict[str, object] = {
    "chat": QT_TRANSLATE_NOOP("Usage", "Chat"),
    "consolidation": QT_TRANSLATE_NOOP("Usage", "Memory"),
    "heartbeat": QT_TRANSLATE_NOOP("Usage", "Heartbeat"),
    "cron": QT_TRANSLATE_NOOP("Usage", "Scheduled"),
    "subagent": QT_TRANSLATE_NOOP("Usage", "Subagents"),
    "cli:user": QT_TRANSLATE_NOOP("Usage", "CLI: chats"),
    "cli:api": QT_TRANSLATE_NOOP("Usage", "CLI: API"),
    "cli:cron": QT_TRANSLATE_NOOP("Usage", "CLI: scheduled"),
    "cli:dream": QT_TRANSLATE_NOOP("Usage", "CLI: Dream"),
    "cli:system": QT_TRANSLATE_NOOP("Usage", "CLI: system"),
}
SOURCE_ORDER = tuple(SOURCE_WORDS)
MEASURES = ("tokens", "cost")


def source_words(source: str) -> str:
    return translate("Usage", SOURCE_WORDS[source]) if source in SOURCE_WORDS else source


def format_tokens(count: int) -> str:
    """1234 -> "1.2k", 3_400_000 -> "3.4M"."""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}k"
    return str(count)


def format_cost(totals: Totals) -> str:
    """"$1.23"; "no price" when no call had one (never $0.00); "≥ $1.23" when some had none."""
    if totals.calls == 0:
        return "$0.00"
    if not totals.priced:
        return translate("Usage", "no price")
    amount = f"${totals.cost:.2f}" if totals.cost >= 0.01 or totals.cost == 0 else f"${totals.cost:.4f}"
    return f"≥ {amount}" if totals.unpriced_calls else amount


def format_share(share: float | None) -> str:
    return translate("Usage", "not reported") if share is None else f"{share * 100:.0f} %"


@dataclass(frozen=True)
class ChartData:
    """Bars of the chart: one category per day, one stacked series per source (in SOURCE_ORDER, only
    the sources with something in them)."""

    days: tuple[date, ...]
    series: tuple[tuple[str, tuple[float, ...]], ...]
    measure: str

    def total(self) -> float:
        return sum(sum(values) for _source, values in self.series)

    def day_total(self, day: date) -> float:
        index = self.days.index(day)
        return sum(values[index] for _source, values in self.series)


def chart_data(summary: UsageSummary, measure: str = "tokens") -> ChartData:
    """The chart's numbers: tokens (input + output) or cost (priced calls only) per day and source."""
    days = tuple(sorted(summary.days))
    sources = {source for by_source in summary.days.values() for source in by_source}
    ordered = [s for s in SOURCE_ORDER if s in sources] + sorted(sources - set(SOURCE_ORDER))
    series = []
    for source in ordered:
        values = tuple(_measure(summary.days[day].get(source), measure) for day in days)
        if any(values):
            series.append((source, values))
    return ChartData(days, tuple(series), measure)


def _measure(totals: Totals | None, measure: str) -> float:
    if totals is None:
        return 0.0
    return totals.cost if measure == "cost" else float(totals.tokens)


@dataclass(frozen=True)
class UsageLine:
    """One row of the by-model or by-conversation table."""

    key: str
    title: str
    totals: Totals


class UsageTableModel(KeyedTableModel):
    """Model or conversation, calls, input, output, cached share, cost (the last 30 days)."""

    COLUMNS = (QT_TRANSLATE_NOOP("Usage", "Name"), QT_TRANSLATE_NOOP("Usage", "Calls"),
               QT_TRANSLATE_NOOP("Usage", "Input"), QT_TRANSLATE_NOOP("Usage", "Output"),
               QT_TRANSLATE_NOOP("Usage", "Cached"), QT_TRANSLATE_NOOP("Usage", "Cost"))
    CONTEXT = CONTEXT
    NAME, CALLS, INPUT, OUTPUT, CACHED, COST = range(6)
    _ROLES = frozenset(int(role) for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
                                              Qt.ItemDataRole.TextAlignmentRole, KeyedTableModel.RecordRole,
                                              KeyedTableModel.KeyRole))

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # The view asks each cell in view for eight roles to paint and size it, five of which this model
        # never fills: answered here, before the index and the record are looked at.
        return super().data(index, role) if int(role) in self._ROLES else None

    def key_of(self, record: Any) -> str:
        return str(record.key)

    def cell(self, record: Any, column: int, role: int) -> Any:
        totals: Totals = record.totals
        if role == Qt.ItemDataRole.DisplayRole:
            return (record.title, str(totals.calls), format_tokens(totals.input_tokens),
                    format_tokens(totals.output_tokens), format_share(totals.cached_share),
                    format_cost(totals))[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [record.title, translate("Usage", "{input} input tokens ({cached} from the cache), {output} output tokens").format(
                input=f"{totals.input_tokens:,}", cached=f"{totals.cache_read_tokens:,}", output=f"{totals.output_tokens:,}")]
            estimated, unpriced = totals.estimated_calls, totals.unpriced_calls  # plain names for pyside6-lupdate
            if estimated:
                lines.append(translate("Usage", "%n call(s) estimated: the endpoint reported no usage", None, estimated))
            if unpriced:
                lines.append(translate("Usage", "%n call(s) without a price (set one with Prices…)", None, unpriced))
            return "\n".join(lines)
        if role == Qt.ItemDataRole.TextAlignmentRole and column != self.NAME:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def model_lines(summary: UsageSummary) -> list[UsageLine]:
    return [UsageLine(model, model, totals) for model, totals in summary.by_model]


def session_lines(summary: UsageSummary, titles: dict[str, str]) -> list[UsageLine]:
    """The conversations, titled as the session list titles them (the key when it has no title)."""
    return [UsageLine(key, conversation_name(key, titles), totals) for key, totals in summary.by_session]


def conversation_name(key: str, titles: dict[str, str]) -> str:
    """A conversation's name in the table. The app's own runs say what ran them, since the table has
    no channel groups to say it: "Heartbeat" (its session's title is the heartbeat's prompt), and
    "Scheduled: " before a job's session title (or its id, when the job's session is gone)."""
    parsed = SessionKey.found(key)
    if parsed.channel == "heartbeat" and parsed.chat_id is None:  # the heartbeat's own session, "heartbeat"
        return translate("Usage", "Heartbeat")
    if parsed.channel == "cron" and parsed.chat_id is not None:  # a job's own session, "cron:<job id>"
        return translate("Usage", "Scheduled: {name}").format(name=titles.get(key) or parsed.chat_id)
    return titles.get(key) or key
