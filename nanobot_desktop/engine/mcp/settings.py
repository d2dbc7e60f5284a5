"""Changing the MCP servers from the app: every change is one patch through `Engine.update_config`,
which saves it and reconfigures the live servers (no restart).

`tools.mcpServers` stays in config.json in the CLI's shape (camelCase keys, only keys the CLI knows or
ignores), so a config the app wrote still loads in nanobot 0.1.4.post4 and 0.3.x. What only the app
knows — which servers are switched off here (`mcpDisabled`), allow / ask / deny per server or tool
(`toolApproval`) — goes to the app's own desktop.json ("app." paths), like every other app-only choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from nanobot_desktop.engine.config import DELETE, AppSettings, Config
from nanobot_desktop.engine.mcp.spec import McpSpecError, check_server_name, server_key, spec_from_entry
from nanobot_desktop.engine.tools.policy import DECISIONS


class _Engine(Protocol):
    config: Config
    app_settings: AppSettings

    def update_config(self, patch: Mapping[str, Any]) -> tuple[str, ...]: ...


def _path(name: str) -> str:
    if "." in name:  # a dotted settings path cannot name it; such a server is edited in config.json
        raise McpSpecError(f"the server name '{name}' contains '.': edit it in config.json")
    return f"tools.mcpServers.{name}"


def server_entry(config: Config, name: str) -> dict[str, Any]:
    """One server's config entry as camelCase JSON (what the edit form and the JSON view show)."""
    server = config.tools.mcp_servers[name]
    return server.model_dump(mode="json", by_alias=True)


def _without(names: list[str], name: str) -> list[str]:
    return [n for n in names if n != name]


def save_server(engine: _Engine, name: str, entry: Mapping[str, Any], *, previous: str | None = None) -> None:
    """Add or replace a server (renamed from `previous` when given); McpSpecError on a bad entry,
    ConfigError when the config would not validate (nothing is written then)."""
    name = check_server_name(name)
    spec_from_entry(name, dict(entry))  # refuse what could never start, before anything is written
    patch: dict[str, Any] = {_path(name): dict(entry)}
    if previous is not None and previous != name:
        if name in engine.config.tools.mcp_servers:
            raise McpSpecError(f"a server named '{name}' already exists")
        patch[_path(previous)] = DELETE
        if previous in engine.app_settings.mcp_disabled:
            patch["app.mcpDisabled"] = _without(engine.app_settings.mcp_disabled, previous)
    engine.update_config(patch)


def add_servers(engine: _Engine, entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Import several servers at once (pasted JSON); refuses names that exist. Returns the names added."""
    taken = [name for name in entries if name in engine.config.tools.mcp_servers]
    if taken:
        raise McpSpecError("already configured: " + ", ".join(taken) + " (remove or rename them first)")
    engine.update_config({_path(check_server_name(name)): dict(entry) for name, entry in entries.items()})
    return list(entries)


def remove_server(engine: _Engine, name: str) -> None:
    """Remove a server, its switch and its policy entries (its process is stopped)."""
    prefix = server_key(name)[:-1]
    approval = {k: v for k, v in engine.app_settings.tool_approval.items() if not k.startswith(prefix)}
    patch: dict[str, Any] = {_path(name): DELETE}
    if approval != engine.app_settings.tool_approval:
        patch["app.toolApproval"] = approval
    if name in engine.app_settings.mcp_disabled:
        patch["app.mcpDisabled"] = _without(engine.app_settings.mcp_disabled, name)
    engine.update_config(patch)


def set_server_enabled(engine: _Engine, name: str, enabled: bool) -> None:
    """Switch a server on or off in the app (the CLI's config entry is left as it is)."""
    disabled = _without(engine.app_settings.mcp_disabled, name)
    engine.update_config({"app.mcpDisabled": disabled if enabled else [*disabled, name]})


def set_decision(engine: _Engine, key: str, decision: str | None) -> None:
    """allow / ask / deny for one tool (`mcp_<server>_<tool>`) or a whole server (`server_key(name)`);
    None returns to the default (a tool follows its server, a server asks)."""
    if decision is not None and decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    approval: dict[str, Any] = dict(engine.app_settings.tool_approval)
    if decision is None:
        approval.pop(key, None)
    else:
        approval[key] = decision
    engine.update_config({"app.toolApproval": approval})


__all__ = ["add_servers", "remove_server", "save_server", "server_entry", "server_key", "set_decision",
           "set_server_enabled"]
