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

(Longer than the usual ~400 lines: a turn's steps, how each step is saved and how each can fail are
one story, and splitting them would scatter it.)
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from datetime import datetime
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from nanobot_desktop.engine.config import ConfigError
from nanobot_desktop.engine.context import ContextBuilder, PromptSection, _image_block, strip_runtime_for_save
from nanobot_desktop.engine.events import (
    ConsolidationFinished,
    ConsolidationStarted,
    EventBus,
    LLMCallFinished,
    LLMCallStarted,
    OutboundMessage,
    Progress,
    ReasoningDelta,
    RetryScheduled,
    TextDelta,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    WaitingForModel,
)
from nanobot_desktop.engine.llm.types import ChatProvider, LLMResponse, ProviderError
from nanobot_desktop.engine.history_journal import history_session
from nanobot_desktop.engine.memory import MemoryStore, consolidate_detailed
from nanobot_desktop.engine.sessions.export import message_text
from nanobot_desktop.engine.sessions.store import Session, SessionStore
from nanobot_desktop.engine.token_window import (
    archived_summary, consolidation_window, fit_history, history_budget,
)
from nanobot_desktop.engine.tool_runner import CANCELLED_RESULT, ToolRunner
from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.workspace import StorageError, Workspace

if TYPE_CHECKING:  # subagents imports this module
    from nanobot_desktop.engine.subagents import SubagentManager

log = logging.getLogger(__name__)

# Session channels the app itself makes: a turn typed into one of these is the desktop user's.
APP_CHANNELS = frozenset({"desktop", "heartbeat", "cron", "subagent", "system"})

TOOL_RESULT_SAVE_LIMIT = 16_000  # post4 kept 500 chars; later releases 16,000. Any length reads back fine.
HELP_TEXT = (
    "🐈 nanobot commands:\n"
    "/new — start a new conversation (the current one is summarised into memory first)\n"
    "/stop — stop the current task\n"
    "/help — show these commands"
)
NO_RESPONSE_TEXT = "I've completed processing but have no response to give."
ARCHIVE_FAILED_TEXT = ("The conversation was not cleared, because saving it to memory failed: {reason}. "
                       "Nothing was lost; you can try again or start a new chat and keep this one.")
NEW_BLOCKED_KIND = "new_blocked"  # TurnFailed.kind of a /new that memory archival stopped
TOOL_IMAGES_TEXT = "[Images returned by the tool calls above]"
NEW_SESSION_TEXT = "New session started."


def new_session_key(channel: str = "desktop") -> str:
    """A fresh key in `channel`, named by the time it was made ("desktop:20261124-195728-170")."""
    return f"{channel}:{datetime.now().strftime('%Y%m%d-%H%M%S-%f')[:-3]}"
_THINK_RE = re.compile(r"<think>[\s\S]*?</think>")


def strip_think(text: str | None) -> str:
    return _THINK_RE.sub("", text or "").strip()


def _image_block_of(path: str) -> dict[str, Any] | None:
    from pathlib import Path

    return _image_block(Path(path))


def tool_hint(calls: list[Any]) -> str:
    """`name("first arg")`, as the original's progress hints (first string argument, cut at 40 chars)."""
    parts = []
    for call in calls:
        first = next(iter(call.arguments.values()), None) if call.arguments else None
        if isinstance(first, str):
            shown = first if len(first) <= 40 else first[:40] + "…"
            parts.append(f'{call.name}("{shown}")')
        else:
            parts.append(call.name)
    return ", ".join(parts)


