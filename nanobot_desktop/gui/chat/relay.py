"""The turn/streaming relay: draws a session's engine events into its `ChatModel`.

What a turn looks like in the chat is decided here and only here: the person's message, streamed text
and reasoning, tool cards and their states, the end of a turn (finished, failed, stopped), messages
the agent sends, and the subtle notices about memory. A notice that arrives while a reply streams
waits until the reply is over, so the reply is not cut in two. `covered_by_read` decides which events
buffered during a history read the read already holds (by turn id, never by text).
The controller (controller.py) decides *which* model an event goes to and when; this module only how.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nanobot_desktop.engine import (ApprovalAnswer, ApprovalAnswered, ApprovalRequested, ConsolidationFinished, ConsolidationStarted,
                                    Event, LLMCallStarted, Origin, OutboundMessage, ReasoningDelta, SessionChanged, TextDelta,
                                    ToolCallFinished, ToolCallStarted, TurnCancelled, TurnFailed, TurnFinished,
                                    TurnStarted)
from nanobot_desktop.gui.chat.failures import failure_detail, failure_kind, failure_text
from nanobot_desktop.gui.chat.history import STOPPED_TEXT, system_notice_text
from nanobot_desktop.gui.chat.model import AssistantMessage, ChatModel, Notice, ToolCard, UserMessage
from nanobot_desktop.gui.common.bridge import handlers_for
from nanobot_desktop.gui.common.engine_words import consolidation_failure_words
from nanobot_desktop.gui.common.i18n import translate

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine


class ChatRelay:
    """Applies engine events to chat models; holds the notices waiting for a streamed reply to end."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._deferred: dict[str, list[Notice]] = {}
        self._call_models: dict[str, str] = {}  # session key -> the model of its latest model call
        self._steps: dict[type[Event], Callable[[ChatModel, Any], None]] = {
            LLMCallStarted: self._on_llm_call_started, TurnStarted: self._on_turn_started,
            TextDelta: self._on_text_delta, ReasoningDelta: self._on_reasoning_delta,
            ToolCallStarted: self._on_tool_call_started, ApprovalRequested: self._on_approval_requested,
            ApprovalAnswered: self._on_approval_answered, ToolCallFinished: self._on_tool_call_finished,
            TurnFinished: self._on_turn_finished, TurnFailed: self._on_turn_failed,
            TurnCancelled: self._on_turn_cancelled, OutboundMessage: self._on_outbound,
            ConsolidationStarted: self._on_consolidation_started,
            ConsolidationFinished: self._on_consolidation_finished, SessionChanged: self._on_session_changed,
        }
        """What each event type does to a chat (looked up as the bridge does: a subclass finds its base's)."""
        self._by_type: dict[type, list[Callable[[ChatModel, Any], None]]] = {}

    def failure_text(self, event: TurnFailed, kind: str) -> str:
        """The failed turn's message with what to do about it (the config names the provider)."""
        return failure_text(event.error, kind, self.engine.config, event.facts)

    @property
    def handled(self) -> tuple[type[Event], ...]:
        """The event types that change a chat (the controller hands these to a session's model)."""
        return tuple(self._steps)

    def apply(self, model: ChatModel, event: Event) -> None:
        """Show `event` in `model` (the model of the event's session)."""
        kind = type(event)
        steps = self._by_type.get(kind)
        if steps is None:
            steps = self._by_type[kind] = handlers_for(kind, self._steps.items())
        for step in steps:
            step(model, event)

    def _on_llm_call_started(self, _model: ChatModel, event: LLMCallStarted) -> None:
        self._call_models[event.session_key] = event.model  # the last call of a turn writes its reply

    def _on_text_delta(self, model: ChatModel, event: TextDelta) -> None:
        model.append_text_delta(event.text)

    def _on_reasoning_delta(self, model: ChatModel, event: ReasoningDelta) -> None:
        model.append_reasoning_delta(event.text)

    def _on_tool_call_started(self, model: ChatModel, event: ToolCallStarted) -> None:
        if event.started_by is not Origin.SUBAGENT and model.row_of_call(event.call_id, "tool") < 0:
            self.flush(event.session_key, model)
            model.append(ToolCard.from_call(event.call_id, event.name, event.arguments))

    def _on_approval_requested(self, model: ChatModel, event: ApprovalRequested) -> None:
        if model.row_of_call(event.call_id, "tool") >= 0:  # the card waits for the person, not the tool
            model.update_tool(event.call_id, "waiting")

    def _on_approval_answered(self, model: ChatModel, event: ApprovalAnswered) -> None:
        if event.answer is not ApprovalAnswer.DENY and model.row_of_call(event.call_id, "tool") >= 0:
            model.update_tool(event.call_id, "running")

    def _on_tool_call_finished(self, model: ChatModel, event: ToolCallFinished) -> None:
        if event.started_by is Origin.SUBAGENT:
            return
        if model.row_of_call(event.call_id, "tool") < 0:
            model.append(ToolCard.from_call(event.call_id, event.name, event.arguments))
        model.update_tool(event.call_id, event.status, event.duration_s)

    def _on_turn_failed(self, model: ChatModel, event: TurnFailed) -> None:
        model.finish_assistant(cut=bool(event.partial_text) and event.kind != "storage",
                               unsaved=event.unsaved and event.kind == "storage")
        self.flush(event.session_key, model)
        kind = failure_kind(event)
        model.append(Notice(self.failure_text(event, kind), "error", detail=failure_detail(event.error, kind)))

    def _on_turn_cancelled(self, model: ChatModel, event: TurnCancelled) -> None:
        if streaming_tail(model) is not None:
            model.finish_assistant(stopped=True)
        else:
            model.append(Notice(translate("Chat", STOPPED_TEXT), "stopped"))
        self.flush(event.session_key, model)

    def _on_consolidation_started(self, model: ChatModel, event: ConsolidationStarted) -> None:
        self.notice(event.session_key, model, translate("Chat", "Summarising older messages into memory…"))

    def _on_consolidation_finished(self, model: ChatModel, event: ConsolidationFinished) -> None:
        if event.ok:
            self.notice(event.session_key, model, translate("Chat", "Older messages were summarised into memory."))
        elif event.error != "cancelled" and not event.archive_all:  # /new's own failure says it
            self.notice(event.session_key, model, consolidation_failure_words(), detail=event.error or "")

    def _on_session_changed(self, model: ChatModel, event: SessionChanged) -> None:
        if event.reason == "cleared":
            model.clear()

    def _on_turn_started(self, model: ChatModel, event: TurnStarted) -> None:
        if event.resend:
            return  # Retry / Regenerate: the message is in the chat (and the file) already
        text = event.user_text
        if event.started_by is Origin.SYSTEM:  # a subagent's report handed back: a notice, not a bubble
            model.append(Notice(system_notice_text(text)))
            return
        model.append(UserMessage(text, attachments=tuple(event.media)))

    def _on_turn_finished(self, model: ChatModel, event: TurnFinished) -> None:
        if event.reply is None:  # the message tool already delivered the reply
            model.finish_assistant()
        else:
            model.finish_assistant(final_text=event.reply)
            model.set_reply_model(self._call_models.pop(event.session_key, ""))
        self.flush(event.session_key, model)

    def _on_outbound(self, model: ChatModel, event: OutboundMessage) -> None:
        if not event.content.strip():
            return
        own_chat = f"{event.channel}:{event.chat_id}" == event.session_key
        if event.channel in ("desktop", "cli") or own_chat:
            self.flush(event.session_key, model)
            model.append(AssistantMessage(text=event.content))
        else:
            self.notice(event.session_key, model, translate("Chat", "Sent to {channel}:{chat}: {text}").format(
                channel=event.channel, chat=event.chat_id, text=event.content))

    def notice(self, key: str, model: ChatModel, text: str, detail: str = "") -> None:
        """A subtle notice; while a reply streams it waits, so the reply is not cut in two."""
        notice = Notice(text, detail=detail)
        if streaming_tail(model) is not None:
            self._deferred.setdefault(key, []).append(notice)
        else:
            model.append(notice)

    def flush(self, key: str, model: ChatModel) -> None:
        """Append the notices that waited for the streamed reply of `key` to end."""
        notices = self._deferred.pop(key, [])
        if notices:
            model.extend(notices)


