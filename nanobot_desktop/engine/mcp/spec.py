"""What one configured MCP server is: its transport, how to reach it, and which of its tools to offer.

The config shape is the CLI's `tools.mcpServers.<name>` (nanobot 0.1.4.post4, plus the newer CLI's
`enabledTools` and `cwd`, which the older CLI ignores). A missing `type` is inferred as the CLI does:
a `command` means stdio, a URL ending in `/sse` means SSE, any other URL streamable HTTP.

Pasted JSON in the shape other desktop apps use (`{"mcpServers": {name: {...}}}`, or just the inner
mapping, or one server) is read here too, so the GUI's import only shows the result.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TRANSPORTS = ("stdio", "sse", "streamableHttp")
_TRANSPORT_ALIASES = {"stdio": "stdio", "sse": "sse", "streamablehttp": "streamableHttp", "http": "streamableHttp",
                      "streamable-http": "streamableHttp", "streamable_http": "streamableHttp"}
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
DEFAULT_TOOL_TIMEOUT_S = 30


class McpSpecError(ValueError):
    """A server entry that cannot be used, with a message that says what to fix."""


@dataclass(frozen=True)
class ServerSpec:
    """One server as the engine uses it (read from the config; equal specs mean "no reconnect needed")."""

    name: str
    transport: str | None  # None: neither a command nor a URL, so nothing to start
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    enabled_tools: tuple[str, ...] = ("*",)
    extra: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def target(self) -> str:
        """A one-line description for the UI and the log: the command line or the URL."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return self.url

    def offers(self, tool_name: str) -> bool:
        """Whether `enabledTools` lets this tool through (raw MCP name or the wrapped `mcp_<server>_<tool>`)."""
        allowed = self.enabled_tools
        return "*" in allowed or tool_name in allowed or tool_name_for(self.name, tool_name) in allowed


def infer_transport(type_: str | None, command: str, url: str) -> str | None:
    """The CLI's rule for a missing `type`; an explicit one is normalised (case, common spellings)."""
    if type_:
        normalised = _TRANSPORT_ALIASES.get(str(type_).strip().lower())
        if normalised is None:
            raise McpSpecError(f"unknown transport type {type_!r} (use stdio, sse or streamableHttp)")
        return normalised
    if command:
        return "stdio"
    if url:
        return "sse" if url.rstrip("/").endswith("/sse") else "streamableHttp"
    return None


_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_-]+")
MAX_TOOL_NAME = 64  # what the OpenAI API (and most others) accept


def _safe(name: str) -> str:
    return re.sub(r"_+", "_", _UNSAFE_RE.sub("_", name))


def tool_name_for(server: str, tool: str) -> str:
    """`mcp_<server>_<tool>`, the name the model sees (as the CLI names it). Characters model APIs refuse
    become `_`, and a name over 64 characters is cut and made unique with a hash: a server with odd tool
    names must not make every model call fail."""
    name = _safe(f"mcp_{server}_{tool}")
    if len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[:MAX_TOOL_NAME - 9]}_{digest}"


def server_key(server: str) -> str:
    """The approval key (desktop.json's `toolApproval`) that covers every tool of one server: `mcp_<server>_*`."""
    return _safe(f"mcp_{server}_") + "*"


def _field(entry: Any, snake: str, camel: str, default: Any) -> Any:
    """Read a field from a config model (attribute or extra key) or from a plain dict."""
    if isinstance(entry, Mapping):
        return entry.get(camel, entry.get(snake, default))
    value = getattr(entry, snake, None)
    if value is not None:
        return value
    extra = getattr(entry, "model_extra", None) or {}
    return extra.get(camel, extra.get(snake, default))


