"""Argument casting and validation tables, registry error texts, and the default tool set."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.config import ToolsConfig
from nanobot_desktop.engine.events import ToolStatus
from nanobot_desktop.engine.tools.base import ERROR_HINT, Tool, ToolContext, ToolResult, failed
from nanobot_desktop.engine.tools.shell import ExecTool
from nanobot_desktop.engine.tools.web import WebFetchTool, WebSearchTool
from nanobot_desktop.engine.tools.registry import (
    SUBAGENT_TOOL_NAMES,
    ToolRegistry,
    build_default_registry,
    cast_params,
    validate_params,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 2, "maxLength": 5},
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["fast", "full"]},
        "meta": {
            "type": "object",
            "properties": {"tag": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["tag"],
        },
        "items": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["query", "count"],
}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"count": "5"}, {"count": 5}),
        ({"count": " 7 "}, {"count": 7}),
        ({"count": 3.0}, {"count": 3}),
        ({"count": "abc"}, {"count": "abc"}),
        ({"count": "2.5"}, {"count": "2.5"}),
        ({"ratio": "2.5"}, {"ratio": 2.5}),
        ({"ratio": "5"}, {"ratio": 5}),
        ({"ratio": "nan"}, {"ratio": "nan"}),
        ({"flag": "true"}, {"flag": True}),
        ({"flag": "1"}, {"flag": True}),
        ({"flag": "Yes"}, {"flag": True}),
        ({"flag": "false"}, {"flag": False}),
        ({"flag": "0"}, {"flag": False}),
        ({"flag": "no"}, {"flag": False}),
        ({"flag": "maybe"}, {"flag": "maybe"}),
        ({"query": 42}, {"query": "42"}),
        ({"query": None}, {"query": None}),
        ({"count": None}, {"count": None}),
        ({"items": ["1", "2", 3]}, {"items": [1, 2, 3]}),
        ({"items": "1"}, {"items": "1"}),  # no auto-wrapping of a scalar into an array
        ({"items": 1}, {"items": 1}),
        ({"meta": {"tag": "x", "n": "4"}}, {"meta": {"tag": "x", "n": 4}}),
        ({"unknown": "5"}, {"unknown": "5"}),
    ],
)
def test_cast_params(given: dict[str, Any], expected: dict[str, Any]) -> None:
    assert cast_params(SCHEMA, given) == expected


def test_cast_params_does_not_mutate_input() -> None:
    given = {"count": "5", "meta": {"tag": "x", "n": "2"}}
    cast_params(SCHEMA, given)
    assert given == {"count": "5", "meta": {"tag": "x", "n": "2"}}


@pytest.mark.parametrize(
    ("params", "expected_errors"),
    [
        ({"query": "abc", "count": 3}, []),
        ({"query": "abc", "count": 3, "whatever": object()}, []),  # unknown keys ignored
        ({"count": 3}, ["missing required query"]),
        ({}, ["missing required query", "missing required count"]),
        ({"query": "abc", "count": "3"}, ["count should be integer (got str)"]),
        ({"query": "abc", "count": True}, ["count should be integer (got bool)"]),
        ({"query": "abc", "count": 3, "ratio": True}, ["ratio should be number (got bool)"]),
        ({"query": "abc", "count": 3, "ratio": 1}, []),
        ({"query": "abc", "count": 0}, ["count must be >= 1"]),
        ({"query": "abc", "count": 11}, ["count must be <= 10"]),
        ({"query": "a", "count": 3}, ["query must be at least 2 characters"]),
        ({"query": "abcdef", "count": 3}, ["query must be at most 5 characters"]),
        ({"query": "abc", "count": 3, "mode": "slow"}, ["mode must be one of ['fast', 'full']"]),
        ({"query": "abc", "count": 3, "flag": "yes"}, ["flag should be boolean (got str)"]),
        ({"query": "abc", "count": 3, "meta": {}}, ["missing required meta.tag"]),
        ({"query": "abc", "count": 3, "meta": {"tag": 1}}, ["meta.tag should be string (got int)"]),
        ({"query": "abc", "count": 3, "meta": "x"}, ["meta should be object (got str)"]),
        ({"query": "abc", "count": 3, "items": [1, "2"]}, ["items[1] should be integer (got str)"]),
        ({"query": "abc", "count": 3, "items": 1}, ["items should be array (got int)"]),
    ],
)
def test_validate_params(params: dict[str, Any], expected_errors: list[str]) -> None:
    assert validate_params(SCHEMA, params) == expected_errors


class EchoTool(Tool):
    name = "echo"
    description = "echo"
    parameters = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
        "required": ["text"],
    }

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def execute(self, ctx: ToolContext, text: str, times: int = 1) -> str:
        self.calls.append({"text": text, "times": times})
        return text * times


class BoomTool(Tool):
    name = "boom"
    description = "raises"
    parameters = {"type": "object", "properties": {}}

    async def execute(self, ctx: ToolContext, **kwargs: Any) -> str:
        raise RuntimeError("kaput")


class SaysErrorTool(Tool):
    name = "says_error"
    description = "returns an error text"
    parameters = {"type": "object", "properties": {}}

    async def execute(self, ctx: ToolContext, **kwargs: Any) -> str | ToolResult:
        return failed("Error: nope")


class ReadsErrorTool(Tool):
    """A tool whose successful result happens to start with "Error" (a file's first line, say)."""

    name = "reads_error"
    description = "returns a text that starts with Error"
    parameters = {"type": "object", "properties": {}}

    async def execute(self, ctx: ToolContext, **kwargs: Any) -> str:
        return "Error: nope"


class StatusTool(Tool):
    """Returns a result whose status its maker set, whatever its text says."""

    name = "status"
    description = "returns a result with a status"
    parameters = {"type": "object", "properties": {"fail": {"type": "boolean"}}}

    async def execute(self, ctx: ToolContext, fail: bool = False, **kwargs: Any) -> ToolResult:
        return failed("the server said no") if fail else ToolResult("Error rates are down 5% this week")


class BlockingTool(Tool):
    name = "block"
    description = "waits forever"
    parameters = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def execute(self, ctx: ToolContext, **kwargs: Any) -> str:
        self.started.set()
        await asyncio.Event().wait()
        return "unreachable"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


async def test_execute_casts_and_drops_unknown_keys(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    echo = EchoTool()
    registry.register(echo)
    assert await registry.execute("echo", {"text": "ab", "times": "2", "extra": 1}, ctx) == "abab"
    assert echo.calls == [{"text": "ab", "times": 2}]


async def test_null_for_optional_parameter_means_default(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    assert await registry.execute("echo", {"text": "x", "times": None}, ctx) == "x"


async def test_invalid_parameters_text_with_hint(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    result = await registry.execute("echo", {"times": 0}, ctx)
    assert result == ("Error: Invalid parameters for tool 'echo': missing required text; times must be >= 1"
                      + ERROR_HINT)
    not_object = await registry.execute("echo", ["x"], ctx)
    assert not_object.startswith("Error: Invalid parameters for tool 'echo': parameters should be object")


async def test_unknown_tool_lists_available(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    registry.register(BoomTool())
    assert await registry.execute("nope", {}, ctx) == "Error: Tool 'nope' not found. Available: echo, boom" + ERROR_HINT


async def test_exception_becomes_error_text(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(BoomTool())
    assert await registry.execute("boom", {}, ctx) == "Error executing boom: kaput" + ERROR_HINT


async def test_error_results_get_hint_once(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(SaysErrorTool())
    assert await registry.execute("says_error", {}, ctx) == "Error: nope" + ERROR_HINT


async def test_a_result_carries_the_status_its_maker_set(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    for tool in (StatusTool(), SaysErrorTool(), ReadsErrorTool(), BoomTool(), EchoTool()):
        registry.register(tool)
    failed_result = await registry.run("status", {"fail": True}, ctx)
    assert (failed_result.status, failed_result.text) == (ToolStatus.ERROR, "the server said no" + ERROR_HINT)
    # a result made as a success stays one, even when its text starts with "Error": no hint is added
    fine = await registry.run("status", {}, ctx)
    assert (fine.status, fine.text) == (ToolStatus.OK, "Error rates are down 5% this week")
    assert (await registry.run("boom", {}, ctx)).status is ToolStatus.ERROR
    assert (await registry.run("nope", {}, ctx)).status is ToolStatus.ERROR
    assert (await registry.run("echo", {"times": 0}, ctx)).status is ToolStatus.ERROR
    assert (await registry.run("echo", {"text": "Error"}, ctx)).status is ToolStatus.OK
    # a plain text is a success: a text that only starts with "Error" is what the tool read or said
    assert await registry.run("reads_error", {}, ctx) == ToolResult("Error: nope", status=ToolStatus.OK)
    assert (await registry.run("says_error", {}, ctx)).status is ToolStatus.ERROR


# Functions whose "Error: ..." text is not a tool's result but a piece its caller makes one of (with
# `failed(...)`, or as a denial in the tool runner).
TEXT_HELPERS = {"denial_text", "guard_command", "_revive", "_call_failure"}


def _says_error(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.startswith("Error")
    if isinstance(node, ast.JoinedStr) and node.values:
        return _says_error(node.values[0])
    return isinstance(node, ast.BinOp) and _says_error(node.left)


def test_every_failure_a_tool_makes_is_made_as_a_failed_result() -> None:
    """A plain text is a success, whatever it starts with; so a tool that fails must say so with
    `failed(...)` (or a ToolResult with its status), never with a text that merely starts with "Error"."""
    engine = Path(ToolRegistry.__module__.replace(".", "/")).parents[1]
    root = Path(__file__).resolve().parents[3]
    offenders = []
    for path in sorted([*(root / engine / "tools").glob("*.py"), *(root / engine / "mcp").glob("*.py"),
                        *(root / engine / "agent").glob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name in TEXT_HELPERS:
                continue
            offenders += [f"{path.name}:{node.lineno}" for node in ast.walk(function)
                          if isinstance(node, ast.Return) and node.value is not None and _says_error(node.value)]
    assert offenders == []


async def test_cancellation_is_not_swallowed(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    blocking = BlockingTool()
    registry.register(blocking)
    task = asyncio.create_task(registry.execute("block", {}, ctx))
    await blocking.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_register_unregister_and_definitions() -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    assert registry.names() == ["echo"]
    assert "echo" in registry and len(registry) == 1
    assert registry.get_definitions() == [{
        "type": "function",
        "function": {"name": "echo", "description": "echo", "parameters": EchoTool.parameters},
    }]
    assert registry.get_definitions() is registry.get_definitions()  # one object while the tools stay the same
    registry.unregister("echo")
    registry.unregister("echo")  # unregistering twice is harmless
    assert registry.names() == [] and registry.get("echo") is None
    assert registry.get_definitions() == []


def test_default_registry_has_the_post4_tools_without_cron() -> None:
    registry = build_default_registry()
    assert registry.names() == ["read_file", "write_file", "edit_file", "list_dir", "exec",
                                "web_search", "web_fetch", "message", "spawn"]
    assert set(SUBAGENT_TOOL_NAMES) <= set(registry.names())
    for definition in registry.get_definitions():
        params = definition["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])


def test_default_registry_passes_settings() -> None:
    registry = build_default_registry(exec_timeout_s=7, path_append="/opt/x", web_search_api_key="k",
                                      web_max_results=3, web_proxy="http://127.0.0.1:9")
    exec_tool = registry.get("exec")
    search = registry.get("web_search")
    assert (exec_tool.timeout_s, exec_tool.path_append) == (7, "/opt/x")  # type: ignore[union-attr]
    assert (search.api_key, search.max_results, search.proxy) == ("k", 3, "http://127.0.0.1:9")  # type: ignore[union-attr]
    assert registry.get("web_fetch").proxy == "http://127.0.0.1:9"  # type: ignore[union-attr]


def test_configure_hands_each_tool_its_settings_from_the_config() -> None:
    registry = build_default_registry()
    settings = ToolsConfig.model_validate({
        "exec": {"timeout": 9, "pathAppend": "/opt/y"},
        "web": {"proxy": "http://127.0.0.1:8", "search": {"apiKey": "secret-key", "maxResults": 4}},
    })
    registry.configure(settings)
    exec_tool, search, fetch = registry.get("exec"), registry.get("web_search"), registry.get("web_fetch")
    assert isinstance(exec_tool, ExecTool) and isinstance(search, WebSearchTool) and isinstance(fetch, WebFetchTool)
    assert (exec_tool.timeout_s, exec_tool.path_append) == (9, "/opt/y")
    assert (search.api_key, search.max_results, search.proxy) == ("secret-key", 4, "http://127.0.0.1:8")
    assert fetch.proxy == "http://127.0.0.1:8"
    registry.configure(ToolsConfig())  # a later config without them puts the defaults back
    assert (exec_tool.timeout_s, search.api_key, fetch.proxy) == (60, "", None)
