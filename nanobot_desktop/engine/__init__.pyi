"""The engine's public surface: everything the window and the command line may use, by name.

The one place a public name is written. The GUI imports from `nanobot_desktop.engine` only, never
from its modules (tests/test_architecture.py checks it), so the modules behind these names can move
without touching a panel. mypy reads this stub; at run time `__init__.py` reads it too
(engine/surface.py) and imports a name's module on first use, so importing the package costs nothing
and `Engine` (openai) or `Config` (pydantic) are only imported by the code that touches them.

To add a name: one line `from .module import Name as Name` below, in its module's group (a
submodule of this package: `from . import sub as sub`). No other form is read.
"""

from . import events as events

from .runtime import Engine as Engine
from .runtime import open_settings_files as open_settings_files

from .config import AppSettings as AppSettings
from .config import Config as Config
from .config import ConfigError as ConfigError
from .config import cron_store_path as cron_store_path
from .config import default_config_path as default_config_path
from .config import load_config as load_config
from .config import LOCAL_KEY_PLACEHOLDER as LOCAL_KEY_PLACEHOLDER
from .config import logs_dir as logs_dir
from .config import patch_config_file as patch_config_file
from .config import patch_settings as patch_settings
from .config import saved_language as saved_language
from .config import saved_theme as saved_theme

from .events import ApprovalAnswer as ApprovalAnswer
from .events import ApprovalAnswered as ApprovalAnswered
from .events import ApprovalReply as ApprovalReply
from .events import ApprovalRequest as ApprovalRequest
from .events import ApprovalRequested as ApprovalRequested
from .events import ApprovalSource as ApprovalSource
from .events import ApprovalSurface as ApprovalSurface
from .events import BackgroundOwnerChanged as BackgroundOwnerChanged
from .events import BudgetCrossed as BudgetCrossed
from .events import ConfigChanged as ConfigChanged
from .events import ConsolidationFinished as ConsolidationFinished
from .events import ConsolidationStarted as ConsolidationStarted
from .events import CronJobRan as CronJobRan
from .events import Event as Event
from .events import EventBus as EventBus
from .events import FileChanged as FileChanged
from .events import HeartbeatDecided as HeartbeatDecided
from .events import HeartbeatRan as HeartbeatRan
from .events import LLMCallFinished as LLMCallFinished
from .events import LLMCallStarted as LLMCallStarted
from .events import Origin as Origin
from .events import OutboundMessage as OutboundMessage
from .events import Progress as Progress
from .events import ReasoningDelta as ReasoningDelta
from .events import RetryScheduled as RetryScheduled
from .events import SessionChanged as SessionChanged
from .events import SessionLinesLost as SessionLinesLost
from .events import SubagentFinished as SubagentFinished
from .events import SubagentStarted as SubagentStarted
from .events import TextDelta as TextDelta
from .events import ToolCallFinished as ToolCallFinished
from .events import ToolCallStarted as ToolCallStarted
from .events import ToolStatus as ToolStatus
from .events import TurnCancelled as TurnCancelled
from .events import TurnFailed as TurnFailed
from .events import TurnFinished as TurnFinished
from .events import TurnStarted as TurnStarted
from .events import UsageRecorded as UsageRecorded
from .events import WaitingForModel as WaitingForModel

from .agent.approvals import ApprovalRefused as ApprovalRefused
from .agent.approvals import Approvals as Approvals

from .agent.context import MAX_IMAGE_BYTES as MAX_IMAGE_BYTES
from .agent.context import SECTION_SEPARATOR as SECTION_SEPARATOR
from .agent.context import sniff_image_mime as sniff_image_mime
from .agent.context import strip_runtime_for_save as strip_runtime_for_save

from .sessions.export import message_media as message_media
from .sessions.export import message_text as message_text
from .sessions.export import user_text as user_text

from .background.cron import CronSchedule as CronSchedule
from .background.cron import describe_schedule as describe_schedule
from .background.cron import never_fires_reason as never_fires_reason

from .background.cron_types import CronJob as CronJob
from .background.cron_types import DEFAULT_MISSED_RULE as DEFAULT_MISSED_RULE
from .background.cron_types import is_system_job as is_system_job
from .background.cron_types import MISSED_RULE_WORDS as MISSED_RULE_WORDS
from .background.cron_types import MISSED_RULES as MISSED_RULES

