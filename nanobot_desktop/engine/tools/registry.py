"""The set of tools the model may call, and the checks every call goes through before a tool runs.

Models often send `"5"` for an integer or `"true"` for a boolean, so arguments get a few safe casts
first; then they are validated against the tool's JSON schema, and every problem comes back to the
model as text it can act on (never as an exception that would end the turn).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nanobot_desktop.engine.events import ToolStatus
from nanobot_desktop.engine.tools.base import ERROR_HINT, Tool, ToolContext, ToolResult, failed

if TYPE_CHECKING:
    from nanobot_desktop.engine.config import AppSettings, ToolsConfig

SUBAGENT_TOOL_NAMES = ("read_file", "write_file", "edit_file", "list_dir", "exec", "web_search", "web_fetch")

_TRUE_STRINGS = frozenset({"true", "1", "yes"})
_FALSE_STRINGS = frozenset({"false", "0", "no"})
_NO_CAST = object()  # "no safe conversion": distinct from every value a cast could produce


# --------------------------------------------------------------------------------------------- casting

def _types_of(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return [declared] if isinstance(declared, str) else []


def _cast_value(schema: dict[str, Any], value: Any) -> Any:
    if value is None or not isinstance(schema, dict):
        return value
    types = _types_of(schema)
    if any(_matches_type(t, value) for t in types):
        if isinstance(value, dict) and "object" in types:
            return cast_params(schema, value)
        if isinstance(value, list) and "array" in types:
            items = schema.get("items")
            return [_cast_value(items, item) for item in value] if isinstance(items, dict) else value
        return value
    for target in types:
        cast = _cast_to(target, value)
        if cast is not _NO_CAST:
            return cast
    return value


def _cast_to(target: str, value: Any) -> Any:
    """One safe conversion of `value` to JSON type `target`, or _NO_CAST when there is none."""
    if target == "integer":
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                return _NO_CAST
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif target == "number":
        if isinstance(value, str):
            text = value.strip()
            for parse in (int, float):
                try:
                    number = parse(text)
                except ValueError:
                    continue
                if isinstance(number, float) and (number != number or number in (float("inf"), float("-inf"))):
                    return _NO_CAST
                return number
    elif target == "boolean":
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in _TRUE_STRINGS:
                return True
            if lowered in _FALSE_STRINGS:
                return False
    elif target == "string":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    return _NO_CAST


def cast_params(schema: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of `params` with safe casts applied per the object `schema` (unknown keys kept as-is)."""
    if not isinstance(params, dict):
        return params
    properties = schema.get("properties") or {}
    return {key: _cast_value(properties[key], value) if key in properties else value
            for key, value in params.items()}


# ------------------------------------------------------------------------------------------ validation

def _matches_type(json_type: str, value: Any) -> bool:
    if json_type == "string":
        return isinstance(value, str)
    if json_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if json_type == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if json_type == "boolean":
        return isinstance(value, bool)
    if json_type == "array":
        return isinstance(value, list)
    if json_type == "object":
        return isinstance(value, dict)
    if json_type == "null":
        return value is None
    return True  # an unknown type name constrains nothing


