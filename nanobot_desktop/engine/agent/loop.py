"""The agent loop: one turn = build context → stream the model → run tools → … → final reply.

Behaviour follows nanobot 0.1.4.post4 (reference §6) with these deliberate differences:
- every step is appended to the session as it happens (user message first, then each assistant
  and tool message), so a crash or a stop keeps the partial turn — the original saved only at the end;
- turns publish typed events (events.py) instead of progress strings;
- one turn at a time *per session*; different sessions run concurrently;
- `/stop` cancels the session's turn, its running tool process and its subagents, and the partial
  turn is saved marked `"stopped": true`;
- a reply the endpoint cuts off is kept, marked `"cut_off": <kind>`; a write the disk refuses leaves the
  file as it was, and the messages wait in memory for `retry_save` (or the session's next write).

The loop is one object that owns three: a saver (saver.py: how each step is saved), the tool steps
(tool_steps.py: a turn's tool calls) and the session commands (session_commands.py: /new and
consolidation); turn.py holds what they share. This module runs a turn from the user's message to the
final reply, and keeps which turns run in which session (one at a time per session; `/stop`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, Callable

from nanobot_desktop.engine.agent.context import SECTION_SEPARATOR, ContextBuilder, PromptSection
from nanobot_desktop.engine.agent.prompt_fit import PromptTooLong, fit_prompt
from nanobot_desktop.engine.agent.saver import TurnSaver
from nanobot_desktop.engine.agent.session_commands import HELP_TEXT, SessionCommands
from nanobot_desktop.engine.agent.token_window import archived_summary, fit_history, history_budget
from nanobot_desktop.engine.agent.tool_runner import ToolRunner
from nanobot_desktop.engine.agent.tool_steps import TOOL_IMAGES_TEXT, ToolSteps
from nanobot_desktop.engine.agent.turn import (
    APP_CHANNELS, AgentSettings, Subagents, TurnResult, TurnState, chat_with_events, finish_turn, new_session_key,
    strip_think,
)
from nanobot_desktop.engine.config import ConfigError
from nanobot_desktop.engine.events import (EventBus, Origin, Progress, ReasoningDelta, TextDelta, TurnCancelled,
                                           TurnFailed, TurnFinished, TurnStarted, origin_context)
from nanobot_desktop.engine.llm.types import ChatProvider, LLMResponse, ProviderError
from nanobot_desktop.engine.memory.store import MemoryStore
from nanobot_desktop.engine.sessions.export import message_media, user_text
from nanobot_desktop.engine.sessions.key import SessionKey
from nanobot_desktop.engine.sessions.store import Session, SessionStore
from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.workspace import StorageError, Workspace

__all__ = ["APP_CHANNELS", "AgentLoop", "AgentSettings", "TurnResult", "chat_with_events", "new_session_key",
           "strip_think"]

log = logging.getLogger(__name__)

NO_RESPONSE_TEXT = "I've completed processing but have no response to give."


SessionEndpoint = Callable[[Session], tuple[AgentSettings, Callable[[], ChatProvider]] | None]
"""A session's own model (`metadata["model"]`) as its settings and endpoint, or None when the session
uses the config's model (engine/llm/session_models.py)."""