from .background.heartbeat_rule import analyse as analyse
from .background.heartbeat_rule import SKIP_WORDS as SKIP_WORDS

from .memory.history_journal import HistoryEntry as HistoryEntry
from .memory.history_journal import HistoryJournal as HistoryJournal

from .layout import DEFAULT_CONTEXT_WINDOW_TOKENS as DEFAULT_CONTEXT_WINDOW_TOKENS
from .layout import detect_layout as detect_layout
from .layout import dream_settings as dream_settings
from .layout import LayoutKind as LayoutKind
from .layout import prepare_workspace as prepare_workspace

from .llm.discovery import DEFAULT_CANDIDATES as DEFAULT_CANDIDATES
from .llm.discovery import discover_local_servers as discover_local_servers
from .llm.discovery import LocalServer as LocalServer

from .llm.provider import make_provider as make_provider

from .llm.registry import ConfiguredEntry as ConfiguredEntry
from .llm.registry import default_route as default_route
from .llm.registry import local_preset_for_base as local_preset_for_base
from .llm.registry import preset_entry as preset_entry
from .llm.registry import provider_entries as provider_entries
from .llm.registry import provider_entry as provider_entry
from .llm.registry import PROVIDER_PRESETS as PROVIDER_PRESETS
from .llm.registry import ProviderPreset as ProviderPreset
from .llm.registry import resolve_provider as resolve_provider
from .llm.registry import with_entries as with_entries

from .llm.types import ProviderError as ProviderError

from .memory.store import split_history_entries as split_history_entries

from .memory.git import MemoryVersion as MemoryVersion

from .sessions.archived import continue_archived as continue_archived
from .sessions.archived import list_archived as list_archived

from .sessions.file import file_name_problem as file_name_problem
from .sessions.file import is_hidden_message as is_hidden_message

from .sessions.listing import NEW_CHAT_TITLE as NEW_CHAT_TITLE
from .sessions.listing import SessionInfo as SessionInfo

from .sessions.branches import branch_of as branch_of
from .sessions.branches import BranchPoint as BranchPoint

from .skills import check_frontmatter as check_frontmatter
from .skills import SKILL_FILE as SKILL_FILE
from .skills import SkillInfo as SkillInfo

from .agent.tool_runner import CANCELLED_RESULT as CANCELLED_RESULT

from .tools.policy import DEFAULT_DECISIONS as DEFAULT_DECISIONS
from .tools.policy import exec_allow_possible as exec_allow_possible

from .tools.sandbox import process_limit_mechanism as process_limit_mechanism
from .tools.sandbox import sandbox_support as sandbox_support
from .tools.sandbox import SandboxSupport as SandboxSupport

from .workspace import atomic_write_bytes as atomic_write_bytes
from .workspace import atomic_write_text as atomic_write_text
from .workspace import storage_error as storage_error
from .workspace import StorageError as StorageError
from .workspace import Workspace as Workspace
from .workspace import WorkspaceError as WorkspaceError

from .sessions.store import safe_key as safe_key

from .sessions.key import SessionKey as SessionKey
from .sessions.key import SessionKeyError as SessionKeyError

from .mcp import entry_from_fields as entry_from_fields
from .mcp import mcp_settings as mcp_settings
from .mcp import McpServersChanged as McpServersChanged
from .mcp import McpSpecError as McpSpecError
from .mcp import parse_pasted_servers as parse_pasted_servers
from .mcp import ServerStatus as ServerStatus

from .llm.catalog import ModelOption as ModelOption
from .llm.catalog import ProviderModels as ProviderModels

from .usage.prices import DEFAULT_PRICES as DEFAULT_PRICES
from .usage.prices import model_key as model_key
from .usage.prices import ModelPrice as ModelPrice
from .usage.prices import price_for as price_for

from .usage.reader import CHART_DAYS as CHART_DAYS
from .usage.reader import Totals as Totals
from .usage.reader import UsageSummary as UsageSummary

from .sync.syncthing import SyncStatus as SyncStatus

from .idle_threads import IdleExitingExecutor as IdleExitingExecutor