async def chat_with_events(bus: EventBus, provider: ChatProvider, session_key: str, turn_id: str,
                           messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: "AgentSettings", *,
                           sections: tuple[tuple[str, int], ...] = (), on_text: Callable[[str], None] | None = None,
                           on_reasoning: Callable[[str], None] | None = None) -> LLMResponse:
    """One model call, announced with LLMCallStarted/LLMCallFinished so the inspector sees exactly what was
    sent and what it cost — for the main agent's turns and for subagents alike."""
    call_id = uuid.uuid4().hex[:12]
    model = settings.model or provider.default_model
    bus.publish(LLMCallStarted(session_key, turn_id=turn_id, call_id=call_id, model=model,
                               messages=tuple(messages), tools=tuple(tools), system_sections=sections))
    started = time.perf_counter()
    try:
        response = await provider.chat(
            messages, tools, model=model, temperature=settings.temperature, max_tokens=settings.max_tokens,
            reasoning_effort=settings.reasoning_effort, on_text_delta=on_text, on_reasoning_delta=on_reasoning,
            on_wait=lambda phase, waited, limit: bus.publish(WaitingForModel(
                session_key, turn_id=turn_id, phase=phase, waited_s=waited, limit_s=limit)),
            on_retry=lambda attempt, attempts, delay, reason: bus.publish(RetryScheduled(
                session_key, turn_id=turn_id, attempt=attempt, max_attempts=attempts, delay_s=delay, reason=reason)),
        )
    except ProviderError as error:
        bus.publish(LLMCallFinished(session_key, turn_id=turn_id, call_id=call_id, model=model, prompt_tokens=0,
                                    completion_tokens=0, latency_s=time.perf_counter() - started,
                                    finish_reason="error", error=error.message))
        raise
    bus.publish(LLMCallFinished(session_key, turn_id=turn_id, call_id=call_id, model=response.model or model,
                                prompt_tokens=response.usage.prompt_tokens,
                                completion_tokens=response.usage.completion_tokens,
                                latency_s=response.latency_s, finish_reason=response.finish_reason))
    return response


@dataclass
class AgentSettings:
    model: str
    temperature: float = 0.1
    max_tokens: int = 8192
    max_iterations: int = 40
    memory_window: int = 100
    reasoning_effort: str | None = None
    # > 0 in a nanobot 0.3 workspace: the history window is measured in tokens (engine/token_window.py)
    context_window_tokens: int = 0


@dataclass
class TurnResult:
    turn_id: str
    status: str  # "ok" | "failed" | "cancelled" | "command"
    reply: str | None
    error: str | None = None
    kind: str = ""  # the failure's kind (see TurnFailed), "" when it did not fail


@dataclass
class _TurnState:
    turn_id: str
    session: Session
    streamed: list[str] = field(default_factory=list)
    pending_tool_ids: list[tuple[str, str]] = field(default_factory=list)  # (call id, name) not yet answered
    reply: str | None = None  # the final reply, once there is one (kept when saving it fails)
    provider: Callable[[], ChatProvider] | None = None  # the session's own model's endpoint; None: the config's


