"""One MCP server connection on the official SDK: start, state, tool calls, stop.

The SDK's transports are anyio context managers that must be entered and left in the same task, so
each connection has one *owner task* that opens the transport and the `ClientSession`, publishes the
tools and then waits until it is told to stop or the server goes away. Tool calls are requests on
that session from any task. Leaving the owner task's contexts is what ends a stdio server's process
(stdin closed, then SIGTERM/SIGKILL of its process group): every path out of it goes through there.

A stdio server's stderr goes to a log file of its own (`<logs>/mcp/<name>.log`, appended), which is
the server log the app shows and where the last lines of a failure come from.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.mcp.spec import ServerSpec, tool_name_for
from nanobot_desktop.engine.mcp.streams import (
    SENT_CALL_IDS,
    RecordingSendStream,
    WatchedReceiveStream,
    describe_error,
    load_sdk,
    watching_transport,
)

log = logging.getLogger(__name__)

STATES = ("connecting", "ready", "failed", "stopped")
CONNECT_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 5.0
STDERR_TAIL_LINES = 12


class ServerDown(Exception):
    """The server is not connected (never came up, died, or was stopped); the text says why."""


class ServerLost(ServerDown):
    """The server went away while a call was waiting for its answer."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool a server offers, as the UI shows it."""

    name: str  # the server's own name for it
    qualified_name: str  # mcp_<server>_<tool>
    description: str
    input_schema: dict[str, Any]
    offered: bool  # False when enabledTools leaves it out


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot of one server for the UI and the CLI."""

    name: str
    state: str
    transport: str | None
    target: str
    tools: tuple[ToolInfo, ...] = ()
    error: str = ""
    stderr_tail: tuple[str, ...] = ()
    enabled: bool = True
    restarts: int = 0

    @property
    def summary(self) -> str:
        if self.state == "ready":
            return f"ready ({sum(1 for t in self.tools if t.offered)} tools)"
        if self.state == "failed":
            return f"failed: {self.error}"
        return self.state


class McpServerConnection:
    """The live side of one server; `on_change` is called after every state change."""

    def __init__(self, spec: ServerSpec, log_path: Path | None, on_change: Callable[[], None], *,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        self.spec = spec
        self.log_path = log_path
        self.state = "stopped"
        self.error = ""
        self.tools: tuple[ToolInfo, ...] = ()
        self._on_change = on_change
        self._connect_timeout_s = connect_timeout_s
        self._session: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stopping = False
        self._settled = asyncio.Event()
        self._lost = asyncio.Event()
        self._log_offset = 0
        self._log_handle: Any = None
        self._side_tasks: set[asyncio.Future[Any]] = set()

    # --- public -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background (no-op while a connection is starting or up)."""
        if self._owner is not None and not self._owner.done():
            return
        self._stopping = False
        self._wake = asyncio.Event()
        self._settled = asyncio.Event()
        self._lost = asyncio.Event()
        self._set("connecting", "")
        self._owner = asyncio.ensure_future(self._own())

    async def wait_settled(self) -> None:
        """Until the current start has ended as ready or failed."""
        await self._settled.wait()

    async def stop(self) -> None:
        """Leave the session and end the server process; bounded, then the owner task is cancelled."""
        owner = self._owner
        self._stopping = True
        self._wake.set()
        if owner is not None and not owner.done() and self.state == "connecting":
            owner.cancel()  # nothing to finish politely: leave the handshake now
            await asyncio.gather(owner, return_exceptions=True)
        elif owner is not None and not owner.done():
            try:
                await asyncio.wait_for(asyncio.shield(owner), STOP_TIMEOUT_S)
            except Exception:  # noqa: BLE001 - a stop that hangs or fails is ended the hard way below
                owner.cancel()
                await asyncio.gather(owner, return_exceptions=True)
        self._owner = None
        self._session = None
        if self.state != "failed":
            self._set("stopped", "")

    @property
    def connected(self) -> bool:
        return self.state == "ready" and self._session is not None

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> Any:
        """One `tools/call`; raises ServerDown, asyncio.TimeoutError or the SDK's error."""
        session = self._session
        if session is None or self.state != "ready":
            raise ServerDown(self.error or f"MCP server '{self.spec.name}' is {self.state}")
        # Raced against the connection's end: a server that dies mid-call fails the call at once.
        sent: list[Any] = []
        token = SENT_CALL_IDS.set(sent)
        try:
            call = asyncio.ensure_future(session.call_tool(tool, arguments))
        finally:
            SENT_CALL_IDS.reset(token)
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            done, _ = await asyncio.wait({call, lost}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            if not call.done():  # timed out or stopped: the server is told to stop working on it too
                call.cancel()
                self._notify_cancelled(session, sent)
                await asyncio.gather(call, return_exceptions=True)
        if call in done:
            return call.result()
        if lost in done:
            raise ServerLost("the server stopped during the call (its process exited)")
        raise TimeoutError

    def _notify_cancelled(self, session: Any, request_ids: list[Any]) -> None:
        """Send `notifications/cancelled` for abandoned calls, in the background (Stop must not wait)."""
        if not request_ids or self._session is not session:
            return

        async def notify() -> None:
            from mcp import types

            for request_id in request_ids:
                params = types.CancelledNotificationParams(requestId=request_id, reason="timed out or stopped")
                try:
                    await asyncio.wait_for(session.send_notification(
                        types.ClientNotification(types.CancelledNotification(params=params))), 2.0)
                except Exception:  # noqa: BLE001 - the server may be gone already; nothing else to do
                    return

        task = asyncio.ensure_future(notify())
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    def mark_gone(self, reason: str) -> None:
        """A call found the connection dead: fail now (the owner task ends on its own)."""
        self._lost.set()
        if self.state == "ready":
            self._session = None
            self._set("failed", reason)
            self._wake.set()

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> tuple[str, ...]:
        """The last lines the server wrote to stderr since its latest start."""
        if self.log_path is None:
            return ()
        try:
            with self.log_path.open("rb") as handle:
                handle.seek(self._log_offset)
                data = handle.read()[-64_000:]
        except OSError:
            return ()
        text = data.decode("utf-8", errors="replace")
        return tuple(line for line in text.splitlines() if line.strip())[-lines:]

    # --- the owner task -------------------------------------------------------------------------------------

    def _set(self, state: str, error: str) -> None:
        self.state, self.error = state, error
        if state in ("ready", "failed", "stopped"):
            self._settled.set()
        self._on_change()

    async def _own(self) -> None:
        errlog = self._log_handle = self._open_log()
        self._gone = False

        try:
            await load_sdk()
            import anyio
            from mcp import ClientSession

            async with AsyncExitStack() as stack:
                read, raw_write = await self._open_transport(stack, errlog)
                write: Any = RecordingSendStream(raw_write)  # duck-typed as the SDK's send stream
                watched: Any = WatchedReceiveStream(read, self._went_away)  # duck-typed as the SDK's receive stream
                session = await stack.enter_async_context(ClientSession(
                    watched, write, logging_callback=self._server_logged, message_handler=self._on_message))
                with anyio.fail_after(self._connect_timeout_s):
                    await session.initialize()
                    listed = await session.list_tools()
                self.tools = tuple(self._tool_info(t) for t in listed.tools)
                self._session = session
                self._set("ready", "")
                log.info("MCP server '%s' ready with %d tools", self.spec.name, len(self.tools))
                await self._wake.wait()
                self._session = None
                if self._gone and not self._stopping:
                    raise ServerDown("the server closed the connection (its process exited)")
        except asyncio.CancelledError:
            self._session = None
            if self.state in ("connecting", "ready"):
                self._set("stopped", "")
            raise
        except BaseException as error:  # SDK errors come as exception groups; each one fails this server only
            self._session = None
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            if self._stopping and not self._gone:
                self._set("stopped", "")
            else:
                reason = describe_error(error)
                log.warning("MCP server '%s' failed: %s", self.spec.name, reason)
                self._set("failed", reason)
        else:
            self._session = None
            if self.state != "failed":
                self._set("stopped", "")
        finally:
            if errlog is not None:
                outcome = f"failed: {self.error}" if self.state == "failed" else "stopped"
                try:
                    errlog.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {outcome}\n")
                finally:
                    errlog.close()

    async def _on_message(self, message: Any) -> None:
        """The server changed its tool list (`notifications/tools/list_changed`): list them again.

        Runs in the SDK's receive loop, which must keep reading, so the listing is a task of its own."""
        root = getattr(message, "root", None)
        if type(root).__name__ == "ToolListChangedNotification" and self._session is not None:
            task = asyncio.ensure_future(self._relist(self._session))
            self._side_tasks.add(task)
            task.add_done_callback(self._side_tasks.discard)

    async def _relist(self, session: Any) -> None:
        try:
            listed = await session.list_tools()
        except Exception as error:  # noqa: BLE001 - a failed refresh keeps the tools we have
            log.warning("MCP server '%s': listing its changed tools failed: %s", self.spec.name, describe_error(error))
            return
        if session is self._session and self.state == "ready":
            self.tools = tuple(self._tool_info(t) for t in listed.tools)
            self._set("ready", "")

    async def _server_logged(self, params: Any) -> None:
        """MCP log messages (`notifications/message`) go to the server's log, as its stderr does."""
        handle = self._log_handle
        if handle is not None and not handle.closed:
            data = params.data if isinstance(params.data, str) else repr(params.data)
            handle.write(f"[{params.level}] {data}\n")
            handle.flush()

    def _went_away(self) -> None:
        """The transport ended (stdio: the process exited; HTTP: the connection broke): calls fail now."""
        if self._stopping:  # our own stop closes the streams: not a failure
            return
        self._gone = True
        self._lost.set()
        self._wake.set()

    def _open_log(self) -> Any:
        if self.log_path is None:
            return None
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            handle = self.log_path.open("a", encoding="utf-8")
            handle.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {self.spec.target}\n")
            handle.flush()
            self._log_offset = handle.tell()
            return handle
        except OSError:
            log.exception("cannot open the MCP server log %s", self.log_path)
            return None

    async def _open_transport(self, stack: AsyncExitStack, errlog: Any) -> tuple[Any, Any]:
        spec = self.spec
        if spec.transport == "stdio":
            import os

            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            params = StdioServerParameters(command=spec.command, args=list(spec.args),
                                           env=dict(spec.env) or None, cwd=spec.cwd or None)
            # The process needs a real file for its stderr: our log, or the null device without one.
            sink = errlog
            if sink is None:
                sink = stack.enter_context(open(os.devnull, "w"))  # noqa: ASYNC230, SIM115 - opens at once
            read, write = await stack.enter_async_context(stdio_client(params, errlog=sink))
            return read, write
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            read, write = await stack.enter_async_context(sse_client(spec.url, headers=dict(spec.headers) or None))
            return read, write
        if spec.transport == "streamableHttp":
            import httpx
            from mcp.client.streamable_http import streamable_http_client

            # No httpx timeout of its own: the tool timeout is the one limit of a call. The transport tells
            # us when a response breaks off (the SDK only logs that, and the call would wait forever).
            client = await stack.enter_async_context(httpx.AsyncClient(
                headers=dict(spec.headers) or None, follow_redirects=True, timeout=None,
                transport=watching_transport(self._went_away)))
            read, write, _session_id = await stack.enter_async_context(
                streamable_http_client(spec.url, http_client=client))
            return read, write
        raise ServerDown("neither a command nor a url is configured")

    def _tool_info(self, tool: Any) -> ToolInfo:
        schema = tool.inputSchema if isinstance(tool.inputSchema, dict) else {}
        return ToolInfo(name=tool.name, qualified_name=tool_name_for(self.spec.name, tool.name),
                        description=tool.description or tool.name,
                        input_schema=schema or {"type": "object", "properties": {}},
                        offered=self.spec.offers(tool.name))
