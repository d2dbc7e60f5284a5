"""The inspector's data: every turn of this app run, per session, and a table model over one turn.

`TimelineModel.record(event)` is the one writer: the panel connects it to the bridge. It keeps the
turns of every session (so switching sessions shows what happened there), the older finished ones in
a temporary file (spill.py), and exposes the rows of ONE turn — the shown one — to the view. An event
for the shown turn inserts or updates a single row (`beginInsertRows` / `dataChanged`); only switching
to another turn resets the model.

Text deltas are not recorded: the timeline is about calls, not tokens, so it costs nothing while a
reply streams.
"""

from __future__ import annotations

from enum import IntEnum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel, QByteArray, QModelIndex, QObject, QPersistentModelIndex, QPointF, Qt, Signal,
)
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap

from nanobot_desktop.engine import events as ev
from nanobot_desktop.gui.common.engine_words import model_call_failure
from nanobot_desktop.gui.common.formatting import format_duration
from nanobot_desktop.gui.common.i18n import format_number, translate
from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.inspector.spill import TURNS_IN_MEMORY, SpilledTurn, TurnSpill
from nanobot_desktop.gui.inspector.records import (
    LLMCall, SharedMessages, TimelineEntry, ToolCall, TurnTimeline, status_text,
)
from nanobot_desktop.gui.common.design import ACCENTS

if TYPE_CHECKING:
    from nanobot_desktop.gui.common.bridge import EngineBridge

MAX_TURNS_PER_SESSION = 100  # the oldest turns of a session are forgotten beyond this (the spill file's bound)
__all__ = ["MAX_TURNS_PER_SESSION", "TURNS_IN_MEMORY", "SpilledTurn", "TimelineModel"]


class TimelineRole(IntEnum):
    KindRole = Qt.ItemDataRole.UserRole + 1  # "llm" | "tool"
    EntryRole = Qt.ItemDataRole.UserRole + 2  # the LLMCall / ToolCall itself (read it, don't mutate it)
    CallIdRole = Qt.ItemDataRole.UserRole + 3
    StatusRole = Qt.ItemDataRole.UserRole + 4
    DurationRole = Qt.ItemDataRole.UserRole + 5  # seconds (float) or None while running
    NameRole = Qt.ItemDataRole.UserRole + 6  # model for LLM calls, tool name for tool calls


KindRole = TimelineRole.KindRole
EntryRole = TimelineRole.EntryRole
CallIdRole = TimelineRole.CallIdRole
StatusRole = TimelineRole.StatusRole
DurationRole = TimelineRole.DurationRole
NameRole = TimelineRole.NameRole

_ROLE_NAMES = {KindRole: b"kind", EntryRole: b"entry", CallIdRole: b"callId", StatusRole: b"status",
               DurationRole: b"duration", NameRole: b"name"}

COLUMNS = ("", QT_TRANSLATE_NOOP("Inspector", "Call"), QT_TRANSLATE_NOOP("Inspector", "Tokens / argument"),
           QT_TRANSLATE_NOOP("Inspector", "Time"))  # translated in headerData
STATUS_COLUMN, NAME_COLUMN, SUMMARY_COLUMN, TIME_COLUMN = range(4)

# Fixed hues that read on light and dark backgrounds alike.
_STATUS_COLORS = {
    "running": ACCENTS.running, "awaiting approval": ACCENTS.waiting, "ok": ACCENTS.added, "error": ACCENTS.failed,
    "denied": ACCENTS.denied, "cancelled": ACCENTS.cancelled,
}
_icons: dict[tuple[str, str], QIcon] = {}


def status_icon(kind: str, status: str) -> QIcon:
    """A small coloured mark: a circle for tool calls, a diamond for LLM calls; hollow while running."""
    key = (kind, status)
    if key not in _icons:
        pixmap = QPixmap(28, 28)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        color = QColor(_STATUS_COLORS.get(status, ACCENTS.cancelled))
        painter.setPen(QPen(color, 3))
        painter.setBrush(Qt.BrushStyle.NoBrush if status == "running" else color)
        if kind == "llm":
            points = [QPointF(14, 3), QPointF(25, 14), QPointF(14, 25), QPointF(3, 14)]
            painter.drawPolygon(points)
        else:
            painter.drawEllipse(4, 4, 20, 20)
        painter.end()
        _icons[key] = QIcon(pixmap)
    return _icons[key]