def covered_by_read(buffered: list[Event], size: int) -> set[int]:
    """Indexes of events, buffered while a session was read, whose content the read already holds.

    Decided by turn id, never by comparing text: each write of a turn publishes `SessionChanged` with
    its turn id and the file's size after it; a read of `size` bytes holds every write whose size is
    not larger, and so everything that turn did before that write (its user message, streamed text,
    tool calls) and, when it was the turn's last write, its final reply. Failures and stops are not
    covered: their notices are not in the file.
    """
    coverage = _ReadCoverage(size)
    for index, event in enumerate(buffered):
        turn_id = getattr(event, "turn_id", "")
        if turn_id:
            step = next(iter(handlers_for(type(event), _COVERAGE_STEPS.items())), _ReadCoverage.other)
            step(coverage, index, turn_id, event)
    return coverage.covered


class _ReadCoverage:
    """`covered_by_read`'s walk over the buffered events, one step per event of a turn."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.covered: set[int] = set()
        self._since_write: dict[str, list[int]] = {}  # turn id -> its events after its last write that was read
        self._last_write_read: dict[str, bool] = {}

    def write(self, _index: int, turn_id: str, event: SessionChanged) -> None:
        """A write of the turn: when the read holds it, it holds what the turn did before it."""
        was_read = not event.outside and 0 < event.size <= self.size
        if was_read:
            self.covered.update(self._since_write.pop(turn_id, []))
        self._last_write_read[turn_id] = was_read

    def finish(self, index: int, turn_id: str, event: TurnFinished) -> None:
        """The turn's end: its reply is in the read when its last write was."""
        if self._last_write_read.get(turn_id):
            self.covered.add(index)
        else:
            self.other(index, turn_id, event)

    def other(self, index: int, turn_id: str, _event: Event) -> None:
        """Anything else the turn did: covered once a later write of it is found in the read."""
        self._since_write.setdefault(turn_id, []).append(index)


_COVERAGE_STEPS: dict[type[Event], Callable[[_ReadCoverage, int, str, Any], None]] = {
    SessionChanged: _ReadCoverage.write, TurnFinished: _ReadCoverage.finish}


def streaming_tail(model: ChatModel) -> AssistantMessage | None:
    """The reply streaming at the end of `model`, if one is."""
    count = model.rowCount()
    if not count:
        return None
    tail = model.item(count - 1)
    return tail if isinstance(tail, AssistantMessage) and tail.streaming else None
