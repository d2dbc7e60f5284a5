"""What the inspector remembers about a turn: its LLM calls and tool calls, as plain dataclasses.

Kept apart from the Qt model (inspector_model.py) so the records read on their own: the model is the
only writer, views and the detail panes only read them.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, overload

from PySide6.QtCore import QT_TRANSLATE_NOOP

from nanobot_desktop.engine import Origin

from nanobot_desktop.gui.chat.model import summarize_arguments
from nanobot_desktop.gui.common.i18n import format_number, translate

TOOL_STATUSES = ("running", "awaiting approval", "ok", "error", "denied", "cancelled")
LLM_STATUSES = ("running", "ok", "error", "cancelled")
TURN_STATUSES = ("running", "ok", "failed", "cancelled")


STATUS_LABELS = {"running": QT_TRANSLATE_NOOP("Inspector", "running"),
                 "awaiting approval": QT_TRANSLATE_NOOP("Inspector", "awaiting approval"),
                 "ok": QT_TRANSLATE_NOOP("Inspector", "ok"), "error": QT_TRANSLATE_NOOP("Inspector", "error"),
                 "denied": QT_TRANSLATE_NOOP("Inspector", "denied"), "cancelled": QT_TRANSLATE_NOOP("Inspector", "cancelled"),
                 "failed": QT_TRANSLATE_NOOP("Inspector", "failed")}  # every value of the *_STATUSES above


def status_text(status: str) -> str:
    """A call's or turn's status as shown (the records keep the English keys)."""
    return translate("Inspector", STATUS_LABELS[status]) if status in STATUS_LABELS else status


class SharedMessages(Sequence[dict[str, Any]]):
    """A call's messages, kept as runs shared with the call before it in the session.

    A call sends [system prompt, *history, newest message] and the next call's history is this one's
    plus a message or two (the engine hands the same history entries to every call). Kept as one tuple
    per call, a session of n messages held ~n²/2 references (139 kB over 90 turns of
    bench/long_session_memory.py); here a call holds the earlier call's runs that it repeats, and a
    tuple of what is new. Runs are merged while the newest is at least as long as the one before it (a
    binary counter), so a call holds O(log n) runs and each message is copied O(log n) times overall.
    """

    __slots__ = ("_length", "runs")

    def __init__(self, runs: tuple[tuple[dict[str, Any], ...], ...]) -> None:
        self.runs = runs
        """(the first message,), the history's runs, (the last message,): the ends are never shared."""
        self._length = sum(len(run) for run in runs)

    @classmethod
    def sharing(cls, messages: Sequence[dict[str, Any]], previous: SharedMessages | None) -> SharedMessages:
        """`messages` as runs, reusing those of `previous` that its middle starts with (the same dicts)."""
        if len(messages) < 2:
            return cls((tuple(messages),))
        middle = messages[1:-1]
        runs: list[tuple[dict[str, Any], ...]] = []
        offset = 0
        for run in previous.runs[1:-1] if previous is not None else ():
            end = offset + len(run)
            if end > len(middle) or any(a is not b for a, b in zip(run, middle[offset:end], strict=True)):
                break
            runs.append(run)
            offset = end
        rest = tuple(middle[offset:])
        while runs and len(runs[-1]) <= len(rest):
            rest = runs.pop() + rest
        if rest:
            runs.append(rest)
        return cls((tuple(messages[:1]), *runs, tuple(messages[-1:])))

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return itertools.chain.from_iterable(self.runs)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[dict[str, Any], ...]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | tuple[dict[str, Any], ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("message index out of range")
        for run in self.runs:
            if index < len(run):
                return run[index]
            index -= len(run)
        raise IndexError("message index out of range")  # pragma: no cover - the length says otherwise


@dataclass(eq=False, slots=True)
class LLMCall:
    """One request to the model: what was sent (for the context view) and how it went."""

    call_id: str
    turn_id: str
    model: str
    messages: Sequence[dict[str, Any]]  # a SharedMessages as the timeline records it (read it, don't change it)
    tools: tuple[dict[str, Any], ...]
    system_sections: tuple[tuple[str, int], ...]
    started_at: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    finish_reason: str = ""
    error: str | None = None
    status: str = "running"  # one of LLM_STATUSES
    window_tokens: int = 0  # the model's context window, when known
    estimated_tokens: int = 0  # the prompt's size as the engine estimated it before sending
    first_token_s: float = 0.0  # from sending to the first streamed token (0: none came)
    tokens_per_s: float = 0.0  # output tokens per second after the first one (0: not known)
    kind: ClassVar[str] = "llm"

    @property
    def speed_text(self) -> str:
        """"Context: 3,120 / 8,192 tokens (38 %) · First token: 19.7 s · 14.2 tokens/s", what is known of it."""
        parts = []
        used = self.prompt_tokens or self.estimated_tokens
        if self.window_tokens and used:
            parts.append(translate("Inspector", "Context: {used} / {window} tokens ({percent} %)").format(
                used=format_number(used), window=format_number(self.window_tokens),
                percent=round(100 * used / self.window_tokens)))
        if self.first_token_s:
            parts.append(translate("Inspector", "First token: {seconds} s").format(seconds=f"{self.first_token_s:.1f}"))
        if self.tokens_per_s:
            parts.append(translate("Inspector", "{rate} tokens/s").format(rate=f"{self.tokens_per_s:.1f}"))
        return " · ".join(parts)

    @property
    def title(self) -> str:
        return translate("Inspector", "LLM · {model}").format(model=self.model)

    @property
    def summary(self) -> str:
        if self.error:
            return translate("Inspector", "error: {error}").format(error=" ".join(self.error.split()))
        if self.status == "running":
            messages, tools = len(self.messages), len(self.tools)
            return translate("Inspector", "%n message(s)", None, messages) + ", " + translate("Inspector", "%n tool(s)", None, tools)
        return translate("Inspector", "{sent} → {received} tokens").format(
            sent=format_number(self.prompt_tokens or 0), received=format_number(self.completion_tokens or 0))

    @property
    def duration_s(self) -> float | None:
        return self.latency_s


@dataclass(eq=False, slots=True)
class ToolCall:
    """One tool call: the full arguments and result, never shortened here (the view decides)."""

    call_id: str
    turn_id: str
    name: str
    arguments: dict[str, Any]
    started_at: float
    status: str = "running"  # one of TOOL_STATUSES
    result: str | None = None
    duration_s: float | None = None
    diff: str | None = None  # the change an approval request showed, when there was one
    origin: str = ""  # "MCP server 'time'" for an MCP tool; "" for built-in tools
    media: tuple[str, ...] = ()  # images the tool returned (MCP), shown under the result
    kind: ClassVar[str] = "tool"

    @property
    def title(self) -> str:
        return f"{self.name}  [{self.origin}]" if self.origin else self.name

    @property
    def summary(self) -> str:
        return summarize_arguments(self.arguments)

    def arguments_json(self) -> str:
        return json.dumps(self.arguments, indent=2, ensure_ascii=False, default=str)

    @property
    def error(self) -> str | None:
        """The result when the call did not succeed (the engine reports errors as the result text)."""
        return self.result if self.status in ("error", "denied", "cancelled") else None


TimelineEntry = LLMCall | ToolCall


@dataclass(eq=False, slots=True)
class TurnTimeline:
    """Everything the inspector knows about one turn, in the order it happened."""

    session_key: str
    turn_id: str
    number: int  # 1, 2, ... within the session, for this app run
    user_text: str
    started_at: float
    status: str = "running"  # one of TURN_STATUSES
    error: str | None = None
    finished_at: float | None = None
    entries: list[TimelineEntry] = field(default_factory=list)
    started_by: str = "person"  # the engine's Origin: who started the turn

    @property
    def is_subagent(self) -> bool:
        return self.started_by == Origin.SUBAGENT

    def label(self) -> str:
        """One line for the turn selector."""
        clock = time.strftime("%H:%M:%S", time.localtime(self.started_at))
        text = " ".join(self.user_text.split()) or (
            translate("Inspector", "(subagent)") if self.is_subagent else translate("Inspector", "(no text)"))
        if len(text) > 40:
            text = text[:39] + "…"
        line = translate("Inspector", "Turn {number} · {clock} · {text}").format(number=self.number, clock=clock, text=text)
        return line if self.status == "ok" else f"{line} [{status_text(self.status)}]"

    def find(self, kind: str, call_id: str) -> int:
        """The row of the newest entry of `kind` with that id (-1 if none).

        Newest first because some local servers reuse tool call ids ("call_0") in every iteration.
        """
        for row in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[row]
            if entry.kind == kind and entry.call_id == call_id:
                return row
        return -1

    def totals(self) -> tuple[int, int, int, int]:
        """(LLM calls, tool calls, prompt tokens, completion tokens)."""
        llm = [e for e in self.entries if isinstance(e, LLMCall)]
        tools = len(self.entries) - len(llm)
        return (len(llm), tools, sum(e.prompt_tokens or 0 for e in llm), sum(e.completion_tokens or 0 for e in llm))
