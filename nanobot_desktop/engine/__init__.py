"""The engine's public surface: everything the window and the command line may use, by name.

The GUI imports from `nanobot_desktop.engine` only, never from its modules (tests/test_architecture.py
checks it), so the modules behind these names can move without touching a panel. Names are resolved
on first use (PEP 562 `__getattr__`): importing this package costs nothing, and `Engine` (openai) or
`Config` (pydantic) are only imported by the code that touches them — start-up time is measured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nanobot_desktop.engine.lazy_names import lazy_attributes


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from nanobot_desktop.engine import events as events
    from nanobot_desktop.engine.runtime import Engine as Engine
    from nanobot_desktop.engine.runtime import open_settings_files as open_settings_files
    from nanobot_desktop.engine.config import AppSettings as AppSettings
    from nanobot_desktop.engine.config import Config as Config
    from nanobot_desktop.engine.config import ConfigError as ConfigError
    from nanobot_desktop.engine.config import LOCAL_KEY_PLACEHOLDER as LOCAL_KEY_PLACEHOLDER
    from nanobot_desktop.engine.config import cron_store_path as cron_store_path
    from nanobot_desktop.engine.config import default_config_path as default_config_path
    from nanobot_desktop.engine.config import load_config as load_config
    from nanobot_desktop.engine.config import logs_dir as logs_dir
    from nanobot_desktop.engine.config import patch_config_file as patch_config_file
    from nanobot_desktop.engine.config import patch_settings as patch_settings
    from nanobot_desktop.engine.config import saved_language as saved_language
    from nanobot_desktop.engine.config import saved_theme as saved_theme
    from nanobot_desktop.engine.events import ApprovalAnswered as ApprovalAnswered
    from nanobot_desktop.engine.events import ApprovalRequested as ApprovalRequested
    from nanobot_desktop.engine.events import RetryScheduled as RetryScheduled
    from nanobot_desktop.engine.events import ApprovalAnswer as ApprovalAnswer
    from nanobot_desktop.engine.events import ApprovalReply as ApprovalReply
    from nanobot_desktop.engine.events import ApprovalRequest as ApprovalRequest
    from nanobot_desktop.engine.events import ApprovalSource as ApprovalSource
    from nanobot_desktop.engine.events import ApprovalSurface as ApprovalSurface
    from nanobot_desktop.engine.agent.approvals import ApprovalRefused as ApprovalRefused
    from nanobot_desktop.engine.agent.approvals import Approvals as Approvals
    from nanobot_desktop.engine.events import BackgroundOwnerChanged as BackgroundOwnerChanged
    from nanobot_desktop.engine.events import ConfigChanged as ConfigChanged
    from nanobot_desktop.engine.events import ConsolidationFinished as ConsolidationFinished
    from nanobot_desktop.engine.events import ConsolidationStarted as ConsolidationStarted
    from nanobot_desktop.engine.events import CronJobRan as CronJobRan
    from nanobot_desktop.engine.events import Event as Event
    from nanobot_desktop.engine.events import FileChanged as FileChanged
    from nanobot_desktop.engine.events import EventBus as EventBus
    from nanobot_desktop.engine.events import HeartbeatDecided as HeartbeatDecided
    from nanobot_desktop.engine.events import HeartbeatRan as HeartbeatRan
    from nanobot_desktop.engine.events import LLMCallFinished as LLMCallFinished
    from nanobot_desktop.engine.events import LLMCallStarted as LLMCallStarted
    from nanobot_desktop.engine.events import OutboundMessage as OutboundMessage
    from nanobot_desktop.engine.events import Progress as Progress
    from nanobot_desktop.engine.events import ReasoningDelta as ReasoningDelta
    from nanobot_desktop.engine.events import SessionChanged as SessionChanged
    from nanobot_desktop.engine.events import SessionLinesLost as SessionLinesLost
    from nanobot_desktop.engine.events import SubagentFinished as SubagentFinished
    from nanobot_desktop.engine.events import SubagentStarted as SubagentStarted
    from nanobot_desktop.engine.events import TextDelta as TextDelta
    from nanobot_desktop.engine.events import ToolCallFinished as ToolCallFinished
    from nanobot_desktop.engine.events import ToolCallStarted as ToolCallStarted
    from nanobot_desktop.engine.events import TurnCancelled as TurnCancelled
    from nanobot_desktop.engine.events import TurnFailed as TurnFailed
    from nanobot_desktop.engine.events import TurnFinished as TurnFinished
    from nanobot_desktop.engine.events import TurnStarted as TurnStarted
    from nanobot_desktop.engine.agent.context import SECTION_SEPARATOR as SECTION_SEPARATOR
    from nanobot_desktop.engine.agent.context import strip_runtime_for_save as strip_runtime_for_save
    from nanobot_desktop.engine.agent.context import MAX_IMAGE_BYTES as MAX_IMAGE_BYTES
    from nanobot_desktop.engine.agent.context import sniff_image_mime as sniff_image_mime
    from nanobot_desktop.engine.sessions.export import message_media as message_media
    from nanobot_desktop.engine.sessions.export import user_text as user_text
    from nanobot_desktop.engine.background.cron import CronSchedule as CronSchedule
    from nanobot_desktop.engine.background.cron import describe_schedule as describe_schedule
    from nanobot_desktop.engine.background.cron import never_fires_reason as never_fires_reason
    from nanobot_desktop.engine.background.cron_types import DEFAULT_MISSED_RULE as DEFAULT_MISSED_RULE
    from nanobot_desktop.engine.background.cron_types import MISSED_RULES as MISSED_RULES
    from nanobot_desktop.engine.background.cron_types import MISSED_RULE_WORDS as MISSED_RULE_WORDS
    from nanobot_desktop.engine.background.cron_types import is_system_job as is_system_job
    from nanobot_desktop.engine.background.heartbeat_rule import SKIP_WORDS as SKIP_WORDS
    from nanobot_desktop.engine.background.heartbeat_rule import analyse as analyse
    from nanobot_desktop.engine.memory.history_journal import HistoryEntry as HistoryEntry
    from nanobot_desktop.engine.memory.history_journal import HistoryJournal as HistoryJournal
    from nanobot_desktop.engine.layout import DEFAULT_CONTEXT_WINDOW_TOKENS as DEFAULT_CONTEXT_WINDOW_TOKENS
    from nanobot_desktop.engine.layout import LayoutKind as LayoutKind
    from nanobot_desktop.engine.layout import detect_layout as detect_layout
    from nanobot_desktop.engine.layout import dream_settings as dream_settings
    from nanobot_desktop.engine.layout import prepare_workspace as prepare_workspace
    from nanobot_desktop.engine.llm.discovery import DEFAULT_CANDIDATES as DEFAULT_CANDIDATES
    from nanobot_desktop.engine.llm.discovery import LocalServer as LocalServer
    from nanobot_desktop.engine.llm.discovery import discover_local_servers as discover_local_servers
    from nanobot_desktop.engine.llm.provider import make_provider as make_provider
    from nanobot_desktop.engine.llm.registry import PROVIDER_PRESETS as PROVIDER_PRESETS
    from nanobot_desktop.engine.llm.registry import ProviderPreset as ProviderPreset
    from nanobot_desktop.engine.llm.registry import local_preset_for_base as local_preset_for_base
    from nanobot_desktop.engine.llm.registry import provider_entry as provider_entry
    from nanobot_desktop.engine.llm.registry import ConfiguredEntry as ConfiguredEntry
    from nanobot_desktop.engine.llm.registry import default_route as default_route
    from nanobot_desktop.engine.llm.registry import preset_entry as preset_entry
    from nanobot_desktop.engine.llm.registry import provider_entries as provider_entries
    from nanobot_desktop.engine.llm.registry import with_entries as with_entries
    from nanobot_desktop.engine.llm.registry import resolve_provider as resolve_provider
    from nanobot_desktop.engine.llm.types import ProviderError as ProviderError
    from nanobot_desktop.engine.memory.store import split_history_entries as split_history_entries
    from nanobot_desktop.engine.memory.git import MemoryVersion as MemoryVersion
    from nanobot_desktop.engine.sessions.archived import continue_archived as continue_archived
    from nanobot_desktop.engine.sessions.archived import list_archived as list_archived
    from nanobot_desktop.engine.sessions.export import message_text as message_text
    from nanobot_desktop.engine.sessions.file import is_hidden_message as is_hidden_message
    from nanobot_desktop.engine.sessions.listing import NEW_CHAT_TITLE as NEW_CHAT_TITLE
    from nanobot_desktop.engine.sessions.listing import SessionInfo as SessionInfo
    from nanobot_desktop.engine.sessions.branches import BranchPoint as BranchPoint
    from nanobot_desktop.engine.sessions.branches import branch_of as branch_of
    from nanobot_desktop.engine.skills import SKILL_FILE as SKILL_FILE
    from nanobot_desktop.engine.skills import SkillInfo as SkillInfo
    from nanobot_desktop.engine.skills import check_frontmatter as check_frontmatter
    from nanobot_desktop.engine.agent.tool_runner import CANCELLED_RESULT as CANCELLED_RESULT
    from nanobot_desktop.engine.tools.policy import DEFAULT_DECISIONS as DEFAULT_DECISIONS
    from nanobot_desktop.engine.tools.policy import exec_allow_possible as exec_allow_possible
    from nanobot_desktop.engine.tools.sandbox import SandboxSupport as SandboxSupport
    from nanobot_desktop.engine.tools.sandbox import process_limit_mechanism as process_limit_mechanism
    from nanobot_desktop.engine.tools.sandbox import sandbox_support as sandbox_support
    from nanobot_desktop.engine.workspace import Workspace as Workspace
    from nanobot_desktop.engine.workspace import atomic_write_bytes as atomic_write_bytes
    from nanobot_desktop.engine.workspace import atomic_write_text as atomic_write_text
    from nanobot_desktop.engine.workspace import StorageError as StorageError
    from nanobot_desktop.engine.workspace import WorkspaceError as WorkspaceError
    from nanobot_desktop.engine.workspace import storage_error as storage_error
    from nanobot_desktop.engine.events import WaitingForModel as WaitingForModel
    from nanobot_desktop.engine.events import Origin as Origin
    from nanobot_desktop.engine.events import ToolStatus as ToolStatus
    from nanobot_desktop.engine.sessions.file import file_name_problem as file_name_problem
    from nanobot_desktop.engine.sessions.store import safe_key as safe_key
    from nanobot_desktop.engine.sessions.key import SessionKey as SessionKey
    from nanobot_desktop.engine.sessions.key import SessionKeyError as SessionKeyError
    from nanobot_desktop.engine.mcp import McpServersChanged as McpServersChanged
    from nanobot_desktop.engine.mcp import McpSpecError as McpSpecError
    from nanobot_desktop.engine.mcp import ServerStatus as ServerStatus
    from nanobot_desktop.engine.mcp import entry_from_fields as entry_from_fields
    from nanobot_desktop.engine.mcp import mcp_settings as mcp_settings
    from nanobot_desktop.engine.mcp import parse_pasted_servers as parse_pasted_servers
    from nanobot_desktop.engine.llm.catalog import ModelOption as ModelOption
    from nanobot_desktop.engine.llm.catalog import ProviderModels as ProviderModels
    from nanobot_desktop.engine.events import BudgetCrossed as BudgetCrossed
    from nanobot_desktop.engine.events import UsageRecorded as UsageRecorded
    from nanobot_desktop.engine.usage.prices import DEFAULT_PRICES as DEFAULT_PRICES
    from nanobot_desktop.engine.usage.prices import ModelPrice as ModelPrice
    from nanobot_desktop.engine.usage.prices import model_key as model_key
    from nanobot_desktop.engine.usage.prices import price_for as price_for
    from nanobot_desktop.engine.usage.reader import CHART_DAYS as CHART_DAYS
    from nanobot_desktop.engine.usage.reader import Totals as Totals
    from nanobot_desktop.engine.usage.reader import UsageSummary as UsageSummary
    from nanobot_desktop.engine.sync.syncthing import SyncStatus as SyncStatus
    from nanobot_desktop.engine.background.cron_types import CronJob as CronJob

# name -> the module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Engine", "open_settings_files"), "runtime"),
    **dict.fromkeys(("AppSettings", "Config", "ConfigError", "LOCAL_KEY_PLACEHOLDER", "cron_store_path",
                     "default_config_path", "load_config", "logs_dir", "patch_config_file", "patch_settings",
                     "saved_language", "saved_theme"), "config"),
    **dict.fromkeys(("ApprovalAnswer", "ApprovalReply", "ApprovalRequest", "ApprovalRequested", "ApprovalSource",
                     "ApprovalSurface", "BackgroundOwnerChanged", "ConfigChanged", "ConsolidationFinished",
                     "ConsolidationStarted", "CronJobRan", "Event", "EventBus", "FileChanged", "HeartbeatDecided",
                     "HeartbeatRan", "LLMCallFinished", "LLMCallStarted", "OutboundMessage", "Progress",
                     "ReasoningDelta", "SessionChanged", "SessionLinesLost", "SubagentFinished", "SubagentStarted", "TextDelta",
                     "ToolCallFinished", "ToolCallStarted", "TurnCancelled", "TurnFailed", "TurnFinished",
                     "TurnStarted"), "events"),
    **dict.fromkeys(("MAX_IMAGE_BYTES", "SECTION_SEPARATOR", "sniff_image_mime", "strip_runtime_for_save"), "agent.context"),
    **dict.fromkeys(("CronSchedule", "describe_schedule", "never_fires_reason"), "background.cron"),
    **dict.fromkeys(("DEFAULT_MISSED_RULE", "MISSED_RULES", "MISSED_RULE_WORDS", "is_system_job"), "background.cron_types"),
    **dict.fromkeys(("SKIP_WORDS", "analyse"), "background.heartbeat_rule"),
    **dict.fromkeys(("HistoryEntry", "HistoryJournal"), "memory.history_journal"),
    **dict.fromkeys(("DEFAULT_CONTEXT_WINDOW_TOKENS", "LayoutKind", "detect_layout", "dream_settings",
                     "prepare_workspace"), "layout"),
    **dict.fromkeys(("DEFAULT_CANDIDATES", "LocalServer", "discover_local_servers"), "llm.discovery"),
    "make_provider": "llm.provider",
    **dict.fromkeys(("ModelOption", "ProviderModels"), "llm.catalog"),
    **dict.fromkeys(("PROVIDER_PRESETS", "ProviderPreset", "local_preset_for_base", "provider_entry",
                     "resolve_provider", "ConfiguredEntry", "default_route", "preset_entry", "provider_entries",
                     "with_entries"), "llm.registry"),
    "ProviderError": "llm.types",
    "split_history_entries": "memory.store",
    "MemoryVersion": "memory.git",
    **dict.fromkeys(("continue_archived", "list_archived"), "sessions.archived"),
    **dict.fromkeys(("message_media", "message_text", "user_text"), "sessions.export"),
    "SessionInfo": "sessions.listing",
    "NEW_CHAT_TITLE": "sessions.listing",
    **dict.fromkeys(("BranchPoint", "branch_of"), "sessions.branches"),
    **dict.fromkeys(("SKILL_FILE", "SkillInfo", "check_frontmatter"), "skills"),
    "CANCELLED_RESULT": "agent.tool_runner",
    **dict.fromkeys(("DEFAULT_DECISIONS", "exec_allow_possible"), "tools.policy"),
    **dict.fromkeys(("ApprovalRefused", "Approvals"), "agent.approvals"),
    **dict.fromkeys(("SandboxSupport", "process_limit_mechanism", "sandbox_support"), "tools.sandbox"),
    **dict.fromkeys(("StorageError", "Workspace", "WorkspaceError", "storage_error", "atomic_write_bytes",
                     "atomic_write_text"), "workspace"),
    **dict.fromkeys(("WaitingForModel", "ApprovalAnswered", "RetryScheduled", "Origin", "ToolStatus"), "events"),
    **dict.fromkeys(("file_name_problem", "is_hidden_message"), "sessions.file"),
    "safe_key": "sessions.store",
    **dict.fromkeys(("SessionKey", "SessionKeyError"), "sessions.key"),
    **dict.fromkeys(("Workspace", "atomic_write_bytes", "atomic_write_text"), "workspace"),
    **dict.fromkeys(("McpServersChanged", "McpSpecError", "ServerStatus", "entry_from_fields", "mcp_settings",
                     "parse_pasted_servers"), "mcp"),
    **dict.fromkeys(("BudgetCrossed", "UsageRecorded"), "events"),
    **dict.fromkeys(("DEFAULT_PRICES", "ModelPrice", "model_key", "price_for"), "usage.prices"),
    **dict.fromkeys(("CHART_DAYS", "Totals", "UsageSummary"), "usage.reader"),
    "SyncStatus": "sync.syncthing",
    "CronJob": "background.cron_types",
}

# the events module and every name of _EXPORTS
__all__ = ["events", "AppSettings", "ApprovalAnswer", "ApprovalAnswered", "ApprovalRefused", "ApprovalReply", "Approvals",
           "ApprovalRequest", "ApprovalRequested", "ApprovalSource", "ApprovalSurface", "RetryScheduled",
           "BackgroundOwnerChanged", "CANCELLED_RESULT",
           "Config", "ConfigChanged", "ConfigError", "ConsolidationFinished", "ConsolidationStarted", "CronJobRan",
           "CronSchedule", "FileChanged", "DEFAULT_CANDIDATES", "DEFAULT_CONTEXT_WINDOW_TOKENS", "DEFAULT_DECISIONS",
           "DEFAULT_MISSED_RULE", "Engine", "Event", "EventBus", "HeartbeatDecided", "HeartbeatRan", "HistoryEntry",
           "HistoryJournal", "LLMCallFinished", "LLMCallStarted", "LOCAL_KEY_PLACEHOLDER", "LayoutKind",
           "LocalServer", "MISSED_RULES", "MISSED_RULE_WORDS", "MemoryVersion", "OutboundMessage", "PROVIDER_PRESETS",
           "Progress", "ProviderError", "ProviderPreset", "ReasoningDelta", "SECTION_SEPARATOR", "SKILL_FILE",
           "SKIP_WORDS", "SandboxSupport", "SessionChanged", "SessionLinesLost",
           "SessionInfo", "NEW_CHAT_TITLE", "BranchPoint", "branch_of",
           "SkillInfo", "SubagentFinished",
           "SubagentStarted", "TextDelta", "ToolCallFinished", "ToolCallStarted", "TurnCancelled", "TurnFailed",
           "TurnFinished", "TurnStarted", "Workspace", "analyse", "atomic_write_bytes", "atomic_write_text",
           "check_frontmatter", "continue_archived", "cron_store_path", "default_config_path", "describe_schedule", "detect_layout",
           "discover_local_servers", "dream_settings", "exec_allow_possible", "is_system_job", "load_config",
           "list_archived", "local_preset_for_base", "logs_dir", "make_provider", "message_text", "never_fires_reason",
           "open_settings_files", "patch_config_file", "patch_settings", "prepare_workspace", "saved_language",
           "saved_theme", "provider_entry", "ConfiguredEntry", "default_route", "preset_entry", "provider_entries",
           "with_entries",
           "resolve_provider", "process_limit_mechanism", "sandbox_support", "split_history_entries",
           "strip_runtime_for_save", "is_hidden_message",
           "StorageError", "WaitingForModel", "WorkspaceError", "file_name_problem", "safe_key", "storage_error",
           "SessionKey", "SessionKeyError",
           "McpServersChanged", "McpSpecError", "ServerStatus", "entry_from_fields", "mcp_settings",
           "parse_pasted_servers", "ModelOption", "ProviderModels", "MAX_IMAGE_BYTES", "sniff_image_mime",
           "message_media", "user_text",
           "BudgetCrossed", "UsageRecorded", "DEFAULT_PRICES", "ModelPrice", "model_key", "price_for", "CHART_DAYS",
           "Totals", "UsageSummary", "Origin", "ToolStatus",
           "SyncStatus", "CronJob"]

__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, globals(), submodules=("events",))
