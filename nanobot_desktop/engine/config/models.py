"""Typed models of the two settings files: config.json (shared with the nanobot CLI) and desktop.json.

`Config` declares only keys nanobot 0.1.4.post4 knows, so a config the app creates is one the CLI
loads without a word. Keys the app does not know (a newer nanobot's, a person's) are kept as extras.
`null` — which nanobot 0.3.x writes for every unset key, base and header — reads as "not set".
Everything only the app uses lives in `AppSettings` (desktop.json), never in config.json.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, PlainSerializer, PrivateAttr, SecretStr,
                      SerializationInfo, field_validator)
from pydantic.alias_generators import to_camel

DEFAULT_TOOL_APPROVAL: dict[str, str] = {"exec": "ask", "write_file": "ask", "edit_file": "ask"}
ApprovalPolicy = Literal["allow", "ask", "deny"]
# Keys whose values are never shown (the end of the name: "bridgeToken" yes, "maxTokens" no).
SECRET_KEY = re.compile(r"(key|token|secret|password|authorization|cookie)$", re.IGNORECASE)


def _serialize_secret(value: SecretStr, info: SerializationInfo) -> str:
    """Masked everywhere except when the writer asks for the real value."""
    if info.context and info.context.get("reveal_secrets"):
        return value.get_secret_value()
    return str(value)


Secret = Annotated[SecretStr, PlainSerializer(_serialize_secret, return_type=str)]


def _redact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "**********" if isinstance(k, str) and SECRET_KEY.search(k) and v else _redact(v)
                for k, v in value.items()}
    return value


def _none_is_empty(value: Any) -> Any:
    return "" if value is None else value


class _Base(BaseModel):
    """camelCase and snake_case both load; unknown keys are kept at every level."""

    # defer_build: a model's validator is built when it is first used, not at import (start-up is
    # measured); a headless turn then builds only the models its files need.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow",
                              validate_assignment=True, defer_build=True)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:  # free-form blocks must not leak into logs
        for name, value in super().__repr_args__():
            if isinstance(value, str) and value and name and SECRET_KEY.search(name):
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

    _null_key = field_validator("api_key", mode="before")(_none_is_empty)


class ProvidersConfig(_Base):
    """The providers nanobot 0.1.4.post4 knows; others (0.3.x's ollama, lmStudio, …) stay as extras."""

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

    @field_validator("*", mode="before")
    @classmethod
    def _null_block(cls, value: Any) -> Any:
        return {} if value is None else value


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

    _null_key = field_validator("api_key", mode="before")(_none_is_empty)


class WebToolsConfig(_Base):
    proxy: str | None = None
    search: WebSearchConfig = Field(default_factory=WebSearchConfig)


class ExecToolConfig(_Base):
    timeout: int = 60
    path_append: str = ""

    _null_path = field_validator("path_append", mode="before")(_none_is_empty)


class McpServerConfig(_Base):
    type: str | None = None  # stdio | sse | streamableHttp (None: guessed from command/url)
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    tool_timeout: int = 30

    @field_validator("command", "url", mode="before")
    @classmethod
    def _null_text(cls, value: Any) -> Any:
        return _none_is_empty(value)

    @field_validator("args", "env", "headers", mode="before")
    @classmethod
    def _null_collection(cls, value: Any, info: Any) -> Any:
        if value is None:
            return [] if info.field_name == "args" else {}
        return value


class ToolsConfig(_Base):
    web: WebToolsConfig = Field(default_factory=WebToolsConfig)
    exec: ExecToolConfig = Field(default_factory=ExecToolConfig)
    restrict_to_workspace: bool = False
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)


class Config(_Base):
    """config.json as nanobot 0.1.4.post4 defines it (plus whatever else the file holds)."""

    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    channels: ChannelsConfig = Field(default_factory=ChannelsConfig)
    providers: ProvidersConfig = Field(default_factory=ProvidersConfig)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)

    _source_path: Path | None = PrivateAttr(default=None)

    @property
    def source_path(self) -> Path | None:
        """The file this config was loaded from (or would have been: a missing file gives defaults)."""
        return self._source_path

    @property
    def workspace_path(self) -> Path:
        """The workspace folder, `~` expanded; not created here (the workspace module does that)."""
        return Path(self.agents.defaults.workspace).expanduser()


