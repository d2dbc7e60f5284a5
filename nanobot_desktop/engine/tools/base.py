"""The tool contract: a JSON-schema'd async callable, run with a per-call context.

Tools get the session/channel/chat they run for through `ToolContext` (not through mutable state on
the tool), so turns in different sessions can run at the same time without stepping on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, ClassVar

from nanobot_desktop.engine.events import ToolStatus

if TYPE_CHECKING:  # the config models (pydantic) are only needed by the tools that have settings
    from nanobot_desktop.engine.config import AppSettings, ToolsConfig

ERROR_HINT = "\n\n[Analyze the error above and try a different approach.]"


@dataclass
class ToolContext:
    """Who a tool call runs for, and the services it may reach."""

    workspace: Path
    session_key: str = "cli:direct"
    channel: str = "cli"
    chat_id: str = "direct"
    restrict_to_workspace: bool = False
    # Set by the loop; tools that need them (message, spawn, cron) check for None.
    send_message: Callable[[str, str, str, list[str]], Awaitable[None]] | None = None
    spawn: Callable[..., Awaitable[str | ToolResult]] | None = None
    cron: Any = None
    in_cron_job: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    """A tool's result: its text (sent to the model), files besides it (images an MCP tool returned),
    and how the call ended, set by whoever made the result (`failed(...)` for a failure).

    A tool may return a plain `str`: that is a success, whatever the text starts with (a file read may
    begin with "Error"); the status is never guessed from the text."""

    text: str
    media: tuple[str, ...] = ()
    status: ToolStatus = ToolStatus.OK

    @classmethod
    def of(cls, returned: str | ToolResult) -> ToolResult:
        """What a tool returned, as a result with its status (a plain text is a success)."""
        return returned if isinstance(returned, ToolResult) else cls(returned)


def failed(text: str) -> ToolResult:
    """A failed call's result (ERROR_HINT is added where the result is run)."""
    return ToolResult(text, status=ToolStatus.ERROR)


class Tool:
    """Base class: subclasses set `name`, `description`, `parameters` and implement `execute`.

    `origin` names where a tool comes from when it is not built in (e.g. "MCP server 'time'"), for the
    approval card and the inspector."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    origin: str = ""

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str | ToolResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def configure(self, settings: ToolsConfig, app: AppSettings | None = None) -> None:
        """Take this tool's settings from the config's `tools` section (and the app's own, desktop.json).

        Called when the engine starts and again whenever the config changes, so a new timeout or proxy
        applies to the next call without a restart. Tools without settings keep this no-op.
        """

    def asks_for(self, arguments: dict[str, Any]) -> bool:
        """Whether a call with these arguments is asked for when the policy says "ask" (a tool whose
        read-only actions need no yes, like cron's `list`, answers False for them)."""
        return True

    async def preview(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str | None:
        """What an approval card shows besides the arguments (a unified diff for write/edit)."""
        return None

    def to_schema(self) -> dict[str, Any]:
        """OpenAI function-tool schema."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }
