"""`Engine`: the one object the GUI and the CLI hold — every engine service, wired from the config.

It owns no state of its own beyond the wiring: files on disk stay the truth, and each service reads
them when it needs them.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collections.abc import Mapping

from nanobot_desktop.engine.config import (
    AppSettings,
    Config,
    ConfigError,
    cron_store_path,
    default_config_path,
    load_app_settings,
    load_config,
    logs_dir,
    migrate_app_keys,
    patch_settings,
)
from nanobot_desktop.engine.background_approvals import BackgroundApprovals
from nanobot_desktop.engine.llm.registry import resolve_provider
from nanobot_desktop.engine.llm.session_models import SessionModels
from nanobot_desktop.engine.context import ContextBuilder
from nanobot_desktop.engine.cron import CronJob, CronService, cron_job_prompt
from nanobot_desktop.engine.cron_types import DEFAULT_MISSED_RULE, job_session
from nanobot_desktop.engine.events import ConfigChanged, EventBus
from nanobot_desktop.engine.layout import WorkspaceLayout, context_window_tokens, detect_layout
from nanobot_desktop.engine.llm.types import ChatProvider
from nanobot_desktop.engine.loop import APP_CHANNELS, AgentLoop, AgentSettings, new_session_key
from nanobot_desktop.engine.memory import MemoryStore
from nanobot_desktop.engine.sessions.branches import BranchPoint, branch_points
from nanobot_desktop.engine.sessions.index import SessionIndex
from nanobot_desktop.engine.sessions.store import SessionStore
from nanobot_desktop.engine.skills import SkillsLoader
from nanobot_desktop.engine.subagents import SubagentManager
from nanobot_desktop.engine.tool_runner import ToolRunner
from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.tools.cron_tool import CronTool
from nanobot_desktop.engine.tools.policy import Approver, Decision, ToolPolicy
from nanobot_desktop.engine.tools.registry import build_default_registry
from nanobot_desktop.engine.workspace import Workspace

if TYPE_CHECKING:
    from nanobot_desktop.engine.coexistence import Coexistence
    from nanobot_desktop.engine.heartbeat import HeartbeatService
    from nanobot_desktop.engine.mcp import McpManager

log = logging.getLogger(__name__)


class Engine:
    """Everything the agent needs, built from one config file and one workspace."""

    def __init__(self, config: Config, config_path: Path, workspace: Path | None = None,
                 app_settings: AppSettings | None = None) -> None:
        self.config = config
        self.config_path = config_path
        self.app_settings = app_settings if app_settings is not None else load_app_settings(config_path)
        self.workspace = Workspace.at(workspace or config.workspace_path)
        # post4 or 0.3, from what is on disk: decides where sessions, history and versions live.
        self.layout: WorkspaceLayout = detect_layout(self.workspace.root, config_path,
                                                     config.agents.defaults.model_extra)
        log.info("%s at %s (%s)", self.layout.label, self.workspace.root, self.layout.reason)
        self.workspace.sync_templates(v03=self.layout.is_v03)
        self.bus = EventBus()
        self.approver: Approver | None = None
        self._provider: ChatProvider | None = None
        self._provider_key: tuple[Any, ...] | None = None
        self._services_started = False
        self._background: set[asyncio.Future[Any]] = set()

        self.sessions = SessionStore(paths=self.layout.session_paths(), bus=self.bus)
        for moved in self.sessions.migrate_legacy_sessions():
            log.info("migrated legacy session file into the workspace: %s", moved.name)
        # The session list and search read this index (in the app's cache folder); the files stay the truth.
        self.session_index = SessionIndex.for_store(self.sessions, self.bus)
        self.memory = MemoryStore(self.workspace, self.layout)
        self.skills = SkillsLoader(self.workspace, disabled=self._disabled_skills())
        self.context = ContextBuilder(self.workspace, self.skills, self.memory, layout=self.layout)
        self.tools = build_default_registry(config_path=config_path)
        self.tools.configure(config.tools, self.app_settings)
        self.policy = ToolPolicy(self.app_settings.tool_approval)
        self.background_policy = ToolPolicy(self.app_settings.background_tool_approval)
        self.background_approvals = BackgroundApprovals(
            self.bus, expiry_s=lambda: self.app_settings.background_approval_expiry_s)
        self.runner = ToolRunner(self.tools, self.policy, self.bus, approver=lambda: self.approver,
                                 on_policy_changed=self._save_policy)
        self.runner.background_policy = self.background_policy
        self.runner.background = self.background_approvals
        self.runner.background_source = self._background_source
        self.runner.on_background_policy_changed = self._save_background_policy
        self.cron = CronService(cron_store_path(config_path), on_job=self._run_cron_job, bus=self.bus,
                                missed_rule=self.missed_rule)
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
        # Sessions' own models (`metadata["model"]`, set in the composer's switcher); the default stays the config's.
        self.session_models = SessionModels(lambda: self.config, lambda: self.app_settings, self.sessions,
                                            self.settings, self.provider)
        self.loop.session_endpoint = self.session_models.endpoint_for
        # The heartbeat and the coexistence watch are built on first use (a headless turn needs neither).
        self._heartbeat: HeartbeatService | None = None
        self._coexistence: Coexistence | None = None
        self.cron.defer_to = self._background_owner

    @classmethod
    def open(cls, config_path: str | Path | None = None, workspace: str | Path | None = None) -> "Engine":
        """Move an older app version's keys out of config.json (once), load both settings files
        (raising ConfigError with a precise message) and build the engine."""
        path = Path(config_path).expanduser() if config_path else default_config_path()
        open_settings_files(path)
        config = load_config(path)
        return cls(config, path, Path(workspace).expanduser() if workspace else None)

    @property
    def heartbeat(self) -> "HeartbeatService":
        """The heartbeat service, made from the current config on first use."""
        if self._heartbeat is None:
            from nanobot_desktop.engine.heartbeat import HeartbeatService

            settings = self.config.gateway.heartbeat
            self._heartbeat = HeartbeatService(self.workspace, chat=self.loop.plain_chat,
                                               on_execute=self._run_heartbeat_tasks, interval_s=settings.interval_s,
                                               enabled=settings.enabled, bus=self.bus)
            self._heartbeat.defer_to = self._background_owner
        return self._heartbeat

    @property
    def coexistence(self) -> "Coexistence":
        """Whether a `nanobot gateway` (or another app instance) on this config/workspace runs cron and
        the heartbeat; made on first use."""
        if self._coexistence is None:
            from nanobot_desktop.engine.coexistence import Coexistence

            self._coexistence = Coexistence(self.config_path, self.workspace.root, _workspace_named_by, bus=self.bus)
        return self._coexistence

    def _background_owner(self) -> str | None:
        return self.coexistence.background_owner()

    # --- configuration ----------------------------------------------------------------------------------

    def settings(self) -> AgentSettings:
        d = self.config.agents.defaults
        return AgentSettings(model=self._resolved_model(), temperature=d.temperature, max_tokens=d.max_tokens,
                             max_iterations=d.max_tool_iterations, memory_window=d.memory_window,
                             reasoning_effort=d.reasoning_effort,
                             context_window_tokens=context_window_tokens(self.layout, d.model_extra),
                             context_window_override=self.app_settings.model_context_window)

    def _resolved_model(self) -> str:
        try:
            return resolve_provider(self.config).model
        except ConfigError:
            return self.config.agents.defaults.model

    def provider(self) -> ChatProvider:
        """The model endpoint for the current config (rebuilt when the provider settings change)."""
        from nanobot_desktop.engine.llm.provider import make_provider

        resolved = resolve_provider(self.config)  # ConfigError tells the user what to set
        desktop = self.app_settings
        key = (resolved.name, resolved.api_key, resolved.api_base, resolved.model,
               tuple(sorted((resolved.extra_headers or {}).items())),
               desktop.model_first_byte_timeout, desktop.model_idle_timeout, desktop.model_wait_for_local)
        if self._provider is None or key != self._provider_key:
            release = getattr(self._provider, "release", None)  # the old endpoint's connection is let go
            if release is not None:
                release()
            self._provider = make_provider(resolved.name, resolved.api_key, resolved.api_base, resolved.model,
                                           resolved.extra_headers,
                                           first_byte_timeout_s=desktop.model_first_byte_timeout,
                                           idle_timeout_s=desktop.model_idle_timeout,
                                           wait_for_local=desktop.model_wait_for_local)
            self._provider_key = key
        return self._provider

    def update_config(self, patch: Mapping[str, Any]) -> tuple[str, ...]:
        """The one door for settings changes: apply `patch` ({dotted path: value or DELETE}) to the
        files as they are on disk now, save atomically, update the live services and publish
        `ConfigChanged`. Paths starting with "app." go to desktop.json, all others to config.json.
        An invalid value raises ConfigError and changes nothing."""
        config, app, changed = patch_settings(self.config_path, patch)
        self.config = config or self.config
        self.app_settings = app or self.app_settings
        self._apply_live()
        if changed:
            self.bus.publish(ConfigChanged("", tuple(changed)))
        return tuple(changed)

    def _disabled_skills(self) -> list[str]:
        """desktop.json's list, plus nanobot 0.3.x's `agents.defaults.disabledSkills` if the config has it."""
        extra = (self.config.agents.defaults.model_extra or {}).get("disabledSkills")
        from_cli = [name for name in extra if isinstance(name, str)] if isinstance(extra, list) else []
        return list(dict.fromkeys([*self.app_settings.disabled_skills, *from_cli]))

    def _apply_live(self) -> None:
        """Update the live services from the current settings (no restart needed)."""
        self.policy.replace(self.app_settings.tool_approval)
        self.background_policy.replace(self.app_settings.background_tool_approval)
        self._configure_tools()
        if self._mcp is not None:
            self._mcp.configure(self.config.tools.mcp_servers, self.app_settings.mcp_disabled)
        self.skills.set_disabled(self._disabled_skills())
        if self._heartbeat is not None:  # else it is made from the config as it is then
            self._heartbeat.set_interval(self.config.gateway.heartbeat.interval_s)
            self._apply_heartbeat_switch(self.config.gateway.heartbeat.enabled)

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
        self.tools.configure(self.config.tools, self.app_settings)

    def missed_rule(self, job_id: str) -> str:
        """What to do with a job's runs missed while the app was closed or the computer slept."""
        return self.app_settings.missed_runs.get(job_id, DEFAULT_MISSED_RULE)

    def set_missed_rule(self, job_id: str, rule: str | None) -> None:
        """Save a job's missed-run rule ("run_once", "skip"; None: the default) in desktop.json."""
        rules: dict[str, Any] = dict(self.app_settings.missed_runs)
        if rule is None:
            rules.pop(job_id, None)
        else:
            rules[job_id] = rule
        self.update_config({"app.missedRuns": rules})  # validated: a bad rule raises and saves nothing

    def _background_source(self, ctx: ToolContext) -> str | None:
        """Who is asking, when a tool call comes from background work: "Heartbeat", a job, a subagent."""
        named = ctx.extra.get("background")
        if named:
            return str(named)
        if ctx.session_key == "heartbeat":  # heartbeat.SESSION_KEY (not imported: the module is loaded on use)
            return "Heartbeat"
        if ctx.session_key.startswith("cron:"):
            job = self.cron.get_job(ctx.session_key[len("cron:"):])
            return f"Scheduled task “{job.name}”" if job is not None else "A scheduled task"
        return None

    def _save_background_policy(self, mapping: dict[str, Decision]) -> None:
        """"Always allow" from a background approval: the background policy, in desktop.json."""
        try:
            self.update_config({"app.backgroundToolApproval": dict(mapping)})
        except (OSError, ConfigError):
            log.exception("could not save the background tool policy beside %s", self.config_path)

    def _save_policy(self, mapping: dict[str, Decision]) -> None:
        """"Always allow" (and other per-tool policies) are the app's: saved in desktop.json."""
        try:
            self.update_config({"app.toolApproval": dict(mapping)})
        except (OSError, ConfigError):
            log.exception("could not save the tool policy beside %s", self.config_path)

    # --- services ----------------------------------------------------------------------------------------

    @property
    def mcp(self) -> "McpManager":
        """The MCP servers of `tools.mcpServers` (connected by `start_mcp`, not by building this)."""
        if self._mcp is None:
            from nanobot_desktop.engine.mcp import McpManager

            self._mcp = McpManager(self.bus, self.tools, logs_dir(self.config_path))
            self._mcp.configure(self.config.tools.mcp_servers, self.app_settings.mcp_disabled)
        return self._mcp

    def start_mcp(self) -> None:
        """Connect the MCP servers in the background; their tools appear as each one is ready."""
        self.mcp.start()

    async def start_services(self) -> None:
        """Start the MCP servers (in the background), cron and the heartbeat (the app runs them until quit)."""
        self._services_started = True
        self.start_mcp()
        await self.coexistence.start()
        await self.cron.start()
        await self.heartbeat.start()

    async def shutdown(self) -> None:
        """Stop everything that runs in the background and close the endpoint connection."""
        if self._heartbeat is not None:
            await self._heartbeat.stop()
        await self.cron.stop()
        if self._coexistence is not None:
            await self._coexistence.stop()
        await self.subagents.shutdown()
        await self.loop.shutdown()
        if self._mcp is not None:
            await self._mcp.shutdown()
        await self.session_models.close()
        if self._provider is not None:
            close = getattr(self._provider, "close", None)
            if close is not None:
                await close()

    @staticmethod
    def new_session_key(channel: str = "desktop") -> str:
        return new_session_key(channel)

    def branch_session(self, key: str, at: int) -> str:
        """Start a branch of session `key` holding its first `at` messages (Edit and resend, Regenerate);
        returns the branch's key. The origin's file is only read (engine/sessions/branches.py)."""
        channel = key.partition(":")[0] if ":" in key else ""
        channel = channel if channel in APP_CHANNELS else "desktop"  # a chat channel's id would be made up
        new_key = self.new_session_key(channel)
        while self.sessions.path_for(new_key).exists() or self.sessions.load(new_key) is not None:
            new_key = self.new_session_key(channel)
        self.sessions.branch(key, at, new_key)
        return new_key

    def branch_points(self, key: str) -> list[BranchPoint]:
        """Where session `key` forks from or into other sessions: the chat's "‹ 2/3 ›" switchers.

        The branches come from the session index (each file's `branch_of` is in its row), not from
        reading the first line of every session file at each refresh of the switchers."""
        session = self.sessions.cached(key)
        metadata = session.metadata if session is not None else self.sessions.read_metadata(key)
        return branch_points(key, metadata, self.session_index.branch_records())

    # --- callbacks wired into the services -----------------------------------------------------------

    async def _run_heartbeat_tasks(self, tasks: str) -> str | None:
        result = await self.loop.process("heartbeat", tasks, channel="cli", chat_id="direct")
        if result.status in ("failed", "cancelled"):
            raise RuntimeError(result.error or "the heartbeat run failed")
        return result.reply

    async def _run_cron_job(self, job: CronJob) -> str | None:
        session_key, channel, chat_id = job_session(job)  # a 0.3 job bound to a chat runs in that chat
        result = await self.loop.process(session_key, cron_job_prompt(job), channel=channel or "cli",
                                         chat_id=chat_id or "direct", in_cron_job=True)
        if result.status in ("failed", "cancelled"):
            raise RuntimeError(result.error or "the scheduled run failed")
        return result.reply

    async def _announce(self, session_key: str, channel: str, chat_id: str, content: str) -> None:
        await self.loop.process(session_key, content, channel=channel, chat_id=chat_id, system_origin=True)


def _workspace_named_by(config_path: Path) -> Path | None:
    """The workspace another config file names (for telling whether a CLI process shares ours)."""
    try:
        from nanobot_desktop.engine.config import load_config as _load

        return _load(config_path, environ={}).workspace_path
    except (ConfigError, OSError):
        return None


def open_settings_files(config_path: Path) -> None:
    """Before loading: move what an older version of this app kept in config.json into desktop.json.
    A config that cannot be rewritten (read-only) is left as it is and loads all the same."""
    try:
        migrate_app_keys(config_path)
    except ConfigError as error:
        if not config_path.exists() or "read-only" not in error.message:
            raise
        log.warning("%s", error.message)