def spec_from_entry(name: str, entry: Any) -> ServerSpec:
    """A `ServerSpec` from one `tools.mcpServers` entry (a config model or a dict); McpSpecError if unusable."""
    command = str(_field(entry, "command", "command", "") or "")
    url = str(_field(entry, "url", "url", "") or "")
    transport = infer_transport(_field(entry, "type", "type", None), command, url)
    args = _field(entry, "args", "args", []) or []
    env = _field(entry, "env", "env", {}) or {}
    headers = _field(entry, "headers", "headers", {}) or {}
    if not isinstance(args, list) or not isinstance(env, Mapping) or not isinstance(headers, Mapping):
        raise McpSpecError(f"MCP server '{name}': args must be a list, env and headers objects")
    timeout = _field(entry, "tool_timeout", "toolTimeout", DEFAULT_TOOL_TIMEOUT_S)
    try:
        timeout_s = float(timeout)
    except (TypeError, ValueError):
        raise McpSpecError(f"MCP server '{name}': toolTimeout must be a number of seconds, not {timeout!r}") from None
    enabled = _field(entry, "enabled_tools", "enabledTools", ["*"])
    if not isinstance(enabled, list):
        enabled = ["*"]
    return ServerSpec(
        name=name, transport=transport, command=command, args=tuple(str(a) for a in args),
        env=tuple(sorted((str(k), str(v)) for k, v in env.items())),
        cwd=str(_field(entry, "cwd", "cwd", "") or ""), url=url,
        headers=tuple(sorted((str(k), str(v)) for k, v in headers.items())),
        tool_timeout_s=timeout_s if timeout_s > 0 else DEFAULT_TOOL_TIMEOUT_S,
        enabled_tools=tuple(str(t) for t in enabled),
    )


def check_server_name(name: str) -> str:
    """Server names become part of tool names, which model APIs restrict to letters, digits, _ and -."""
    name = name.strip()
    if not name or not _NAME_RE.match(name):
        raise McpSpecError(f"server name {name!r} may only contain letters, digits, '_' and '-'")
    return name


def entry_from_fields(transport: str, *, command: str = "", args: list[str] | None = None,
                      env: Mapping[str, str] | None = None, url: str = "",
                      headers: Mapping[str, str] | None = None, tool_timeout: int | None = None,
                      base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The camelCase config entry for an edited server; keys of `base` we do not edit (e.g. enabledTools) stay."""
    entry = {k: v for k, v in (base or {}).items()
             if k not in ("type", "command", "args", "env", "url", "headers")}
    entry["type"] = infer_transport(transport, command, url)
    if entry["type"] == "stdio":
        if not command.strip():
            raise McpSpecError("a stdio server needs a command")
        entry.update(command=command.strip(), args=list(args or []), env=dict(env or {}))
    else:
        if not re.match(r"^https?://", url.strip()):
            raise McpSpecError(f"the URL must start with http:// or https:// (got {url!r})")
        entry.update(url=url.strip(), headers=dict(headers or {}))
    if tool_timeout is not None:
        entry["toolTimeout"] = int(tool_timeout)
    return entry


def _normalise_pasted(name: str, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise McpSpecError(f"server {name!r} must be a JSON object")
    entry: dict[str, Any] = {}
    for key, value in raw.items():
        camel = {"tool_timeout": "toolTimeout", "enabled_tools": "enabledTools"}.get(str(key), str(key))
        entry[camel] = value
    kind = entry.get("type") or entry.get("transport")
    entry.pop("transport", None)
    entry.pop("disabled", None)  # other apps' own switch; ours lives in the app's settings
    if kind:
        entry["type"] = infer_transport(str(kind), str(entry.get("command", "")), str(entry.get("url", "")))
    elif "serverUrl" in entry and "url" not in entry:
        entry["url"] = entry.pop("serverUrl")
    spec_from_entry(name, entry)  # raises on anything unusable
    if infer_transport(entry.get("type"), str(entry.get("command", "")), str(entry.get("url", ""))) is None:
        raise McpSpecError(f"server {name!r} has neither a command nor a url")
    return entry


def parse_pasted_servers(text: str) -> dict[str, dict[str, Any]]:
    """Servers from pasted JSON: `{"mcpServers": {...}}`, `{"tools": {"mcpServers": ...}}`, or the inner mapping."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpSpecError(f"not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise McpSpecError("expected a JSON object like {\"mcpServers\": {\"name\": {...}}}")
    if isinstance(data.get("tools"), dict) and "mcpServers" in data["tools"]:
        data = data["tools"]
    servers = data.get("mcpServers", data.get("mcp_servers", data.get("servers", data)))
    if not isinstance(servers, dict) or not servers:
        raise McpSpecError("no servers found: expected {\"mcpServers\": {\"name\": {...}}}")
    if any(key in servers for key in ("command", "url")):
        raise McpSpecError("give the server a name: {\"mcpServers\": {\"name\": {\"command\": ...}}}")
    return {check_server_name(name): _normalise_pasted(name, raw) for name, raw in servers.items()}
