"""Background subagents started by the `spawn` tool (reference §8).

A subagent has its own short context, at most 15 iterations and only file/shell/web tools. It runs
its tool calls through the same ToolRunner as the main agent (so approvals and the inspector see
them), keeps its transcript for the GUI, and announces its result back to the session that spawned
it as a system message, which the main agent then summarises for the user.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from collections.abc import AsyncIterator
from typing import Any, Awaitable, Callable

from nanobot_desktop.engine.agent.context import ContextBuilder
from nanobot_desktop.engine.events import EventBus, Origin, SubagentFinished, SubagentStarted, origin_context
from nanobot_desktop.engine.llm.types import ChatProvider, ProviderError
from nanobot_desktop.engine.agent.turn import chat_with_events
from nanobot_desktop.engine.agent.tool_runner import ToolRunner
from nanobot_desktop.engine.tools.base import ToolContext, ToolResult, failed
from nanobot_desktop.engine.tools.registry import SUBAGENT_TOOL_NAMES, ToolRegistry
from nanobot_desktop.engine.usage.source import source_context
from nanobot_desktop.engine.workspace import Workspace

log = logging.getLogger(__name__)

SUBAGENT_MAX_ITERATIONS = 15
NO_FINAL_TEXT = "Task completed but no final response was generated."


@dataclass
class SubagentRecord:
    """What the GUI's subagents view shows about one subagent."""

    task_id: str
    label: str
    task: str
    origin_session_key: str
    status: str = "running"  # running | ok | error | cancelled
    started_at: datetime = field(default_factory=datetime.now)
    finished_at: datetime | None = None
    result: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)

    @property
    def duration_s(self) -> float:
        end = self.finished_at or datetime.now()
        return (end - self.started_at).total_seconds()


Announce = Callable[[str, str, str, str], Awaitable[Any]]  # (origin key, channel, chat_id, content)


