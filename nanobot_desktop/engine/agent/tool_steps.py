"""A turn's tool calls: announcing them, running each (engine/agent/tool_runner.py), saving each result as it
comes, and the context a tool runs in (workspace, session, `message` and `spawn` routed back to it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from nanobot_desktop.engine.agent.context import _image_block
from nanobot_desktop.engine.events import EventBus, OutboundMessage, Progress
from nanobot_desktop.engine.llm.types import LLMResponse
from nanobot_desktop.engine.agent.saver import TurnSaver
from nanobot_desktop.engine.agent.tool_runner import ToolRunner
from nanobot_desktop.engine.agent.turn import AgentSettings, Subagents, TurnState, strip_think
from nanobot_desktop.engine.tools.base import ToolContext, ToolResult
from nanobot_desktop.engine.workspace import Workspace

TOOL_IMAGES_TEXT = "[Images returned by the tool calls above]"


def _image_block_of(path: str) -> dict[str, Any] | None:
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


class ToolSteps:
    """Running the tool calls of a model response, as steps of the turn, each result saved by `saver`."""

    def __init__(self, *, runner: ToolRunner, saver: TurnSaver, bus: EventBus, workspace: Workspace,
                 restrict_to_workspace: Callable[[], bool], cron: Any = None,
                 subagents: Subagents | None = None) -> None:
        self.runner = runner
        self.saver = saver
        self.bus = bus
        self.workspace = workspace
        self._restrict = restrict_to_workspace
        self.cron = cron
        self.subagents = subagents  # None: `spawn` is unavailable
        self._models_without_images: set[str] = set()  # endpoints that refused a tool's images

    def refuse_images(self, model: str) -> None:
        """`model`'s endpoint refused a tool's images: later calls send it the tool results' text only."""
        self._models_without_images.add(model)

    async def run_tool_calls(self, state: TurnState, response: LLMResponse, messages: list[dict[str, Any]],
                              ctx: ToolContext, settings: AgentSettings) -> None:
        """Announce the calls, save the assistant message, run each call and save its result; images a tool
        returned are added to `messages` for the model's next call."""
        thought = strip_think(response.content)
        if thought:
            self.bus.publish(Progress(state.session.key, turn_id=state.turn_id, text=thought))
        self.bus.publish(Progress(state.session.key, turn_id=state.turn_id,
                                  text=tool_hint(response.tool_calls), is_tool_hint=True))
        tool_calls = [call.to_message_dict() for call in response.tool_calls]
        assistant = self.saver.assistant_message(response.content, tool_calls, response)
        messages.append(assistant)
        state.pending_tool_ids = [(call.id, call.name) for call in response.tool_calls]
        self.saver.save(state, [assistant])
        state.streamed = []  # that text is saved with the assistant message; a stop must not repeat it
        images: list[dict[str, Any]] = []
        for call in response.tool_calls:
            outcome = await self.runner.run(call, ctx, state.turn_id)
            tool_message = {"role": "tool", "tool_call_id": call.id, "name": call.name,
                            "content": outcome.result}
            messages.append(tool_message)
            state.pending_tool_ids.pop(0)
            self.saver.save(state, [tool_message])
            images += [block for block in map(_image_block_of, outcome.media) if block is not None]
        if images and settings.model not in self._models_without_images:
            # Tool messages carry text only; images a tool returned go to the model as a user message
            # (not saved: the tool result names the files). Dropped again if the endpoint refuses them.
            messages.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images]})

    def tool_context(self, session_key: str, channel: str, chat_id: str, in_cron_job: bool) -> ToolContext:
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

        async def spawn(task: str, label: str | None = None) -> str | ToolResult:
            return manager.spawn(task, label=label, origin_session_key=session_key,
                                        origin_channel=channel, origin_chat_id=chat_id)
        return spawn