class AgentLoop:
    """Runs turns for any number of sessions and publishes what happens on `bus`."""

    def __init__(
        self,
        *,
        workspace: Workspace,
        provider: Callable[[], ChatProvider],
        sessions: SessionStore,
        memory: MemoryStore,
        context: ContextBuilder,
        runner: ToolRunner,
        bus: EventBus,
        settings: Callable[[], AgentSettings],
        restrict_to_workspace: Callable[[], bool],
        cron: Any = None,
    ) -> None:
        self.workspace = workspace
        self._provider = provider
        self.sessions = sessions
        self.memory = memory
        self.context = context
        self.runner = runner
        self.bus = bus
        self._settings = settings
        self._restrict = restrict_to_workspace
        self.cron = cron
        self.subagents: SubagentManager | None = None  # set by the Engine (SubagentManager); spawn is unavailable without it
        self._session_locks: dict[str, asyncio.Lock] = {}
        self._active: dict[str, set[asyncio.Task[Any]]] = {}
        self._consolidation_locks: dict[str, asyncio.Lock] = {}
        self._consolidation_tasks: dict[str, asyncio.Task[Any]] = {}
        # Messages a failed write could not save, per session; written before anything else next time.
        self._unsaved: dict[str, list[dict[str, Any]]] = {}
        self._models_without_images: set[str] = set()  # endpoints that refused a tool's images
        # Set by the Engine: a session's own model (`metadata["model"]`) as its settings and endpoint, or None
        # when the session uses the config's model. Consolidation and the heartbeat's decision (`plain_chat`)
        # keep the config's model.
        self.session_endpoint: Callable[[Session], tuple[AgentSettings, Callable[[], ChatProvider]] | None] | None = None

    # --- public API --------------------------------------------------------------------------------

    def submit(self, session_key: str, text: str, media: list[str] | None = None, *,
               channel: str | None = None, chat_id: str | None = None) -> "asyncio.Task[TurnResult]":
        """Start a turn in the background (the GUI's entry point). `/stop` is handled at once."""
        if text.strip().lower() == "/stop":
            return asyncio.ensure_future(self._stop_command(session_key))
        return self._start_turn(session_key, text, media, channel, chat_id, False, False)

    def resend(self, session_key: str, *, channel: str | None = None,
               chat_id: str | None = None) -> "asyncio.Task[TurnResult]":
        """Answer the session's last saved user message again, without writing it a second time: *Retry*
        after a failed turn, and *Regenerate* in a branch that ends with that message."""
        return self._start_turn(session_key, "", None, channel, chat_id, False, False, resend=True)

    async def process(self, session_key: str, text: str, media: list[str] | None = None, *,
                      channel: str | None = None, chat_id: str | None = None,
                      in_cron_job: bool = False, system_origin: bool = False) -> TurnResult:
        """Run one turn to the end (waiting for the session's previous turn) and return its result.

        The turn runs in a task of its own, so `/stop` cancels only the turn, never the caller (the
        heartbeat's tick, the cron timer, a subagent announcing its result). A stopped turn returns a
        result with status "cancelled"; cancelling the caller cancels the turn too.
        """
        turn = self._start_turn(session_key, text, media, channel, chat_id, in_cron_job, system_origin)
        try:
            return await asyncio.shield(turn)
        except asyncio.CancelledError:
            caller = asyncio.current_task()
            if caller is not None and caller.cancelling():
                turn.cancel()
                raise
            return TurnResult("", "cancelled", None, "stopped by the user")

    def _start_turn(self, session_key: str, text: str, media: list[str] | None, channel: str | None,
                    chat_id: str | None, in_cron_job: bool, system_origin: bool,
                    resend: bool = False) -> "asyncio.Task[TurnResult]":
        channel, chat_id = self._route(session_key, channel, chat_id)
        task = asyncio.ensure_future(self._locked_turn(session_key, text, media or [], channel, chat_id,
                                                       in_cron_job, system_origin, resend))
        self._track(session_key, task)
        return task

    async def _locked_turn(self, session_key: str, text: str, media: list[str], channel: str, chat_id: str,
                           in_cron_job: bool, system_origin: bool, resend: bool = False) -> TurnResult:
        lock = self._session_locks.setdefault(session_key, asyncio.Lock())
        async with lock:
            return await self._turn(session_key, text, media, channel, chat_id, in_cron_job, system_origin, resend)

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

    def is_busy(self, session_key: str) -> bool:
        return any(not t.done() for t in self._active.get(session_key, set()))

    def busy_sessions(self) -> list[str]:
        return [key for key in self._active if self.is_busy(key)]

    async def wait_for_consolidation(self, session_key: str) -> None:
        task = self._consolidation_tasks.get(session_key)
        if task is not None and not task.done():
            await asyncio.shield(task)

    async def shutdown(self) -> None:
        """Cancel and await every turn and consolidation (the app's shutdown owner calls this)."""
        tasks = [t for group in self._active.values() for t in group if not t.done()]
        tasks += [t for t in self._consolidation_tasks.values() if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # --- internals -----------------------------------------------------------------------------------

    def _track(self, session_key: str, task: "asyncio.Task[Any]") -> None:
        group = self._active.setdefault(session_key, set())
        group.add(task)
        task.add_done_callback(group.discard)

    @staticmethod
    def route_for_user_turn(session_key: str) -> tuple[str, str]:
        """Where a message the person types into `session_key` comes from, as the gateway would see it:
        a chat channel's session ("telegram:123") keeps its channel and chat id, so cron jobs and
        `message` calls made in that turn go back to that chat; the app's own sessions are "desktop"."""
        channel, _, chat_id = session_key.partition(":")
        if chat_id and channel not in APP_CHANNELS:
            return channel, chat_id
        return "desktop", chat_id or session_key

    @staticmethod
    def _route(session_key: str, channel: str | None, chat_id: str | None) -> tuple[str, str]:
        if channel and chat_id:
            return channel, chat_id
        if ":" in session_key:
            key_channel, _, key_chat = session_key.partition(":")
            return channel or key_channel, chat_id or key_chat
        return channel or "cli", chat_id or "direct"

    async def _stop_command(self, session_key: str) -> TurnResult:
        turn_id = uuid.uuid4().hex[:12]
        self.bus.publish(TurnStarted(session_key, turn_id=turn_id, user_text="/stop"))
        count = await self.stop(session_key)
        reply = f"⏹ Stopped {count} task(s)." if count else "No active task to stop."
        self.bus.publish(TurnFinished(session_key, turn_id=turn_id, reply=reply))
        return TurnResult(turn_id, "command", reply)

    async def _turn(self, session_key: str, text: str, media: list[str], channel: str, chat_id: str,
                    in_cron_job: bool, system_origin: bool, resend: bool = False) -> TurnResult:
        turn_id = uuid.uuid4().hex[:12]
        if resend:
            text = self._saved_prompt(session_key)
        self.bus.publish(TurnStarted(session_key, turn_id=turn_id, user_text=text, media=tuple(media), resend=resend))
        if resend and not text:
            message = "There is no saved message in this conversation to send again."
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind="session"))
            return TurnResult(turn_id, "failed", None, message, kind="session")
        command = "" if resend else text.strip().lower()
        if command == "/help":
            return self._finish(session_key, turn_id, HELP_TEXT, status="command")
        if command == "/new":
            return await self._new_session(session_key, turn_id)

        try:
            session = self.sessions.get_or_create(session_key)
        except (ValueError, OSError) as error:  # an unusable key, or a session file that cannot be read
            message = str(error) if isinstance(error, ValueError) else \
                f"Cannot read the session file {error.filename}: {error.strerror or error}."
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind="session",
                                        unsent_text=text))
            return TurnResult(turn_id, "failed", None, message, kind="session")
        settings = self._settings()
        if not system_origin:
            self._maybe_start_consolidation(session, settings)
        state = _TurnState(turn_id=turn_id, session=session)
        own = self.session_endpoint(session) if self.session_endpoint is not None else None
        if own is not None:
            settings, state.provider = own
        try:
            self._save(state, [])  # first what an earlier failed write left unsaved, so the model sees it
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
            sizes = tuple((section.name, section.chars) for section in prompt_sections)
            if not resend:  # a resent prompt is on disk already
                self._save(state, [messages[-1]], keep_on_failure=False)
        except StorageError as error:  # nothing was sent yet; the text stays in the composer / the shell
            message = error.sentence("your message was not saved and was not sent")
            self.bus.publish(TurnFailed(session_key, turn_id=turn_id, error=message, kind="storage",
                                        unsaved=self.has_unsaved(session_key), unsent_text=text))
            return TurnResult(turn_id, "failed", None, message, kind="storage")
        ctx = self._tool_context(session_key, channel, chat_id, in_cron_job)
        try:
            reply = await self._run_iterations(state, messages, ctx, settings, sizes)
        except asyncio.CancelledError:
            self._save_stopped(state)
            self.bus.publish(TurnCancelled(session_key, turn_id=turn_id, partial_text="".join(state.streamed)))
            raise
        except ProviderError as error:
            return self._fail_with_partial(state, error)
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
        if ctx.extra.get("message_sent_to_current_chat"):
            return self._finish(session_key, turn_id, None)
        return self._finish(session_key, turn_id, reply or NO_RESPONSE_TEXT)

    def _saved_prompt(self, session_key: str) -> str:
        """The text of the session's last saved user message ("" when there is none or it cannot be read)."""
        try:
            session = self.sessions.get_or_create(session_key)
        except (ValueError, OSError):
            return ""
        for message in reversed(session.messages):
            if message.get("role") == "user" and not message.get("_command"):
                return message_text(message.get("content"))
        return ""

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

    def _finish(self, session_key: str, turn_id: str, reply: str | None, status: str = "ok") -> TurnResult:
        self.bus.publish(TurnFinished(session_key, turn_id=turn_id, reply=reply))
        return TurnResult(turn_id, status, reply)

    def _tool_context(self, session_key: str, channel: str, chat_id: str, in_cron_job: bool) -> ToolContext:
        return ToolContext(
            workspace=self.workspace.root,
            session_key=session_key,
            channel=channel,
            chat_id=chat_id,
            restrict_to_workspace=self._restrict(),
            send_message=self._send_message_for(session_key),
            spawn=self._spawn_for(session_key, channel, chat_id),
            cron=self.cron,
            in_cron_job=in_cron_job,
        )

    def _send_message_for(self, session_key: str) -> Callable[..., Any]:
        async def send(channel: str, chat_id: str, content: str, media: list[str]) -> None:
            self.bus.publish(OutboundMessage(session_key, channel=channel, chat_id=chat_id, content=content,
                                             media=tuple(media or ())))
        return send

    def _spawn_for(self, session_key: str, channel: str, chat_id: str) -> Callable[..., Any] | None:
        manager = self.subagents
        if manager is None:
            return None

        async def spawn(task: str, label: str | None = None) -> str:
            return manager.spawn(task, label=label, origin_session_key=session_key,
                                        origin_channel=channel, origin_chat_id=chat_id)
        return spawn

    async def _run_iterations(self, state: _TurnState, messages: list[dict[str, Any]], ctx: ToolContext,
                              settings: AgentSettings, sections: tuple[tuple[str, int], ...]) -> str | None:
        provider = state.provider() if state.provider is not None else self._provider()
        tools = self.runner.registry.get_definitions()
        for _ in range(settings.max_iterations):
            response = await self._call_llm(state, provider, messages, tools, settings, sections)
            if not response.has_tool_calls:
                final = strip_think(response.content)
                state.reply = final
                self._save(state, [self._assistant_message(final, None, response)])
                return final
            thought = strip_think(response.content)
            if thought:
                self.bus.publish(Progress(state.session.key, turn_id=state.turn_id, text=thought))
            self.bus.publish(Progress(state.session.key, turn_id=state.turn_id,
                                      text=tool_hint(response.tool_calls), is_tool_hint=True))
            tool_calls = [call.to_message_dict() for call in response.tool_calls]
            assistant = self._assistant_message(response.content, tool_calls, response)
            messages.append(assistant)
            state.pending_tool_ids = [(call.id, call.name) for call in response.tool_calls]
            self._save(state, [assistant])
            state.streamed = []  # that text is saved with the assistant message; a stop must not repeat it
            images: list[dict[str, Any]] = []
            for call in response.tool_calls:
                outcome = await self.runner.run(call, ctx, state.turn_id)
                tool_message = {"role": "tool", "tool_call_id": call.id, "name": call.name,
                                "content": outcome.result}
                messages.append(tool_message)
                state.pending_tool_ids.pop(0)
                self._save(state, [tool_message])
                images += [block for block in map(_image_block_of, outcome.media) if block is not None]
            if images and settings.model not in self._models_without_images:
                # Tool messages carry text only; images a tool returned go to the model as a user message
                # (not saved: the tool result names the files). Dropped again if the endpoint refuses them.
                messages.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images]})
        limit_text = (f"I reached the maximum number of tool call iterations ({settings.max_iterations}) "
                      "without completing the task. You can try breaking the task into smaller steps.")
        self._save(state, [{"role": "assistant", "content": limit_text}])
        return limit_text

    async def _call_llm(self, state: _TurnState, provider: ChatProvider, messages: list[dict[str, Any]],
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
                                          sections=sections, on_text=on_text, on_reasoning=on_reasoning)
        except ProviderError as error:
            last = messages[-1] if messages else {}
            has_images = last.get("role") == "user" and isinstance(last.get("content"), list) \
                and last["content"][:1] == [{"type": "text", "text": TOOL_IMAGES_TEXT}]
            if not has_images or error.kind != "bad_request":
                raise
            log.info("the endpoint refused the images of a tool result (%s); going on without them", error.message)
            self._models_without_images.add(settings.model)
            messages.pop()
            state.streamed = []
            return await chat_with_events(self.bus, provider, key, state.turn_id, messages, tools, settings,
                                          sections=sections, on_text=on_text, on_reasoning=on_reasoning)

    @staticmethod
    def _assistant_message(content: str | None, tool_calls: list[dict[str, Any]] | None,
                           response: LLMResponse) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        if response.reasoning_content:
            message["reasoning_content"] = response.reasoning_content
        return message

    def _fail_with_partial(self, state: _TurnState, error: ProviderError) -> TurnResult:
        """An endpoint fault: keep what was streamed (marked cut off) and say precisely what happened."""
        key, turn_id = state.session.key, state.turn_id
        partial = strip_think("".join(state.streamed))
        message = error.message
        unsaved = False
        if partial:
            try:
                self._save(state, [{"role": "assistant", "content": partial, "cut_off": error.kind}])
                message = f"{message} The partial reply was kept, marked as cut off."
            except StorageError as storage:
                unsaved = True
                message = f"{message} {storage.sentence('the partial reply was not saved')}"
        self.bus.publish(TurnFailed(key, turn_id=turn_id, error=message, kind=error.kind, partial_text=partial,
                                    unsaved=unsaved))
        return TurnResult(turn_id, "failed", partial or None, message, kind=error.kind)

    def has_unsaved(self, session_key: str) -> bool:
        """Whether messages of this session wait to be written (a write failed; see `retry_save`)."""
        return bool(self._unsaved.get(session_key))

    async def retry_save(self, session_key: str) -> int:
        """Write the messages a failed write left unsaved; returns how many. Raises StorageError again
        (with the same kind of sentence) when the disk still refuses; nothing is lost either way."""
        lock = self._session_locks.setdefault(session_key, asyncio.Lock())
        async with lock:
            pending = self._unsaved.pop(session_key, [])
            if not pending:
                return 0
            session = self.sessions.get_or_create(session_key)
            try:
                self.sessions.append(session, pending)  # publishes SessionChanged
            except StorageError:
                self._unsaved[session_key] = pending
                raise
            return len(pending)

    def _save(self, state: _TurnState, messages: list[dict[str, Any]], *, keep_on_failure: bool = True) -> None:
        """Append messages to the session file in the reference's shapes (runtime block stripped).

        Messages an earlier failed write left unsaved go first. When this write fails, the file is as it
        was (the store's append is all or nothing) and the messages wait in `_unsaved` for
        `retry_save` — unless `keep_on_failure` is False (the user's message: it stays in the composer).
        """
        to_write: list[dict[str, Any]] = []
        for message in messages:
            entry = dict(message)
            role = entry.get("role")
            if role == "assistant" and not entry.get("content") and not entry.get("tool_calls"):
                continue
            if role == "user":
                content = strip_runtime_for_save(entry.get("content"))
                if content is None:
                    continue
                entry["content"] = content
            if role == "tool" and isinstance(entry.get("content"), str) \
                    and len(entry["content"]) > TOOL_RESULT_SAVE_LIMIT:
                entry["content"] = entry["content"][:TOOL_RESULT_SAVE_LIMIT] + "\n... (truncated)"
            to_write.append(entry)
        key = state.session.key
        pending = self._unsaved.pop(key, [])
        if not to_write and not pending:
            return
        try:  # publishes SessionChanged
            self.sessions.append(state.session, pending + to_write, turn_id=state.turn_id)
        except StorageError:
            self._unsaved[key] = pending + (to_write if keep_on_failure else [])
            raise

    def _save_stopped(self, state: _TurnState) -> None:
        """Keep what the stopped turn produced: unanswered tool calls get a 'cancelled' result."""
        messages: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": CANCELLED_RESULT}
            for call_id, name in state.pending_tool_ids
        ]
        partial = "".join(state.streamed).strip()
        if partial or not messages:
            messages.append({"role": "assistant", "content": strip_think(partial) or "(stopped)", "stopped": True})
        else:
            messages[-1]["stopped"] = True
        state.pending_tool_ids = []
        try:
            self._save(state, messages)
        except OSError:
            log.exception("could not save the stopped turn of %s", state.session.key)

    # --- memory ---------------------------------------------------------------------------------------

    async def plain_chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
        """One call with the configured model and no streaming callbacks: the `ChatWithTools` that
        consolidation and the heartbeat's decision use."""
        provider = self._provider()
        settings = self._settings()
        return await provider.chat(messages, tools, model=settings.model or provider.default_model,
                                   temperature=settings.temperature, max_tokens=settings.max_tokens)

    def _maybe_start_consolidation(self, session: Session, settings: AgentSettings) -> None:
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
        task = asyncio.ensure_future(self._consolidate(session, settings, archive_all=False))
        self._consolidation_tasks[session.key] = task

    async def _consolidate(self, session: Session, settings: AgentSettings, *, archive_all: bool) -> str:
        """Summarise messages into memory; returns "" when it worked, else why it did not."""
        lock = self._consolidation_locks.setdefault(session.key, asyncio.Lock())
        async with lock:
            count = session.count - session.last_consolidated
            self.bus.publish(ConsolidationStarted(session.key, message_count=count, archive_all=archive_all))
            try:
                with history_session(session.key):  # 0.3's history.jsonl entries name their session
                    base = session.base  # only the loaded tail is summarised; it starts at the offset
                    result = await consolidate_detailed(session.messages, session.last_consolidated - base,
                                                        self.memory, self.plain_chat, archive_all=archive_all,
                                                        memory_window=settings.memory_window)
                offset = None if result.offset is None else result.offset + base
            except asyncio.CancelledError:
                self.bus.publish(ConsolidationFinished(session.key, ok=False, error="cancelled"))
                raise
            except Exception as error:  # consolidate reports failures as None; this is a safety net
                log.exception("consolidation of %s failed", session.key)
                self.bus.publish(ConsolidationFinished(session.key, ok=False, error=str(error)))
                return str(error) or type(error).__name__
            if offset is None:
                why = result.error or "the model did not save memory"
                self.bus.publish(ConsolidationFinished(session.key, ok=False, error=why))
                return why
            if not archive_all and offset != session.last_consolidated:
                try:
                    self.sessions.set_last_consolidated(session, offset)
                except StorageError as error:
                    why = error.sentence("the summary was written but the session still counts those messages as new")
                    self.bus.publish(ConsolidationFinished(session.key, ok=False, error=why))
                    return why
            self.bus.publish(ConsolidationFinished(session.key, ok=True))
            return ""

    async def _new_session(self, session_key: str, turn_id: str) -> TurnResult:
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
        return self._finish(session_key, turn_id, NEW_SESSION_TEXT, status="command")


def _before_prompt(history: list[dict[str, Any]], resend: bool) -> list[dict[str, Any]]:
    """For a resent turn, the history before its prompt (the last user message, which the turn sends
    again, and whatever a failed attempt left after it, e.g. a reply marked cut off)."""
    if not resend:
        return history
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("role") == "user":
            return history[:index]
    return history
