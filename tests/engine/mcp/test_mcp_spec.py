"""MCP server entries: transport inference as the CLI does it, enabledTools, pasted JSON, and the policy
for MCP tools (ask by default; per server and per tool)."""

from __future__ import annotations

import pytest

from nanobot_desktop.engine.config import McpServerConfig
from nanobot_desktop.engine.mcp import (
    McpSpecError,
    entry_from_fields,
    parse_pasted_servers,
    spec_from_entry,
)
from nanobot_desktop.engine.mcp.spec import server_key, tool_name_for
from nanobot_desktop.engine.tools.policy import ToolPolicy


@pytest.mark.parametrize("entry, transport", [
    ({"command": "uvx", "args": ["mcp-server-time"]}, "stdio"),
    ({"url": "https://example.test/mcp"}, "streamableHttp"),
    ({"url": "https://example.test/sse/"}, "sse"),
    ({"type": "sse", "url": "https://example.test/mcp"}, "sse"),
    ({"type": "streamableHttp", "url": "https://example.test/sse"}, "streamableHttp"),
    ({}, None),
])
def test_transport_is_inferred_as_the_cli_does(entry, transport):
    assert spec_from_entry("s", entry).transport == transport


def test_config_model_entries_keep_the_newer_cli_keys():
    model = McpServerConfig.model_validate({"command": "x", "toolTimeout": 5, "enabledTools": ["a", "mcp_s_b"],
                                            "cwd": "/tmp"})
    spec = spec_from_entry("s", model)
    assert (spec.tool_timeout_s, spec.cwd) == (5, "/tmp")
    assert spec.offers("a") and spec.offers("b") and not spec.offers("c")
    assert model.model_dump(by_alias=True)["enabledTools"] == ["a", "mcp_s_b"]  # saved back untouched
    assert spec_from_entry("s", {"command": "x"}).offers("anything")


def test_bad_entries_say_what_to_fix():
    with pytest.raises(McpSpecError, match="unknown transport type 'websocket'"):
        spec_from_entry("s", {"type": "websocket", "url": "ws://x"})
    with pytest.raises(McpSpecError, match="toolTimeout must be a number"):
        spec_from_entry("s", {"command": "x", "toolTimeout": "soon"})
    with pytest.raises(McpSpecError, match="needs a command"):
        entry_from_fields("stdio", command=" ")
    with pytest.raises(McpSpecError, match="must start with http"):
        entry_from_fields("streamableHttp", url="example.test/mcp")


def test_pasted_json_in_the_common_shape():
    pasted = '''{"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"A": "1"}},
        "remote": {"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "Bearer x"}},
        "old": {"transport": "sse", "url": "https://example.test/events", "disabled": true}}}'''
    servers = parse_pasted_servers(pasted)
    assert servers["fs"] == {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                             "env": {"A": "1"}}
    assert servers["remote"]["type"] == "streamableHttp"
    assert servers["old"] == {"type": "sse", "url": "https://example.test/events"}
    assert list(parse_pasted_servers('{"time": {"command": "uvx", "args": ["mcp-server-time"]}}')) == ["time"]


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON: line 1"),
    ('{"mcpServers": {}}', "no servers found"),
    ('{"command": "npx"}', "give the server a name"),
    ('{"mcpServers": {"bad name": {"command": "x"}}}', "may only contain letters"),
    ('{"mcpServers": {"empty": {"env": {}}}}', "neither a command nor a url"),
])
def test_pasted_json_errors(text, message):
    with pytest.raises(McpSpecError, match=message):
        parse_pasted_servers(text)


def test_mcp_tools_ask_by_default_and_follow_their_server_then_their_own_setting():
    policy = ToolPolicy({})
    assert policy.decision_for("mcp_time_get_current_time") == "ask"
    assert policy.decision_for("read_file") == "allow" and policy.decision_for("exec") == "ask"
    policy.set(server_key("time"), "allow")
    assert policy.decision_for("mcp_time_get_current_time") == "allow"
    assert policy.decision_for("mcp_timer_start") == "ask"  # another server whose name starts the same
    policy.set("mcp_time_convert_time", "deny")
    assert policy.decision_for("mcp_time_convert_time") == "deny"
    policy.set(server_key("time_x"), "deny")  # a server named "time_x": the longer prefix wins for its tools
    assert policy.decision_for("mcp_time_x_go") == "deny" and policy.decision_for("mcp_time_get_current_time") == "allow"
    assert policy.clear(server_key("time")) == {"mcp_time_convert_time": "deny", "mcp_time_x_*": "deny"}
    assert policy.decision_for("mcp_time_get_current_time") == "ask"


def test_tool_names_are_safe_for_model_apis():
    assert tool_name_for("time", "get_current_time") == "mcp_time_get_current_time"
    assert tool_name_for("everything", "get-sum") == "mcp_everything_get-sum"
    assert tool_name_for("my.server", "files/read all") == "mcp_my_server_files_read_all"
    long = tool_name_for("s", "x" * 100)
    assert len(long) == 64 and long != tool_name_for("s", "x" * 99)
    assert server_key("my.server") == "mcp_my_server_*"
