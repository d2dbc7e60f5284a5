"""The chat transcript as a Qt list model: one row per visible item of a conversation.

Engine events are turned into calls on this model by whoever owns the session (the main window);
`ChatView` only reads it. Items are small mutable dataclasses; the model is the only writer and
announces every change with `dataChanged`, so a view never has to poll.

Streaming: text/reasoning deltas always go to the LAST row (a streaming assistant message), and
only that row's `dataChanged` is emitted. Appending any other item finishes a streaming message
first, so "the message being streamed" is always the last row.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar, Iterable

from PySide6.QtCore import QAbstractListModel, QByteArray, QModelIndex, QPersistentModelIndex, Qt

_uids = itertools.count(1)

TOOL_STATUSES = ("waiting", "running", "ok", "error", "denied", "cancelled")  # waiting: for the person's answer
APPROVAL_STATES = ("pending", "allowed", "denied")
APPROVAL_ANSWERS = ("allow_once", "allow_always", "deny")
NOTICE_LEVELS = ("info", "error", "stopped")


def _new_uid() -> int:
    return next(_uids)


@dataclass(eq=False, slots=True)
class UserMessage:
    text: str
    attachments: tuple[str, ...] = ()
    fork: tuple[int, int] | None = None  # "‹ 2/3 ›": the conversation forks here (gui/chat/branching.py)
    uid: int = field(default_factory=_new_uid, kw_only=True)
    kind: ClassVar[str] = "user"


@dataclass(eq=False, slots=True)
class AssistantMessage:
    """`text` is Markdown from the model (untrusted); `reasoning` is shown apart, collapsed."""

    text: str = ""
    reasoning: str = ""
    streaming: bool = False
    stopped: bool = False
    cut: bool = False  # the endpoint cut the reply off (a fault, not the person's Stop)
    unsaved: bool = False  # shown, but the disk would not take it: the widget offers Retry save
    fork: tuple[int, int] | None = None  # "‹ 2/3 ›": the conversation forks here (gui/chat/branching.py)
    model: str = ""  # which model wrote it, for a reply seen arriving (the session file does not say)
    uid: int = field(default_factory=_new_uid, kw_only=True)
    kind: ClassVar[str] = "assistant"


@dataclass(eq=False, slots=True)
class ToolCard:
    """A compact row for one tool call; the inspector shows the details."""

    call_id: str
    name: str
    summary: str = ""
    status: str = "running"
    duration_s: float | None = None
    uid: int = field(default_factory=_new_uid, kw_only=True)
    kind: ClassVar[str] = "tool"

    @classmethod
    def from_call(cls, call_id: str, name: str, arguments: dict[str, Any]) -> "ToolCard":
        return cls(call_id=call_id, name=name, summary=summarize_arguments(arguments))


@dataclass(eq=False, slots=True)
class ApprovalCard:
    """A tool call waiting for the user's decision. `answer` records which button was used."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    diff: str | None = None
    command: str | None = None
    working_dir: str | None = None
    sandbox: str | None = None  # exec: whether and how the command is contained
    state: str = "pending"
    answer: str | None = None
    origin: str = ""  # "MCP server 'time'" for a tool that is not built in
    reason: str = ""  # what the person wrote when denying (the model receives it)
    answered_by: str = ""  # the surface the answer came from: "card", "tray", "notification", "terminal", "engine"
    why: str = ""  # for an answer nobody gave ("engine"): why it counts as denied (expired, stopped, …)
    expanded: bool = False  # a resolved card shows one line until the person expands it
    uid: int = field(default_factory=_new_uid, kw_only=True)
    kind: ClassVar[str] = "approval"

    @classmethod
    def for_tool_call(cls, call_id: str, tool: str, arguments: dict[str, Any],
                      diff: str | None = None, default_dir: str | None = None) -> "ApprovalCard":
        """Fill `command`/`working_dir` for the `exec` tool, whose arguments are `command` and `working_dir`."""
        command = working_dir = None
        if tool == "exec":
            command = str(arguments.get("command", ""))
            working_dir = str(arguments.get("working_dir") or default_dir or "") or None
        return cls(call_id=call_id, tool=tool, arguments=dict(arguments), diff=diff,
                   command=command, working_dir=working_dir)

    def arguments_text(self) -> str:
        """The full arguments, pretty-printed, never truncated: the user must see what they allow."""
        return json.dumps(self.arguments, indent=2, ensure_ascii=False, default=str)


@dataclass(eq=False, slots=True)
class Notice:
    text: str
    level: str = "info"
    detail: str = ""  # the technical words behind `text`, one click away (a "Details" toggle)
    uid: int = field(default_factory=_new_uid, kw_only=True)
    kind: ClassVar[str] = "notice"


ChatItem = UserMessage | AssistantMessage | ToolCard | ApprovalCard | Notice


