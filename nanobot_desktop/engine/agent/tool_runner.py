"""Running one tool call: policy, approval, execution, events — shared by the main loop and subagents.

Keeping this in one place means a subagent's `exec` asks for approval exactly like the main agent's,
and every tool call, wherever it runs, shows up in the inspector with the same events.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from nanobot_desktop.engine.events import (
    ApprovalAnswer,
    ApprovalAnswered,
    ApprovalSource,
    EventBus,
    ToolCallFinished,
    ToolCallStarted,
    ToolStatus,
)
from nanobot_desktop.engine.llm.types import ToolCallRequest
from nanobot_desktop.engine.tools.base import ERROR_HINT, Tool, ToolContext
from nanobot_desktop.engine.tools.policy import (
    Decision,
    ToolPolicy,
    build_approval_request,
    denial_text,
)
from nanobot_desktop.engine.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from nanobot_desktop.engine.agent.approvals import Approvals

CANCELLED_RESULT = "Error: the tool call was cancelled by the user (stopped)."


@dataclass
class ToolOutcome:
    result: str
    status: ToolStatus
    media: tuple[str, ...] = ()


class _Clock:
    """A call's time, less the time it waited for the person (their clicking is not the tool's time)."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.waited = 0.0

    def tool_time(self) -> float:
        return max(0.0, time.perf_counter() - self.started - self.waited)


class ToolRunner:
    """Executes tool calls against a registry under a policy, asking `approvals` when the policy says ask."""

    def __init__(
        self,
        registry: ToolRegistry,
        policy: ToolPolicy,
        bus: EventBus,
        approvals: "Approvals",
        on_policy_changed: Callable[[dict[str, Decision]], None] | None = None,
    ) -> None:
        self.registry = registry
        self.policy = policy
        self.bus = bus
        self.approvals = approvals
        self._on_policy_changed = on_policy_changed
        # Background work (heartbeat, cron jobs, subagents) follows its own policy; its asks name who
        # asks and expire. The engine wires these three.
        self.background_policy: ToolPolicy | None = None
        self.background_source: Callable[[ToolContext], tuple[ApprovalSource, str] | None] = lambda _ctx: None
        self.on_background_policy_changed: Callable[[dict[str, Decision]], None] | None = None

    async def run(self, call: ToolCallRequest, ctx: ToolContext, turn_id: str) -> ToolOutcome:
        clock = _Clock()
        self.bus.publish(ToolCallStarted(ctx.session_key, turn_id=turn_id, call_id=call.id, name=call.name,
                                         arguments=dict(call.arguments), origin=self._origin(call.name)))
        try:
            outcome = await self._decide_and_execute(call, ctx, turn_id, clock)
        except asyncio.CancelledError:
            self._finish(call, ctx, turn_id, ToolOutcome(CANCELLED_RESULT, ToolStatus.CANCELLED), clock)
            raise
        self._finish(call, ctx, turn_id, outcome, clock)
        return outcome

    def _origin(self, name: str) -> str:
        tool = self.registry.get(name)
        return getattr(tool, "origin", "") if tool is not None else ""

    def _finish(self, call: ToolCallRequest, ctx: ToolContext, turn_id: str, outcome: ToolOutcome,
                clock: _Clock) -> None:
        self.bus.publish(ToolCallFinished(
            ctx.session_key, turn_id=turn_id, call_id=call.id, name=call.name, arguments=dict(call.arguments),
            result=outcome.result, status=outcome.status, duration_s=clock.tool_time(),
            origin=self._origin(call.name), media=outcome.media, waited_s=clock.waited,
        ))

    async def _decide_and_execute(self, call: ToolCallRequest, ctx: ToolContext, turn_id: str,
                                  clock: _Clock) -> ToolOutcome:
        if call.parse_error:
            return ToolOutcome(f"Error: the arguments of '{call.name}' could not be read: {call.parse_error}"
                               + ERROR_HINT, ToolStatus.ERROR)
        tool = self.registry.get(call.name)
        if tool is None:
            # Let the registry produce its standard "not found, available: ..." text.
            result = await self.registry.run(call.name, call.arguments, ctx)
            return ToolOutcome(result.text, result.status)
        source = self.background_source(ctx)
        policy = self.background_policy if source and self.background_policy is not None else self.policy
        decision = policy.decision_for(call.name)
        if decision == "deny":
            which = "background tool policy" if policy is not self.policy else "tool policy"
            return ToolOutcome(f"Error: the user's {which} does not allow '{call.name}'." + ERROR_HINT, ToolStatus.DENIED)
        if decision == "ask" and tool.asks_for(dict(call.arguments or {})):
            asked = time.perf_counter()
            try:
                answered = await self._ask(call, ctx, turn_id, tool, source)
            finally:
                clock.waited = time.perf_counter() - asked
            reply, why = answered.reply, answered.why
            if reply.answer == ApprovalAnswer.ALLOW_ALWAYS:
                self._allow_always(call.name, background=source is not None)
            if reply.answer == ApprovalAnswer.DENY:
                text = (f"Error: '{call.name}' was not run: {why}." if why and not reply.reason
                        else denial_text(call.name, reply.reason))
                return ToolOutcome(text + ERROR_HINT, ToolStatus.DENIED)
        ran = await self.registry.run(call.name, call.arguments, ctx)
        return ToolOutcome(ran.text, ran.status, ran.media)

    async def _ask(self, call: ToolCallRequest, ctx: ToolContext, turn_id: str, tool: Tool,
                   source: tuple[ApprovalSource, str] | None) -> ApprovalAnswered:
        """One request for this call, answered once by whichever surface is first (or the engine)."""
        request = await build_approval_request(tool, dict(call.arguments), ctx)
        kind, asker = source if source is not None else (ApprovalSource.CHAT, "")
        return await self.approvals.ask(replace(request, call_id=call.id, turn_id=turn_id, source=kind, asker=asker))

    def _allow_always(self, name: str, *, background: bool) -> None:
        """"Always allow" changes the policy that asked (the chat's, or background work's)."""
        policy = self.background_policy if background and self.background_policy is not None else self.policy
        try:
            mapping = policy.allow_always(name)
        except ValueError:  # exec without a sandbox: allowed this once, still asked next time
            return
        saved = self.on_background_policy_changed if policy is not self.policy else self._on_policy_changed
        if saved is not None:
            saved(mapping)
