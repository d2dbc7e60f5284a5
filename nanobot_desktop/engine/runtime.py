"""`Engine`: the one object the GUI and the CLI hold — every engine service, wired from the config.

It owns no state of its own beyond the wiring: files on disk stay the truth, and each service reads
them when it needs them.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collections.abc import Callable, Mapping

from nanobot_desktop.engine.config import (
    AppSettings,
    Config,
    ConfigError,
    default_config_path,
    load_app_settings,
    load_config,
    logs_dir,
    migrate_app_keys,
    patch_settings,
)
from nanobot_desktop.engine.agent.approvals import Approvals
from nanobot_desktop.engine.llm.registry import resolve_provider
from nanobot_desktop.engine.llm.session_models import SessionModels
from nanobot_desktop.engine.agent.context import ContextBuilder
from nanobot_desktop.engine.background.cron import CronJob, CronService, cron_job_prompt
from nanobot_desktop.engine.background.cron_location import settle_cron_store
from nanobot_desktop.engine.background.cron_types import DEFAULT_MISSED_RULE, job_session
from nanobot_desktop.engine.changes import ChangeTracker
from nanobot_desktop.engine.events import (
    ApprovalSource, BackgroundOwnerChanged, ConfigChanged, EventBus, FileChanged, Notice, Origin, SyncCopyMerged,
    SyncTextConflict,
)
from nanobot_desktop.engine.layout import (
    WorkspaceLayout,
    context_window_tokens,
    detect_layout,
    max_concurrent_subagents,
)
from nanobot_desktop.engine.llm.types import ChatProvider
from nanobot_desktop.engine.agent.loop import APP_CHANNELS, AgentLoop, AgentSettings, new_session_key
from nanobot_desktop.engine.memory.store import MemoryStore
from nanobot_desktop.engine.sessions.branches import BranchPoint, branch_points
from nanobot_desktop.engine.sessions.index import SessionIndex
from nanobot_desktop.engine.sessions.key import SessionKey
from nanobot_desktop.engine.sessions.store import SessionStore
from nanobot_desktop.engine.skills import SkillsLoader
from nanobot_desktop.engine.agent.subagents import SubagentManager
from nanobot_desktop.engine.agent.tool_runner import ToolRunner
from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.tools.cron_tool import CronTool
from nanobot_desktop.engine.tools.policy import UNSANDBOXED_ALLOW, Decision, ToolPolicy
from nanobot_desktop.engine.tools.registry import build_default_registry
from nanobot_desktop.engine.usage.recorder import Budget, UsageRecorder
from nanobot_desktop.engine.usage.source import call_source
from nanobot_desktop.engine.workspace import Workspace

if TYPE_CHECKING:
    from nanobot_desktop.engine.usage.prices import ModelPrice
    from nanobot_desktop.engine.background.coexistence import Coexistence
    from nanobot_desktop.engine.agent.turn import TurnResult
    from nanobot_desktop.engine.sessions.checkpoint import InterruptedTurn
    from nanobot_desktop.engine.background.heartbeat import HeartbeatService
    from nanobot_desktop.engine.mcp import McpManager
    from nanobot_desktop.engine.sync.machines import Machines
    from nanobot_desktop.engine.sync.syncthing import SyncStatus
    from nanobot_desktop.engine.sync.texts import TextConflict

log = logging.getLogger(__name__)
BACKGROUND_MACHINE = "workspace.backgroundMachine"


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
        # The app's own reads never follow a link out of the workspace; each refusal is told (notice bar, stderr).
        self.workspace.own.listen(lambda path, target: self.bus.publish(Notice(
            "", topic=f"own-file:{path}", text=f"{path} was not read: it leads out of the workspace ({target}). "
            "Replace the link with the file itself, or move the file into the workspace.")))
        self._provider: ChatProvider | None = None
        self._provider_key: tuple[Any, ...] | None = None
        self._services_started = False
        self._background: set[asyncio.Future[Any]] = set()

        # What the person must know from the start (shown by the window when it attaches, printed by the CLI).
        self.start_notices: list[Notice] = []
        # The one record of what the engine wrote and read, for every file it owns (engine/changes.py).
        self.changes = ChangeTracker()
        self.sessions = SessionStore(paths=self.layout.session_paths(on_repair=lambda text: self.start_notices.append(
            Notice("", topic="workspace-id", text=text))), bus=self.bus, changes=self.changes)
        for moved in self.sessions.migrate_legacy_sessions():
            log.info("migrated legacy session file into the workspace: %s", moved.name)
        # The session list and search read this index (in the app's cache folder); the files stay the truth.
        self.session_index = SessionIndex.for_store(self.sessions, self.bus)
        self.memory = MemoryStore(self.workspace, self.layout, self.changes)
        self.skills = SkillsLoader(self.workspace, disabled=self._disabled_skills())
        self.context = ContextBuilder(self.workspace, self.skills, self.memory, layout=self.layout)
        self.tools = build_default_registry(config_path=config_path)
        self.tools.configure(config.tools, self.app_settings)
        self.start_notices += _exec_sandbox_notices(config.tools.exec.model_extra, self.workspace.root, config_path)
        self.policy = ToolPolicy(self.app_settings.tool_approval, exec_sandboxed=self.exec_allow_possible)
        self.background_policy = ToolPolicy(self.app_settings.background_tool_approval,
                                            exec_sandboxed=self.exec_allow_possible)
        self.start_notices += self._unsandboxed_allow_notices()
        # Every ask (a chat turn's or background work's) waits here, answered once by a surface.
        self.approvals = Approvals(self.bus, expiry_s=lambda: self.app_settings.background_approval_expiry_s)
        self.runner = ToolRunner(self.tools, self.policy, self.bus, self.approvals,
                                 on_policy_changed=self._save_policy)
        self.runner.background_policy = self.background_policy
        self.runner.background_source = self._background_source
        self.runner.on_background_policy_changed = self._save_background_policy
        # One job store per workspace, where its layout keeps it (0.3: in the workspace, with action.jsonl).
        self.cron = CronService(settle_cron_store(self.layout), on_job=self._run_cron_job, bus=self.bus,
                                missed_rule=self.missed_rule, shared_actions=self.layout.is_v03, changes=self.changes)
        self.cron.read_bytes = self.workspace.own.read  # a link out of the workspace is never followed
        self.tools.register(CronTool())
        self._mcp: McpManager | None = None  # built on first use: its modules stay out of the start-up path
        self.subagents = SubagentManager(
            workspace=self.workspace, provider=self.provider, runner=self.runner, context=self.context,
            bus=self.bus, settings=self.settings,
            restrict_to_workspace=lambda: self.config.tools.restrict_to_workspace, announce=self._announce,
        )
        # Sessions' own models (`metadata["model"]`, set in the composer's switcher); the default stays the config's.
        self.session_models = SessionModels(lambda: self.config, lambda: self.app_settings, self.sessions,
                                            self.settings, self.provider)
        self.loop = AgentLoop(
            workspace=self.workspace, provider=self.provider, sessions=self.sessions, memory=self.memory,
            context=self.context, runner=self.runner, bus=self.bus, settings=self.settings,
            restrict_to_workspace=lambda: self.config.tools.restrict_to_workspace, cron=self.cron,
            subagents=self.subagents, session_endpoint=self.session_models.endpoint_for,
        )
        # The heartbeat and the coexistence watch are built on first use (a headless turn needs neither).
        self._heartbeat: HeartbeatService | None = None
        self._coexistence: Coexistence | None = None
        self._machines: Machines | None = None
        self._machines_owner: str | None = None  # why another machine runs the background work now
        self._beating: asyncio.Task[None] | None = None
        self.cron.defer_to = self._background_owner
        # Every model call's row (engine/usage): into nanobot 0.3.5's llm_usage.sqlite3 beside the config
        # when it is there, and the app's desktop-usage.sqlite3; a spent budget holds background work.
        self.usage = UsageRecorder(config_path.parent, self.bus, provider_name=lambda: resolve_provider(self.config).name,
                                   prices=self.usage_prices, budget=self._usage_budget)
        self.subagents.held = self.usage.budget_hold
        self.sessions.suspect = self._session_holder

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
            from nanobot_desktop.engine.background.heartbeat import HeartbeatService

            settings = self.config.gateway.heartbeat
            self._heartbeat = HeartbeatService(self.workspace, chat=self.loop.plain_chat,
                                               on_execute=self._run_heartbeat_tasks, interval_s=settings.interval_s,
                                               enabled=settings.enabled, bus=self.bus)
            self._heartbeat.defer_to = self._background_owner
            self._heartbeat.budget_hold = self.usage.budget_hold
        return self._heartbeat

    @property
    def coexistence(self) -> "Coexistence":
        """Whether a `nanobot gateway` (or another app instance) on this config/workspace runs cron and
        the heartbeat; made on first use."""
        if self._coexistence is None:
            from nanobot_desktop.engine.background.coexistence import Coexistence

            self._coexistence = Coexistence(self.config_path, self.workspace.root, _workspace_named_by, bus=self.bus)
        return self._coexistence

    @property
    def machines(self) -> "Machines":
        """The machines sharing this workspace through a sync tool, and which one runs the background
        work (engine/sync/machines.py); made on first use."""
        if self._machines is None:
            from nanobot_desktop.engine.sync.machines import Machines

            self._machines = Machines(self.workspace.root)
        return self._machines

    def usage_prices(self) -> dict[str, ModelPrice]:
        """The price table: the defaults with the person's own prices (desktop.json `usagePrices`) over them."""
        from nanobot_desktop.engine.usage.prices import ModelPrice, price_table

        return price_table({name: ModelPrice(p.input, p.output, p.cache_read, p.cache_write)
                            for name, p in self.app_settings.usage_prices.items()})

    def _usage_budget(self) -> Budget:
        budget = self.app_settings.usage_budget
        return Budget(budget.daily, budget.monthly)

    def _background_owner(self) -> str | None:
        """Why the app does not run cron and the heartbeat now: another program on this machine, or
        another machine of a synced workspace (None: it runs them). The coexistence watch is not built
        just to ask: until it starts (start_services) nobody else on this machine is known to run them."""
        here = self._coexistence.background_owner() if self._coexistence is not None else None
        return here or self._machines_owner

    def runs_for_others(self) -> list[str]:
        """The other machines' names when the workspace is shared and this machine runs its background work
        (the Heartbeat and Scheduled pages say so); [] otherwise. Reads a few small files."""
        if self._machines is None or self._beating is None or self._background_owner() is not None:
            return []
        return [m.name for m in self._machines.known() if m.machine_id != self._machines.machine_id]

    def _machines_answered(self, owner: str | None) -> None:
        if owner != self._machines_owner:
            self._machines_owner = owner
            self.bus.publish(BackgroundOwnerChanged("", owner=self._background_owner()))

    def _session_holder(self, key: str) -> str:
        return self._coexistence.holder_of(key) if self._coexistence is not None else ""

    # --- interrupted turns (nanobot 0.3.5's <session>.checkpoint.json: sessions/checkpoint.py) -------------

    def interrupted_turn(self, key: str) -> "InterruptedTurn | None":
        """The turn nanobot 0.3.5 left unfinished in `key` (its checkpoint file), or None."""
        from nanobot_desktop.engine.sessions.checkpoint import read_interrupted

        return read_interrupted(self.sessions.path_for(key), key)

    def dismiss_interrupted(self, key: str) -> bool:
        """*Dismiss*: keep what the interrupted turn had done (calls of unknown outcome marked so, never
        run again), close it, remove the checkpoint. False when there is none."""
        return self.settle_interrupted(key, continuing=False)

    async def continue_interrupted(self, key: str) -> "TurnResult | None":
        """*Continue*: as Dismiss, then the model goes on from there (0.3.5's continuation prompt, kept as a
        hidden history message). None when there is nothing 0.3.5 would let continue."""
        if not self.settle_interrupted(key, continuing=True):
            return None
        channel, chat_id = self.loop.route_for_user_turn(key)
        return await self.loop.resend(key, channel=channel, chat_id=chat_id)

    def settle_interrupted(self, key: str, *, continuing: bool) -> bool:
        """Put the interrupted turn into the conversation (with the continuation prompt when `continuing`,
        which then needs `loop.resend`) and remove its checkpoint; False when there is none to settle."""
        turn = self.interrupted_turn(key)
        if turn is None or (continuing and not turn.can_continue):
            return False
        self._settle_interrupted(turn, continuing=continuing)
        return True

    def _settle_interrupted(self, turn: "InterruptedTurn", *, continuing: bool) -> None:
        from nanobot_desktop.engine.sessions.checkpoint import CONTINUE_PROMPT, INTERRUPTED_TURN, PENDING_USER_TURN

        session = self.sessions.get_or_create(turn.key)
        rows = [dict(row) for row in turn.messages]
        last = rows[-1] if rows else (session.messages[-1] if session.messages else {})
        if continuing:
            rows.append({"role": "user", "content": CONTINUE_PROMPT, "_hidden_history": True})
        elif last.get("role") == "user":  # a turn with no answer at all is closed, as 0.3.5 closes it
            rows.append({"role": "assistant", "content": INTERRUPTED_TURN, "_recovery_interrupted": True})
        if rows:
            self.sessions.append(session, rows)
        if PENDING_USER_TURN in session.metadata:
            self.sessions.update_metadata(session, **{PENDING_USER_TURN: None})
        turn.path.unlink(missing_ok=True)
        log.info("interrupted turn of %s %s (%d message(s) kept%s)", turn.key,
                 "continued" if continuing else "dismissed", len(turn.messages),
                 f"; not run again: {', '.join(turn.unknown_tools)}" if turn.unknown_tools else "")

    def put_back_lost(self, key: str) -> str | None:
        """Put the app's messages another program erased from `key` into a new chat of the app's own
        (a session no nanobot gateway holds); its key, or None when nothing was erased."""
        session = self.sessions.put_back_lost(key, new_session_key())
        return session.key if session is not None else None

    # --- configuration ----------------------------------------------------------------------------------

    def settings(self) -> AgentSettings:
        d = self.config.agents.defaults
        return AgentSettings(model=self._resolved_model(), temperature=d.temperature, max_tokens=d.max_tokens,
                             max_iterations=d.max_tool_iterations, memory_window=d.memory_window,
                             reasoning_effort=d.reasoning_effort,
                             context_window_tokens=context_window_tokens(self.layout, d.model_extra),
                             max_concurrent_subagents=max_concurrent_subagents(d.model_extra),
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

    def exec_allow_possible(self, patch: Mapping[str, Any] | None = None) -> bool:
        """Whether exec runs in the OS sandbox with the current settings (or with `patch` applied to
        them): only then may it be "allow"."""
        from nanobot_desktop.engine.tools.exec_binds import named_backend
        from nanobot_desktop.engine.tools.sandbox import sandbox_support

        patch = patch or {}
        restrict = patch.get("tools.restrictToWorkspace", self.config.tools.restrict_to_workspace)
        always = patch.get("app.execSandboxAlways", self.app_settings.exec_sandbox_always)
        named = named_backend(self.config.tools.exec.model_extra)  # 0.3.5's tools.exec.sandbox: always on
        return sandbox_support().available and bool(restrict or always or named)

    def _unsandboxed_allow_notices(self) -> list[Notice]:
        """desktop.json saying exec: allow (edited by hand, or from another machine) while exec is not
        sandboxed: refused (exec asks), and said."""
        if self.exec_allow_possible():
            return []
        found = [which for which, mapping in (("toolApproval", self.app_settings.tool_approval),
                                              ("backgroundToolApproval", self.app_settings.background_tool_approval))
                 if mapping.get("exec") == "allow"]
        return [Notice("", topic=f"exec-allow:{which}", text=(
            f"{self.app_settings.source_path or 'desktop.json'} sets {which} exec to allow, but commands are not "
            "sandboxed here (Settings → Tools): refused, every command is asked for.")) for which in found]

    def update_config(self, patch: Mapping[str, Any]) -> tuple[str, ...]:
        """The one door for settings changes: apply `patch` ({dotted path: value or DELETE}) to the
        files as they are on disk now, save atomically, update the live services and publish
        `ConfigChanged`. Paths starting with "app." go to desktop.json, "workspace.backgroundMachine"
        (which machine of a synced workspace runs the background work: a machine id, or None for the
        automatic choice) to the workspace's own file that every machine reads (engine/sync/machines.py),
        all others to config.json. An invalid value raises ConfigError and changes nothing; so does exec
        set to allow while commands are not sandboxed."""
        for key in ("app.toolApproval", "app.backgroundToolApproval"):
            value = patch.get(key)
            wanted = value.get("exec") if isinstance(value, Mapping) else patch.get(f"{key}.exec")
            if wanted == "allow" and not self.exec_allow_possible(patch):
                raise ConfigError(UNSANDBOXED_ALLOW)
        patch = dict(patch)
        changed_machine: list[str] = []
        if BACKGROUND_MACHINE in patch:
            machine = patch.pop(BACKGROUND_MACHINE)
            if machine is not None and not isinstance(machine, str):
                raise ConfigError(f"{BACKGROUND_MACHINE} must be a machine id or null, got {machine!r}")
            self.machines.choose(machine or None)
            self._machines_answered(self.machines.background_owner())
            changed_machine.append(BACKGROUND_MACHINE)
        config, app, changed = patch_settings(self.config_path, patch) if patch else (None, None, [])
        changed = [*changed, *changed_machine]
        self.config = config or self.config
        self.app_settings = app or self.app_settings
        self._apply_live()
        for notice in self._unsandboxed_allow_notices():  # e.g. the restriction switched off under an allow
            self.bus.publish(notice)
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

    def _background_source(self, ctx: ToolContext) -> tuple[ApprovalSource, str] | None:
        """Who is asking, when a tool call comes from background work: "Heartbeat", a job, a subagent."""
        named = ctx.extra.get("background")
        if named:  # only subagents name themselves (subagents.py)
            return ApprovalSource.SUBAGENT, str(named)
        if ctx.session_key == "heartbeat":  # heartbeat.SESSION_KEY (not imported: the module is loaded on use)
            return ApprovalSource.HEARTBEAT, "Heartbeat"
        if ctx.in_cron_job and not ctx.session_key.startswith("cron:"):  # a job bound to a chat runs there
            return ApprovalSource.CRON, "A scheduled task"
        if ctx.session_key.startswith("cron:"):
            job = self.cron.get_job(ctx.session_key[len("cron:"):])
            return ApprovalSource.CRON, f"Scheduled task “{job.name}”" if job is not None else "A scheduled task"
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

    def notice_files(self, paths: list[Path]) -> list[Path]:
        """A watcher saw these files change: the engine says who changed them. The session store publishes
        `SessionChanged(outside=...)` for session files; every other file gets one `FileChanged` with the
        change tracker's answer (a changed job store is re-read first); a sync tool's conflict copy among
        them is dealt with at once (`merge_sync_copies`). Returns the files, sessions aside, that a
        watcher's listeners (editors, views) should follow: all but the echo of a write the app announced
        (`expect_write`, an editor's own save)."""
        from nanobot_desktop.engine.sync.names import parse_conflict_name

        listings: dict[Path, set[str]] = {}

        def siblings(folder: Path) -> set[str]:  # a OneDrive copy is known only beside its original
            if folder not in listings:
                try:
                    listings[folder] = {entry.name for entry in os.scandir(folder)}
                except OSError:
                    listings[folder] = set()
            return listings[folder]

        copies = {path for path in paths if parse_conflict_name(path.name, siblings(path.parent)) is not None}
        folder = self.sessions.sessions_dir
        changed = [path for path in paths if path.parent == folder and path.suffix == ".jsonl" and path not in copies]
        if copies:  # first: a session the sync tool swapped gets its lines back before anyone looks for them
            self.merge_sync_copies()
        if changed:
            self.sessions.notice_changes(changed)
        follow: list[Path] = []
        cron_outside: bool | None = None
        cron_files = {Path(os.path.realpath(p)) for p in self.cron.watched_files}
        kind_of = self._file_kinds()
        for path in paths:
            if path.parent == folder and path.suffix == ".jsonl":
                continue
            if Path(os.path.realpath(path)) in cron_files:
                if cron_outside is None:
                    cron_outside = self._reload_cron()
                kind, verdict = "cron", ("outside" if cron_outside else "unchanged")
            else:
                kind, verdict = kind_of(path), self.changes.verdict(path)
            self.bus.publish(FileChanged("", path=str(path), kind=kind, outside=verdict == "outside"))
            if verdict != "announced":
                follow.append(path)
        return follow

    def expect_write(self, path: Path, data: bytes | str) -> None:
        """The app is about to write exactly `data` to `path` (an editor's save, a new skill): when the
        watcher reports it, it is the app's own change, not someone else's."""
        self.changes.expect(path, data)

    def _reload_cron(self) -> bool:
        try:
            return self.cron.reload_if_changed()
        except Exception:  # a bad jobs.json is reported by the cron service itself
            log.exception("re-reading %s failed", self.cron.store_path)
            return True

    def _file_kinds(self) -> Callable[[Path], str]:
        """Which of the engine's files a path is, for `FileChanged.kind` (the places resolved once per batch)."""
        def real(path: Path) -> Path:
            return Path(os.path.realpath(path))

        memory = self.memory
        history = {real(memory.history_file)} | ({real(memory.journal.cursor_file)} if memory.journal is not None else set())
        memory_file, versions = real(memory.memory_file), real(memory.versions_dir)
        skills = (real(self.workspace.skills_dir), real(self.skills.builtin_dir))

        def kind_of(path: Path) -> str:
            where = real(path)
            if where in history:
                return "history"
            if where in (memory_file, versions) or versions in where.parents:
                return "memory"
            if any(where == folder or folder in where.parents for folder in skills):
                return "skills"
            return "workspace"

        return kind_of

    def merge_sync_copies(self) -> list[SyncCopyMerged]:
        """Merge every sync-conflict copy of a session file and of the history log (engine/sync/), and
        say which text files have one waiting for the person (`SyncTextConflict`). The store publishes
        what became of each session copy. The app calls it at start and when a copy appears, `agent`
        before its turn. Runs on the loop, like every session write (a copy is at most 64 MB)."""
        from nanobot_desktop.engine.sync.texts import merge_history_copies

        published: list[SyncCopyMerged] = []
        unsubscribe = self.bus.subscribe(lambda event: published.append(event) if isinstance(event, SyncCopyMerged) else None)
        try:
            self.sessions.merge_conflict_copies()
            for merge in merge_history_copies(self.workspace.root, self.memory):
                self.bus.publish(SyncCopyMerged("", outcome=merge.outcome,
                                                device=merge.conflict.device_name or merge.conflict.device,
                                                tool=merge.conflict.tool, added=merge.added, copy_name=merge.copy.name,
                                                sentence=merge.sentence().replace("this conversation", "the history log")))
        finally:
            unsubscribe()
        for conflict in self.text_conflicts():
            self.bus.publish(SyncTextConflict("", file_name=conflict.name, copy_name=conflict.copy.name,
                                              device=conflict.conflict.device_name or conflict.conflict.device,
                                              tool=conflict.conflict.tool))
        return published

    def sync_status(self) -> "SyncStatus | None":
        """What the person's Syncthing says about the workspace's folder ("In sync with laptop · 2 min ago"),
        or None without a Syncthing that syncs it. Blocking (a few loopback requests): call it in a thread."""
        from nanobot_desktop.engine.sync.syncthing import find_api, read_status

        api = find_api(self.workspace.root)
        return read_status(api) if api is not None else None

    def text_conflicts(self) -> list[TextConflict]:
        """The workspace's text files that a sync tool left in two versions, waiting for the person."""
        from nanobot_desktop.engine.sync.texts import text_conflicts

        return text_conflicts(self.workspace.root, self.memory)

    def resolve_text_conflict(self, copy_name: str, text: str) -> None:
        """Keep `text` as the file's content and move the other version (`copy_name`) to the trash."""
        from nanobot_desktop.engine.sync.texts import resolve_text_conflict

        conflict = next((c for c in self.text_conflicts() if c.copy.name == copy_name), None)
        if conflict is None:
            raise FileNotFoundError(f"no conflict copy named {copy_name!r} is waiting")
        resolve_text_conflict(conflict, text, self.workspace.root, self.memory)

    async def start_services(self) -> None:
        """Start the MCP servers (in the background), cron and the heartbeat (the app runs them until quit)."""
        self._services_started = True
        self.merge_sync_copies()
        from nanobot_desktop.engine.sync.folder import ensure_stignore, synced_folder
        from nanobot_desktop.engine.sync.machines import keep_beating

        synced = synced_folder(self.workspace.root)
        if synced is not None and synced.tool == "Syncthing":
            try:
                ensure_stignore(synced.root)
            except OSError as error:
                log.warning("could not add the app's lines to %s/.stignore: %s", synced.root, error)
        if self._beating is None:
            self._beating = asyncio.create_task(keep_beating(self.machines, self._machines_answered), name="machines")
        self.start_mcp()
        await self.coexistence.start()
        await self.cron.start()
        await self.heartbeat.start()
        await self.usage.check_budget()

    async def shutdown(self) -> None:
        """Stop everything that runs in the background and close the endpoint connection."""
        from nanobot_desktop.engine.llm.context_window import BOOK

        await BOOK.cancel_pending()  # a context-window question still out to the server
        if self._beating is not None:
            self._beating.cancel()
            try:
                await self._beating
            except asyncio.CancelledError:
                pass
            self._beating = None
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
        await self.usage.close()
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
        channel = SessionKey.parse(key).channel
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
        result = await self.loop.process("heartbeat", tasks, channel="cli", chat_id="direct", origin=Origin.HEARTBEAT)
        if result.status in ("failed", "cancelled"):
            raise RuntimeError(result.error or "the heartbeat run failed")
        return result.reply

    async def _run_cron_job(self, job: CronJob) -> str | None:
        session_key, channel, chat_id = job_session(job)  # a 0.3 job bound to a chat runs in that chat
        held = self.usage.budget_hold()
        if held:
            raise RuntimeError(f"not run: {held}; background work waits until you resume it (Usage page)")
        with call_source("cron", session_key):
            result = await self.loop.process(session_key, cron_job_prompt(job), channel=channel or "cli",
                                             chat_id=chat_id or "direct", in_cron_job=True, origin=Origin.CRON)
        if result.status in ("failed", "cancelled"):
            raise RuntimeError(result.error or "the scheduled run failed")
        return result.reply

    async def _announce(self, session_key: str, channel: str, chat_id: str, content: str) -> None:
        await self.loop.process(session_key, content, channel=channel, chat_id=chat_id, origin=Origin.SYSTEM)


def _exec_sandbox_notices(exec_extra: Mapping[str, Any] | None, workspace: Path,
                          config_path: Path | None) -> list[Notice]:
    """nanobot 0.3.5's `tools.exec.sandbox` and its bind lists are applied by the app's own sandbox
    (engine/tools/exec_binds.py); each part it cannot honour is logged and said at start."""
    from nanobot_desktop.engine.tools.exec_binds import exec_binds, never_bound

    binds = exec_binds(exec_extra, workspace, never_bound(config_path))
    if binds.backend:
        log.info("config tools.exec.sandbox %r: commands see only system folders, the workspace and %d "
                 "read-only / %d read-write bound folders", binds.backend, len(binds.read_only), len(binds.read_write))
    notices = []
    for number, problem in enumerate(binds.problems):
        log.warning("%s", problem)
        notices.append(Notice("", topic=f"exec-sandbox:{number}", text=problem))
    return notices


def _workspace_named_by(config_path: Path) -> Path | None:
    """The workspace another config file names, `~` not expanded (the process that reads it has its own
    HOME: coexistence expands it as that process would)."""
    try:
        from nanobot_desktop.engine.config import load_config as _load

        return Path(_load(config_path, environ={}).agents.defaults.workspace)
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

