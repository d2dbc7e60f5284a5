"""Moving what older versions of this app wrote into config.json out to desktop.json — once.

Earlier versions kept a top-level `desktop` block (nanobot 0.1.4.post4 rejects the whole file for it)
and app-only keys (`tools.approval`, `agents.defaults.disabledSkills`, `providers.ollama`,
`providers.lmstudio`, which the CLI's `onboard` refresh drops), and saved a discovered local server
under a provider name or without a key the CLI cannot run. On start this module moves those keys into
desktop.json and rewrites the local server as the `custom` provider with a placeholder key, keeping a
backup of the original file and logging one line. Everything else in the file keeps its order and
formatting. A config that has no mark of the old app (no `desktop` block, no `tools.approval`, no
`providers.lmstudio`) is never touched, and in a file nanobot 0.3.x wrote (it has 0.3.x's top-level
`api`, `transcription` or `modelPresets`) `disabledSkills` and `providers.ollama` are 0.3.x's own and stay.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.config.errors import ConfigError, display_path
from nanobot_desktop.engine.config.io import read_json_object, read_text_or_none, write_json_file
from nanobot_desktop.engine.config.keys import normalise
from nanobot_desktop.engine.config.models import AppSettings
from nanobot_desktop.engine.config.paths import app_settings_path
from nanobot_desktop.engine.workspace import atomic_write_bytes

log = logging.getLogger(__name__)

LOCAL_KEY_PLACEHOLDER = "no-key"  # local servers ignore the key; both CLIs want one to be set
_LOCAL_DEFAULT_BASES = {"ollama": "http://localhost:11434/v1", "lmstudio": "http://localhost:1234/v1",
                        "vllm": "http://localhost:8000/v1", "custom": "http://localhost:8000/v1"}


@dataclass
class Migration:
    moved: list[str] = field(default_factory=list)
    backup: Path | None = None


def _pop(tree: Any, *path: str) -> Any:
    """Remove and return tree[path] (camel or snake spelling of the last key), or None."""
    for key in path[:-1]:
        if not isinstance(tree, dict) or not isinstance(tree.get(key), dict):
            return None
        tree = tree[key]
    last = path[-1]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in last)
    for spelling in (last, snake):
        if isinstance(tree, dict) and spelling in tree:
            return tree.pop(spelling)
    return None


def _block(data: dict[str, Any], *path: str) -> dict[str, Any] | None:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None  # type: ignore[assignment]
    return data if isinstance(data, dict) else None


def _has_old_app_marks(data: dict[str, Any]) -> bool:
    tools = _block(data, "tools") or {}
    providers = _block(data, "providers") or {}
    return "desktop" in data or "approval" in tools or "lmstudio" in providers


def _fix_local_provider(data: dict[str, Any], moved_servers: dict[str, Any], app: dict[str, Any],
                        moved: list[str]) -> None:
    """provider "ollama"/"lmstudio"/keyless "vllm"/"custom" -> `custom` with a placeholder key."""
    defaults = _block(data, "agents", "defaults")
    providers = _block(data, "providers")
    if defaults is None or providers is None:
        return
    forced = str(defaults.get("provider") or "auto").strip().lower().replace("-", "").replace("_", "")
    model_prefix = str(defaults.get("model") or "").split("/", 1)[0].lower().replace("-", "").replace("_", "")
    if forced == "auto" and model_prefix in moved_servers:  # "ollama/llama3" served by the moved entry
        forced = model_prefix
    kind = {"ollama": "ollama", "lmstudio": "lmstudio", "vllm": "vllm", "custom": "custom"}.get(forced)
    if kind is None:
        return
    source = moved_servers.get(kind) if kind in ("ollama", "lmstudio") else providers.get(kind)
    source = source if isinstance(source, dict) else {}
    key = source.get("apiKey") or source.get("api_key")
    if kind in ("custom",) and key:
        return  # already a form both CLIs run
    base = source.get("apiBase") or source.get("api_base") or _LOCAL_DEFAULT_BASES[kind]
    custom = providers.setdefault("custom", {})
    if not isinstance(custom, dict):
        return
    custom["apiKey"] = key or LOCAL_KEY_PLACEHOLDER
    custom["apiBase"] = base
    defaults["provider"] = "custom"
    model = defaults.get("model")
    if isinstance(model, str) and "/" in model and \
            model.split("/", 1)[0].lower().replace("-", "_") in (kind, "lm_studio", "hosted_vllm"):
        defaults["model"] = model.split("/", 1)[1]
    app.setdefault("localServers", {})["custom"] = {"kind": kind, "apiBase": base}
    moved.append(f"agents.defaults.provider {forced!r} -> \"custom\"")


def migrate_app_keys(config_path: Path) -> Migration | None:
    """Move the old app's keys out of config.json (see the module doc). None when there was nothing
    to move; raises ConfigError when the config cannot be read or rewritten."""
    original = read_text_or_none(config_path)
    if not original:
        return None
    data = read_json_object(config_path)
    if not _has_old_app_marks(data):
        return None
    before = copy.deepcopy(data)
    app: dict[str, Any] = {}
    moved: list[str] = []
    desktop = data.pop("desktop", None)
    if desktop is not None:
        moved.append("desktop")
        if isinstance(desktop, dict):
            app.update(normalise(desktop, AppSettings))
    approval = _pop(data, "tools", "approval")
    if approval is not None:
        moved.append("tools.approval")
        app["toolApproval"] = approval
    written_by_03 = any(key in data for key in ("api", "transcription", "modelPresets"))
    disabled = None if written_by_03 else _pop(data, "agents", "defaults", "disabledSkills")
    if disabled is not None:
        moved.append("agents.defaults.disabledSkills")
        app["disabledSkills"] = disabled
    servers: dict[str, Any] = {}
    for name in ("lmstudio",) if written_by_03 else ("ollama", "lmstudio"):
        block = _pop(data, "providers", name)
        if block is not None:
            moved.append(f"providers.{name}")
            servers[name] = block if isinstance(block, dict) else {}
    _fix_local_provider(data, servers, app, moved)
    if data == before:
        return None

    app_path = app_settings_path(config_path)
    existing = read_json_object(app_path) if app_path.exists() else {}
    merged = {**app, **existing}  # desktop.json already there is newer than the config's leftovers
    try:
        AppSettings.model_validate(merged)
    except ValueError:
        merged = existing  # a bad old block is dropped (it is in the backup), never a reason not to start
    backup = _backup_path(config_path)
    atomic_write_bytes(backup, config_path.read_bytes())
    write_json_file(app_settings_path(config_path), merged, read_text_or_none(app_path))
    write_json_file(config_path, data, original)
    log.info("moved app-only settings out of %s into %s: %s (original kept as %s)", display_path(config_path),
             app_path.name, ", ".join(moved), backup.name)
    return Migration(moved=moved, backup=backup)


def _backup_path(config_path: Path) -> Path:
    candidate = config_path.with_name(config_path.name + ".before-desktop-json")
    if candidate.exists():
        candidate = config_path.with_name(f"{config_path.name}.before-desktop-json-{datetime.now():%Y%m%d-%H%M%S}")
    return candidate


__all__ = ["LOCAL_KEY_PLACEHOLDER", "Migration", "migrate_app_keys", "ConfigError"]