def _validate_value(schema: dict[str, Any], value: Any, label: str) -> list[str]:
    types = _types_of(schema)
    if types and not any(_matches_type(t, value) for t in types):
        return [f"{label} should be {' or '.join(types)} (got {type(value).__name__})"]
    errors: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{label} must be one of {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{label} must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{label} must be <= {schema['maximum']}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{label} must be at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{label} must be at most {schema['maxLength']} characters")
    if isinstance(value, dict) and ("properties" in schema or "required" in schema):
        errors.extend(validate_params(schema, value, _prefix=f"{label}."))
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            errors.extend(_validate_value(schema["items"], item, f"{label}[{index}]"))
    return errors


def validate_params(schema: dict[str, Any], params: dict[str, Any], *, _prefix: str = "") -> list[str]:
    """Every way `params` breaks the object `schema`, as short readable texts; [] when valid."""
    if not isinstance(params, dict):
        return [f"{_prefix.rstrip('.') or 'parameters'} should be object (got {type(params).__name__})"]
    errors = [f"missing required {_prefix}{name}" for name in schema.get("required", []) if name not in params]
    properties = schema.get("properties") or {}
    for key, value in params.items():
        if key in properties and isinstance(properties[key], dict):
            errors.extend(_validate_value(properties[key], value, f"{_prefix}{key}"))
    return errors


# ------------------------------------------------------------------------------------------- registry

@dataclass(frozen=True)
class PreparedCall:
    """A call whose arguments are cast, validated and reduced to what the tool accepts."""

    tool: Tool
    arguments: dict[str, Any]


def with_hint(result: ToolResult) -> ToolResult:
    """Tell the model to change course after an error (the original appends this to every error)."""
    if result.status is not ToolStatus.ERROR or result.text.endswith(ERROR_HINT):
        return result
    return replace(result, text=result.text + ERROR_HINT)


class ToolRegistry:
    """Tools by name; turns a model's tool call into a tool result text, never into an exception."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._definitions: list[dict[str, Any]] | None = None  # built once while the tools stay the same

    def register(self, tool: Tool) -> None:
        self._tools[tool.name] = tool
        self._definitions = None

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)
        self._definitions = None

    def configure(self, settings: ToolsConfig, app: AppSettings | None = None) -> None:
        """Hand every tool its settings from the config's `tools` section and desktop.json (see `Tool.configure`)."""
        for tool in self._tools.values():
            tool.configure(settings, app)
        self._definitions = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def get_definitions(self) -> list[dict[str, Any]]:
        """OpenAI function-tool schemas of every registered tool, in registration order.

        One list, shared by every model call while no tool is registered, removed or configured (read it,
        never change it): the inspector keeps each call's tools, and a new copy per call was ~1.5 kB a
        turn kept for the whole session (bench/long_session_memory.py)."""
        if self._definitions is None:
            self._definitions = [tool.to_schema() for tool in self._tools.values()]
        return self._definitions

    def prepare(self, name: str, params: Any) -> PreparedCall | ToolResult:
        """Cast and validate a call; the failed result (with hint) when it cannot run."""
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(self._tools) or "(none)"
            return with_hint(failed(f"Error: Tool '{name}' not found. Available: {available}"))
        if params is None:
            params = {}
        schema = tool.parameters or {}
        if not isinstance(params, dict):
            return with_hint(failed(f"Error: Invalid parameters for tool '{name}': parameters should be object "
                                    f"(got {type(params).__name__})"))
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        # A null for an optional parameter means "not given": the tool's default applies.
        params = {k: v for k, v in params.items() if v is not None or k in required or k not in properties}
        params = cast_params(schema, params)
        errors = validate_params(schema, params)
        if errors:
            return with_hint(failed(f"Error: Invalid parameters for tool '{name}': " + "; ".join(errors)))
        if properties and schema.get("additionalProperties") is not True:
            # Unknown keys are ignored, so they must not reach the tool as unexpected keyword arguments.
            params = {k: v for k, v in params.items() if k in properties}
        return PreparedCall(tool, params)

    async def execute(self, name: str, params: Any, ctx: ToolContext) -> str:
        """Run tool `name`; every failure becomes an `Error...` text. Cancellation propagates."""
        return (await self.run(name, params, ctx)).text

    async def run(self, name: str, params: Any, ctx: ToolContext) -> ToolResult:
        """As `execute`, keeping the files a tool returned besides its text (MCP images)."""
        prepared = self.prepare(name, params)
        if isinstance(prepared, ToolResult):
            return prepared
        try:
            result = await prepared.tool.execute(ctx, **prepared.arguments)
        except Exception as exc:  # noqa: BLE001 - CancelledError is a BaseException and passes through
            return with_hint(failed(f"Error executing {name}: {exc}"))
        return with_hint(ToolResult.of(result if isinstance(result, (str, ToolResult)) else str(result)))


def build_default_registry(
    exec_timeout_s: int = 60,
    path_append: str = "",
    web_search_api_key: str = "",
    web_max_results: int = 5,
    web_proxy: str | None = None,
    exec_sandbox_always: bool = False,
    exec_network: bool = True,
    config_path: Path | None = None,
) -> ToolRegistry:
    """The tools every agent gets (cron is added by the loop when a cron service exists)."""
    from nanobot_desktop.engine.tools.filesystem import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
    from nanobot_desktop.engine.tools.message import MessageTool
    from nanobot_desktop.engine.tools.shell import ExecTool
    from nanobot_desktop.engine.tools.spawn import SpawnTool
    from nanobot_desktop.engine.tools.web import WebFetchTool, WebSearchTool

    registry = ToolRegistry()
    for tool in (
        ReadFileTool(),
        WriteFileTool(),
        EditFileTool(),
        ListDirTool(),
        ExecTool(timeout_s=exec_timeout_s, path_append=path_append, sandbox_always=exec_sandbox_always,
                 network=exec_network, config_path=config_path),
        WebSearchTool(api_key=web_search_api_key, max_results=web_max_results, proxy=web_proxy),
        WebFetchTool(proxy=web_proxy),
        MessageTool(),
        SpawnTool(),
    ):
        registry.register(tool)
    return registry
