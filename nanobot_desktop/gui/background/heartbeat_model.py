"""The heartbeat timeline: one row per tick, newest first, each saying why it went as it did.

A tick is one of four kinds, each drawn with its own stripe colour: skipped without asking the model
(and why: file empty, template only, paused, another program runs it), the model decided to skip (its
answer), ran (tasks, result, tools used, approvals waited for, duration) or failed (the error).
The model only ever inserts new rows at the top, so a panel left open for weeks stays cheap.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QAbstractListModel, QByteArray, QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from nanobot_desktop.gui.background.formatting import (error_color, format_clock, format_duration, muted_color,
                                                       ok_color, warning_color)
from nanobot_desktop.gui.common.i18n import translate

MAX_ROWS = 500
DECISION_WORDS = {  # translated where shown
    "skipped": QT_TRANSLATE_NOOP("Heartbeat", "skipped"),
    "skip": QT_TRANSLATE_NOOP("Heartbeat", "model: nothing to do"),
    "run": QT_TRANSLATE_NOOP("Heartbeat", "ran"),
    "error": QT_TRANSLATE_NOOP("Heartbeat", "failed"),
}
SKIP_SHORT = {"missing": QT_TRANSLATE_NOOP("Heartbeat", "no HEARTBEAT.md"), "empty": QT_TRANSLATE_NOOP("Heartbeat", "file empty"),
              "template": QT_TRANSLATE_NOOP("Heartbeat", "template only"), "paused": QT_TRANSLATE_NOOP("Heartbeat", "paused"),
              "external": QT_TRANSLATE_NOOP("Heartbeat", "another program runs it"),
              "budget": QT_TRANSLATE_NOOP("Heartbeat", "usage budget spent")}

Index = QModelIndex | QPersistentModelIndex


def decision_text(tick: Any) -> str:
    """"skipped — template only", "model: nothing to do", "ran", "failed"."""
    words = translate("Heartbeat", DECISION_WORDS[tick.decision]) if tick.decision in DECISION_WORDS else tick.decision
    if tick.decision == "skipped":
        reason = getattr(tick, "skip_reason", "")
        short = translate("Heartbeat", SKIP_SHORT[reason]) if reason in SKIP_SHORT else reason
        return f"{words} — {short}" if reason else words
    return words


def trigger_text(tick: Any) -> str:
    """"manual" or "timer", as shown."""
    return translate("Heartbeat", "manual") if tick.trigger == "manual" else translate("Heartbeat", "timer")


def tools_text(tick: Any) -> str:
    uses = getattr(tick, "tools", ()) or ()
    return translate("Heartbeat", "Tools: {tools}").format(tools="; ".join(use.describe() for use in uses)) if uses else ""


def approvals_text(tick: Any) -> str:
    asked = getattr(tick, "approvals", ()) or ()
    return translate("Heartbeat", "Waited for your approval: {tools}").format(tools="; ".join(asked)) if asked else ""


def tick_details(tick: Any) -> str:
    """The full story of one tick, for the details pane and the tooltip."""
    lines = [f"{tick.started_at.strftime('%Y-%m-%d %H:%M:%S %Z').strip()} — {decision_text(tick)}",
             (translate("Heartbeat", "Started by: you (Run now); took {duration}") if tick.trigger == "manual"
              else translate("Heartbeat", "Started by: the timer; took {duration}")).format(
                 duration=format_duration(tick.duration_s))]
    explanation = getattr(tick, "explanation", "")
    if getattr(tick, "note", ""):
        lines += ["", translate("Heartbeat", "Late: {note}.").format(note=tick.note)]
    if tick.decision == "skipped":
        lines += ["", translate("Heartbeat", "Why: {reason}.").format(reason=explanation),
                  translate("Heartbeat", "The model was not asked.")]
    elif tick.decision == "skip":
        lines += ["", translate("Heartbeat", "The model read HEARTBEAT.md and answered:"), explanation]
    if tick.tasks:
        lines += ["", translate("Heartbeat", "Tasks:"), tick.tasks]
    for extra in (tools_text(tick), approvals_text(tick)):
        if extra:
            lines += ["", extra]
    if tick.error:
        lines += ["", translate("Heartbeat", "Error:"), tick.error]
    elif tick.result:
        lines += ["", translate("Heartbeat", "Result:"), tick.result]
    elif tick.decision == "run":
        lines += ["", translate("Heartbeat", "The run finished without a reply (a message may have been sent instead).")]
    return "\n".join(lines)


class HeartbeatTimelineModel(QAbstractListModel):
    """Heartbeat ticks, newest first. DisplayRole is a one-line summary; RecordRole the TickRecord."""

    RecordRole = Qt.ItemDataRole.UserRole + 1
    DecisionTextRole = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows) or index.column() != 0:
            return None
        tick = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return " · ".join((format_clock(tick.started_at), decision_text(tick), trigger_text(tick),
                               format_duration(tick.duration_s)))
        if role == Qt.ItemDataRole.ToolTipRole:
            return tick_details(tick)
        if role == self.RecordRole:
            return tick
        if role == self.DecisionTextRole:
            return decision_text(tick)
        return None

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names[self.RecordRole] = QByteArray(b"record")
        names[self.DecisionTextRole] = QByteArray(b"decisionText")
        return names

    def record(self, row: int) -> Any:
        return self._rows[row]

    def sync(self, ticks: list[Any]) -> None:
        """Take the engine's ticks (newest last): new ones are inserted at the top, old ones trimmed."""
        if not self._rows:
            new = list(ticks)
        else:
            newest = self._rows[0]
            position = next((i for i in range(len(ticks) - 1, -1, -1) if ticks[i] is newest), None)
            if position is None:  # our newest record is gone from the engine: start over
                self.beginResetModel()
                self._rows = list(reversed(ticks))[:MAX_ROWS]
                self.endResetModel()
                return
            new = ticks[position + 1:]
        if new:
            new = new[-MAX_ROWS:]
            self.beginInsertRows(QModelIndex(), 0, len(new) - 1)
            self._rows[:0] = list(reversed(new))
            self.endInsertRows()
        if len(self._rows) > MAX_ROWS:
            self.beginRemoveRows(QModelIndex(), MAX_ROWS, len(self._rows) - 1)
            del self._rows[MAX_ROWS:]
            self.endRemoveRows()