class AgentLoop:
    """Runs turns for any number of sessions and publishes what happens on `bus`.

    It owns `saver` (each step saved), `tool_steps` (a turn's tool calls) and `commands` (/new and
    consolidation), and keeps the running turns of each session. Consolidation and the heartbeat's
    decision (`plain_chat`) keep the config's model, whatever `session_endpoint` says."""

    def __init__(self, *, workspace: Workspace, provider: Callable[[], ChatProvider], sessions: SessionStore,
                 memory: MemoryStore, context: ContextBuilder, runner: ToolRunner, bus: EventBus,
                 settings: Callable[[], AgentSettings], restrict_to_workspace: Callable[[], bool], cron: Any = None,
                 subagents: Subagents | None = None, session_endpoint: SessionEndpoint | None = None) -> None:
        self.sessions = sessions
        self.context = context
        self.runner = runner
        self.bus = bus
        self._provider = provider
        self._settings = settings
        self.subagents = subagents  # None: no `spawn`, and /stop cancels turns only
        self.session_endpoint = session_endpoint
        self._session_locks: dict[str, asyncio.Lock] = {}
        self._active: dict[str, set[asyncio.Task[Any]]] = {}
        self._models_without_tools: set[str] = set()  # servers that cannot take tool definitions
        self.saver = TurnSaver(sessions, bus, self._session_lock)
        self.tool_steps = ToolSteps(runner=runner, saver=self.saver, bus=bus, workspace=workspace,
                                    restrict_to_workspace=restrict_to_workspace, cron=cron, subagents=subagents)
        self.commands = SessionCommands(sessions=sessions, memory=memory, context=context, bus=bus,
                                        provider=provider, settings=settings)

    # --- public API --------------------------------------------------------------------------------

    def submit(self, session_key: str, text: str, media: list[str] | None = None, *,
               channel: str | None = None, chat_id: str | None = None) -> "asyncio.Task[TurnResult]":
        """Start a turn in the background (the GUI's entry point). `/stop` is handled at once."""
        if text.strip().lower() == "/stop":
            return asyncio.ensure_future(self._stop_command(session_key))
        return self._start_turn(session_key, text, media, channel, chat_id, False, Origin.PERSON)

    def resend(self, session_key: str, *, channel: str | None = None,
               chat_id: str | None = None) -> "asyncio.Task[TurnResult]":
        """Answer the session's last saved user message again, without writing it a second time: *Retry*
        after a failed turn, and *Regenerate* in a branch that ends with that message."""
        return self._start_turn(session_key, "", None, channel, chat_id, False, Origin.PERSON, resend=True)

    async def process(self, session_key: str, text: str, media: list[str] | None = None, *,
                      channel: str | None = None, chat_id: str | None = None,
                      in_cron_job: bool = False, origin: Origin = Origin.PERSON) -> TurnResult:
        """Run one turn to the end (waiting for the session's previous turn) and return its result.

        `origin` says who started it (the heartbeat, a cron job, the system handing back a subagent's
        report...): every event of the turn carries it (`Event.started_by`).

        The turn runs in a task of its own, so `/stop` cancels only the turn, never the caller (the
        heartbeat's tick, the cron timer, a subagent announcing its result). A stopped turn returns a
        result with status "cancelled"; cancelling the caller cancels the turn too.
        """
        turn = self._start_turn(session_key, text, media, channel, chat_id, in_cron_job, origin)
        try:
            return await asyncio.shield(turn)
        except asyncio.CancelledError:
            caller = asyncio.current_task()
            if caller is not None and caller.cancelling():
                turn.cancel()
                raise
            return TurnResult("", "cancelled", None, "stopped by the user")

    def _start_turn(self, session_key: str, text: str, media: list[str] | None, channel: str | None,
                    chat_id: str | None, in_cron_job: bool, origin: Origin,
                    resend: bool = False) -> "asyncio.Task[TurnResult]":
        """The turn's task, in a context that says who started it: its events, and those of the tasks
        it starts (consolidation, subagents), carry `origin`."""
        channel, chat_id = self._route(session_key, channel, chat_id)
        task = asyncio.get_running_loop().create_task(
            self._locked_turn(session_key, text, media or [], channel, chat_id, in_cron_job, origin, resend),
            context=origin_context(origin))
        self._track(session_key, task)
        return task

    def _session_lock(self, session_key: str) -> asyncio.Lock:
        """The lock a session's turns (and a retried save) take, one at a time."""
        return self._session_locks.setdefault(session_key, asyncio.Lock())

    async def _locked_turn(self, session_key: str, text: str, media: list[str], channel: str, chat_id: str,
                           in_cron_job: bool, origin: Origin, resend: bool = False) -> TurnResult:
        async with self._session_lock(session_key):
            return await self._turn(session_key, text, media, channel, chat_id, in_cron_job, origin, resend)

    def is_busy(self, session_key: str) -> bool:
        return any(not t.done() for t in self._active.get(session_key, set()))

    def busy_sessions(self) -> list[str]:
        return [key for key in self._active if self.is_busy(key)]

    async def stop(self, session_key: str) -> int:
        """Cancel the session's running turns and subagents; returns how many tasks were stopped."""
        tasks = [t for t in self._active.get(session_key, set()) if not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # this stop was cancelled itself: say so, do not report a stop that did not end
            except Exception:  # noqa: BLE001 - a stopped turn has reported its own end
                pass
        stopped = len(tasks)
        if self.subagents is not None:
            stopped += await self.subagents.cancel_by_session(session_key)
        return stopped

    def has_unsaved(self, session_key: str) -> bool:
        """Whether messages of this session wait to be written (a write failed; see `retry_save`)."""
        return self.saver.has_unsaved(session_key)

    async def retry_save(self, session_key: str) -> int:
        """Write the messages a failed write left unsaved; returns how many (TurnSaver.retry_save)."""
        return await self.saver.retry_save(session_key)

    async def wait_for_consolidation(self, session_key: str) -> None:
        await self.commands.wait_for_consolidation(session_key)

    async def plain_chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
        """One call with the configured model, no streaming (SessionCommands.plain_chat): the heartbeat's
        decision uses it."""
        return await self.commands.plain_chat(messages, tools)

    async def shutdown(self) -> None:
        """Cancel and await every turn and consolidation (the app's shutdown owner calls this)."""
        tasks = [t for group in self._active.values() for t in group if not t.done()]
        tasks += self.commands.running()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # --- internals -----------------------------------------------------------------------------------

    async def _stop_command(self, session_key: str) -> TurnResult:
        turn_id = uuid.uuid4().hex[:12]
        self.bus.publish(TurnStarted(session_key, turn_id=turn_id, user_text="/stop"))
        count = await self.stop(session_key)
        reply = f"⏹ Stopped {count} task(s)." if count else "No active task to stop."
        self.bus.publish(TurnFinished(session_key, turn_id=turn_id, reply=reply))
        return TurnResult(turn_id, "command", reply)

    def _track(self, session_key: str, task: "asyncio.Task[Any]") -> None:
        group = self._active.setdefault(session_key, set())
        group.add(task)
        task.add_done_callback(group.discard)

    @staticmethod
    def route_for_user_turn(session_key: str) -> tuple[str, str]:
        """Where a message the person types into `session_key` comes from, as the gateway would see it:
        a chat channel's session ("telegram:123") keeps its channel and chat id, so cron jobs and
        `message` calls made in that turn go back to that chat; the app's own sessions are "desktop"."""
        key = SessionKey.parse(session_key)
        if key.chat_id and key.channel not in APP_CHANNELS:
            return key.channel, key.chat_id
        return "desktop", key.chat_id or session_key

    @staticmethod
    def _route(session_key: str, channel: str | None, chat_id: str | None) -> tuple[str, str]:
        if channel and chat_id:
            return channel, chat_id
        key = SessionKey.parse(session_key)
        if key.chat_id is not None:
            return channel or key.channel, chat_id or key.chat_id
        return channel or "cli", chat_id or "direct"

    async def _turn(self, session_key: str, text: str, media: list[str], channel: str, chat_id: str,
                    in_cron_job: bool, origin: Origin, resend: bool = False) -> TurnResult:
        turn_id = uuid.uuid4().hex[:12]
        if resend:
            text, media = self._saved_prompt(session_key)
        self.bus.publish(TurnStarted(session_key, turn_id=turn_id, user_text=text, media=tuple(media), resend=resend))
        if resend and not text:
            message = "There is no saved message in this conversation to send again."
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind="session"))
            return TurnResult(turn_id, "failed", None, message, kind="session")
        command = "" if resend else text.strip().lower()
        if command == "/help":
            return finish_turn(self.bus, session_key, turn_id, HELP_TEXT, status="command")
        if command == "/new":
            return await self.commands.new_session(session_key, turn_id)

        try:
            session = self.sessions.get_or_create(session_key)
        except (ValueError, OSError) as error:  # an unusable key, or a session file that cannot be read
            message = str(error) if isinstance(error, ValueError) else \
                f"Cannot read the session file {error.filename}: {error.strerror or error}."
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind="session",
                                        unsent_text=text))
            return TurnResult(turn_id, "failed", None, message, kind="session")
        settings = self._settings()
        state = TurnState(turn_id=turn_id, session=session)
        own = self.session_endpoint(session) if self.session_endpoint is not None else None
        if own is not None:
            state.provider = own[1]
        # asked first: a consolidation started below must not run before this turn's message is saved
        state.window = await self._context_window(state, own[0] if own is not None else settings)
        if origin is not Origin.SYSTEM:  # a subagent's report handed back does not start one
            self.commands.maybe_start_consolidation(session, settings)
        if own is not None:
            settings = own[0]
        try:
            self.saver.save(state, [])  # first what an earlier failed write left unsaved, so the model sees it
            prompt_sections = self.context.system_sections()
            if settings.context_window_tokens > 0:  # a nanobot 0.3 workspace
                summary = archived_summary(session.metadata)
                if summary:  # 0.3 compacted this session: its summary stands in for the archived messages
                    prompt_sections.append(PromptSection("archived_summary", summary))
                budget = history_budget(settings.context_window_tokens, settings.max_tokens,
                                        sum(section.chars for section in prompt_sections))
                history = fit_history(_before_prompt(session.get_history(0), resend), budget)
            else:
                history = _before_prompt(session.get_history(settings.memory_window), resend)
            messages = self.context.build_messages(history, text, media, channel, chat_id,
                                                   sections=prompt_sections)
            if state.window:  # fitted to the model's window: oldest history first, then the skills summary
                fit = fit_prompt(prompt_sections, history, messages[-1], self._tools(settings), state.window,
                                 settings.max_tokens, settings.model)
                if fit.dropped or fit.compacted:
                    log.info("prompt fitted to a %d-token window: %d history messages left out, compacted: %s",
                             state.window, fit.dropped, ", ".join(fit.compacted) or "nothing")
                    prompt_sections = fit.sections
                    messages = [{"role": "system", "content": SECTION_SEPARATOR.join(s.text for s in fit.sections)},
                                *fit.history, messages[-1]]
            sizes = tuple((section.name, section.chars) for section in prompt_sections)
            if not resend:  # a resent prompt is on disk already
                # The image paths ride along as 0.3.5 keeps them (`media`): the chat shows their
                # thumbnails, Regenerate sends them again; post4 ignores the key.
                saved = {**messages[-1], "media": list(media)} if media else messages[-1]
                self.saver.save(state, [saved], keep_on_failure=False, typed=text)
        except PromptTooLong as error:  # nothing was sent or saved: the text goes back to the composer
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=error.message, kind="context_overflow",
                                        unsent_text=text))
            return TurnResult(turn_id, "failed", None, error.message, kind="context_overflow")
        except StorageError as error:  # nothing was sent yet; the text stays in the composer / the shell
            message = error.sentence("your message was not saved and was not sent")
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind="storage",
                                        unsaved=self.saver.has_unsaved(session_key), unsent_text=text))
            return TurnResult(turn_id, "failed", None, message, kind="storage")
        ctx = self.tool_steps.tool_context(session_key, channel, chat_id, in_cron_job)
        try:
            reply = await self._run_iterations(state, messages, ctx, settings, sizes)
        except asyncio.CancelledError:
            self.saver.save_stopped(state)
            self.bus.publish(TurnCancelled(session_key, turn_id=turn_id, partial_text="".join(state.streamed)))
            raise
        except ProviderError as error:
            return self.saver.fail_with_partial(state, error)
        except StorageError as error:
            shown = "the reply is shown but was not saved" if state.reply is not None else "this turn stopped"
            message = error.sentence(shown)  # the window offers Retry save (has_unsaved / retry_save)
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind="storage",
                                        partial_text="".join(state.streamed), unsaved=True))
            return TurnResult(turn_id, "failed", state.reply, message, kind="storage")
        except ConfigError as error:  # e.g. no provider configured yet: the user's to fix, not a bug
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=str(error), kind="config"))
            return TurnResult(turn_id, "failed", None, str(error))
        except Exception as error:  # a bug must not take the app down; the user sees what happened
            log.exception("turn %s in %s failed", turn_id, session_key)
            message = f"Unexpected error: {type(error).__name__}: {error}"
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message))
            return TurnResult(turn_id, "failed", None, message)
        said = None if ctx.extra.get("message_sent_to_current_chat") else reply or NO_RESPONSE_TEXT
        return await self._finish_saved_turn(session_key, turn_id, said)

    async def _finish_saved_turn(self, session_key: str, turn_id: str, reply: str | None) -> TurnResult:
        """TurnFinished for a turn whose reply is saved, on the loop's next pass: the save (its write and
        fsync, 3-5 ms on the clock after a 64k reply here) and what the window does with TurnFinished
        (~1 ms) had been one loop step, the worst gap of a stream in 4 of 5 probe runs (7-12 ms with its
        neighbours in the same pass, bench/stream_stall.py).
        A Stop that lands in between comes after the turn's end: the turn is said to have finished
        (nothing more to save; `save_stopped` would add a second copy of the reply), then the stop goes on."""
        try:
            await asyncio.sleep(0)
        finally:  # a cancellation there goes on after TurnFinished
            result = finish_turn(self.bus, session_key, turn_id, reply)
        return result

    async def _context_window(self, state: TurnState, settings: AgentSettings) -> int:
        """The model's window in tokens (0: not known): Settings' number, else what the server says, at
        most a nanobot 0.3 workspace's `contextWindowTokens`."""
        if settings.context_window_override > 0:
            return settings.context_window_override
        try:
            provider = state.provider() if state.provider is not None else self._provider()
        except ConfigError:
            return settings.context_window_tokens  # the turn says what is missing when it calls the model
        ask = getattr(provider, "context_window", None)
        found = await ask(settings.model or None) if ask is not None else None
        server = found.tokens if found is not None else 0
        configured = settings.context_window_tokens
        return min(server, configured) if server and configured else server or configured

    def _tools(self, settings: AgentSettings) -> list[dict[str, Any]]:
        """The tool definitions sent to this model: none to a server that cannot take them."""
        return [] if settings.model in self._models_without_tools else self.runner.registry.get_definitions()

    def _saved_prompt(self, session_key: str) -> tuple[str, list[str]]:
        """The text and image paths of the session's last saved user message (("", []) when there is
        none or it cannot be read)."""
        try:
            session = self.sessions.get_or_create(session_key)
        except (ValueError, OSError):
            return "", []
        for message in reversed(session.messages):
            if message.get("role") == "user" and not message.get("_command"):
                return user_text(message), message_media(message)
        return "", []

    async def _run_iterations(self, state: TurnState, messages: list[dict[str, Any]], ctx: ToolContext,
                              settings: AgentSettings, sections: tuple[tuple[str, int], ...]) -> str | None:
        provider = state.provider() if state.provider is not None else self._provider()
        for _ in range(settings.max_iterations):
            response = await self._call_llm(state, provider, messages, self._tools(settings), settings, sections)
            # The call's end (its last chunk, LLMCallFinished) and what follows (saving, the next call
            # or TurnFinished) are loop steps of their own: under the window's loop, both at once had
            # held it 12-15 ms after a long reply. A Stop that lands here is a Stop during the call.
            await asyncio.sleep(0)
            if not response.has_tool_calls:
                final = strip_think(response.content)
                state.reply = final
                self.saver.save(state, [self.saver.assistant_message(final, None, response)])
                return final
            await self.tool_steps.run_tool_calls(state, response, messages, ctx, settings)
        limit_text = (f"I reached the maximum number of tool call iterations ({settings.max_iterations}) "
                      "without completing the task. You can try breaking the task into smaller steps.")
        self.saver.save(state, [{"role": "assistant", "content": limit_text}])
        return limit_text

    async def _call_llm(self, state: TurnState, provider: ChatProvider, messages: list[dict[str, Any]],
                        tools: list[dict[str, Any]], settings: AgentSettings,
                        sections: tuple[tuple[str, int], ...]) -> LLMResponse:
        key = state.session.key
        state.streamed = []

        def on_text(delta: str) -> None:
            state.streamed.append(delta)
            self.bus.publish(TextDelta(key, turn_id=state.turn_id, text=delta))

        def on_reasoning(delta: str) -> None:
            self.bus.publish(ReasoningDelta(key, turn_id=state.turn_id, text=delta))

        try:
            return await chat_with_events(self.bus, provider, key, state.turn_id, messages, tools, settings,
                                          sections=sections, on_text=on_text, on_reasoning=on_reasoning,
                                          window_tokens=state.window)
        except ProviderError as error:
            if error.kind == "tools_unsupported" and tools and not state.streamed:
                return await self._call_without_tools(state, provider, messages, settings, sections, error,
                                                      on_text, on_reasoning)
            last = messages[-1] if messages else {}
            has_images = last.get("role") == "user" and isinstance(last.get("content"), list) \
                and last["content"][:1] == [{"type": "text", "text": TOOL_IMAGES_TEXT}]
            if not has_images or error.kind != "bad_request":
                raise
            log.info("the endpoint refused the images of a tool result (%s); going on without them", error.message)
            self.tool_steps.refuse_images(settings.model)
            messages.pop()
            state.streamed = []
            return await chat_with_events(self.bus, provider, key, state.turn_id, messages, tools, settings,
                                          sections=sections, on_text=on_text, on_reasoning=on_reasoning,
                                          window_tokens=state.window)

    async def _call_without_tools(self, state: TurnState, provider: ChatProvider, messages: list[dict[str, Any]],
                                  settings: AgentSettings, sections: tuple[tuple[str, int], ...],
                                  error: ProviderError, on_text: Callable[[str], None],
                                  on_reasoning: Callable[[str], None]) -> LLMResponse:
        """The server refused tool definitions: said once (per model, while the app runs), and the turn
        goes on as plain chat."""
        log.info("%s cannot take tools (%s); going on as plain chat", settings.model, error.message)
        self._models_without_tools.add(settings.model)
        self.bus.publish(Progress(state.session.key, turn_id=state.turn_id, text=(
            f"The server cannot give the model '{settings.model}' tool definitions, so the agent answers as plain "
            "chat without tools (files, shell, web, memory) for this model.")))
        return await chat_with_events(self.bus, provider, state.session.key, state.turn_id, messages, [], settings,
                                      sections=sections, on_text=on_text, on_reasoning=on_reasoning,
                                      window_tokens=state.window)


def _before_prompt(history: list[dict[str, Any]], resend: bool) -> list[dict[str, Any]]:
    """For a resent turn, the history before its prompt (the last user message, which the turn sends
    again, and whatever a failed attempt left after it, e.g. a reply marked cut off)."""
    if not resend:
        return history
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("role") == "user":
            return history[:index]
    return history
