"""Typed events the engine publishes; the GUI and the CLI are only consumers of these.

Subscribers are plain callables run synchronously, in the publishing coroutine's thread (the event
loop's), so they must be quick: the GUI turns them into model updates, the CLI into stderr lines.
A subscriber that raises is logged and skipped; it never breaks the agent.
"""

from __future__ import annotations

import logging
import time
from contextvars import Context, ContextVar, copy_context
from dataclasses import dataclass, field, fields
from enum import Enum, StrEnum
from typing import Any, Callable

log = logging.getLogger(__name__)


class Origin(StrEnum):
    """Who started the work an event belongs to: the person (a message typed, a button), the system (a
    subagent's report handed back to its session), a subagent, the heartbeat or a cron job."""

    PERSON = "person"
    SYSTEM = "system"
    SUBAGENT = "subagent"
    HEARTBEAT = "heartbeat"
    CRON = "cron"


class ToolStatus(StrEnum):
    """How a tool call ended, set where its result is made (engine/tools, engine/agent/tool_runner.py)."""

    OK = "ok"
    ERROR = "error"
    DENIED = "denied"
    CANCELLED = "cancelled"


# The origin of the work running now: set where a turn or a subagent starts (`origin_context`), copied
# by asyncio into the tasks started inside, and read by every event made there (`Event.started_by`).
_origin: ContextVar[Origin] = ContextVar("nanobot_desktop_origin", default=Origin.PERSON)


def current_origin() -> Origin:
    return _origin.get()


def origin_context(origin: Origin, context: Context | None = None) -> Context:
    """`context` (a copy of the current one when None) with `origin` set, for `create_task(...,
    context=...)`: every event made in that task, and in the tasks it starts, carries `origin`."""
    context = copy_context() if context is None else context
    context.run(_origin.set, origin)
    return context


# Events are frozen dataclasses whose repr, == and hash are written once, here on the base class, with
# the same results as the generated ones: `@dataclass` writes each generated method from source and
# compiles it, for every class; with 29 event classes that was ~6 ms of a headless turn's start.
# (A subclass declared with plain `@dataclass(frozen=True)` still works: it gets generated ones.)


@dataclass(frozen=True, eq=False, repr=False)
class Event:
    """Base of every engine event. `session_key` is the session the event belongs to ("" for none);
    `started_by` who started the work it belongs to (the person unless a turn or a subagent said else)."""

    session_key: str
    at: float = field(default_factory=time.time, kw_only=True)
    started_by: Origin = field(default_factory=current_origin, kw_only=True)

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def _compared(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in fields(self) if f.compare)


# --- turns -----------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class TurnStarted(Event):
    """`resend`: the turn answers the user message already saved last (Retry, Regenerate); no new
    user line is written, so the chat adds no new bubble either."""

    turn_id: str
    user_text: str
    media: tuple[str, ...] = ()
    resend: bool = False


@dataclass(frozen=True, eq=False, repr=False)
class TextDelta(Event):
    """A piece of the reply's text, as it streams in."""

    turn_id: str
    text: str


@dataclass(frozen=True, eq=False, repr=False)
class ReasoningDelta(Event):
    """A piece of the model's reasoning (thinking models), as it streams in."""

    turn_id: str
    text: str


@dataclass(frozen=True, eq=False, repr=False)
class Progress(Event):
    """A thought or a tool hint, as the original's `on_progress` (`is_tool_hint` tells which)."""

    turn_id: str
    text: str
    is_tool_hint: bool = False


@dataclass(frozen=True, eq=False, repr=False)
class LLMCallStarted(Event):
    """Exactly what is being sent: the GUI's context view shows `messages` and `tools`."""

    turn_id: str
    call_id: str
    model: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    system_sections: tuple[tuple[str, int], ...] = ()  # (section name, characters)
    window_tokens: int = 0  # the model's context window, when known (engine/llm/context_window.py)
    estimated_tokens: int = 0  # the prompt's size as estimated before sending (engine/agent/prompt_fit.py)


