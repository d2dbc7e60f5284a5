"""Running one tool call: policy, approval, execution, events — shared by the main loop and subagents.

Keeping this in one place means a subagent's `exec` asks for approval exactly like the main agent's,
and every tool call, wherever it runs, shows up in the inspector with the same events.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from nanobot_desktop.engine.events import (
    ApprovalAnswered,
    ApprovalRequested,
    EventBus,
    ToolCallFinished,
    ToolCallStarted,
    ToolStatus,
)
from nanobot_desktop.engine.llm.types import ToolCallRequest
from nanobot_desktop.engine.tools.base import ERROR_HINT, Tool, ToolContext
from nanobot_desktop.engine.tools.policy import (
    ApprovalAnswer,
    Approver,
    ApprovalReply,
    Decision,
    ToolPolicy,
    as_reply,
    build_approval_request,
    denial_text,
)
from nanobot_desktop.engine.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from nanobot_desktop.engine.background_approvals import BackgroundApprovals

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
    """Executes tool calls against a registry under a policy, asking `approver` when the policy says ask."""

    def __init__(
        self,
        registry: ToolRegistry,
        policy: ToolPolicy,
        bus: EventBus,
        approver: Callable[[], Approver | None],
        on_policy_changed: Callable[[dict[str, Decision]], None] | None = None,
    ) -> None:
        self.registry = registry
        self.policy = policy
        self.bus = bus
        self._approver = approver
        self._on_policy_changed = on_policy_changed
        # Background work (heartbeat, cron jobs, subagents) follows its own policy and asks through
        # `background`, which notifies the person and expires; the engine wires these three.
        self.background_policy: ToolPolicy | None = None
        self.background: "BackgroundApprovals | None" = None
        self.background_source: Callable[[ToolContext], str | None] = lambda _ctx: None
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
        source = self.background_source(ctx) if self.background is not None else None
        policy = self.background_policy if source and self.background_policy is not None else self.policy
        decision = policy.decision_for(call.name)
        if decision == "deny":
            which = "background tool policy" if policy is not self.policy else "tool policy"
            return ToolOutcome(f"Error: the user's {which} does not allow '{call.name}'." + ERROR_HINT, ToolStatus.DENIED)
        if decision == "ask" and tool.asks_for(dict(call.arguments or {})):
            asked = time.perf_counter()
            try:
                reply, why = await (self._ask_background(call, ctx, turn_id, tool, source) if source
                                    else self._ask(call, ctx, turn_id, tool))
            finally:
                clock.waited = time.perf_counter() - asked
            self.bus.publish(ApprovalAnswered(ctx.session_key, turn_id=turn_id, call_id=call.id, name=call.name,
                                              answer=reply.answer.value, reason=reply.reason or why,
                                              waited_s=clock.waited))
            if reply.answer == ApprovalAnswer.DENY:
                text = (f"Error: '{call.name}' was not run: {why}." if why and not reply.reason
                        else denial_text(call.name, reply.reason))
                return ToolOutcome(text + ERROR_HINT, ToolStatus.DENIED)
        ran = await self.registry.run(call.name, call.arguments, ctx)
        return ToolOutcome(ran.text, ran.status, ran.media)

    async def _ask(self, call: ToolCallRequest, ctx: ToolContext, turn_id: str,
                   tool: Tool) -> tuple[ApprovalReply, str]:
        """The person's reply and, for a denial nobody gave, why it counts as denied."""
        approver = self._approver()
        if approver is None:
            return ApprovalReply(ApprovalAnswer.DENY), ""
        request = await build_approval_request(tool, dict(call.arguments), ctx)
        self.bus.publish(ApprovalRequested(ctx.session_key, turn_id=turn_id, call_id=call.id, name=call.name,
                                           arguments=dict(call.arguments), diff=request.diff,
                                           origin=request.origin))
        reply = as_reply(await approver(request))
        if reply.answer == ApprovalAnswer.ALLOW_ALWAYS:
            try:
                mapping = self.policy.allow_always(call.name)
            except ValueError:  # exec without a sandbox: allowed this once, still asked next time
                return reply, ""
            if self._on_policy_changed is not None:
                self._on_policy_changed(mapping)
        return reply, ""

    async def _ask_background(self, call: ToolCallRequest, ctx: ToolContext, turn_id: str, tool: Tool,
                              source: str) -> tuple[ApprovalReply, str]:
        """Ask for background work: notify, accept any answer (card, notification, tray), expire."""
        assert self.background is not None
        request = await build_approval_request(tool, dict(call.arguments), ctx)
        self.bus.publish(ApprovalRequested(ctx.session_key, turn_id=turn_id, call_id=call.id, name=call.name,
                                           arguments=dict(call.arguments), diff=request.diff,
                                           origin=request.origin))
        reply, why = await self.background.ask(request, source, call_id=call.id, card=self._approver())
        if reply.answer == ApprovalAnswer.ALLOW_ALWAYS and self.background_policy is not None:
            try:
                mapping = self.background_policy.allow_always(call.name)
            except ValueError:  # exec without a sandbox: allowed this once, still asked next time
                return reply, ""
            if self.on_background_policy_changed is not None:
                self.on_background_policy_changed(mapping)
        return reply, why
