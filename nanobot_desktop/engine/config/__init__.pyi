"""The settings' public names: config.json shared with the nanobot CLI, and desktop.json, the app's own.

The one place these names are written: mypy reads this stub, and `__init__.py` reads it at run time
(engine/surface.py), so importing `paths` or `peek` never builds the pydantic models.
To add a name: one line `from .module import Name as Name`, in its module's group.
"""

from .app_file import load_app_settings as load_app_settings
from .app_file import patch_app_settings as patch_app_settings
from .app_file import patch_settings as patch_settings

from .errors import ConfigError as ConfigError
from .errors import display_path as display_path

from .io import config_value as config_value
from .io import default_config_data as default_config_data
from .io import DELETE as DELETE
from .io import load_config as load_config
from .io import patch_config_file as patch_config_file

from .migrate import LOCAL_KEY_PLACEHOLDER as LOCAL_KEY_PLACEHOLDER
from .migrate import migrate_app_keys as migrate_app_keys
from .migrate import Migration as Migration

from .models import ApprovalPolicy as ApprovalPolicy
from .models import AppSettings as AppSettings
from .models import Config as Config
from .models import DEFAULT_TOOL_APPROVAL as DEFAULT_TOOL_APPROVAL
from .models import ExecToolConfig as ExecToolConfig
from .models import LocalServer as LocalServer
from .models import McpServerConfig as McpServerConfig
from .models import ProviderConfig as ProviderConfig
from .models import ToolsConfig as ToolsConfig
from .models import WebToolsConfig as WebToolsConfig

from .paths import APP_SETTINGS_NAME as APP_SETTINGS_NAME
from .paths import app_settings_path as app_settings_path
from .paths import cron_store_path as cron_store_path
from .paths import data_dir as data_dir
from .paths import default_config_path as default_config_path
from .paths import logs_dir as logs_dir

from .peek import saved_language as saved_language
from .peek import saved_theme as saved_theme