def summarize_arguments(arguments: dict[str, Any], limit: int = 60) -> str:
    """The first argument's value on one line, shortened (as nanobot's tool hints show it)."""
    if not arguments:
        return ""
    value = next(iter(arguments.values()))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ChatRole(IntEnum):
    ItemKindRole = Qt.ItemDataRole.UserRole + 1  # "user" | "assistant" | "tool" | "approval" | "notice"
    ItemDataRole = Qt.ItemDataRole.UserRole + 2  # the item dataclass itself (read it, don't mutate it)
    ItemIdRole = Qt.ItemDataRole.UserRole + 3  # a stable int id, unique in the process
    TextRole = Qt.ItemDataRole.UserRole + 4  # message/notice text; tool name for cards
    StatusRole = Qt.ItemDataRole.UserRole + 5  # tool status / approval state / notice level
    CallIdRole = Qt.ItemDataRole.UserRole + 6  # tool call id of cards
    StreamingRole = Qt.ItemDataRole.UserRole + 7  # True while an assistant message receives deltas


ItemKindRole = ChatRole.ItemKindRole
ItemDataRole = ChatRole.ItemDataRole
ItemIdRole = ChatRole.ItemIdRole
TextRole = ChatRole.TextRole
StatusRole = ChatRole.StatusRole
CallIdRole = ChatRole.CallIdRole
StreamingRole = ChatRole.StreamingRole

_ROLE_NAMES = {
    ItemKindRole: b"kind", ItemDataRole: b"item", ItemIdRole: b"uid", TextRole: b"text",
    StatusRole: b"status", CallIdRole: b"callId", StreamingRole: b"streaming",
}


def _display_text(item: ChatItem) -> str:
    if isinstance(item, ToolCard):
        return f"{item.name}({item.summary}) [{item.status}]"
    if isinstance(item, ApprovalCard):
        return f"approve {item.tool}? [{item.state}]"
    return item.text


def _status(item: ChatItem) -> str | None:
    if isinstance(item, ToolCard):
        return item.status
    if isinstance(item, ApprovalCard):
        return item.state
    if isinstance(item, Notice):
        return item.level
    return None


