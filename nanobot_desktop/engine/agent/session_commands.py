"""A session's commands and memory: `/new` (and `/help`'s text) and consolidation, which the loop owns
as one object (`SessionCommands`); `/stop` is the loop's own, as it cancels the loop's turns.

Consolidation follows the reference (§4): it starts in the background when a turn finds
`memoryWindow` unconsolidated messages (or, in a nanobot 0.3 workspace, when the history outgrows its
token budget), and `last_consolidated` is on disk as soon as the summary is. `/new` archives everything
into memory first and does not clear the session when that fails; in one of the app's own chats the
conversation stays and the talk goes on in a new session.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import replace
from typing import Any, Callable

from nanobot_desktop.engine.events import (
    ConsolidationFinished,
    ConsolidationStarted,
    TurnFailed,
    TurnFinished,
)
from nanobot_desktop.engine.memory.history_journal import history_session
from nanobot_desktop.engine.llm.types import ChatProvider, LLMResponse, ProviderError
from nanobot_desktop.engine.agent.context import ContextBuilder
from nanobot_desktop.engine.agent.turn import (AgentSettings, TurnResult, finish_turn, new_session_key,
                                               publish_call_failed, publish_call_finished)
from nanobot_desktop.engine.memory.consolidation import consolidate_detailed, on_hold
from nanobot_desktop.engine.events import EventBus
from nanobot_desktop.engine.memory.store import MemoryStore
from nanobot_desktop.engine.sessions.store import Session, SessionStore
from nanobot_desktop.engine.agent.token_window import consolidation_window, history_budget
from nanobot_desktop.engine.usage.source import call_source, current_session
from nanobot_desktop.engine.workspace import StorageError

log = logging.getLogger(__name__)

HELP_TEXT = (
    "🐈 nanobot commands:\n"
    "/new — start a new conversation (the current one is summarised into memory first)\n"
    "/stop — stop the current task\n"
    "/help — show these commands"
)
ARCHIVE_FAILED_TEXT = ("The conversation was not cleared, because saving it to memory failed: {reason}. "
                       "Nothing was lost; you can try again or start a new chat and keep this one.")
NEW_BLOCKED_KIND = "new_blocked"  # TurnFailed.kind of a /new that memory archival stopped
NEW_SESSION_TEXT = "New session started."


class SessionCommands:
    """`/new` and memory consolidation, for the loop's turns; it keeps the running consolidations."""

    def __init__(self, *, sessions: SessionStore, memory: MemoryStore, context: ContextBuilder, bus: EventBus,
                 provider: Callable[[], ChatProvider], settings: Callable[[], AgentSettings]) -> None:
        self.sessions = sessions
        self.memory = memory
        self.context = context
        self.bus = bus
        self._provider = provider
        self._settings = settings
        self._consolidation_locks: dict[str, asyncio.Lock] = {}
        self._consolidation_tasks: dict[str, asyncio.Task[Any]] = {}

    def running(self) -> list[asyncio.Task[Any]]:
        """The consolidations still running (the loop's shutdown cancels and awaits them)."""
        return [task for task in self._consolidation_tasks.values() if not task.done()]

    async def wait_for_consolidation(self, session_key: str) -> None:
        task = self._consolidation_tasks.get(session_key)
        if task is not None and not task.done():
            await asyncio.shield(task)

    async def plain_chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
        """One call with the configured model and no streaming callbacks: the `ChatWithTools` that
        consolidation and the heartbeat's decision use."""
        provider = self._provider()
        settings = self._settings()
        model = settings.model or provider.default_model
        call_id = uuid.uuid4().hex[:12]
        started = time.perf_counter()
        try:
            response = await provider.chat(messages, tools, model=model, temperature=settings.temperature,
                                           max_tokens=settings.max_tokens)
        except ProviderError as error:
            publish_call_failed(self.bus, current_session(), "", call_id, model, error, time.perf_counter() - started)
            raise
        # Announced for the usage record only (no turn: the inspector has nothing to attach it to).
        publish_call_finished(self.bus, current_session(), "", call_id, model, response, messages, tools)
        return response

    def maybe_start_consolidation(self, session: Session, settings: AgentSettings) -> None:
        unconsolidated = session.count - session.last_consolidated
        running = self._consolidation_tasks.get(session.key)
        if running is not None and not running.done():
            return
        if settings.context_window_tokens > 0:
            budget = history_budget(settings.context_window_tokens, settings.max_tokens,
                                    len(self.context.build_system_prompt()))
            window = consolidation_window(session.since(session.last_consolidated), budget)
            if window is None:
                return
            settings = replace(settings, memory_window=window)
        elif unconsolidated < settings.memory_window:
            return
        if on_hold(session.messages, session.last_consolidated - session.base, self.memory, settings.memory_window):
            return  # it failed lately and was said then; it is tried again later, or at /new
        task = asyncio.ensure_future(self._consolidate(session, settings, archive_all=False))
        self._consolidation_tasks[session.key] = task

    async def _consolidate(self, session: Session, settings: AgentSettings, *, archive_all: bool) -> str:
        """Summarise messages into memory; returns "" when it worked, else why it did not."""
        lock = self._consolidation_locks.setdefault(session.key, asyncio.Lock())
        async with lock:
            count = session.count - session.last_consolidated
            self.bus.publish(ConsolidationStarted(session.key, message_count=count, archive_all=archive_all))
            try:
                with history_session(session.key), call_source("consolidation", session.key):
                    # (0.3's history.jsonl entries name their session)
                    base = session.base  # only the loaded tail is summarised; it starts at the offset
                    result = await consolidate_detailed(session.messages, session.last_consolidated - base,
                                                        self.memory, self.plain_chat, archive_all=archive_all,
                                                        memory_window=settings.memory_window)
                offset = None if result.offset is None else result.offset + base
            except asyncio.CancelledError:
                self.bus.publish(ConsolidationFinished(session.key, ok=False, error="cancelled", archive_all=archive_all))
                raise
            except Exception as error:  # consolidate reports failures as None; this is a safety net
                log.exception("consolidation of %s failed", session.key)
                self.bus.publish(ConsolidationFinished(session.key, ok=False, error=str(error), archive_all=archive_all))
                return str(error) or type(error).__name__
            if offset is None:
                why = result.error or "the model did not save memory"
                self.bus.publish(ConsolidationFinished(session.key, ok=False, error=why, archive_all=archive_all))
                return why
            if not archive_all and offset != session.last_consolidated:
                try:
                    self.sessions.set_last_consolidated(session, offset)
                except StorageError as error:
                    why = error.sentence("the summary was written but the session still counts those messages as new")
                    self.bus.publish(ConsolidationFinished(session.key, ok=False, error=why, archive_all=archive_all))
                    return why
            self.bus.publish(ConsolidationFinished(session.key, ok=True, archive_all=archive_all))
            return ""

    async def new_session(self, session_key: str, turn_id: str) -> TurnResult:
        session = self.sessions.get_or_create(session_key)
        settings = self._settings()
        await self.wait_for_consolidation(session_key)
        if session.count > session.last_consolidated:
            why = await self._consolidate(session, settings, archive_all=True)
            if why:  # the window offers "Start anyway" (a new chat; this one stays) and "Try again"
                message = ARCHIVE_FAILED_TEXT.format(reason=why.rstrip("."))
                self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind=NEW_BLOCKED_KIND))
                return TurnResult(turn_id, "failed", None, message, kind=NEW_BLOCKED_KIND)
        if session.channel == "desktop" and session.count:
            return self._continue_in_new_session(session, turn_id)
        try:
            self.sessions.clear(session)  # publishes SessionChanged(reason="cleared")
        except StorageError as error:
            message = error.sentence("the conversation was not cleared")
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind="storage"))
            return TurnResult(turn_id, "failed", None, message, kind="storage")
        self.sessions.invalidate(session_key)
        return finish_turn(self.bus, session_key, turn_id, NEW_SESSION_TEXT, status="command")

    def _continue_in_new_session(self, session: Session, turn_id: str) -> TurnResult:
        """`/new` in one of the app's own chats: this conversation stays as it is, in the session list
        (its messages now count as summarised), and the talk goes on in a new session, titled by its
        own first message. A chat channel's session keeps its key instead (`SessionStore.clear`)."""
        try:
            self.sessions.set_last_consolidated(session, session.count)
        except StorageError as error:
            message = error.sentence("the conversation was saved to memory, but no new one was started")
            self.bus.publish(TurnFailed(session.key, turn_id=turn_id, error=message, kind="storage"))
            return TurnResult(turn_id, "failed", None, message, kind="storage")
        new_key = new_session_key(session.channel)
        while self.sessions.path_for(new_key).exists():
            new_key = new_session_key(session.channel)
        self.bus.publish(TurnFinished(session.key, turn_id=turn_id, reply=NEW_SESSION_TEXT, continued_in=new_key))
        return TurnResult(turn_id, "command", NEW_SESSION_TEXT)