@dataclass(frozen=True, eq=False, repr=False)
class LLMCallFinished(Event):
    """One model call ended: its token counts and latency, or the error that ended it."""

    turn_id: str
    call_id: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    finish_reason: str
    error: str | None = None
    facts: tuple[tuple[str, Any], ...] = ()  # the error's sentence and values, as in TurnFailed.facts
    # For the usage record (engine/usage): the cache counts as reported (None: not said); `estimated`
    # when the endpoint reported no usage and the counts are the engine's estimate; what made the call
    # (engine/usage/source.py: chat, consolidation, heartbeat, cron, subagent); a failure's kind and status.
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    estimated: bool = False
    source: str = "chat"
    error_kind: str = ""
    error_status: int | None = None
    window_tokens: int = 0  # the model's context window, when known: prompt_tokens / window is its fill
    first_token_s: float = 0.0  # seconds from sending to the first streamed token (0: none came)
    tokens_per_s: float = 0.0  # output tokens per second after the first one, from the stream (0: unknown)


@dataclass(frozen=True, eq=False, repr=False)
class ToolCallStarted(Event):
    """The model asked for a tool call and it is about to run (or to wait for approval)."""

    turn_id: str
    call_id: str
    name: str
    arguments: dict[str, Any]
    origin: str = ""  # where a non-built-in tool comes from, e.g. "MCP server 'time'"


# --- approvals: one request, answered once (engine/agent/approvals.py holds the pending ones) -------

