"""Values of desktop.json read before the window paints (the theme, the UI language), without pydantic.

The full, validated read is `load_app_settings` (models.AppSettings); building those models costs
tens of milliseconds, which start-up cannot spend before the first paint. So this reads the file
with `json` alone and accepts only a value the AppSettings field accepts; anything else (no file, a
file that does not parse, an unknown value) means "system", and the full read that follows reports
what is wrong with the file as it always does.
"""

from __future__ import annotations

import json
from pathlib import Path

from nanobot_desktop.engine.config.paths import app_settings_path, default_config_path

THEMES = ("system", "light", "dark")  # the values of AppSettings.theme (tests/engine checks they agree)
LANGUAGES = ("system", "en", "zh_CN")  # the values of AppSettings.language (likewise)


def saved_theme(config_path: str | Path | None = None) -> str:
    """The theme saved in desktop.json beside this config ("system" when none is saved or readable)."""
    return _saved_choice(config_path, "theme", THEMES)


def saved_language(config_path: str | Path | None = None) -> str:
    """The UI language saved in desktop.json beside this config ("system" when none is saved or readable)."""
    return _saved_choice(config_path, "language", LANGUAGES)


def _saved_choice(config_path: str | Path | None, key: str, choices: tuple[str, ...]) -> str:
    path = app_settings_path(Path(config_path).expanduser() if config_path else default_config_path())
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return "system"
    value = data.get(key, "system") if isinstance(data, dict) else "system"
    return value if value in choices else "system"
