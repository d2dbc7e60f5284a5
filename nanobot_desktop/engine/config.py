"""config.json of nanobot 0.1.4.post4: typed models, loading, saving, env overrides, provider choice.

The same file is read by the nanobot CLI, so this module is careful in ways the original is not:
invalid JSON or values raise `ConfigError` (one line: file, where, what) instead of silently turning
into defaults, unknown keys (a newer nanobot's, or a person's) are kept when saving, and values that
came only from `NANOBOT_*` environment variables are never written into the file.
"""

from __future__ import annotations

import copy
import json
import os
import re
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (BaseModel, ConfigDict, Field, PlainSerializer, PrivateAttr, SecretStr, model_serializer,
                      SerializationInfo, ValidationError)
from pydantic.alias_generators import to_camel

from nanobot_desktop.engine.workspace import atomic_write_text

ENV_PREFIX = "NANOBOT_"
DEFAULT_TOOL_APPROVAL: dict[str, str] = {"exec": "ask", "write_file": "ask", "edit_file": "ask"}
ApprovalPolicy = Literal["allow", "ask", "deny"]
# Keys whose values are never shown (the end of the name: "bridgeToken" yes, "maxTokens" no).
_SECRET_KEY = re.compile(r"(key|token|secret|password|authorization|cookie)$", re.IGNORECASE)


class ConfigError(Exception):
    """A config problem a person can fix; `str()` is one line naming the file, where, and what."""

    def __init__(self, message: str, *, path: Path | None = None, line: int | None = None,
                 column: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.path, self.line, self.column, self.field = message, path, line, column, field


# ---------------------------------------------------------------------------------------- models


def _serialize_secret(value: SecretStr, info: SerializationInfo) -> str:
    """Masked everywhere except when `save_config` asks for the real value."""
    if info.context and info.context.get("reveal_secrets"):
        return value.get_secret_value()
    return str(value)


Secret = Annotated[SecretStr, PlainSerializer(_serialize_secret, return_type=str)]


def _redact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "**********" if isinstance(k, str) and _SECRET_KEY.search(k) and v else _redact(v)
                for k, v in value.items()}
    return value


