"""`Engine`: the one object the GUI and the CLI hold — every engine service, wired from the config.

It owns no state of its own beyond the wiring: files on disk stay the truth, and each service reads
them when it needs them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nanobot_desktop.engine.config import (
    Config,
    ConfigError,
    cron_store_path,
    default_config_path,
    load_config,
    logs_dir,
    resolve_provider,
    save_config,
)
from nanobot_desktop.engine.context import ContextBuilder
from nanobot_desktop.engine.cron import CronJob, CronService, cron_job_prompt
from nanobot_desktop.engine.events import EventBus
from nanobot_desktop.engine.heartbeat import HeartbeatService
from nanobot_desktop.engine.llm.types import ChatProvider
from nanobot_desktop.engine.loop import AgentLoop, AgentSettings
from nanobot_desktop.engine.memory import MemoryStore
from nanobot_desktop.engine.sessions.store import SessionStore
from nanobot_desktop.engine.skills import SkillsLoader
from nanobot_desktop.engine.subagents import SubagentManager
from nanobot_desktop.engine.tool_runner import ToolRunner
from nanobot_desktop.engine.tools.cron_tool import CronTool
from nanobot_desktop.engine.tools.policy import Approver, Decision, ToolPolicy
from nanobot_desktop.engine.tools.registry import build_default_registry
from nanobot_desktop.engine.workspace import Workspace

if TYPE_CHECKING:
    from nanobot_desktop.engine.mcp import McpManager

log = logging.getLogger(__name__)


class Engine:
    """Everything the agent needs, built from one config file and one workspace."""

    def __init__(self, config: Config, config_path: Path, workspace: Path | None = None) -> None:
        self.config = config
        self.config_path = config_path
        self.workspace = Workspace.at(workspace or config.workspace_path)
        self.workspace.sync_templates()
        self.bus = EventBus()
        self.approver: Approver | None = None
        self._provider: ChatProvider | None = None
        self._provider_key: tuple[Any, ...] | None = None
        self._services_started = False
        self._background: set[asyncio.Future[Any]] = set()

        defaults = config.agents.defaults
        self.sessions = SessionStore(self.workspace.sessions_dir)
        for moved in self.sessions.migrate_legacy_sessions():
            log.info("migrated legacy session file into the workspace: %s", moved.name)
        self.memory = MemoryStore(self.workspace)
        self.skills = SkillsLoader(self.workspace, disabled=defaults.disabled_skills)
        self.context = ContextBuilder(self.workspace, self.skills, self.memory)
        self.tools = build_default_registry(config_path=config_path)
        self.tools.configure(config.tools)
        self.policy = ToolPolicy(config.tools.approval)
        self.runner = ToolRunner(self.tools, self.policy, self.bus, approver=lambda: self.approver,
                                 on_policy_changed=self._save_policy)
        self.cron = CronService(cron_store_path(config_path), on_job=self._run_cron_job, bus=self.bus)
        self.tools.register(CronTool())
        self._mcp: McpManager | None = None  # built on first use: its modules stay out of the start-up path
        self.loop = AgentLoop(
            workspace=self.workspace, provider=self.provider, sessions=self.sessions, memory=self.memory,
            context=self.context, runner=self.runner, bus=self.bus, settings=self.settings,
            restrict_to_workspace=lambda: self.config.tools.restrict_to_workspace, cron=self.cron,
        )
        self.subagents = SubagentManager(
            workspace=self.workspace, provider=self.provider, runner=self.runner, context=self.context,
            bus=self.bus, settings=self.settings,
            restrict_to_workspace=lambda: self.config.tools.restrict_to_workspace, announce=self._announce,
        )
        self.loop.subagents = self.subagents
        heartbeat = config.gateway.heartbeat
        self.heartbeat = HeartbeatService(self.workspace, chat=self.loop.plain_chat, on_execute=self._run_heartbeat_tasks,
                                          interval_s=heartbeat.interval_s, enabled=heartbeat.enabled, bus=self.bus)

    @classmethod
    def open(cls, config_path: str | Path | None = None, workspace: str | Path | None = None) -> "Engine":
        """Load the config (raising ConfigError with a precise message) and build the engine."""
        path = Path(config_path).expanduser() if config_path else default_config_path()
        config = load_config(path)
        return cls(config, path, Path(workspace).expanduser() if workspace else None)

    # --- configuration ----------------------------------------------------------------------------------

    def settings(self) -> AgentSettings:
        d = self.config.agents.defaults
        return AgentSettings(model=self._resolved_model(), temperature=d.temperature, max_tokens=d.max_tokens,
                             max_iterations=d.max_tool_iterations, memory_window=d.memory_window,
                             reasoning_effort=d.reasoning_effort)

    def _resolved_model(self) -> str:
        try:
            return resolve_provider(self.config).model
        except ConfigError:
            return self.config.agents.defaults.model

    def provider(self) -> ChatProvider:
        """The model endpoint for the current config (rebuilt when the provider settings change)."""
        from nanobot_desktop.engine.llm.provider import make_provider

        resolved = resolve_provider(self.config)  # ConfigError tells the user what to set
        key = (resolved.name, resolved.api_key, resolved.api_base, resolved.model,
               tuple(sorted((resolved.extra_headers or {}).items())))
        if self._provider is None or key != self._provider_key:
            self._provider = make_provider(resolved.name, resolved.api_key, resolved.api_base, resolved.model,
                                           resolved.extra_headers)
            self._provider_key = key
        return self._provider

    def apply_config(self, config: Config, *, save: bool = True) -> None:
        """Adopt an edited config (from Settings): save it, then update the live services."""
        if save:
            save_config(config, self.config_path)
        self.config = config
        self.policy.replace(config.tools.approval)
        self._configure_tools()
        if self._mcp is not None:
            self._mcp.configure(config.tools.mcp_servers, config.desktop.mcp_disabled)
        self.skills.set_disabled(config.agents.defaults.disabled_skills)
        self.heartbeat.set_interval(config.gateway.heartbeat.interval_s)
        self._apply_heartbeat_switch(config.gateway.heartbeat.enabled)

    def _apply_heartbeat_switch(self, enabled: bool) -> None:
        """Start or stop the heartbeat loop when Settings turns it on or off (needs a running event loop)."""
        was_running = self.heartbeat.running
        self.heartbeat.enabled = enabled
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # not started yet: start_services() will honour `enabled`
        if enabled and not was_running and self._services_started:
            self._background.add(asyncio.ensure_future(self.heartbeat.start()))
        elif not enabled and was_running:
            self._background.add(asyncio.ensure_future(self.heartbeat.stop()))
        self._background = {t for t in self._background if not t.done()}

    def _configure_tools(self) -> None:
        """Push the tool settings of the config into the live tools (no restart needed)."""
        self.tools.configure(self.config.tools)

    def _save_policy(self, mapping: dict[str, Decision]) -> None:
        self.config.tools.approval = dict(mapping)
        try:
            save_config(self.config, self.config_path)
        except (OSError, ConfigError):
            log.exception("could not save the tool policy to %s", self.config_path)

    # --- services ----------------------------------------------------------------------------------------

    @property
    def mcp(self) -> "McpManager":
        """The MCP servers of `tools.mcpServers` (connected by `start_mcp`, not by building this)."""
        if self._mcp is None:
            from nanobot_desktop.engine.mcp import McpManager

            self._mcp = McpManager(self.bus, self.tools, logs_dir(self.config_path))
            self._mcp.configure(self.config.tools.mcp_servers, self.config.desktop.mcp_disabled)
        return self._mcp

    def start_mcp(self) -> None:
        """Connect the MCP servers in the background; their tools appear as each one is ready."""
        self.mcp.start()

    async def start_services(self) -> None:
        """Start the MCP servers (in the background), cron and the heartbeat (the app runs them until quit)."""
        self._services_started = True
        self.start_mcp()
        await self.cron.start()
        await self.heartbeat.start()

    async def shutdown(self) -> None:
        """Stop everything that runs in the background and close the endpoint connection."""
        await self.heartbeat.stop()
        await self.cron.stop()
        await self.subagents.shutdown()
        await self.loop.shutdown()
        if self._mcp is not None:
            await self._mcp.shutdown()
        if self._provider is not None:
            close = getattr(self._provider, "close", None)
            if close is not None:
                await close()

    @staticmethod
    def new_session_key(channel: str = "desktop") -> str:
        return f"{channel}:{datetime.now().strftime('%Y%m%d-%H%M%S-%f')[:-3]}"

    # --- callbacks wired into the services -----------------------------------------------------------

    async def _run_heartbeat_tasks(self, tasks: str) -> str | None:
        result = await self.loop.process("heartbeat", tasks, channel="cli", chat_id="direct")
        if result.status in ("failed", "cancelled"):
            raise RuntimeError(result.error or "the heartbeat run failed")
        return result.reply

    async def _run_cron_job(self, job: CronJob) -> str | None:
        payload = job.payload
        result = await self.loop.process(f"cron:{job.id}", cron_job_prompt(job), channel=payload.channel or "cli",
                                         chat_id=payload.to or "direct", in_cron_job=True)
        if result.status in ("failed", "cancelled"):
            raise RuntimeError(result.error or "the scheduled run failed")
        return result.reply

    async def _announce(self, session_key: str, channel: str, chat_id: str, content: str) -> None:
        await self.loop.process(session_key, content, channel=channel, chat_id=chat_id, system_origin=True)

