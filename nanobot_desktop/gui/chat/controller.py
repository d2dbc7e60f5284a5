"""Connects the engine to the chat pane: which session is shown, its history and pages, sending and stopping.

Each session shown gets its own `ChatModel`; the view is switched between them. A model is kept while
its session has live state the disk does not hold yet — a running turn (streamed text, running tool
cards) or an approval card waiting for an answer — so switching away and back loses nothing. Other
models are dropped on a switch and rebuilt from the file when the session is shown again.

Two neighbours do the rest: relay.py draws each event into a model (what a turn looks like), and
approvals.py draws the engine's approval requests as cards in the chat (never a modal dialog). This module decides
which model an event goes to and when (buffered while the history is read), and what the window hears.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from nanobot_desktop.engine import (ApprovalAnswered, ApprovalRequested, ConsolidationFinished, Event,
                                    LLMCallFinished, LLMCallStarted,
                                    ReasoningDelta, RetryScheduled, SessionChanged, SessionLinesLost, TextDelta,
                                    ToolCallStarted,
                                    TurnCancelled, TurnFailed, TurnFinished, TurnStarted, WaitingForModel)
from nanobot_desktop.gui.chat.approvals import ApprovalCards
from nanobot_desktop.gui.chat.failures import failure_kind
from nanobot_desktop.gui.chat.history import HISTORY_PAGE_MESSAGES, items_from_messages
from nanobot_desktop.gui.chat.model import ChatModel, Notice
from nanobot_desktop.gui.chat.relay import ChatRelay, covered_by_read
from nanobot_desktop.gui.chat.view import ChatView
from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.common.engine_words import storage_problem
from nanobot_desktop.gui.common.i18n import translate

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge, Handler

log = logging.getLogger(__name__)


class ChatController(QObject):
    """Owns the per-session chat models, their approval cards, and sending/stopping turns."""

    busy_changed = Signal(bool)
    """Whether the session shown now has a turn running (the composer swaps Send for Stop)."""
    session_loaded = Signal(str)
    """(key): the history of a session is in its model."""
    turn_failed = Signal(str, str, str)
    """(key, message with what to do, kind): a turn failed (the window may offer Settings)."""
    interrupted_found = Signal(str, str, bool)
    """(key, what happened, whether it can be continued): nanobot 0.3.5 left a turn of that session
    unfinished (its checkpoint); the window offers Continue / Dismiss (`resolve_interrupted`)."""
    lines_lost = Signal(str, str)
    """(key, what happened): another program erased messages the app wrote there (the window offers to
    put them back into a new chat: `put_back_lost`)."""
    approval_requested = Signal(str, str)
    """(key, tool): a tool call waits for the person's answer in that session's chat."""
    reply_finished = Signal(str)
    """(key): a turn of that session ended (finished, failed or stopped)."""
    message_returned = Signal(str, str)
    """(key, text): the person's message could not be saved (nor sent): it goes back to the composer."""
    waiting_changed = Signal(str, str)
    """(session key, used tokens, window tokens): how full the model's context window was at the
    session's last model call (estimated when sent, the server's count when it answered)."""
    context_fill_changed = Signal(str, int, int)
    """(key, text): "Waiting for the model… 12 s" while the endpoint is silent, "" when it speaks again."""
    save_retried = Signal(str, bool, str)
    """(key, ok, message): the outcome of *Retry save*."""
    continued = Signal(str, str)
    """(key, new key): after `/new` the conversation of `key` goes on in the new session (it stays listed)."""
    retry_changed = Signal(str, int, int, float)
    """(key, attempt, max attempts, delay s): a model call is retried; (key, 0, 0, 0) when that is over."""

    def __init__(self, engine: Engine, bridge: EngineBridge, chat_model: ChatModel, chat_view: ChatView,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.view = chat_view
        self._models: dict[str, ChatModel] = {}
        self._first_model: ChatModel | None = chat_model
        self._current_key = ""
        self._running: dict[str, int] = {}
        self._submitted: dict[str, set[asyncio.Future[Any]]] = {}
        self._warned: set[str] = set()  # sessions whose "another program holds it" warning was shown
        self._loading: dict[str, asyncio.Task[Any]] = {}
        self._buffered: dict[str, list[Event]] = {}
        self.relay = ChatRelay(engine)
        self._retrying: set[str] = set()  # sessions whose model call waits to be retried
        self._work = OwnedWork(self)
        self.approvals = ApprovalCards(engine, self._model_for_card, self.model_for, self.approval_requested.emit,
                                       self._track)
        self._busy_shown: bool | None = None
        self._reload_when_idle: set[str] = set()  # changed outside while a turn or approval was live
        self._outside_writes: dict[str, list[int]] = {}  # key -> file sizes changed outside while it was read
        chat_view.approval_answered.connect(self.answer_approval)  # (call_id, answer, reason)
        chat_view.older_requested.connect(lambda: self._track(asyncio.ensure_future(self._load_older())))
        chat_view.retry_save_requested.connect(lambda: self.retry_save(self._current_key))
        self._waiting: set[str] = set()
        self._fill: dict[str, tuple[int, int]] = {}  # session key -> (used, window) at its last model call
        self._unsaved_shown: set[str] = set()  # sessions showing a reply marked "Not saved"
        bridge.subscribe(self._handlers(), self)  # the window's first subscriber: it hears each event first

    # --- sessions ----------------------------------------------------------------------------------

    @property
    def current_key(self) -> str:
        return self._current_key

    @property
    def model(self) -> ChatModel:
        """The model of the session shown now."""
        model = self._models.get(self._current_key)
        if model is None:
            model = self._take_model(self._current_key)
        return model

    def model_for(self, key: str) -> ChatModel | None:
        return self._models.get(key)

    def is_loading(self, key: str) -> bool:
        return key in self._loading

    def show_session(self, key: str) -> "asyncio.Task[Any] | None":
        """Show `key` in the chat; its history loads in an executor (returns that task, or None)."""
        self._current_key = key
        model = self._models.get(key)
        task: asyncio.Task[Any] | None = None
        if model is None:
            model = self._take_model(key)
            task = self._start_load(key, model)
        else:
            task = self._loading.get(key)
        if self.view.model() is not model:
            self.view.set_model(model)
        self._drop_idle_models()
        self._emit_busy()
        return task

    def reload_session(self, key: str) -> bool:
        """The session's file changed outside the app (the engine said so): read it again, unless a
        turn or an approval is live in it, or it is being read right now (then `_load` reads again)."""
        model = self._models.get(key)
        if model is None or self._has_live_state(key) or key in self._loading:
            return False
        self._start_load(key, model)
        return True

    def forget_session(self, key: str) -> None:
        """The session was deleted: drop its model (the main window shows another session)."""
        if not self._has_live_state(key) and key != self._current_key:
            self._models.pop(key, None)

    def _take_model(self, key: str) -> ChatModel:
        model = self._first_model or ChatModel(self)
        self._first_model = None
        model.clear()
        self._models[key] = model
        return model

    def _start_load(self, key: str, model: ChatModel) -> "asyncio.Task[Any]":
        self._buffered.setdefault(key, [])
        task = asyncio.ensure_future(self._load(key, model))
        self._loading[key] = task
        self._track(task)
        return task

    async def _load(self, key: str, model: ChatModel) -> None:
        loop = asyncio.get_running_loop()
        turn_running = self.is_busy(key)

        def read() -> tuple[int, list[Any], int]:
            page = self.engine.sessions.read_page(key, None, HISTORY_PAGE_MESSAGES)  # the newest page only
            return page.end, items_from_messages(page.messages, turn_running=turn_running), page.start

        older_end = 0
        try:
            size, items, older_end = await loop.run_in_executor(None, read)
        except (OSError, ValueError) as error:
            text = translate("Chat", "Could not read this session ({error}). Its file was left as it is; open it again once "
                                     "it can be read.")
            size, items = 0, [Notice(text.format(error=error), "error")]
        finally:
            self._loading.pop(key, None)
        if self._models.get(key) is not model:
            return  # dropped while loading
        model.set_items(items, older_end)
        buffered = self._buffered.pop(key, [])
        outside_writes = self._outside_writes.pop(key, [])
        covered = covered_by_read(buffered, size)
        for index, event in enumerate(buffered):
            if index not in covered:
                self.relay.apply(model, event)
        self.session_loaded.emit(key)
        if any(written != size for written in outside_writes):
            # It changed outside while it was read: read the new state, now or once no turn is live.
            if not self.reload_session(key):
                self._reload_when_idle.add(key)

    async def _load_older(self) -> None:
        """The view reached the oldest row shown: put the file's previous page in front of it."""
        key, model = self._current_key, self.view.model()
        if model is None or model.older_end <= 0 or key in self._loading:
            return
        end = model.older_end

        def read() -> tuple[list[Any], int]:
            page = self.engine.sessions.read_page(key, end, HISTORY_PAGE_MESSAGES)
            return items_from_messages(page.messages), page.start

        try:
            items, start = await asyncio.get_running_loop().run_in_executor(None, read)
        except (OSError, ValueError) as error:
            log.warning("cannot read older messages of %s: %s", key, error)
            return
        if self.view.model() is model and model.older_end == end:  # not reloaded or switched meanwhile
            model.prepend(items, start)

    def _has_live_state(self, key: str) -> bool:
        return self.is_busy(key) or bool(self.approvals.pending(key))

    def _drop_idle_models(self) -> None:
        for key in list(self._models):
            if key != self._current_key and not self._has_live_state(key) and key not in self._loading:
                del self._models[key]

    # --- sending and stopping ------------------------------------------------------------------------

    def warn_before_sending(self, key: str) -> bool:
        """True (and a notice in that chat) the first time the person sends into a session another
        program holds in memory (engine/background/coexistence.py); the next send goes through."""
        coexistence = getattr(self.engine, "coexistence", None)
        warning = coexistence.session_warning(key) if coexistence is not None else None
        if not warning or key in self._warned:
            return False
        self._warned.add(key)
        model = self._models.get(key)
        if model is not None:
            self.relay.notice(key, model, warning)
        return True

    def check_interrupted(self, key: str) -> None:
        """Look (off the GUI thread) for a turn nanobot 0.3.5 left unfinished in `key`; says so if found."""
        task = asyncio.ensure_future(asyncio.to_thread(self.engine.interrupted_turn, key))

        def found(done: "asyncio.Future[Any]") -> None:
            turn = None if done.cancelled() or done.exception() is not None else done.result()
            if turn is None:
                return
            text = translate("Chat", "This conversation stopped in the middle of a turn (nanobot saved where it was).")
            if turn.unknown_tools:
                text += " " + translate("Chat", "{tools} had not finished: their outcome is unknown and they are "
                                                "not run again.").format(tools=", ".join(turn.unknown_tools))
            self.interrupted_found.emit(key, text, bool(turn.can_continue))

        self._work.when_done(task, found)

    def resolve_interrupted(self, key: str, continuing: bool) -> "asyncio.Task[Any]":
        """*Continue* (the model goes on from the saved state) or *Dismiss* (keep it, close the turn)."""

        async def run() -> Any:
            settled = await asyncio.to_thread(self.engine.settle_interrupted, key, continuing=continuing)
            if not settled:
                return None
            self.reload_session(key)
            return self.resend(key) if continuing else None

        return self._work.spawn(run())

    def put_back_lost(self, key: str) -> "asyncio.Future[str | None]":
        """Put the messages erased from `key` into a new chat (a file write: off the GUI thread)."""
        task: asyncio.Future[str | None] = asyncio.ensure_future(asyncio.to_thread(self.engine.put_back_lost, key))
        self._work.when_done(task, lambda done: self.continued.emit(key, done.result() or "")
                             if not done.cancelled() and done.exception() is None and done.result() else None)
        return task

    def send(self, text: str, media: list[str] | None = None) -> "asyncio.Future[Any] | None":
        """Submit the person's message to the session shown (a chat channel's session keeps its channel
        and chat id, as the gateway would; the app's own sessions are channel "desktop")."""
        key = self._current_key
        if not key or (not text.strip() and not media):
            return None
        channel, chat_id = self.engine.loop.route_for_user_turn(key)
        task = self.engine.loop.submit(key, text, list(media or []), channel=channel, chat_id=chat_id)
        return self._follow(key, task)

    def resend(self, key: str) -> "asyncio.Future[Any] | None":
        """*Retry* / *Regenerate*: answer the last message saved in `key` again, without a second copy of it."""
        if not key:
            return None
        channel, chat_id = self.engine.loop.route_for_user_turn(key)
        return self._follow(key, self.engine.loop.resend(key, channel=channel, chat_id=chat_id))

    def _follow(self, key: str, task: "asyncio.Future[Any]") -> "asyncio.Future[Any]":
        self._submitted.setdefault(key, set()).add(task)
        self._work.when_done(task, functools.partial(self._on_submitted_done, key))  # the turn goes on without us
        self._emit_busy()
        return task

    def _on_submitted_done(self, key: str, task: "asyncio.Future[Any]") -> None:
        self._submitted.get(key, set()).discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("the turn in %s failed", key, exc_info=task.exception())
        self._emit_busy()
        self._reload_if_waiting(key)

    def _reload_if_waiting(self, key: str) -> None:
        """A session that changed outside during a turn is read again when nothing is live in it."""
        if key not in self._reload_when_idle:
            return
        # A session no longer shown is read afresh when it is shown again.
        if key not in self._models or (not self._has_live_state(key) and self.reload_session(key)):
            self._reload_when_idle.discard(key)

    def retry_save(self, key: str) -> "asyncio.Task[Any] | None":
        """*Retry save*: write what a failed write left unsaved in session `key` (see AgentLoop.retry_save)."""
        if not key or not self.engine.loop.has_unsaved(key):
            return None
        task = asyncio.ensure_future(self._retry_save(key))
        self._track(task)
        return task

    async def _retry_save(self, key: str) -> None:
        from nanobot_desktop.engine import StorageError

        try:
            await self.engine.loop.retry_save(key)
        except StorageError as error:
            message = translate("Chat", "{problem} The messages are still not saved: retry once that is fixed.").format(
                problem=storage_problem(error))
            model = self._models.get(key)
            if model is not None:
                model.append(Notice(message, "error"))
            self.save_retried.emit(key, False, message)
            return
        model = self._models.get(key)
        if model is not None:
            model.mark_saved()
            self.relay.notice(key, model, translate("Chat", "Saved to the session file."))
        self.save_retried.emit(key, True, translate("Chat", "Saved to the session file."))

    def stop_current(self) -> "asyncio.Task[Any] | None":
        """Cancel the shown session's turn, its tool process and its subagents."""
        key = self._current_key
        if not key:
            return None
        task = asyncio.ensure_future(self.engine.loop.stop(key))
        self._track(task)
        return task

    def context_fill(self, key: str) -> tuple[int, int] | None:
        """(used, window) tokens of the session's last model call, when the window is known."""
        return self._fill.get(key)

    def is_busy(self, key: str) -> bool:
        return self._running.get(key, 0) > 0 or any(not t.done() for t in self._submitted.get(key, ()))

    def _emit_busy(self) -> None:
        busy = self.is_busy(self._current_key)
        if busy != self._busy_shown:
            self._busy_shown = busy
            self.busy_changed.emit(busy)

    def _track(self, task: "asyncio.Future[Any]") -> None:
        self._work.track(task)  # cancelled if the controller goes first

    async def shutdown(self) -> None:
        """Stop answering approvals and cancel loads (the engine's own shutdown stops the turns)."""
        self.approvals.detach()
        await self._work.shutdown()

    # --- approvals (approvals.py) ------------------------------------------------------------------

    def answer_approval(self, call_id: str, answer: str, reason: str = "") -> bool:
        """Answer a waiting approval from its card ("allow_once", "allow_always" or "deny"; a deny may give a
        reason); False when the engine refused it (it was answered elsewhere first, or expired)."""
        return self.approvals.answer(call_id, answer, reason)

    def pending_approvals(self, key: str | None = None) -> list[str]:
        """Call ids of approval cards waiting for an answer (in `key`, or anywhere)."""
        return self.approvals.pending(key)

    async def _model_for_card(self, key: str) -> ChatModel:
        """The model an approval card of `key` goes into, its history read first."""
        model = self._models.get(key)
        if model is None:  # a session not on screen: its card waits in its own model
            model = self._take_model(key)
            self._start_load(key, model)
        loading = self._loading.get(key)
        if loading is not None:
            await asyncio.shield(loading)
        return model

    # --- engine events -------------------------------------------------------------------------------

    def _handlers(self) -> dict[type, Handler]:
        """What the controller does per event type; every type that changes a chat reaches its model
        (`_to_model`), the others' steps around that in the order the window hears them."""
        own: dict[type, Handler] = {
            ApprovalRequested: self._on_approval_requested, ApprovalAnswered: self._on_approval_answered,
            SessionLinesLost: self._on_lines_lost, SessionChanged: self._on_session_changed,
            ConsolidationFinished: self._on_consolidation_finished,
            TurnStarted: self._on_turn_started, TurnFinished: self._on_turn_finished,
            TurnFailed: self._on_turn_failed, TurnCancelled: self._on_turn_cancelled,
            LLMCallStarted: self._on_llm_call_started, LLMCallFinished: self._on_llm_call_finished,
            WaitingForModel: self._on_waiting_for_model, RetryScheduled: self._on_retry_scheduled,
            TextDelta: self._on_model_spoke, ReasoningDelta: self._on_model_spoke, ToolCallStarted: self._on_model_spoke,
        }
        return {**dict.fromkeys(self.relay.handled, self._to_model), **own}

    def _to_model(self, event: Event) -> None:
        """Draw `event` into its session's model (kept for later while that session's history is read)."""
        key = event.session_key
        model = self._models.get(key)
        if model is None:
            return
        if key in self._loading:
            self._buffered.setdefault(key, []).append(event)
        else:
            self.relay.apply(model, event)

    def _on_approval_requested(self, event: ApprovalRequested) -> None:
        self.approvals.show(event.request)
        self._to_model(event)

    def _on_approval_answered(self, event: ApprovalAnswered) -> None:
        self.approvals.settle(event)
        self._to_model(event)

    def _on_lines_lost(self, event: SessionLinesLost) -> None:
        by = event.by or translate("Chat", "another program")
        text = translate("Chat", "{count} message(s) the app wrote to “{session}” were erased "
                                 "from its file by {by}. The app kept them.")
        self.lines_lost.emit(event.session_key, text.format(count=event.count, session=event.session_key, by=by))

    def _on_session_changed(self, event: SessionChanged) -> None:
        key = event.session_key
        if event.outside and key not in self._loading:
            if not self.reload_session(key) and key in self._models:
                self._reload_when_idle.add(key)  # never under a live turn: read it once that is over
            return
        if event.outside and key in self._models:  # while its history is read: `_load` looks again
            self._outside_writes.setdefault(key, []).append(event.size)
        self._mark_saved_if_written(key)
        self._to_model(event)

    def _on_consolidation_finished(self, event: ConsolidationFinished) -> None:
        self._mark_saved_if_written(event.session_key)
        self._to_model(event)

    def _mark_saved_if_written(self, key: str) -> None:
        if key in self._models and key in self._unsaved_shown and not self.engine.loop.has_unsaved(key):
            self._unsaved_shown.discard(key)  # a later write took the waiting messages along
            self._models[key].mark_saved()

    def _on_turn_started(self, event: TurnStarted) -> None:
        key = event.session_key
        self._running[key] = self._running.get(key, 0) + 1
        self._to_model(event)
        self._emit_busy()

    def _on_turn_finished(self, event: TurnFinished) -> None:
        key = event.session_key
        self._count_turn_end(key)
        self._model_spoke(key)
        self._to_model(event)
        if event.continued_in:
            self._reload_when_idle.add(key)  # its "/new" exchange is not in the file: show the file again
            self.continued.emit(key, event.continued_in)
        self._turn_ended(key)

    def _on_turn_failed(self, event: TurnFailed) -> None:
        key = event.session_key
        self._count_turn_end(key)
        kind = failure_kind(event)
        if event.unsaved:
            self._unsaved_shown.add(key)
        if event.unsent_text:
            self.message_returned.emit(key, event.unsent_text)
        self.turn_failed.emit(key, self.relay.failure_text(event, kind), kind)
        self._model_spoke(key)
        self._to_model(event)
        self._turn_ended(key)

    def _on_turn_cancelled(self, event: TurnCancelled) -> None:
        key = event.session_key
        self._count_turn_end(key)
        self._model_spoke(key)
        self._to_model(event)
        self._turn_ended(key)

    def _count_turn_end(self, key: str) -> None:
        self._running[key] = max(0, self._running.get(key, 0) - 1)

    def _turn_ended(self, key: str) -> None:
        """After a turn's end is drawn: the composer's button, the window, a reload that waited."""
        self._emit_busy()
        self.reply_finished.emit(key)
        self._reload_if_waiting(key)

    def _on_llm_call_started(self, event: LLMCallStarted) -> None:
        self._note_fill(event.session_key, event.estimated_tokens, event.window_tokens)
        self._to_model(event)

    def _on_llm_call_finished(self, event: LLMCallFinished) -> None:
        self._note_fill(event.session_key, event.prompt_tokens, event.window_tokens)
        self._to_model(event)

    def _note_fill(self, key: str, used: int, window: int) -> None:
        if window and used:
            self._fill[key] = (used, window)
            self.context_fill_changed.emit(key, used, window)

    def _on_waiting_for_model(self, event: WaitingForModel) -> None:
        key = event.session_key
        self._waiting.add(key)
        text = (translate("Chat", "Waiting for an answer… {waited} s (gives up after {limit} s)") if event.phase == "first_byte"
                else translate("Chat", "The local server is reading the prompt… {waited} s") if event.phase == "prompt"
                else translate("Chat", "Waiting for the rest of the reply… {waited} s (gives up after {limit} s)"))
        self.waiting_changed.emit(key, text.format(waited=f"{event.waited_s:.0f}", limit=f"{event.limit_s:g}"))
        self._to_model(event)

    def _on_retry_scheduled(self, event: RetryScheduled) -> None:
        key = event.session_key
        self._retrying.add(key)
        self.retry_changed.emit(key, event.attempt, event.max_attempts, event.delay_s)
        self._to_model(event)

    def _on_model_spoke(self, event: TextDelta | ReasoningDelta | ToolCallStarted) -> None:
        self._model_spoke(event.session_key)
        self._to_model(event)

    def _model_spoke(self, key: str) -> None:
        """The model answered (or the turn ended): "waiting…" and a scheduled retry's status go."""
        if key in self._waiting:
            self._waiting.discard(key)
            self.waiting_changed.emit(key, "")
        if key in self._retrying:
            self._retrying.discard(key)
            self.retry_changed.emit(key, 0, 0, 0.0)