class _Base(BaseModel):
    """camelCase and snake_case both load; unknown keys are kept (and saved back) at every level."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow",
                              validate_assignment=True)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:  # free-form blocks (channel tokens, MCP env) must not leak into logs
        for name, value in super().__repr_args__():
            if isinstance(value, str) and value and name and _SECRET_KEY.search(name):
                value = "**********"
            yield name, _redact(value)


class AgentDefaults(_Base):
    workspace: str = "~/.nanobot/workspace"
    model: str = "anthropic/claude-opus-4-5"
    provider: str = "auto"
    max_tokens: int = 8192
    temperature: float = 0.1
    max_tool_iterations: int = 40
    memory_window: int = 100
    reasoning_effort: str | None = None
    disabled_skills: list[str] = Field(default_factory=list)  # ours; 0.3.5 uses the same name


class AgentsConfig(_Base):
    defaults: AgentDefaults = Field(default_factory=AgentDefaults)


class ChannelsConfig(_Base):
    """Chat-app channels: the desktop app runs none, so each block (telegram, …) stays free-form."""

    send_progress: bool = True
    send_tool_hints: bool = False


class ProviderConfig(_Base):
    api_key: Secret = SecretStr("")
    api_base: str | None = None
    extra_headers: dict[str, str] | None = None


class ProvidersConfig(_Base):
    custom: ProviderConfig = Field(default_factory=ProviderConfig)
    azure_openai: ProviderConfig = Field(default_factory=ProviderConfig)
    anthropic: ProviderConfig = Field(default_factory=ProviderConfig)
    openai: ProviderConfig = Field(default_factory=ProviderConfig)
    openrouter: ProviderConfig = Field(default_factory=ProviderConfig)
    deepseek: ProviderConfig = Field(default_factory=ProviderConfig)
    groq: ProviderConfig = Field(default_factory=ProviderConfig)
    zhipu: ProviderConfig = Field(default_factory=ProviderConfig)
    dashscope: ProviderConfig = Field(default_factory=ProviderConfig)
    vllm: ProviderConfig = Field(default_factory=ProviderConfig)
    gemini: ProviderConfig = Field(default_factory=ProviderConfig)
    moonshot: ProviderConfig = Field(default_factory=ProviderConfig)
    minimax: ProviderConfig = Field(default_factory=ProviderConfig)
    aihubmix: ProviderConfig = Field(default_factory=ProviderConfig)
    siliconflow: ProviderConfig = Field(default_factory=ProviderConfig)
    volcengine: ProviderConfig = Field(default_factory=ProviderConfig)
    openai_codex: ProviderConfig = Field(default_factory=ProviderConfig)
    github_copilot: ProviderConfig = Field(default_factory=ProviderConfig)
    ollama: ProviderConfig = Field(default_factory=ProviderConfig)  # ours
    lmstudio: ProviderConfig = Field(default_factory=ProviderConfig)  # ours


class HeartbeatConfig(_Base):
    enabled: bool = True
    interval_s: int = 1800


class GatewayConfig(_Base):
    host: str = "0.0.0.0"
    port: int = 18790
    heartbeat: HeartbeatConfig = Field(default_factory=HeartbeatConfig)


class WebSearchConfig(_Base):
    api_key: Secret = SecretStr("")
    max_results: int = 5


class WebToolsConfig(_Base):
    proxy: str | None = None
    search: WebSearchConfig = Field(default_factory=WebSearchConfig)


class ExecToolConfig(_Base):
    timeout: int = 60
    path_append: str = ""
    sandbox_always: bool = False  # ours: OS sandbox even with restrictToWorkspace off
    network: bool = True  # ours: may sandboxed commands reach the network


class McpServerConfig(_Base):
    type: str | None = None  # stdio | sse | streamableHttp (None: guessed from command/url)
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    tool_timeout: int = 30


class ToolsConfig(_Base):
    web: WebToolsConfig = Field(default_factory=WebToolsConfig)
    exec: ExecToolConfig = Field(default_factory=ExecToolConfig)
    restrict_to_workspace: bool = False
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    approval: dict[str, ApprovalPolicy] = Field(default_factory=dict)  # ours; unset means "allow"


class DesktopConfig(_Base):
    """Ours: settings of the desktop app only (the CLI ignores this block)."""

    theme: Literal["system", "light", "dark"] = "system"
    close_to_tray: bool = True
    start_at_login: bool = False
    notifications: bool = True
    mcp_disabled: list[str] = Field(default_factory=list)  # MCP servers switched off in the app (not the CLI)

    @model_serializer(mode="wrap")
    def _leave_out_empty(self, handler: Any) -> Any:
        """`mcpDisabled` is written only when a server is switched off: no new key for everyone else."""
        data = handler(self)
        if isinstance(data, dict) and not self.mcp_disabled:
            data.pop("mcpDisabled", None)
            data.pop("mcp_disabled", None)
        return data


class Config(_Base):
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
    providers: ProvidersConfig = Field(default_factory=ProvidersConfig)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    desktop: DesktopConfig = Field(default_factory=DesktopConfig)

    _source_path: Path | None = PrivateAttr(default=None)
    _env_tree: dict[str, Any] = PrivateAttr(default_factory=dict)
    _env_only: list[tuple[tuple[str, ...], Any]] = PrivateAttr(default_factory=list)

    @property
    def source_path(self) -> Path | None:
        """The file this config was loaded from (or would have been: a missing file gives defaults)."""
        return self._source_path

    @property
    def workspace_path(self) -> Path:
        """The workspace folder, `~` expanded; not created here (the workspace module does that)."""
        return Path(self.agents.defaults.workspace).expanduser()

    def tool_approval(self, name: str) -> str:
        """The configured policy for a tool; "allow" when none is set (defaults are applied elsewhere)."""
        return self.tools.approval.get(name, "allow")


# ----------------------------------------------------------------------------------------- paths


def default_config_path() -> Path:
    return Path.home() / ".nanobot" / "config.json"


def data_dir(config_path: Path | None = None) -> Path:
    """Runtime data lives next to the config file, as in the original (cron/, logs/, media/)."""
    return Path(config_path or default_config_path()).expanduser().parent


def cron_store_path(config_path: Path | None = None) -> Path:
    return data_dir(config_path) / "cron" / "jobs.json"


def logs_dir(config_path: Path | None = None) -> Path:
    return data_dir(config_path) / "logs"


def _display(path: Path) -> str:
    try:
        return "~/" + path.expanduser().relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------- key names and type walking


def _unwrap(annotation: Any) -> Any:
    """`X | None` and `Annotated[X, …]` -> X, so walkers see the model/dict/list underneath."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            rest = [a for a in get_args(annotation) if a is not type(None)]
            if len(rest) != 1:
                return annotation
            annotation = rest[0]
        else:
            return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _find_field(model: type[BaseModel], key: str, any_case: bool = False) -> tuple[str, Any] | None:
    """(alias, annotation) of the field spelled `key` (snake or camel; any case for env names)."""
    for name, info in model.model_fields.items():
        alias = info.alias or name
        if key in (name, alias) or (any_case and key.lower() in (name.lower(), alias.lower())):
            return alias, info.annotation
    return None


