"""The settings: config.json shared with the nanobot CLI, and desktop.json, the app's own.

models (pydantic, camel/snake) | io (load, patch, atomic write through symlinks) | env (NANOBOT_*) |
app_file (desktop.json) | migrate (moving the old app's keys out of config.json) | paths |
peek (the saved theme, read before the first paint without pydantic).
Provider choice is `nanobot_desktop.engine.llm.registry` (it needs the models; the models never need it).

Names are resolved on first use (PEP 562 `__getattr__`, engine/lazy_names.py):
importing `paths` or `peek` must not build the pydantic models (start-up time is measured).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nanobot_desktop.engine.lazy_names import lazy_attributes

if TYPE_CHECKING:
    from nanobot_desktop.engine.config.app_file import load_app_settings as load_app_settings
    from nanobot_desktop.engine.config.app_file import patch_app_settings as patch_app_settings
    from nanobot_desktop.engine.config.app_file import patch_settings as patch_settings
    from nanobot_desktop.engine.config.errors import ConfigError as ConfigError
    from nanobot_desktop.engine.config.errors import display_path as display_path
    from nanobot_desktop.engine.config.io import DELETE as DELETE
    from nanobot_desktop.engine.config.io import config_value as config_value
    from nanobot_desktop.engine.config.io import default_config_data as default_config_data
    from nanobot_desktop.engine.config.io import load_config as load_config
    from nanobot_desktop.engine.config.io import patch_config_file as patch_config_file
    from nanobot_desktop.engine.config.migrate import LOCAL_KEY_PLACEHOLDER as LOCAL_KEY_PLACEHOLDER
    from nanobot_desktop.engine.config.migrate import Migration as Migration
    from nanobot_desktop.engine.config.migrate import migrate_app_keys as migrate_app_keys
    from nanobot_desktop.engine.config.models import DEFAULT_TOOL_APPROVAL as DEFAULT_TOOL_APPROVAL
    from nanobot_desktop.engine.config.models import AppSettings as AppSettings
    from nanobot_desktop.engine.config.models import ApprovalPolicy as ApprovalPolicy
    from nanobot_desktop.engine.config.models import Config as Config
    from nanobot_desktop.engine.config.models import ExecToolConfig as ExecToolConfig
    from nanobot_desktop.engine.config.models import LocalServer as LocalServer
    from nanobot_desktop.engine.config.models import McpServerConfig as McpServerConfig
    from nanobot_desktop.engine.config.models import ProviderConfig as ProviderConfig
    from nanobot_desktop.engine.config.models import ToolsConfig as ToolsConfig
    from nanobot_desktop.engine.config.models import WebToolsConfig as WebToolsConfig
    from nanobot_desktop.engine.config.paths import APP_SETTINGS_NAME as APP_SETTINGS_NAME
    from nanobot_desktop.engine.config.paths import app_settings_path as app_settings_path
    from nanobot_desktop.engine.config.paths import cron_store_path as cron_store_path
    from nanobot_desktop.engine.config.paths import data_dir as data_dir
    from nanobot_desktop.engine.config.paths import default_config_path as default_config_path
    from nanobot_desktop.engine.config.paths import logs_dir as logs_dir
    from nanobot_desktop.engine.config.peek import saved_language as saved_language
    from nanobot_desktop.engine.config.peek import saved_theme as saved_theme

# name -> the module of this package that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("load_app_settings", "patch_app_settings", "patch_settings"), "app_file"),
    **dict.fromkeys(("ConfigError", "display_path"), "errors"),
    **dict.fromkeys(("DELETE", "config_value", "default_config_data", "load_config", "patch_config_file"), "io"),
    **dict.fromkeys(("LOCAL_KEY_PLACEHOLDER", "Migration", "migrate_app_keys"), "migrate"),
    **dict.fromkeys(("DEFAULT_TOOL_APPROVAL", "AppSettings", "ApprovalPolicy", "Config", "ExecToolConfig",
                     "LocalServer", "McpServerConfig", "ProviderConfig", "ToolsConfig", "WebToolsConfig"), "models"),
    **dict.fromkeys(("APP_SETTINGS_NAME", "app_settings_path", "cron_store_path", "data_dir", "default_config_path",
                     "logs_dir"), "paths"),
    **dict.fromkeys(("saved_language", "saved_theme"), "peek"),
}

__all__ = [
    "APP_SETTINGS_NAME", "AppSettings", "ApprovalPolicy", "Config", "ConfigError", "DEFAULT_TOOL_APPROVAL", "DELETE",
    "LOCAL_KEY_PLACEHOLDER", "LocalServer", "Migration", "ProviderConfig", "app_settings_path", "config_value",
    "cron_store_path", "data_dir", "default_config_data", "default_config_path", "display_path",
    "load_app_settings", "load_config", "logs_dir", "migrate_app_keys", "patch_app_settings", "patch_config_file",
    "patch_settings", "saved_language", "saved_theme", "ExecToolConfig", "McpServerConfig", "ToolsConfig", "WebToolsConfig",
]


__getattr__, __dir__ = lazy_attributes(__name__, _EXPORTS, globals())
