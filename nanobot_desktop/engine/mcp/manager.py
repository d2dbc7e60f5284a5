"""All of the user's MCP servers: started in the background, their tools in the agent's registry.

The manager owns one `McpServerConnection` per configured server and keeps the tool registry in step
with them: a server that becomes ready adds `mcp_<server>_<tool>` tools, one that is removed, disabled
or stopped takes them away. A server that died keeps its tools, so the next call restarts it
(at most `MAX_RESTARTS` times in a row) and the tool result says what happened. Every change of a
server is published as `McpServersChanged` with a snapshot of all servers.

Nothing here waits for a server at start: `start()` only schedules the connections.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.events import Event, EventBus, ToolStatus
from nanobot_desktop.engine.mcp.results import convert_result
from nanobot_desktop.engine.mcp.server import (
    McpServerConnection,
    ServerDown,
    ServerLost,
    ServerStatus,
    ToolInfo,
)
from nanobot_desktop.engine.mcp.spec import McpSpecError, ServerSpec, spec_from_entry
from nanobot_desktop.engine.mcp.streams import describe_error
from nanobot_desktop.engine.tools.base import Tool, ToolContext, ToolResult, failed
from nanobot_desktop.engine.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

MAX_RESTARTS = 3
_GONE_ERRORS = frozenset({"ClosedResourceError", "BrokenResourceError", "EndOfStream", "BrokenPipeError",
                          "ConnectionResetError"})


@dataclass(frozen=True)
class McpServersChanged(Event):
    """A server's state, tools or settings changed; `servers` is a snapshot of every configured server."""

    servers: tuple[ServerStatus, ...]


class McpTool(Tool):
    """One server tool as an agent tool; calls go through the manager (restart, timeout, result text)."""

    def __init__(self, manager: McpManager, server: str, info: ToolInfo) -> None:
        self._manager = manager
        self.server = server
        self.mcp_name = info.name
        self.name = info.qualified_name  # type: ignore[misc]  # per-instance, unlike built-in tools
        self.description = info.description  # type: ignore[misc]
        self.parameters = info.input_schema  # type: ignore[misc]
        self.origin = f"MCP server '{server}'"

    async def execute(self, ctx: ToolContext, **kwargs: Any) -> ToolResult:
        return await self._manager.call(self.server, self.mcp_name, kwargs, ctx.workspace)