class ChatModel(QAbstractListModel):
    """Rows of one conversation, oldest first.

    A long session is not read whole: the rows start with its newest page, and `older_end` is the
    byte offset in the session file where the part not read yet ends (0: nothing older). Whoever
    reads the file (the controller) puts older pages in front with `prepend`.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._items: list[ChatItem] = []
        self.older_end = 0

    # --- Qt model interface ------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.parent().isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole or role == TextRole:
            return item.name if (role == TextRole and isinstance(item, ToolCard)) else _display_text(item)
        if role == ItemKindRole:
            return item.kind
        if role == ItemDataRole:
            return item
        if role == ItemIdRole:
            return item.uid
        if role == StatusRole:
            return _status(item)
        if role == CallIdRole:
            return getattr(item, "call_id", None)
        if role == StreamingRole:
            return item.streaming if isinstance(item, AssistantMessage) else False
        return None

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        names = dict(super().roleNames())
        names.update({int(role): QByteArray(name) for role, name in _ROLE_NAMES.items()})
        return names

    # --- reading -------------------------------------------------------------------------------

    def item(self, row: int) -> ChatItem:
        return self._items[row]

    def items(self) -> list[ChatItem]:
        """A copy of the rows (the items themselves are shared: read, don't mutate)."""
        return list(self._items)

    def row_of_call(self, call_id: str, kind: str | None = None) -> int:
        """Row of the card for `call_id` (newest first, since updates concern recent calls); -1 if none."""
        for row in range(len(self._items) - 1, -1, -1):
            item = self._items[row]
            if getattr(item, "call_id", None) == call_id and (kind is None or item.kind == kind):
                return row
        return -1

    # --- appending -----------------------------------------------------------------------------

    def append(self, item: ChatItem) -> int:
        """Add one item at the end; returns its row."""
        return self.extend([item])

    def extend(self, items: Iterable[ChatItem]) -> int:
        """Add items at the end in one insert (a loaded session comes in one batch); returns the first new row."""
        new_items = list(items)
        first = len(self._items)
        if not new_items:
            return first
        self._finish_streaming_tail()
        self.beginInsertRows(QModelIndex(), first, first + len(new_items) - 1)
        self._items.extend(new_items)
        self.endInsertRows()
        return first

    def set_items(self, items: Iterable[ChatItem], older_end: int = 0) -> None:
        """Replace the whole transcript (switching sessions); `older_end` > 0 says older history is in
        the file before that byte offset."""
        self.beginResetModel()
        self._items = list(items)
        self.older_end = older_end
        self.endResetModel()

    def prepend(self, items: Iterable[ChatItem], older_end: int) -> int:
        """Put an older page of history in front of the rows (one insert at row 0); returns how many."""
        new_items = list(items)
        self.older_end = older_end
        if new_items:
            self.beginInsertRows(QModelIndex(), 0, len(new_items) - 1)
            self._items[:0] = new_items
            self.endInsertRows()
        return len(new_items)

    def clear(self) -> None:
        self.set_items([])

    # --- streaming -----------------------------------------------------------------------------

    def begin_assistant(self) -> int:
        """Start a new streaming assistant message at the end; returns its row."""
        return self.append(AssistantMessage(streaming=True))

    def append_text_delta(self, text: str) -> None:
        self._streaming_tail().text += text
        self._changed(len(self._items) - 1, [TextRole, Qt.ItemDataRole.DisplayRole])

    def append_reasoning_delta(self, text: str) -> None:
        self._streaming_tail().reasoning += text
        self._changed(len(self._items) - 1, [])

    def finish_assistant(self, *, stopped: bool = False, final_text: str | None = None, cut: bool = False,
                         unsaved: bool = False) -> None:
        """End the streaming message (if any). `final_text` replaces the text when the engine's final
        reply differs from the streamed deltas; `stopped` marks a reply cut short by the user, `cut` one
        the endpoint cut off, `unsaved` one the disk would not take."""
        if not self._items or not isinstance(self._items[-1], AssistantMessage) or not self._items[-1].streaming:
            if final_text is not None:
                self.append(AssistantMessage(text=final_text, stopped=stopped, cut=cut, unsaved=unsaved))
            return
        tail = self._items[-1]
        tail.streaming = False
        tail.stopped = stopped
        tail.cut = cut
        tail.unsaved = unsaved
        if final_text is not None:
            tail.text = final_text
        self._changed(len(self._items) - 1, [StreamingRole, TextRole, Qt.ItemDataRole.DisplayRole])

    def set_reply_model(self, name: str) -> None:
        """Name the model that wrote the newest reply (shown small under it)."""
        row = next((row for row in range(len(self._items) - 1, -1, -1)
                    if isinstance(self._items[row], AssistantMessage)), -1)
        item = self._items[row] if row >= 0 else None
        if isinstance(item, AssistantMessage) and not item.model and name:
            item.model = name
            self._changed(row, [TextRole])

    # --- cards ---------------------------------------------------------------------------------

    def update_tool(self, call_id: str, status: str, duration_s: float | None = None) -> None:
        if status not in TOOL_STATUSES:
            raise ValueError(f"unknown tool status {status!r}; expected one of {', '.join(TOOL_STATUSES)}")
        row = self._require_row(call_id, "tool")
        card = self._items[row]
        assert isinstance(card, ToolCard)
        card.status = status
        card.duration_s = duration_s
        self._changed(row, [StatusRole, Qt.ItemDataRole.DisplayRole])

    def set_approval_state(self, call_id: str, state: str, answer: str | None = None, *, reason: str = "",
                           by: str = "", why: str = "") -> None:
        if state not in APPROVAL_STATES:
            raise ValueError(f"unknown approval state {state!r}; expected one of {', '.join(APPROVAL_STATES)}")
        if answer is not None and answer not in APPROVAL_ANSWERS:
            raise ValueError(f"unknown approval answer {answer!r}; expected one of {', '.join(APPROVAL_ANSWERS)}")
        row = self._require_row(call_id, "approval")
        card = self._items[row]
        assert isinstance(card, ApprovalCard)
        card.state = state
        card.answer = answer
        card.reason = " ".join(reason.split())
        card.answered_by = by or card.answered_by
        card.why = why or card.why
        self._changed(row, [StatusRole, Qt.ItemDataRole.DisplayRole])

    def set_approval_expanded(self, call_id: str, expanded: bool) -> None:
        """Show a resolved approval card whole (`expanded`) or as its one-line summary."""
        row = self._require_row(call_id, "approval")
        card = self._items[row]
        assert isinstance(card, ApprovalCard)
        if card.expanded != expanded:
            card.expanded = expanded
            self._changed(row, [])

    # --- internals -----------------------------------------------------------------------------

    def _streaming_tail(self) -> AssistantMessage:
        if not self._items or not isinstance(self._items[-1], AssistantMessage) or not self._items[-1].streaming:
            self.begin_assistant()
        tail = self._items[-1]
        assert isinstance(tail, AssistantMessage)
        return tail

    def _finish_streaming_tail(self) -> None:
        if self._items and isinstance(self._items[-1], AssistantMessage) and self._items[-1].streaming:
            self._items[-1].streaming = False
            self._changed(len(self._items) - 1, [StreamingRole])

    def _require_row(self, call_id: str, kind: str) -> int:
        row = self.row_of_call(call_id, kind)
        if row < 0:
            raise KeyError(f"no {kind} card for tool call {call_id!r}")
        return row

    def mark_saved(self) -> int:
        """Clear every "not saved" mark (a retried save went through); returns how many there were."""
        count = 0
        for row, item in enumerate(self._items):
            if isinstance(item, AssistantMessage) and item.unsaved:
                item.unsaved = False
                count += 1
                self._changed(row, [StatusRole, Qt.ItemDataRole.DisplayRole])
        return count

    def refresh_row(self, row: int) -> None:
        """Announce that the item at `row` changed in place (e.g. its `fork`)."""
        self._changed(row, [])

    def _changed(self, row: int, roles: list[int]) -> None:
        index = self.index(row, 0)
        self.dataChanged.emit(index, index, [ItemDataRole, *roles])