class ApprovalAnswer(Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"  # for this tool, from now on (the policy that asked is changed)
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalReply:
    """An answer with the person's words: a Deny may say why, and the model reads it in the tool result."""

    answer: ApprovalAnswer
    reason: str = ""


class ApprovalSource(Enum):
    """Who asks: the person's own chat turn, or background work nobody watches (whose asks expire)."""

    CHAT = "chat"
    HEARTBEAT = "heartbeat"
    CRON = "cron"
    SUBAGENT = "subagent"

    @property
    def background(self) -> bool:
        return self is not ApprovalSource.CHAT


class ApprovalSurface(Enum):
    """Where the one answer came from (the card says so when it was not the card)."""

    CARD = "card"  # the approval card in the session's chat
    TRAY = "tray"  # the tray menu's entry
    NOTIFICATION = "notification"  # a desktop notification's button
    TERMINAL = "terminal"  # the CLI's prompt (or its --yes)
    ENGINE = "engine"  # nobody: expired, stopped, or nobody there to ask (`why` says which)


_WANTS = {"exec": "wants to run a command", "write_file": "wants to write a file", "edit_file": "wants to edit a file",
          "web_fetch": "wants to fetch a web page", "web_search": "wants to search the web",
          "spawn": "wants to start a subagent", "message": "wants to send a message",
          "cron": "wants to change a scheduled job"}


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call waiting for an answer: everything a card, the tray, a notification or the CLI's
    prompt shows. `call_id` (the model's tool call id) is its key; `expires_at` (epoch seconds) is set
    for background work, after which it counts as denied."""

    tool: str
    arguments: dict[str, Any]
    diff: str | None
    command: str | None
    working_dir: str | None
    session_key: str
    sandbox: str | None = None  # exec only: "sandboxed (…)" or "not sandboxed: why"
    origin: str = ""  # e.g. "MCP server 'time'" for a tool that is not built in
    call_id: str = ""
    turn_id: str = ""
    source: ApprovalSource = ApprovalSource.CHAT
    asker: str = ""  # background work's name: "Heartbeat", "Scheduled task “Feed the cat”", "Subagent “notes”"
    summary: str = ""  # the short form of the arguments: the command, the path, …
    asked_at: float = 0.0
    expires_at: float | None = None

    @property
    def title(self) -> str:
        """"Heartbeat wants to run a command" (a notification's title)."""
        return f"{self.asker or 'nanobot'} {_WANTS.get(self.tool, f'wants to use {self.tool}')}"


@dataclass(frozen=True, eq=False, repr=False)
class ApprovalRequested(Event):
    """A tool call waits for an answer. Published once per request; every surface renders from it and
    answers through `Engine.approvals.answer(call_id, …)`."""

    request: ApprovalRequest

    @property
    def call_id(self) -> str:
        return self.request.call_id

    @property
    def turn_id(self) -> str:
        return self.request.turn_id


@dataclass(frozen=True, eq=False, repr=False)
class ApprovalAnswered(Event):
    """The one answer to a request, from `surface`; an allowed call runs from here on. `why` says why
    it counts as denied when nobody answered (expired, stopped, nobody to ask); the person's own words
    for a Deny are in `reply.reason` (the model receives them too)."""

    request: ApprovalRequest
    reply: ApprovalReply
    surface: ApprovalSurface
    why: str = ""
    waited_s: float = 0.0

    @property
    def call_id(self) -> str:
        return self.request.call_id

    @property
    def turn_id(self) -> str:
        return self.request.turn_id

    @property
    def answer(self) -> ApprovalAnswer:
        return self.reply.answer


@dataclass(frozen=True, eq=False, repr=False)
class ToolCallFinished(Event):
    """`status` is how the call ended, set where its result was made. `duration_s` is the tool's own time:
    the time spent waiting for the person's approval is not in it but in `waited_s`."""

    turn_id: str
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str
    status: ToolStatus
    duration_s: float
    origin: str = ""
    media: tuple[str, ...] = ()  # files the tool returned besides its text (MCP images)
    waited_s: float = 0.0  # how long the call waited for the person's answer


@dataclass(frozen=True, eq=False, repr=False)
class TurnFinished(Event):
    """The turn ended with its reply."""

    turn_id: str
    reply: str | None  # None when the message tool already delivered the reply
    continued_in: str = ""  # a /new in an app chat: the conversation goes on in this new session


@dataclass(frozen=True, eq=False, repr=False)
class TurnFailed(Event):
    """The turn ended with an error; `partial_text` is the reply received before it."""

    turn_id: str
    error: str
    kind: str = "other"  # a ProviderError kind, "config", "storage" (a write failed) or "other"
    partial_text: str = ""  # what was shown of a reply the endpoint cut off (kept in the session, marked)
    unsaved: bool = False  # messages of the turn could not be written: `AgentLoop.retry_save` tries again
    unsent_text: str = ""  # the person's message when it could not be saved (and so was not sent)
    # When `error` is exactly a model call's failure sentence: its name ("sentence") and values as
    # sorted (name, value) pairs (ProviderError.facts), so a front end can word it in the UI language.
    facts: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class WaitingForModel(Event):
    """The endpoint has sent nothing for a while: shown as "waiting… N s" so a stall is visible.

    `phase` is "first_byte" (no answer yet), "idle" (the stream paused) or "prompt" (a local server
    still reading the prompt, never given up on: `limit_s` is 0); `limit_s` is when the call gives up.
    """

    turn_id: str
    phase: str
    waited_s: float
    limit_s: float


@dataclass(frozen=True, eq=False, repr=False)
class RetryScheduled(Event):
    """A model call failed in a way worth retrying: attempt `attempt` of `max_attempts` starts in
    `delay_s` seconds (`attempt` counts the first call, so the first retry is attempt 2). `reason`
    says what failed ("server error 500"); Stop cancels the turn while it waits."""

    turn_id: str
    attempt: int
    max_attempts: int
    delay_s: float
    reason: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class TurnCancelled(Event):
    """The turn was stopped (/stop, Stop); `partial_text` is the reply received before it."""

    turn_id: str
    partial_text: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class SessionLinesLost(Event):
    """Messages the app appended to this session are no longer in its file: another program (a nanobot
    gateway or agent holding the session in memory) rewrote it without them. `count` messages; the
    store keeps them, and `SessionStore.put_back_lost(session_key)` puts them into a new session."""

    count: int = 0
    by: str = ""  # who probably did it (coexistence's description), "" when unknown


@dataclass(frozen=True, eq=False, repr=False)
class SessionChanged(Event):
    """A session's file changed on disk: the one event for every change, whoever made it.

    The session store publishes it after each of its own writes (`outside` False: "appended",
    "metadata", "cleared", "deleted", "restored", "branched": a new branch's file) and when it notices a change it did not make
    (`outside` True: "changed" or "removed" — the nanobot CLI appended, someone edited the file).
    `turn_id` names the turn whose lines were appended; `size` is the file's size in bytes after the
    change (0 when it is gone): a reader that read `size` bytes or more already holds this change.
    """

    reason: str = "appended"
    outside: bool = False
    turn_id: str = ""
    size: int = 0


@dataclass(frozen=True, eq=False, repr=False)
class OutboundMessage(Event):
    """A message for a channel/chat, from the `message` tool or a background result."""

    channel: str
    chat_id: str
    content: str
    media: tuple[str, ...] = ()


# --- memory ----------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class ConsolidationStarted(Event):
    """Older messages are being summarised into memory."""

    message_count: int
    archive_all: bool = False


@dataclass(frozen=True, eq=False, repr=False)
class ConsolidationFinished(Event):
    """Consolidation ended; `error` says why it did not update memory. `archive_all`: it was /new's
    (whose own result then says what happened)."""

    ok: bool
    error: str | None = None
    archive_all: bool = False


# --- subagents -------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class SubagentStarted(Event):
    """A subagent (the spawn tool) started working on `task` in the background."""

    task_id: str
    label: str
    task: str


@dataclass(frozen=True, eq=False, repr=False)
class SubagentFinished(Event):
    """`status` is "ok", "error" or "cancelled"."""

    task_id: str
    label: str
    status: str
    result: str


# --- heartbeat and cron ------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class HeartbeatDecided(Event):
    """`decision` is "skipped" (no LLM call; `reason` says why: missing, empty, template, paused,
    external), "skip" or "run"."""

    decision: str
    tasks: str = ""
    reason: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class HeartbeatRan(Event):
    """A heartbeat run ended: what it decided, the tasks it ran and their result."""

    decision: str
    tasks: str
    result: str | None
    error: str | None = None
    reason: str = ""  # why it was skipped, or the model's answer


@dataclass(frozen=True, eq=False, repr=False)
class CronJobRan(Event):
    """A scheduled job ran: its status and result."""

    job_id: str
    name: str
    status: str
    result: str | None
    error: str | None = None


@dataclass(frozen=True, eq=False, repr=False)
class BackgroundOwnerChanged(Event):
    """Another program now runs (or no longer runs) cron and the heartbeat for this workspace;
    `owner` says who and why (None: the app runs them itself)."""

    owner: str | None


# --- a workspace synced between machines ------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class SyncCopyMerged(Event):
    """A sync tool's conflict copy of this session was dealt with (engine/sync/sessions.py): `outcome` is
    "merged" (its `added` missing messages appended), "orphaned" (its session is gone: the copy went to
    the trash), "too-large" or "unreadable" (left where it is); `sentence` says it for a person."""

    outcome: str
    device: str
    tool: str
    added: int
    copy_name: str
    sentence: str


@dataclass(frozen=True, eq=False, repr=False)
class SyncTextConflict(Event):
    """A text file of the workspace (MEMORY.md, a bootstrap file, HEARTBEAT.md, a skill) was changed on
    two machines: `copy_name` is the other machine's version beside `file_name`. Nothing was overwritten;
    `Engine.text_conflicts()` gives both versions and `Engine.resolve_text_conflict()` takes the choice."""

    file_name: str
    copy_name: str
    device: str
    tool: str

@dataclass(frozen=True, eq=False, repr=False)
class FileChanged(Event):
    """A file the engine owns or the app edits changed on disk (sessions have `SessionChanged`). `kind`
    says which: "memory" (MEMORY.md and its versions), "history" (HISTORY.md or history.jsonl), "cron"
    (the job store, already re-read), "skills", or "workspace" (any other file). `outside` is the
    engine's change tracker's answer (engine/changes.py): False for a write of the engine's own or one
    the app announced (an editor's save), True for anyone else's."""

    path: str
    kind: str
    outside: bool


# --- notices ---------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class Notice(Event):
    """Something the person should know and can fix, that is no turn's failure: a workspace file the
    app would not read because it leads out of the workspace, a setting refused on load. The window
    shows it in its notice bar (one per `topic`), the CLI on stderr."""

    topic: str
    text: str


# --- settings --------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class UsageRecorded(Event):
    """Rows of the usage record were written (`pending`: how many still wait in memory); the Usage
    page refreshes from it. `problem` is set when a usage file could not be written (locked, damaged,
    an unknown schema): a notice, never a failed turn."""

    written: int
    pending: int = 0
    problem: str = ""


@dataclass(frozen=True, eq=False, repr=False)
class BudgetCrossed(Event):
    """The spending of a budget period (`period` "day" or "month") crossed `level` (0.8: the warning,
    1.0: background work pauses until the person resumes it). Costs in US dollars."""

    period: str
    level: float
    spent: float
    limit: float


@dataclass(frozen=True, eq=False, repr=False)
class ConfigChanged(Event):
    """`Engine.update_config` saved these dotted paths ("agents.defaults.model", "app.theme", …);
    panels refresh only when a path they show is among them."""

    paths: tuple[str, ...]

    def touches(self, *prefixes: str) -> bool:
        """True when a changed path is one of `prefixes` or lies under (or above) one of them."""
        return any(p == q or p.startswith(q + ".") or q.startswith(p + ".") for p in self.paths for q in prefixes)


Subscriber = Callable[[Event], None]


class EventBus:
    """Fan-out of engine events to any number of subscribers."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it again."""
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def publish(self, event: Event) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:  # a broken consumer must never break the agent
                log.exception("event subscriber %r failed on %s", subscriber, type(event).__name__)