def _same_items(kept: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    """The same objects in the same order (the engine shares its tool definitions between calls)."""
    return len(kept) == len(new) and all(a is b for a, b in zip(kept, new, strict=True))


def _time_text(entry: TimelineEntry) -> str:
    if entry.status == "running":
        return translate("Inspector", "running…")
    if entry.status == "awaiting approval":
        return status_text("awaiting approval")
    return format_duration(entry.duration_s, missing="") or status_text(entry.status)


def _tooltip(entry: TimelineEntry) -> str:
    if isinstance(entry, LLMCall):
        lines = [translate("Inspector", "LLM call to {model}: {status}").format(model=entry.model,
                                                                               status=status_text(entry.status))]
        if entry.prompt_tokens is not None:
            lines.append(translate("Inspector", "{prompt} prompt + {completion} completion tokens").format(
                prompt=format_number(entry.prompt_tokens), completion=format_number(entry.completion_tokens or 0)))
        if entry.speed_text:
            lines.append(entry.speed_text)
        if entry.finish_reason:
            lines.append(translate("Inspector", "finish reason: {reason}").format(reason=entry.finish_reason))
        if entry.error:
            lines.append(translate("Inspector", "error: {error}").format(error=entry.error))
        return "\n".join(lines)
    if entry.duration_s:
        return translate("Inspector", "{name}: {status} in {duration}").format(
            name=entry.name, status=status_text(entry.status), duration=format_duration(entry.duration_s))
    return f"{entry.name}: {status_text(entry.status)}"


class TimelineModel(QAbstractTableModel):
    """All turns of this app run (per session); rows = the calls of the shown turn, in order."""

    turns_changed = Signal(str)
    """(session_key): a turn of that session was added, dropped or changed status."""
    shown_turn_changed = Signal()
    """The model now shows another turn (or none); rows were reset."""
    entry_changed = Signal(int)
    """(row): an existing row of the shown turn got new data (the detail pane refreshes)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._sessions: dict[str, dict[str, TurnTimeline | SpilledTurn]] = {}  # insertion order: oldest first
        self._counters: dict[str, int] = {}
        self._session_key = ""
        self._shown: TurnTimeline | None = None
        self._follow_latest = True
        self._last_call: dict[str, LLMCall] = {}  # per session, its newest model call (what the next one shares)
        self._work = OwnedWork(self)
        self._spill = TurnSpill()
        self._spilling = True  # until a write fails: then every turn stays in memory, as before
        self._reading: SpilledTurn | None = None  # the turn being read back to be shown
        self.destroyed.connect(self._spill.close)

    # --- what is shown -----------------------------------------------------------------------------

    @property
    def session_key(self) -> str:
        return self._session_key

    @property
    def shown_turn(self) -> TurnTimeline | None:
        return self._shown

    @property
    def follows_latest(self) -> bool:
        return self._follow_latest

    def turns(self, session_key: str) -> list[TurnTimeline | SpilledTurn]:
        """The session's turns of this app run, oldest first (the older ones as stubs: see spill.py)."""
        return list(self._sessions.get(session_key, {}).values())

    def turn_ids(self, session_key: str) -> list[str]:
        """The ids of the session's turns of this app run, oldest first."""
        return list(self._sessions.get(session_key, {}))

    def turn(self, session_key: str, turn_id: str) -> TurnTimeline | SpilledTurn | None:
        """One turn of the session (a stub once it is in the file), or None."""
        return self._sessions.get(session_key, {}).get(turn_id)

    def set_session(self, session_key: str) -> None:
        """Show that session's latest turn, and keep following new turns there."""
        self.show_turn(session_key, None)

    def show_turn(self, session_key: str, turn_id: str | None) -> None:
        """Show one turn; `None` (or the newest turn) means: follow the latest turn."""
        turns = self._sessions.get(session_key, {})
        self._session_key = session_key
        latest = next(reversed(turns), None) if turns else None
        self._follow_latest = turn_id is None or turn_id == latest
        target = turns.get(turn_id) if turn_id is not None else None
        if isinstance(target, SpilledTurn):
            if target.pending is None:  # in the file: shown once read back (shown_turn_changed)
                self._read_back(target)
                return
            target = target.pending
        newest = turns[latest] if latest else None
        self._show(target if target is not None else newest if isinstance(newest, TurnTimeline) else None)

    def entry(self, row: int) -> TimelineEntry | None:
        entries = self._shown.entries if self._shown is not None else []
        return entries[row] if 0 <= row < len(entries) else None

    def row_of_call(self, call_id: str) -> int:
        """The row of a call in the shown turn (tool calls first, then LLM calls), or -1."""
        if self._shown is None:
            return -1
        row = self._shown.find("tool", call_id)
        return row if row >= 0 else self._shown.find("llm", call_id)

    def find_call(self, call_id: str, session_key: str | None = None) -> tuple[str, str] | None:
        """(session key, turn id) of the newest turn holding that call; `session_key`'s turns first."""
        keys = [session_key] if session_key in self._sessions else []
        keys += [key for key in self._sessions if key != session_key]
        for key in keys:
            for turn in reversed(self._sessions[key].values()):
                if turn.find("tool", call_id) >= 0 or turn.find("llm", call_id) >= 0:
                    return key, turn.turn_id
        return None

    def _show(self, turn: TurnTimeline | None) -> None:
        self._reading = None  # a turn still being read back is no longer wanted
        self.beginResetModel()
        self._shown = turn
        self.endResetModel()
        self.shown_turn_changed.emit()

    # --- recording events ------------------------------------------------------------------------------

    @classmethod
    def recording(cls, bridge: EngineBridge, parent: QObject) -> TimelineModel:
        """A timeline that records the bridge's turn and call events from now on, as long as `parent` lives."""
        timeline = cls(parent)
        bridge.subscribe(timeline.handlers(), timeline)
        return timeline

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        """The engine events about turns and calls, each with how it updates the timeline (EngineBridge.subscribe)."""
        return {ev.TurnStarted: self._on_turn_started, ev.LLMCallStarted: self._on_llm_started,
                ev.LLMCallFinished: self._finish_llm, ev.ToolCallStarted: self._on_tool_started,
                ev.ApprovalRequested: self._on_approval_requested, ev.ApprovalAnswered: self._on_approval_answered,
                ev.ToolCallFinished: self._on_tool_finished, ev.TurnFinished: self._on_turn_finished,
                ev.TurnFailed: self._on_turn_failed, ev.TurnCancelled: self._on_turn_cancelled}

    def record(self, event: object) -> None:
        """Take any engine event; the ones about turns and calls update the timeline."""
        handler = self.handlers().get(type(event))
        if handler is not None:
            handler(event)

    def _on_turn_started(self, event: ev.TurnStarted) -> None:
        self._turn(event.session_key, event.turn_id, event.user_text, event.at, event.started_by)

    def _on_llm_started(self, event: ev.LLMCallStarted) -> None:
        turn = self._turn(event.session_key, event.turn_id, "", event.at, event.started_by)
        last = self._last_call.get(event.session_key)
        messages = SharedMessages.sharing(event.messages, last.messages if last is not None
                                          and isinstance(last.messages, SharedMessages) else None)
        tools, sections = tuple(event.tools), tuple(event.system_sections)
        if last is not None:  # what did not change since the session's call before is kept once
            tools = last.tools if _same_items(last.tools, tools) else tools
            sections = last.system_sections if last.system_sections == sections else sections
        call = LLMCall(event.call_id, event.turn_id, event.model, messages, tools, sections, event.at,
                       window_tokens=event.window_tokens, estimated_tokens=event.estimated_tokens)
        self._last_call[event.session_key] = call
        self._append(turn, call)

    def _on_tool_started(self, event: ev.ToolCallStarted) -> None:
        turn = self._turn(event.session_key, event.turn_id, "", event.at, event.started_by)
        self._append(turn, ToolCall(event.call_id, event.turn_id, event.name, dict(event.arguments), event.at,
                                    origin=event.origin))

    def _on_approval_requested(self, event: ev.ApprovalRequested) -> None:
        request = event.request
        self._update_tool(event.session_key, event.turn_id, event.call_id, request.tool, request.arguments,
                          event.at, status="awaiting approval", diff=request.diff)

    def _on_approval_answered(self, event: ev.ApprovalAnswered) -> None:
        if event.answer is not ev.ApprovalAnswer.DENY:
            self._approved(event)

    def _on_tool_finished(self, event: ev.ToolCallFinished) -> None:
        self._update_tool(event.session_key, event.turn_id, event.call_id, event.name, event.arguments,
                          event.at, status=event.status, result=event.result, duration_s=event.duration_s,
                          origin=event.origin, media=event.media)

    def _on_turn_finished(self, event: ev.TurnFinished) -> None:
        self._end_turn(event.session_key, event.turn_id, "ok", None, event.at)

    def _on_turn_failed(self, event: ev.TurnFailed) -> None:
        self._end_turn(event.session_key, event.turn_id, "failed", model_call_failure(event.facts) or event.error, event.at)

    def _on_turn_cancelled(self, event: ev.TurnCancelled) -> None:
        self._end_turn(event.session_key, event.turn_id, "cancelled", None, event.at)

    def _turn(self, session_key: str, turn_id: str, user_text: str, at: float,
              started_by: ev.Origin = ev.Origin.PERSON) -> TurnTimeline:
        """The turn's record, created (and shown, when following that session) if it is new; the event
        that creates it says who started the turn."""
        turns = self._sessions.setdefault(session_key, {})
        turn = turns.get(turn_id)
        if isinstance(turn, SpilledTurn):  # an event for a turn already spilled (it had ended): back in memory
            self._spill.forget(turn)
            turn = turn.pending or TurnTimeline(session_key, turn_id, turn.number, "", at, started_by=started_by)
            turns[turn_id] = turn
        if turn is not None:
            return turn
        if not self._session_key:  # nobody chose a session yet: show the first one that does something
            self._session_key = session_key
        number = self._counters.get(session_key, 0) + 1
        self._counters[session_key] = number
        turn = TurnTimeline(session_key, turn_id, number, user_text, at, started_by=started_by)
        turns[turn_id] = turn
        dropped_shown = False
        while len(turns) > MAX_TURNS_PER_SESSION:
            old = turns.pop(next(iter(turns)))
            dropped_shown = dropped_shown or old is self._shown
            if isinstance(old, SpilledTurn):
                self._spill.forget(old)  # its bytes in the file can go
        if session_key == self._session_key and (self._follow_latest or dropped_shown):
            self._follow_latest = True
            self._show(turn)
        self.turns_changed.emit(session_key)
        return turn

    def _append(self, turn: TurnTimeline, entry: TimelineEntry) -> None:
        if turn is self._shown:
            row = len(turn.entries)
            self.beginInsertRows(QModelIndex(), row, row)
            turn.entries.append(entry)
            self.endInsertRows()
        else:
            turn.entries.append(entry)

    def _changed(self, turn: TurnTimeline, row: int) -> None:
        if turn is self._shown:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
            self.entry_changed.emit(row)

    def _finish_llm(self, event: ev.LLMCallFinished) -> None:
        turn = self._sessions.get(event.session_key, {}).get(event.turn_id)
        row = turn.find("llm", event.call_id) if isinstance(turn, TurnTimeline) else -1
        if not isinstance(turn, TurnTimeline) or row < 0:
            return  # the start happened before the inspector existed: nothing to attach the numbers to
        call = turn.entries[row]
        assert isinstance(call, LLMCall)
        call.model = event.model or call.model
        call.prompt_tokens = event.prompt_tokens
        call.completion_tokens = event.completion_tokens
        call.latency_s = event.latency_s
        call.finish_reason = event.finish_reason
        call.error = model_call_failure(event.facts) or event.error
        call.status = "error" if event.error else "cancelled" if event.finish_reason == "cancelled" else "ok"
        call.window_tokens = event.window_tokens or call.window_tokens
        call.first_token_s, call.tokens_per_s = event.first_token_s, event.tokens_per_s
        self._changed(turn, row)

    def _approved(self, event: ev.ApprovalAnswered) -> None:
        """An allowed call runs from now on: "awaiting approval" becomes "running"."""
        turn = self._turn(event.session_key, event.turn_id, "", event.at)
        row = turn.find("tool", event.call_id)
        call = turn.entries[row] if row >= 0 else None
        if isinstance(call, ToolCall) and call.status == "awaiting approval":
            call.status = "running"
            self._changed(turn, row)

    def _update_tool(self, session_key: str, turn_id: str, call_id: str, name: str, arguments: dict[str, Any],
                     at: float, *, status: str, result: str | None = None, duration_s: float | None = None,
                     diff: str | None = None, origin: str = "", media: tuple[str, ...] = ()) -> None:
        turn = self._turn(session_key, turn_id, "", at)
        row = turn.find("tool", call_id)
        if row < 0 or turn.entries[row].status not in ("running", "awaiting approval"):
            self._append(turn, ToolCall(call_id, turn_id, name, dict(arguments), at))
            row = len(turn.entries) - 1
        call = turn.entries[row]
        assert isinstance(call, ToolCall)
        call.status = status
        if result is not None:
            call.result = result
        if duration_s is not None:
            call.duration_s = duration_s
        if diff is not None:
            call.diff = diff
        call.origin = origin or call.origin
        call.media = media or call.media
        self._changed(turn, row)

    def _end_turn(self, session_key: str, turn_id: str, status: str, error: str | None, at: float) -> None:
        turn = self._sessions.get(session_key, {}).get(turn_id)
        if not isinstance(turn, TurnTimeline):
            return
        turn.status, turn.error, turn.finished_at = status, error, at
        for row, entry in enumerate(turn.entries):
            if entry.status in ("running", "awaiting approval"):  # a stop cut it off: no finish event comes
                entry.status = "cancelled" if status != "failed" else "error"
                self._changed(turn, row)
        self.turns_changed.emit(session_key)
        if turn is self._shown:
            self.shown_turn_changed.emit()
        self._spill_older(session_key)

    # --- older turns in the temporary file (spill.py) ------------------------------------------------------

    def _spill_older(self, session_key: str) -> None:
        """Write the session's finished turns older than its newest TURNS_IN_MEMORY to the file."""
        turns = self._sessions.get(session_key)
        if not self._spilling or turns is None or len(turns) <= TURNS_IN_MEMORY:
            return
        for turn_id in list(turns)[:-TURNS_IN_MEMORY]:
            turn = turns[turn_id]
            if isinstance(turn, TurnTimeline) and turn.status != "running" and turn is not self._shown:
                turns[turn_id] = self._spill.put(turn, lambda stub, ok: self._work.post(lambda: self._written(stub, ok)))

    def _written(self, stub: SpilledTurn, ok: bool) -> None:
        turn, stub.pending = stub.pending, None
        if ok:
            return  # from now on the file holds it
        self._spilling = False  # the file cannot be written: keep turns in memory from now on
        turns = self._sessions.get(stub.session_key, {})
        if turns.get(stub.turn_id) is stub and turn is not None:
            turns[stub.turn_id] = turn

    def _read_back(self, stub: SpilledTurn) -> None:
        self._reading = stub
        self._spill.get(stub, lambda turn: self._work.post(lambda: self._read_done(stub, turn)))

    def _read_done(self, stub: SpilledTurn, turn: TurnTimeline | None) -> None:
        if self._reading is not stub:
            return  # another turn was chosen meanwhile
        if turn is None:  # the file could not be read: say so where the turn's calls would be
            turn = TurnTimeline(stub.session_key, stub.turn_id, stub.number, "", 0.0, status="failed",
                                error=translate("Inspector", "This turn's record could not be read back from the "
                                                             "temporary file."))
        self._show(turn)

    # --- Qt model interface ------------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        if parent.isValid() or self._shown is None:
            return 0
        return len(self._shown.entries)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(COLUMNS):
            return translate("Inspector", COLUMNS[section]) if COLUMNS[section] else ""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.AccessibleTextRole \
                and section == STATUS_COLUMN:
            return translate("Inspector", "Status")  # the column shows only marks: its header has no text
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.parent().isValid():
            return None
        entry = self.entry(index.row())
        if entry is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == NAME_COLUMN:
                return entry.title
            if column == SUMMARY_COLUMN:
                return entry.summary
            if column == TIME_COLUMN:
                return _time_text(entry)
            return None
        if role == Qt.ItemDataRole.DecorationRole and column == STATUS_COLUMN:
            return status_icon(entry.kind, entry.status)
        if role == Qt.ItemDataRole.AccessibleTextRole and column == STATUS_COLUMN:
            return status_text(entry.status)  # the mark's meaning, for a screen reader
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(entry)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == TIME_COLUMN:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == KindRole:
            return entry.kind
        if role == EntryRole:
            return entry
        if role == CallIdRole:
            return entry.call_id
        if role == StatusRole:
            return entry.status
        if role == DurationRole:
            return entry.duration_s
        if role == NameRole:
            return entry.model if isinstance(entry, LLMCall) else entry.name
        return None

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names.update({int(role): QByteArray(name) for role, name in _ROLE_NAMES.items()})
        return names