def _normalise(data: Any, annotation: Any) -> Any:
    """Rename known snake_case keys to their camelCase alias (unknown keys untouched) so the env
    merge and the saved file speak one spelling. If both spellings are present, both are kept."""
    annotation = _unwrap(annotation)
    if not isinstance(data, dict):
        return data
    if _is_model(annotation):
        out: dict[str, Any] = {}
        for key, value in data.items():
            found = _find_field(annotation, key) if isinstance(key, str) else None
            if found and (key == found[0] or found[0] not in data):
                out[found[0]] = _normalise(value, found[1])
            else:
                out[key] = value
        return out
    if get_origin(annotation) is dict:
        value_type = get_args(annotation)[1]
        return {k: _normalise(v, value_type) for k, v in data.items()}
    return data


def _migrate(data: dict[str, Any]) -> None:
    """As the original: `tools.exec.restrictToWorkspace` moves up to `tools.restrictToWorkspace`."""
    tools = data.get("tools")
    exec_cfg = tools.get("exec") if isinstance(tools, dict) else None
    if not isinstance(tools, dict) or not isinstance(exec_cfg, dict):
        return
    for key in ("restrictToWorkspace", "restrict_to_workspace"):
        if key in exec_cfg and "restrictToWorkspace" not in tools and "restrict_to_workspace" not in tools:
            tools["restrictToWorkspace"] = exec_cfg.pop(key)


# ------------------------------------------------------------------------------ env overrides


def _env_value(name: str, raw: str, annotation: Any, free_form: bool) -> Any:
    annotation = _unwrap(annotation)
    structured = _is_model(annotation) or get_origin(annotation) in (dict, list) or annotation in (dict, list)
    if structured or (free_form and raw.lstrip()[:1] in ("{", "[")):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"environment variable {name}: not valid JSON ({exc.msg}, column {exc.colno})",
                              field=name) from None
    return raw


def _env_tree(environ: dict[str, str]) -> tuple[dict[str, Any], dict[tuple[str, ...], str]]:
    """NANOBOT_A__B__C=value -> {"a": {"b": {"c": value}}} with keys resolved to the file's spelling,
    and where each variable went (for error messages). Variables naming no known setting are
    ignored, as pydantic-settings does."""
    tree: dict[str, Any] = {}
    names: dict[tuple[str, ...], str] = {}
    for name in sorted(environ):
        if not name.upper().startswith(ENV_PREFIX):
            continue
        segments = name[len(ENV_PREFIX):].split("__")
        if not all(segments):
            continue
        keys: list[str] = []
        annotation: Any = Config
        free_form = False
        for segment in segments:
            annotation = _unwrap(annotation)
            if free_form:
                keys.append(to_camel(segment.lower()))
            elif _is_model(annotation):
                found = _find_field(annotation, segment, any_case=True)
                if found:
                    keys.append(found[0])
                    annotation = found[1]
                elif annotation is ChannelsConfig:  # channel blocks are free-form, camelCase inside
                    keys.append(to_camel(segment.lower()))
                    free_form, annotation = True, Any
                else:
                    break
            elif get_origin(annotation) is dict:
                keys.append(segment.lower())
                annotation = get_args(annotation)[1]
            else:
                break
        else:
            node = tree
            for key in keys[:-1]:
                node = node.setdefault(key, {}) if isinstance(node.get(key, {}), dict) else {}
            node[keys[-1]] = _env_value(name, environ[name], annotation, free_form)
            names[tuple(keys)] = name
    return _normalise(tree, Config), names


def _fill_missing(target: dict[str, Any], env: dict[str, Any], path: tuple[str, ...],
                  inserted: list[tuple[str, ...]]) -> None:
    """Values in the file win: env values only go where the file has no such key."""
    for key, value in env.items():
        if key not in target:
            target[key] = copy.deepcopy(value)
            inserted.append(path + (key,))
        elif isinstance(target[key], dict) and isinstance(value, dict):
            _fill_missing(target[key], value, path + (key,), inserted)


_MISSING = object()


