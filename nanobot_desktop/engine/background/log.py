"""What a background run (a heartbeat tick, a cron job) did with tools, for its timeline entry.

The heartbeat and cron services do not see the agent's tool calls directly; they listen on the event
bus for the tool events of their own session while the run lasts. One mechanism for both services.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nanobot_desktop.engine.events import ApprovalAnswered, ApprovalRequested, Event, EventBus, ToolCallFinished

SHORT_ARGS_LIMIT = 80


@dataclass(frozen=True)
class ToolUse:
    """One tool call of a run: `status` is ToolCallFinished's ("ok", "error", "denied", "cancelled")."""

    name: str
    status: str
    detail: str  # the short form of the arguments (the command for exec, the path for file tools)
    waited_for_approval: bool = False

    def describe(self) -> str:
        waited = " (after an approval)" if self.waited_for_approval else ""
        detail = f" {self.detail}" if self.detail else ""
        return f"{self.name}{detail} → {self.status}{waited}"


def short_arguments(name: str, arguments: dict[str, Any]) -> str:
    """`echo fed` for exec, the path for file tools, else `key=value` pairs, cut to a line."""
    if name == "exec" and isinstance(arguments.get("command"), str):
        text = arguments["command"]
    elif isinstance(arguments.get("path"), str):
        text = arguments["path"]
    elif isinstance(arguments.get("url"), str):
        text = arguments["url"]
    else:
        text = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    text = " ".join(text.split())
    return text if len(text) <= SHORT_ARGS_LIMIT else text[: SHORT_ARGS_LIMIT - 1] + "…"


class ToolUseRecorder:
    """Collects the tool calls of one session between `start()` and `stop()` (a context manager)."""

    def __init__(self, bus: EventBus | None, session_key: str) -> None:
        self._bus = bus
        self._session_key = session_key
        self._unsubscribe: Any = None
        self._asked: dict[str, str] = {}  # call id -> "exec echo fed", then its outcome appended
        self.uses: list[ToolUse] = []

    @property
    def approvals(self) -> list[str]:
        """Approvals this run waited for and how each ended, e.g. "exec echo fed → deny (… expired …)"."""
        return list(self._asked.values())

    def __enter__(self) -> "ToolUseRecorder":
        if self._bus is not None:
            self._unsubscribe = self._bus.subscribe(self._on_event)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _on_event(self, event: Event) -> None:
        if event.session_key != self._session_key:
            return
        if isinstance(event, ApprovalRequested):
            request = event.request
            self._asked[event.call_id] = f"{request.tool} {short_arguments(request.tool, request.arguments)}".strip()
        elif isinstance(event, ApprovalAnswered) and event.call_id in self._asked:
            answer = {"allow_once": "allowed once", "allow_always": "always allowed", "deny": "denied"}[
                event.answer.value]
            self._asked[event.call_id] += f" → {answer}" + (f" ({event.why})" if event.why else "")
        elif isinstance(event, ToolCallFinished):
            self.uses.append(ToolUse(event.name, event.status, short_arguments(event.name, event.arguments),
                                     event.call_id in self._asked))