class McpManager:
    """Connections to every configured server, and their tools in `registry`."""

    def __init__(self, bus: EventBus, registry: ToolRegistry, logs_dir: Path | None) -> None:
        self.bus = bus
        self.registry = registry
        self.logs_dir = logs_dir
        self._connections: dict[str, McpServerConnection] = {}
        self._invalid: dict[str, tuple[str, str]] = {}  # name -> (config error, target)
        self._disabled: set[str] = set()
        self._restarts: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._specs: dict[str, ServerSpec] = {}
        self._pending: set[asyncio.Future[Any]] = set()
        self._started = False
        self._closing = False

    # --- configuration -------------------------------------------------------------------------------------

    def configure(self, entries: Mapping[str, Any], disabled: Iterable[str] = ()) -> None:
        """Adopt the config's `tools.mcpServers` (and the app's disabled set): new, changed, removed,
        enabled and disabled servers take effect at once when started, without touching the others."""
        self._disabled = set(disabled)
        specs: dict[str, ServerSpec] = {}
        self._invalid = {}
        for name, entry in entries.items():
            try:
                specs[name] = spec_from_entry(name, entry)
            except McpSpecError as error:
                self._invalid[name] = (str(error), "")
        for name in [n for n in self._connections if n not in specs or specs[n] != self._connections[n].spec
                     or n in self._disabled]:
            self._drop(name)
        for name, spec in specs.items():
            if name not in self._connections and name not in self._disabled:
                self._connections[name] = self._new_connection(spec)
                self._restarts[name] = 0
                if self._started:
                    self._connections[name].start()
        for name in list(self._connections):
            if name in self._disabled:
                self._drop(name)
        self._specs = specs
        self._publish()

    def _new_connection(self, spec: ServerSpec) -> McpServerConnection:
        log_path = self.log_path(spec.name)
        name = spec.name
        return McpServerConnection(spec, log_path, lambda: self._changed(name))

    def log_path(self, name: str) -> Path | None:
        """Where a stdio server's stderr is appended (the app's server log)."""
        return self.logs_dir / "mcp" / f"{name}.log" if self.logs_dir is not None else None

    def _drop(self, name: str) -> None:
        connection = self._connections.pop(name, None)
        self._unregister(name)
        if connection is not None:
            self._background(connection.stop())

    def _background(self, coroutine: Any) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            coroutine.close()
            return
        task = asyncio.ensure_future(coroutine)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    # --- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> None:
        """Connect every enabled server in the background (needs the running event loop)."""
        self._started = True
        for connection in self._connections.values():
            connection.start()

    async def wait_ready(self, timeout_s: float) -> list[ServerStatus]:
        """Wait until every server is ready or failed, at most `timeout_s`; returns those not ready."""
        waits = [c.wait_settled() for c in self._connections.values() if c.state == "connecting"]
        if waits:
            await asyncio.wait([asyncio.ensure_future(w) for w in waits], timeout=timeout_s)
        return [s for s in self.statuses() if s.enabled and s.state != "ready"]

    async def restart(self, name: str) -> ServerStatus:
        """Stop and start one server (the MCP page's Restart); returns its state once settled."""
        connection = self._connections.get(name)
        if connection is None:
            raise KeyError(name)
        self._restarts[name] = 0
        await connection.stop()
        connection.start()
        await connection.wait_settled()
        return self.status(name)

    async def test(self, name: str, entry: Any, timeout_s: float = 30.0) -> ServerStatus:
        """Connect to a server that is not (yet) saved, list its tools, disconnect: the page's Test."""
        try:
            spec = spec_from_entry(name, entry)
        except McpSpecError as error:
            return ServerStatus(name, "failed", None, "", error=str(error))
        connection = McpServerConnection(spec, self.log_path(f"{name}.test"), lambda: None,
                                         connect_timeout_s=timeout_s)
        connection.start()
        try:
            await connection.wait_settled()
            return self._status_of(connection)
        finally:
            await connection.stop()

    async def shutdown(self) -> None:
        """Stop every server (each ends its process); nothing is left running afterwards."""
        self._closing = True
        connections = list(self._connections.values())
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
        pending = list(self._pending)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    # --- state -----------------------------------------------------------------------------------------

    def statuses(self) -> list[ServerStatus]:
        """Every configured server, in config order: live, disabled, or with a config error."""
        result: list[ServerStatus] = []
        for name, spec in self._specs.items():
            connection = self._connections.get(name)
            if connection is not None:
                result.append(self._status_of(connection))
            else:
                result.append(ServerStatus(name, "stopped", spec.transport, spec.target, enabled=False))
        for name, (error, target) in self._invalid.items():
            result.append(ServerStatus(name, "failed", None, target, error=error))
        return result

    def status(self, name: str) -> ServerStatus:
        return next(s for s in self.statuses() if s.name == name)

    def _status_of(self, connection: McpServerConnection) -> ServerStatus:
        spec = connection.spec
        tail = connection.stderr_tail() if connection.state == "failed" else ()
        return ServerStatus(spec.name, connection.state, spec.transport, spec.target, tools=connection.tools,
                            error=connection.error, stderr_tail=tail,
                            restarts=self._restarts.get(spec.name, 0))

    def server_of(self, tool_name: str) -> str | None:
        """The server a registered tool comes from (None for the built-in tools)."""
        tool = self.registry.get(tool_name)
        return tool.server if isinstance(tool, McpTool) else None

    def _changed(self, name: str) -> None:
        connection = self._connections.get(name)
        if connection is not None:
            if connection.state == "ready":
                self._register(name, connection.tools)
            elif connection.state == "stopped":
                self._unregister(name)
        self._publish()

    def _publish(self) -> None:
        if not self._closing:
            self.bus.publish(McpServersChanged("", servers=tuple(self.statuses())))

    def _register(self, name: str, tools: tuple[ToolInfo, ...]) -> None:
        self._unregister(name)
        for info in tools:
            if info.offered:
                self.registry.register(McpTool(self, name, info))

    def _unregister(self, name: str) -> None:
        for tool_name in self.registry.names():
            tool = self.registry.get(tool_name)
            if isinstance(tool, McpTool) and tool.server == name:
                self.registry.unregister(tool_name)

    # --- calls -------------------------------------------------------------------------------------------

    async def call(self, server: str, tool: str, arguments: dict[str, Any], workspace: Path) -> ToolResult:
        """Call a tool, restarting a dead server first; every failure is a readable `Error: ...` result."""
        connection = self._connections.get(server)
        if connection is None:
            return failed(f"Error: MCP server '{server}' is no longer configured or is disabled.")
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:
            if not connection.connected:
                failure = await self._revive(server, connection)
                if failure is not None:
                    return failed(failure)
        try:
            result = await connection.call(tool, arguments, connection.spec.tool_timeout_s)
        except TimeoutError:
            return failed(f"Error: MCP tool '{tool}' of server '{server}' timed out after "
                          f"{connection.spec.tool_timeout_s:g}s (toolTimeout).")
        except ServerLost as error:
            return failed(self._call_failure(server, tool, connection, error))
        except ServerDown as error:
            return failed(f"Error: MCP server '{server}' is not available: {error}")
        except BaseException as error:  # CancelledError (Stop) passes through below
            if isinstance(error, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
                raise
            return failed(self._call_failure(server, tool, connection, error))
        self._restarts[server] = 0
        converted = convert_result(result, workspace)
        if converted.is_error:
            return ToolResult(f"Error: MCP tool '{tool}' of server '{server}' reported an error: {converted.text}",
                              converted.media, ToolStatus.ERROR)
        return ToolResult(converted.text, converted.media)

    async def _revive(self, server: str, connection: McpServerConnection) -> str | None:
        """Restart a server that is down; the failure text when it stays down."""
        if connection.state == "connecting":
            await connection.wait_settled()
            if connection.connected:
                return None
        used = self._restarts.get(server, 0)
        if used >= MAX_RESTARTS:
            return (f"Error: MCP server '{server}' is down ({connection.error or connection.state}) and was "
                    f"restarted {used} times without success; it will not be restarted again until the user "
                    "restarts it on the MCP page.")
        self._restarts[server] = used + 1
        log.info("restarting MCP server '%s' (attempt %d of %d)", server, used + 1, MAX_RESTARTS)
        await connection.stop()
        connection.start()
        await connection.wait_settled()
        if connection.connected:
            return None
        tail = connection.stderr_tail()
        detail = ("\nLast lines of its stderr:\n" + "\n".join(tail)) if tail else ""
        return (f"Error: MCP server '{server}' is down and restarting it failed (attempt {used + 1} of "
                f"{MAX_RESTARTS}): {connection.error}{detail}")

    def _call_failure(self, server: str, tool: str, connection: McpServerConnection, error: BaseException) -> str:
        from mcp.shared.exceptions import McpError
        from mcp.types import CONNECTION_CLOSED

        inner = error
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        gone = isinstance(inner, ServerLost) or (isinstance(inner, McpError) and inner.error.code == CONNECTION_CLOSED) \
            or type(inner).__name__ in _GONE_ERRORS
        if not gone:
            return f"Error: MCP tool '{tool}' of server '{server}' failed: {describe_error(inner)}"
        connection.mark_gone("the server stopped during a call (its process exited)")
        tail = connection.stderr_tail()
        detail = ("\nLast lines of its stderr:\n" + "\n".join(tail)) if tail else ""
        return (f"Error: MCP server '{server}' stopped while running '{tool}'; the call did not complete. "
                f"The server will be restarted on the next call.{detail}")
