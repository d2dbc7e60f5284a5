"""desktop.json: the app's own settings, beside config.json (which stays the CLI's).

Window and tray behaviour, per-tool approval, disabled skills and the local servers the user chose
live here, so nothing in config.json is unknown to the nanobot CLI. Written atomically, like the config.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.config.io import (apply_patch, patch_config_file, read_json_object, read_text_or_none,
                                              validate_model, write_json_file)
from nanobot_desktop.engine.config.models import AppSettings, Config
from nanobot_desktop.engine.config.paths import app_settings_path


def load_app_settings(config_path: Path) -> AppSettings:
    """The app's settings for this config (defaults when the file does not exist yet)."""
    path = app_settings_path(config_path)
    data = read_json_object(path) if path.exists() else {}
    settings: AppSettings = validate_model(AppSettings, data, path)
    settings._source_path = path
    return settings


def patch_app_settings(config_path: Path, patch: Mapping[str, Any]) -> tuple[AppSettings, list[str]]:
    """Apply `patch` (paths relative to the file) to desktop.json as it is on disk; validate; write."""
    path = app_settings_path(config_path)
    original = read_text_or_none(path)
    data = read_json_object(path) if original is not None else {}
    changed = apply_patch(data, AppSettings, patch)
    settings: AppSettings = validate_model(AppSettings, data, path)
    settings._source_path = path
    write_json_file(path, data, original)
    return settings, changed


def patch_settings(config_path: Path, patch: Mapping[str, Any]) -> tuple[Config | None, AppSettings | None, list[str]]:
    """Apply a patch to both files: paths starting with "app." go to desktop.json, all others to
    config.json. Returns the new config / app settings (None when that file was not touched) and the
    canonical paths that changed. The config is written first: an invalid config value leaves both."""
    config_patch = {k: v for k, v in patch.items() if not k.startswith("app.")}
    app_patch = {k[4:]: v for k, v in patch.items() if k.startswith("app.")}
    config: Config | None = None
    app: AppSettings | None = None
    changed: list[str] = []
    if config_patch:
        config, paths = patch_config_file(config_path, config_patch)
        changed += paths
    if app_patch:
        app, paths = patch_app_settings(config_path, app_patch)
        changed += ["app." + p for p in paths]
    return config, app, changed