def _get(tree: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return _MISSING
        tree = tree[key]
    return tree


def _env_leaves(value: Any, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _env_leaves(v, path + (k,))]
    return [path]


def _track_env_only(config: Config, file_data: dict[str, Any], env: dict[str, Any]) -> None:
    """Remember, as dumped now, what only the env supplied, so a save can leave it out: each env
    leaf the file lacked, and each block that would not exist without the env (an MCP server, …)."""
    config._env_tree, config._env_only = env, []
    if not env:
        return
    inserted: list[tuple[str, ...]] = []
    merged = copy.deepcopy(file_data)
    _fill_missing(merged, env, (), inserted)
    try:
        baseline = _dump(Config.model_validate(file_data))
    except ValidationError:
        baseline = {}
    leaves = [leaf for p in inserted for leaf in _env_leaves(_get(merged, p), p)]
    paths = [next(leaf[:i] for i in range(1, len(leaf) + 1) if _get(baseline, leaf[:i]) is _MISSING)
             for leaf in leaves if _get(baseline, leaf) is _MISSING] + leaves
    dump = _dump(config)
    config._env_only = [(p, copy.deepcopy(_get(dump, p))) for p in paths if _get(dump, p) is not _MISSING]


def _dump(config: Config) -> dict[str, Any]:
    return config.model_dump(mode="json", by_alias=True, context={"reveal_secrets": True})


# ----------------------------------------------------------------------------------- load / save


def _read_file(path: Path) -> dict[str, Any]:
    shown = _display(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot be read ({exc.strerror or exc})", path=path) from None
    try:
        text = raw.decode("utf-8-sig")  # a BOM (Windows Notepad) is tolerated
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{shown} line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                          f"{exc.start})", path=path, line=line) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{shown} line {exc.lineno}, column {exc.colno}: {exc.msg}", path=path,
                          line=exc.lineno, column=exc.colno) from None
    if not isinstance(data, dict):
        found = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(data), "a number")
        raise ConfigError(f"{shown}: the top level must be a JSON object {{…}}, found {found}", path=path)
    return data


def _validation_error(exc: ValidationError, path: Path, env_names: dict[tuple[str, ...], str]) -> ConfigError:
    """One line for the first problem; names the env variable when the bad value came from one."""
    errors = exc.errors()
    first = errors[0]
    loc = tuple(str(part) for part in first["loc"])
    dotted = ".".join(loc) or "(top level)"
    message = first["msg"]
    if first["type"] != "missing":
        shown_input = "…" if loc and _SECRET_KEY.search(loc[-1]) else json.dumps(first.get("input"), default=str)
        message += f" (got {shown_input[:80]})"
    source = _display(path)
    for env_path, name in sorted(env_names.items(), key=lambda item: -len(item[0])):
        if loc[: len(env_path)] == env_path:
            source = f"environment variable {name}"
            break
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return ConfigError(f"{source}: {dotted}: {message}{more}", path=path, field=dotted)


def load_config(path: Path | None = None, environ: dict[str, str] | None = None) -> Config:
    """Read config.json (missing -> defaults) with `NANOBOT_*` env vars filling keys the file lacks.
    Anything wrong raises ConfigError; the file is only ever read here."""
    path = Path(path).expanduser() if path is not None else default_config_path()
    file_data = _normalise(_read_file(path), Config) if path.exists() else {}
    _migrate(file_data)
    env, env_names = _env_tree(dict(os.environ if environ is None else environ))
    merged = copy.deepcopy(file_data)
    inserted: list[tuple[str, ...]] = []
    _fill_missing(merged, env, (), inserted)
    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:  # only env values that reached the model can be to blame
        used = {p: n for p, n in env_names.items() if any(p[: len(i)] == i for i in inserted)}
        raise _validation_error(exc, path, used) from None
    config._source_path = path
    _track_env_only(config, file_data, env)
    return config


def _drop(tree: dict[str, Any], path: tuple[str, ...]) -> None:
    parent = _get(tree, path[:-1])
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def save_config(config: Config, path: Path | None = None) -> None:
    """Write camelCase JSON (indent 2, UTF-8) atomically, keeping unknown keys and leaving out what
    only the environment supplied (unless it was changed since, e.g. in the settings dialog)."""
    path = Path(path).expanduser() if path is not None else (config.source_path or default_config_path())
    dump = _dump(config)
    for env_path, value_at_load in config._env_only:
        if _get(dump, env_path) == value_at_load:  # unchanged since loading: still the env's
            _drop(dump, env_path)
    atomic_write_text(path, json.dumps(dump, indent=2, ensure_ascii=False) + "\n")
    config._source_path = path
    _track_env_only(config, dump, config._env_tree)


# Provider choice lives in its own module; re-exported here because callers think of it as config.
from nanobot_desktop.engine.llm.registry import (  # noqa: E402  (needs the models above)
    PROVIDER_PRESETS,
    ProviderPreset,
    ResolvedProvider,
    resolve_provider,
)

__all__ = [
    "Config", "ConfigError", "DEFAULT_TOOL_APPROVAL", "PROVIDER_PRESETS", "ProviderPreset", "ResolvedProvider",
    "cron_store_path", "data_dir", "default_config_path", "load_config", "logs_dir", "resolve_provider", "save_config",
]