class SubagentManager:
    def __init__(self, *, workspace: Workspace, provider: Callable[[], ChatProvider], runner: ToolRunner,
                 context: ContextBuilder, bus: EventBus, settings: Callable[[], Any],
                 restrict_to_workspace: Callable[[], bool], announce: Announce) -> None:
        self.workspace = workspace
        self._provider = provider
        self.runner = runner
        self.context = context
        self.bus = bus
        self._settings = settings
        self._restrict = restrict_to_workspace
        self._announce = announce
        self.records: dict[str, SubagentRecord] = {}
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self.held: Callable[[], str | None] | None = None
        """Why new subagents must wait (a spent usage budget), or None: `spawn` then starts none."""
        self._active = 0  # subagents past the concurrency gate (maxConcurrentSubagents, read on each spawn)
        self._slots: asyncio.Condition | None = None

    def spawn(self, task: str, *, label: str | None = None, origin_session_key: str = "cli:direct",
              origin_channel: str = "cli", origin_chat_id: str = "direct") -> str | ToolResult:
        """Start a subagent; what the `spawn` tool answers (a failed result while background work waits)."""
        held = self.held() if self.held is not None else None
        if held:
            return failed(f"Error: no subagent started: {held}. Background work waits until the person resumes it.")
        task_id = uuid.uuid4().hex[:8]
        label = label or (task[:30] + ("..." if len(task) > 30 else ""))
        record = SubagentRecord(task_id=task_id, label=label, task=task, origin_session_key=origin_session_key)
        self.records[task_id] = record
        runner = asyncio.get_running_loop().create_task(  # its events say they are a subagent's
            self._run(record, origin_channel, origin_chat_id),
            context=origin_context(Origin.SUBAGENT, source_context("subagent")))
        self._tasks[task_id] = runner
        runner.add_done_callback(lambda _t: self._tasks.pop(task_id, None))
        self.bus.publish(SubagentStarted(origin_session_key, task_id=task_id, label=label, task=task))
        return f"Subagent [{label}] started (id: {task_id}). I'll notify you when it completes."

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        """Wait until fewer than maxConcurrentSubagents subagents run (as 0.3.5 queues the rest)."""
        if self._slots is None:
            self._slots = asyncio.Condition()
        slots = self._slots
        limit = max(1, int(getattr(self._settings(), "max_concurrent_subagents", 4)))
        async with slots:
            await slots.wait_for(lambda: self._active < limit)
            self._active += 1
        try:
            yield
        finally:
            async with slots:
                self._active -= 1
                slots.notify_all()

    def list(self) -> list[SubagentRecord]:
        return sorted(self.records.values(), key=lambda r: r.started_at, reverse=True)

    async def cancel(self, task_id: str) -> bool:
        task = self._tasks.get(task_id)
        if task is None or task.done():
            return False
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return True

    async def cancel_by_session(self, session_key: str) -> int:
        ids = [r.task_id for r in self.records.values()
               if r.origin_session_key == session_key and r.task_id in self._tasks]
        results = [await self.cancel(task_id) for task_id in ids]
        return sum(results)

    async def shutdown(self) -> None:
        for task_id in list(self._tasks):
            await self.cancel(task_id)

    def _system_prompt(self) -> str:
        now = datetime.now().strftime("%Y-%m-%d %H:%M (%A)")
        tz = time.strftime("%Z") or "UTC"
        parts = [
            "# Subagent",
            f"Current Time: {now} ({tz})",
            "You were started by the main agent to do one specific task. Stay on that task and do not "
            "take on anything else. Your final answer is handed back to the main agent, who will tell the user.",
            f"## Workspace\n{self.workspace.root}",
        ]
        summary = self.context.skills.build_skills_summary()
        if summary:
            parts.append("## Skills\nRead a skill's SKILL.md with read_file when it helps.\n\n" + summary)
        return "\n\n".join(parts)

    async def _run(self, record: SubagentRecord, origin_channel: str, origin_chat_id: str) -> None:
        ctx = ToolContext(workspace=self.workspace.root, session_key=record.origin_session_key,
                          channel=origin_channel, chat_id=origin_chat_id,
                          restrict_to_workspace=self._restrict(),
                          extra={"background": f"Subagent “{record.label}”"})  # asks as background work
        messages: list[dict[str, Any]] = [{"role": "system", "content": self._system_prompt()},
                                          {"role": "user", "content": record.task}]
        record.transcript = messages
        try:
            async with self._slot():
                result = await self._iterate(record, messages, ctx)
            record.status, record.result = "ok", result
        except asyncio.CancelledError:
            record.status, record.result, record.finished_at = "cancelled", None, datetime.now()
            self.bus.publish(SubagentFinished(record.origin_session_key, task_id=record.task_id,
                                              label=record.label, status="cancelled", result=""))
            raise
        except ProviderError as error:
            record.status, record.result = "error", f"Error: {error.message}"
        except Exception as error:
            log.exception("subagent %s failed", record.task_id)
            record.status, record.result = "error", f"Error: {type(error).__name__}: {error}"
        record.finished_at = datetime.now()
        self.bus.publish(SubagentFinished(record.origin_session_key, task_id=record.task_id, label=record.label,
                                          status=record.status, result=record.result or ""))
        outcome = "completed successfully" if record.status == "ok" else "failed"
        announcement = (
            f"[Subagent '{record.label}' {outcome}]\n\nTask: {record.task}\n\nResult:\n{record.result}\n\n"
            "Summarize this naturally for the user in one or two sentences. "
            "Do not mention technical details such as subagents or task IDs."
        )
        try:
            await self._announce(record.origin_session_key, origin_channel, origin_chat_id, announcement)
        except Exception:
            log.exception("could not announce subagent %s", record.task_id)

    async def _iterate(self, record: SubagentRecord, messages: builtins.list[dict[str, Any]],
                       ctx: ToolContext) -> str:
        allowed = ToolRegistry()
        for name in SUBAGENT_TOOL_NAMES:
            tool = self.runner.registry.get(name)
            if tool is not None:
                allowed.register(tool)
        definitions = allowed.get_definitions()
        settings = self._settings()
        provider = self._provider()
        turn_id = f"subagent-{record.task_id}"
        for _ in range(SUBAGENT_MAX_ITERATIONS):
            response = await chat_with_events(self.bus, provider, record.origin_session_key, turn_id,
                                              messages, definitions, settings)
            if not response.has_tool_calls:
                return (response.content or "").strip() or NO_FINAL_TEXT
            messages.append({"role": "assistant", "content": response.content,
                             "tool_calls": [call.to_message_dict() for call in response.tool_calls]})
            for call in response.tool_calls:
                if allowed.get(call.name) is None:
                    result = f"Error: Tool '{call.name}' is not available to subagents."
                else:
                    result = (await self.runner.run(call, ctx, turn_id)).result
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result})
        return NO_FINAL_TEXT