class ExecLimits(_Base):
    """Bounds of one sandboxed exec call (engine/tools/sandbox.py ResourceLimits; 0: no bound)."""

    memory_mb: int = Field(default=2048, ge=0)
    processes: int = Field(default=256, ge=0)
    open_files: int = Field(default=1024, ge=0)
    cpu_s: int = Field(default=300, ge=0)
    file_size_mb: int = Field(default=1024, ge=0)


class LocalServer(_Base):
    """A local OpenAI-compatible server the user chose (Ollama, LM Studio, …): for labels only."""

    kind: str = "custom"
    api_base: str = ""


class UsagePrice(_Base):
    """A model's price in US dollars per million tokens (the Usage page's table; engine/usage/prices.py).
    A cache price left out bills those tokens as ordinary input."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)


class UsageBudget(_Base):
    """Optional spending limits in US dollars; at 100 % background work waits (engine/usage/recorder.py)."""

    daily: float | None = Field(default=None, gt=0)
    monthly: float | None = Field(default=None, gt=0)


class AppSettings(_Base):
    """desktop.json: what only the desktop app uses. The CLI never reads this file."""

    theme: Literal["system", "light", "dark"] = "system"
    language: Literal["system", "en", "zh_CN"] = "system"  # the UI's; applies at the next start
    close_to_tray: bool = True
    # A desktop without a tray: the answer to "keep running in the background?" (None: not asked yet).
    # Apart from close_to_tray, so answering Quit there leaves close-to-tray on for desktops that have one.
    keep_running_without_tray: bool | None = None
    start_at_login: bool = False
    check_for_updates: bool = False  # the daily update check (gui/window/updates.py): off until the person turns it on
    notifications: bool = True
    # Accessibility (README "Accessibility"): the UI's text size in percent of the system font, what is
    # announced to screen readers, and a high-contrast palette ("system" follows the OS's preference).
    text_size: int = Field(default=100, ge=50, le=250)
    announcements: Literal["all", "important", "off"] = "all"
    high_contrast: Literal["system", "on", "off"] = "system"
    tool_approval: dict[str, ApprovalPolicy] = Field(default_factory=dict)  # unset means "allow"
    disabled_skills: list[str] = Field(default_factory=list)
    local_servers: dict[str, LocalServer] = Field(default_factory=dict)  # provider entry -> what it is
    exec_sandbox_always: bool = False  # OS sandbox for exec even with tools.restrictToWorkspace off
    exec_network: bool = True  # may sandboxed commands reach the network
    exec_limits: ExecLimits = Field(default_factory=ExecLimits)  # per sandboxed call
    # Networks web_fetch may reach although they are not public (loopback, LAN, link-local): none by default.
    web_fetch_allowed_networks: list[str] = Field(default_factory=list)
    mcp_disabled: list[str] = Field(default_factory=list)  # MCP servers switched off here (the CLI still runs them)
    # the same as tool_approval, for tool calls of background work (heartbeat, cron jobs, subagents)
    background_tool_approval: dict[str, ApprovalPolicy] = Field(default_factory=dict)
    background_approval_expiry_s: float = Field(default=1800, gt=0)  # an unanswered background ask then denies
    missed_runs: dict[str, Literal["run_once", "skip"]] = Field(default_factory=dict)  # cron job id -> rule
    # Seconds before a model call is given up: nothing at all arrived / the stream stopped progressing.
    model_first_byte_timeout: float = Field(default=45.0, gt=0)
    model_idle_timeout: float = Field(default=30.0, gt=0)
    usage_prices: dict[str, UsagePrice] = Field(default_factory=dict)  # model -> the person's price (over the defaults)
    usage_budget: UsageBudget = Field(default_factory=UsageBudget)
    # A server on this machine or the local network is waited for as long as it works on the prompt
    # (no first-byte give-up); False: it is given up on like a remote one.
    model_wait_for_local: bool = True
    # The model's context window in tokens as set here; 0: as the server says (engine/llm/context_window.py)
    model_context_window: int = Field(default=0, ge=0, le=10_000_000)

    _source_path: Path | None = PrivateAttr(default=None)

    @property
    def source_path(self) -> Path | None:
        return self._source_path

    def tool_approval_for(self, name: str) -> str:
        """The configured policy for a tool; "allow" when none is set (defaults are applied elsewhere)."""
        return self.tool_approval.get(name, "allow")