class TickDelegate(QStyledItemDelegate):
    """Paints a tick as a header line (time, decision, trigger, duration) plus why / what it did."""

    PAD = 6
    STRIPE = 4

    @staticmethod
    def lines(tick: Any) -> list[tuple[str, str]]:
        """(colour kind, text) of the lines under the header."""
        explanation = getattr(tick, "explanation", "")
        lines: list[tuple[str, str]] = []
        if getattr(tick, "note", ""):
            lines.append(("error", tick.note))
        if tick.decision == "skipped" and explanation:
            lines.append(("muted", explanation))
        elif tick.decision == "skip":
            lines.append(("muted", f"“{explanation}”" if explanation else translate("Heartbeat", "the model found nothing to do")))
        if tick.tasks:
            lines.append(("muted", translate("Heartbeat", "Tasks: {tasks}").format(tasks=tick.tasks.splitlines()[0])))
        if tick.error:
            lines.append(("error", tick.error.splitlines()[0]))
        elif tick.result and tick.result.strip():
            lines.append(("text", tick.result.strip().splitlines()[0]))
        for extra in (tools_text(tick), approvals_text(tick)):
            if extra:
                lines.append(("muted", extra))
        return lines

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        tick = index.data(HeartbeatTimelineModel.RecordRole)
        height = QFontMetrics(option.font).height()
        count = 1 + (len(self.lines(tick)) if tick is not None else 0)
        return QSize(200, count * (height + 2) + 2 * self.PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        tick = index.data(HeartbeatTimelineModel.RecordRole)
        if tick is None:
            return
        painter.save()
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(option.rect, palette.color(QPalette.ColorRole.Highlight))
        stripe = {"run": ok_color(palette), "error": error_color(palette),
                  "skip": warning_color(palette)}.get(tick.decision, muted_color(palette))
        painter.fillRect(QRect(option.rect.left(), option.rect.top() + 2, self.STRIPE, option.rect.height() - 4), stripe)
        text_color = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        colors = {"text": text_color, "muted": text_color if selected else muted_color(palette),
                  "error": text_color if selected else error_color(palette)}
        metrics = QFontMetrics(option.font)
        line_height = metrics.height() + 2
        left = option.rect.left() + self.STRIPE + self.PAD
        width = option.rect.width() - self.STRIPE - 2 * self.PAD
        top = option.rect.top() + self.PAD

        bold = QFont(option.font)
        bold.setBold(True)
        right_text = f"{trigger_text(tick)} · {format_duration(tick.duration_s)}"
        right_width = metrics.horizontalAdvance(right_text) + self.PAD
        painter.setFont(bold)
        painter.setPen(text_color)
        header = f"{format_clock(tick.started_at)}   {decision_text(tick)}"
        painter.drawText(QRect(left, top, width - right_width, line_height), Qt.AlignmentFlag.AlignVCenter,
                         QFontMetrics(bold).elidedText(header, Qt.TextElideMode.ElideRight, width - right_width))
        painter.setFont(option.font)
        painter.setPen(colors["muted"])
        painter.drawText(QRect(left, top, width, line_height),
                         Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, right_text)
        for number, (kind, text) in enumerate(self.lines(tick), start=1):
            painter.setPen(colors[kind])
            painter.drawText(QRect(left, top + number * line_height, width, line_height), Qt.AlignmentFlag.AlignVCenter,
                             metrics.elidedText(text, Qt.TextElideMode.ElideRight, width))
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.drawLine(option.rect.left(), option.rect.bottom(), option.rect.right(), option.rect.bottom())
        painter.restore()
