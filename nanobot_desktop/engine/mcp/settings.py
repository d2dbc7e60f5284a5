"""Changing the MCP servers from the app: every change is a new config handed to `Engine.apply_config`,
which saves it and reconfigures the live servers (no restart).

`tools.mcpServers` stays in the CLI's shape (camelCase keys, only keys the CLI knows or ignores), so a
config the app wrote still loads in nanobot 0.1.4.post4. What only the app knows — which servers are
switched off here, allow/ask/deny per server or tool — goes through the app's own settings
(`desktop.mcpDisabled`, `tools.approval`) like every other app-only choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from nanobot_desktop.engine.config import Config, McpServerConfig
from nanobot_desktop.engine.mcp.spec import (
    McpSpecError,
    check_server_name,
    server_key,
    spec_from_entry,
)
from nanobot_desktop.engine.tools.policy import DECISIONS


class _Engine(Protocol):
    config: Config

    def apply_config(self, config: Config, *, save: bool = True) -> None: ...


def server_entry(config: Config, name: str) -> dict[str, Any]:
    """One server's config entry as camelCase JSON (what the edit form and the JSON view show)."""
    server = config.tools.mcp_servers[name]
    return server.model_dump(mode="json", by_alias=True)


def save_server(engine: _Engine, name: str, entry: Mapping[str, Any], *, previous: str | None = None) -> None:
    """Add or replace a server (renamed from `previous` when given); McpSpecError on a bad entry."""
    name = check_server_name(name)
    spec_from_entry(name, dict(entry))  # refuse what could never start, before anything is written
    config = engine.config.model_copy(deep=True)
    servers = config.tools.mcp_servers
    if previous is not None and previous != name:
        if name in servers:
            raise McpSpecError(f"a server named '{name}' already exists")
        servers.pop(previous, None)
        config.desktop.mcp_disabled = [n for n in config.desktop.mcp_disabled if n != previous]
    servers[name] = McpServerConfig.model_validate(dict(entry))
    engine.apply_config(config)


def add_servers(engine: _Engine, entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Import several servers at once (pasted JSON); refuses names that exist. Returns the names added."""
    config = engine.config.model_copy(deep=True)
    taken = [name for name in entries if name in config.tools.mcp_servers]
    if taken:
        raise McpSpecError("already configured: " + ", ".join(taken) + " (remove or rename them first)")
    for name, entry in entries.items():
        config.tools.mcp_servers[check_server_name(name)] = McpServerConfig.model_validate(dict(entry))
    engine.apply_config(config)
    return list(entries)


def remove_server(engine: _Engine, name: str) -> None:
    """Remove a server, its switch and its policy entries (its process is stopped)."""
    config = engine.config.model_copy(deep=True)
    config.tools.mcp_servers.pop(name, None)
    config.desktop.mcp_disabled = [n for n in config.desktop.mcp_disabled if n != name]
    prefix = server_key(name)[:-1]
    config.tools.approval = {k: v for k, v in config.tools.approval.items() if not k.startswith(prefix)}
    engine.apply_config(config)


def set_server_enabled(engine: _Engine, name: str, enabled: bool) -> None:
    """Switch a server on or off in the app (the CLI's config entry is left as it is)."""
    config = engine.config.model_copy(deep=True)
    disabled = [n for n in config.desktop.mcp_disabled if n != name]
    if not enabled:
        disabled.append(name)
    config.desktop.mcp_disabled = disabled
    engine.apply_config(config)


def set_decision(engine: _Engine, key: str, decision: str | None) -> None:
    """allow / ask / deny for one tool (`mcp_<server>_<tool>`) or a whole server (`server_key(name)`);
    None returns to the default (a tool follows its server, a server asks)."""
    if decision is not None and decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    config = engine.config.model_copy(deep=True)
    approval = dict(config.tools.approval)
    if decision is None:
        approval.pop(key, None)
    else:
        approval[key] = decision  # type: ignore[assignment]
    config.tools.approval = approval
    engine.apply_config(config)


__all__ = ["add_servers", "remove_server", "save_server", "server_entry", "server_key", "set_decision",
           "set_server_enabled"]
