"""MCP servers (`tools.mcpServers`): connections on the official SDK, their tools, their states.

Importing this package does not import the SDK; that happens when the first server starts.
"""

from nanobot_desktop.engine.mcp import settings as mcp_settings
from nanobot_desktop.engine.mcp.manager import (
    MAX_RESTARTS,
    McpManager,
    McpServersChanged,
    McpTool,
)
from nanobot_desktop.engine.mcp.server import ServerStatus, ToolInfo
from nanobot_desktop.engine.mcp.spec import (
    McpSpecError,
    ServerSpec,
    check_server_name,
    entry_from_fields,
    infer_transport,
    parse_pasted_servers,
    server_key,
    spec_from_entry,
    tool_name_for,
)

__all__ = [
    "MAX_RESTARTS", "mcp_settings", "McpManager", "McpServersChanged", "McpSpecError", "McpTool", "ServerSpec", "ServerStatus",
    "ToolInfo", "check_server_name", "entry_from_fields", "infer_transport", "parse_pasted_servers", "server_key",
    "spec_from_entry", "tool_name_for",
]
