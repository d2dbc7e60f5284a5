"""The settings: config.json shared with the nanobot CLI, and desktop.json, the app's own.

models (pydantic, camel/snake) | io (load, patch, atomic write through symlinks) | env (NANOBOT_*) |
app_file (desktop.json) | migrate (moving the old app's keys out of config.json) | paths.
Provider choice is `nanobot_desktop.engine.llm.registry` (it needs the models; the models never need it).
"""

from nanobot_desktop.engine.config.app_file import load_app_settings, patch_app_settings, patch_settings
from nanobot_desktop.engine.config.errors import ConfigError, display_path
from nanobot_desktop.engine.config.io import (DELETE, config_value, default_config_data, load_config,
                                              patch_config_file)
from nanobot_desktop.engine.config.migrate import LOCAL_KEY_PLACEHOLDER, Migration, migrate_app_keys
from nanobot_desktop.engine.config.models import (DEFAULT_TOOL_APPROVAL, AppSettings, ApprovalPolicy, Config,
                                                  ExecToolConfig, LocalServer, McpServerConfig, ProviderConfig,
                                                  ToolsConfig, WebToolsConfig)
from nanobot_desktop.engine.config.paths import (APP_SETTINGS_NAME, app_settings_path, cron_store_path, data_dir,
                                                 default_config_path, logs_dir)

__all__ = [
    "APP_SETTINGS_NAME", "AppSettings", "ApprovalPolicy", "Config", "ConfigError", "DEFAULT_TOOL_APPROVAL", "DELETE",
    "LOCAL_KEY_PLACEHOLDER", "LocalServer", "Migration", "ProviderConfig", "app_settings_path", "config_value",
    "cron_store_path", "data_dir", "default_config_data", "default_config_path", "display_path",
    "load_app_settings", "load_config", "logs_dir", "migrate_app_keys", "patch_app_settings", "patch_config_file",
    "patch_settings", "ExecToolConfig", "McpServerConfig", "ToolsConfig", "WebToolsConfig",
]
