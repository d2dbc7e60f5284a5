"""Where the config, the app's own settings file and the runtime data live (all beside config.json)."""

from __future__ import annotations

import os
from pathlib import Path

APP_SETTINGS_NAME = "desktop.json"


def default_config_path() -> Path:
    return Path.home() / ".nanobot" / "config.json"


def data_dir(config_path: Path | None = None) -> Path:
    """Runtime data lives next to the config file, as in the original (cron/, logs/, media/)."""
    return Path(config_path or default_config_path()).expanduser().parent


def cron_store_path(config_path: Path | None = None) -> Path:
    return data_dir(config_path) / "cron" / "jobs.json"


def logs_dir(config_path: Path | None = None) -> Path:
    return data_dir(config_path) / "logs"


def app_settings_path(config_path: Path | None = None) -> Path:
    """The app's own settings (`desktop.json`), beside the config the CLI shares: one per config."""
    return data_dir(config_path) / APP_SETTINGS_NAME


def keyed_cache_file(kind: str, prefix: str, key: Path, suffix: str) -> Path:
    """A file of the app's cache folder (`$XDG_CACHE_HOME/nanobot-desktop/<kind>/`) for one folder or
    workspace `key` (already resolved), named by a digest of its path: only data that can be made again.
    hashlib is imported here: the window's frame reads this module before its first paint, and hashlib's
    OpenSSL start costs 6-8 ms there."""
    import hashlib

    digest = hashlib.sha256(str(key).encode("utf-8")).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "nanobot-desktop" / kind / f"{prefix}-{digest}{suffix}"
