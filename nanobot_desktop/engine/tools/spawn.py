"""spawn: hand a task to a background subagent; the subagent manager (reached via ctx.spawn) does the work."""

from __future__ import annotations

from typing import Any

from nanobot_desktop.engine.tools.base import Tool, ToolContext, ToolResult, failed


class SpawnTool(Tool):
    name = "spawn"
    description = ("Spawn a subagent to work on a task in the background. Use it for complex or long tasks "
                   "that can run on their own; the subagent reports back here when it is done.")
    parameters = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "The task for the subagent to complete"},
            "label": {"type": "string", "description": "Optional short label for the task (for display)"},
        },
        "required": ["task"],
    }

    async def execute(self, ctx: ToolContext, task: str, label: str | None = None, **_: Any) -> str | ToolResult:
        if ctx.spawn is None:
            return failed("Error: Subagents are not available here (spawn is not configured)")
        return await ctx.spawn(task=task, label=label)
