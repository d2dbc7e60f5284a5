"""Which tool calls need the user's yes, and what the user is shown when asked.

Tools that change files or run commands ask by default; everything else runs. An ask is one
`ApprovalRequest` (events.py), held and answered once by the engine's `Approvals` (agent/approvals.py);
the card, the tray, a notification and the CLI's prompt all render it from its event.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Literal, Mapping, cast, get_args

from nanobot_desktop.engine.events import ApprovalAnswer, ApprovalReply, ApprovalRequest
from nanobot_desktop.engine.tools.base import Tool, ToolContext
from nanobot_desktop.engine.tools.paths import absolute_tool_path, workspace_root
from nanobot_desktop.engine.tools.sandbox import sandbox_support

Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[str, ...] = get_args(Decision)

# cron asks too: a job it saves runs later, with no one watching (only its `list` runs without asking).
DEFAULT_DECISIONS: dict[str, Decision] = {"exec": "ask", "write_file": "ask", "edit_file": "ask", "cron": "ask"}
MCP_PREFIX = "mcp_"  # tools of the user's MCP servers: they can do anything, so they ask by default
WILDCARD = "*"  # a key ending in "*" sets every tool whose name starts with the rest ("mcp_time_*": a server)


def _checked(name: str, decision: str) -> Decision:
    if decision not in DECISIONS:
        raise ValueError(f"Approval setting for tool '{name}' must be one of {', '.join(DECISIONS)}, "
                         f"not {decision!r}")
    return cast(Decision, decision)


def exec_allow_possible() -> bool:
    """exec may run without asking only where an OS sandbox can contain it (the engine's
    `exec_allow_possible` also asks whether the current settings put exec in it)."""
    return sandbox_support().available


UNSANDBOXED_ALLOW = "exec cannot be set to allow: commands are not sandboxed"


class ToolPolicy:
    """Per-tool allow/ask/deny: the defaults above, overridden by config `tools.approval`.

    `exec_sandboxed` says whether exec runs in the OS sandbox right now (the settings may leave it
    out even where the system has one); while it does not, exec can never be (or act as) "allow".
    """

    def __init__(self, overrides: Mapping[str, str] | None = None,
                 exec_sandboxed: Callable[[], bool] = exec_allow_possible) -> None:
        self._overrides: dict[str, Decision] = {}
        self.exec_sandboxed = exec_sandboxed
        self.replace(overrides)

    def _refuse_unsandboxed_allow(self, name: str, decision: str) -> None:
        if name == "exec" and decision == "allow" and not self.exec_sandboxed():
            raise ValueError(UNSANDBOXED_ALLOW)

    def replace(self, overrides: Mapping[str, str] | None) -> None:
        """Adopt a whole new `tools.approval` mapping (all checked first, so a bad one changes nothing).

        exec: allow while exec is not sandboxed is refused: left out, so it is neither obeyed nor saved
        back (the engine tells the person)."""
        checked = {name: _checked(name, decision) for name, decision in (overrides or {}).items()}
        if checked.get("exec") == "allow" and not self.exec_sandboxed():
            del checked["exec"]
        self._overrides = checked

    def set(self, name: str, decision: str) -> dict[str, Decision]:
        """Set one tool's decision; returns the overrides to save. Refuses values other than allow/ask/deny,
        and exec on allow where no sandbox exists."""
        self._refuse_unsandboxed_allow(name, decision)
        self._overrides[name] = _checked(name, decision)
        return self.overrides

    def decision_for(self, name: str) -> Decision:
        """The tool's own setting, else the longest matching wildcard (a server's), else the default."""
        decision = self._overrides.get(name)
        if decision is None:
            prefixes = [key for key in self._overrides if key.endswith(WILDCARD) and name.startswith(key[:-1])]
            if prefixes:
                decision = self._overrides[max(prefixes, key=len)]
            else:
                decision = DEFAULT_DECISIONS.get(name) or ("ask" if name.startswith(MCP_PREFIX) else "allow")
        if name == "exec" and decision == "allow" and not self.exec_sandboxed():
            return "ask"  # a config written elsewhere may say allow; without a sandbox we still ask
        return decision

    def clear(self, name: str) -> dict[str, Decision]:
        """Forget one tool's (or wildcard's) setting, so the default applies again; returns the overrides."""
        self._overrides.pop(name, None)
        return self.overrides

    def allow_always(self, name: str) -> dict[str, Decision]:
        """Remember "always allow" for this run; returns the mapping the app saves as `tools.approval`."""
        return self.set(name, "allow")

    @property
    def overrides(self) -> dict[str, Decision]:
        return dict(self._overrides)


Approver = Callable[[ApprovalRequest], Awaitable["ApprovalAnswer | ApprovalReply"]]
"""An automatic surface (the CLI's prompt, a test): given the request, its answer (see Approvals.respond_with)."""


def as_reply(value: "ApprovalAnswer | ApprovalReply") -> ApprovalReply:
    """A bare ApprovalAnswer (the CLI) or an ApprovalReply (the card, with a reason) as one reply."""
    return value if isinstance(value, ApprovalReply) else ApprovalReply(ApprovalAnswer(value))


def denial_text(tool: str, reason: str = "") -> str:
    """What the model reads when the person denied a call: their reason, quoted, when they gave one."""
    reason = " ".join(reason.split())
    if reason:
        return f"Error: the user denied running '{tool}' with these arguments and said: “{reason}”."
    return f"Error: the user denied running '{tool}' with these arguments."


async def build_approval_request(tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> ApprovalRequest:
    """Describe a call for the user: the diff a file tool would make, or the command and where it runs."""
    arguments = dict(arguments or {})
    diff: str | None = None
    try:
        diff = await tool.preview(ctx, **arguments)
    except Exception:  # noqa: BLE001 - bad arguments or an unreadable file: the card still shows the raw arguments
        diff = None
    command = working_dir = sandbox = None
    if tool.name == "exec":
        status = getattr(tool, "sandbox_status", None)
        sandbox = status(ctx.restrict_to_workspace) if callable(status) else sandbox_support().summary
        raw_command = arguments.get("command")
        command = raw_command if isinstance(raw_command, str) else None
        root = workspace_root(ctx)
        raw_dir = arguments.get("working_dir")
        try:
            working_dir = str(absolute_tool_path(raw_dir, root)) if isinstance(raw_dir, str) and raw_dir else str(root)
        except (OSError, ValueError):
            working_dir = str(raw_dir)
    return ApprovalRequest(tool=tool.name, arguments=arguments, diff=diff, command=command,
                           working_dir=working_dir, session_key=ctx.session_key, sandbox=sandbox,
                           origin=tool.origin)
