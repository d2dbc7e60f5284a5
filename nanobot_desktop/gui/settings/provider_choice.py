"""What the provider form means for the config: the preset serving the model now, and the patch a choice makes.

Qt-free apart from the sentences' translation: the form (provider_form.py) shows a `ProviderChoice`;
Settings and onboarding turn it into the config keys to change (`provider_patch`), in the form both
nanobot 0.1.4 and 0.3.x run.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from nanobot_desktop.engine import (LOCAL_KEY_PLACEHOLDER, PROVIDER_PRESETS, AppSettings, Config, ConfigError,
                                    ProviderPreset, local_preset_for_base, provider_entry, resolve_provider)
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.engine_words import provider_label

PRESETS: dict[str, ProviderPreset] = {preset.name: preset for preset in PROVIDER_PRESETS}


def preset_label(preset: ProviderPreset) -> str:
    """The preset's name as shown: translated where it is a word or has a Chinese name, else the brand name."""
    return provider_label(preset.label)


def base_url_problem(text: str) -> str | None:
    """Why `text` cannot be an endpoint base URL, or None when it can."""
    text = text.strip()
    if not text:
        return translate("Settings", "Enter the endpoint's base URL, e.g. http://localhost:11434/v1")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https"):
        return translate("Settings", "The base URL must start with http:// or https://")
    try:
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError:
        return translate("Settings", "The port in the base URL is not a number between 1 and 65535")
    if not parts.hostname:
        return translate("Settings", "The base URL needs a host name after http:// or https://")
    return None


@dataclass(frozen=True)
class ProviderChoice:
    """What the provider form says: which `providers.<name>` entry, and the values for it."""

    name: str
    base_url: str
    api_key: str
    model: str


def preset_name_for(config: Config, app: AppSettings | None = None) -> str:
    """The preset that serves the configured model now ("custom" when none of ours does). A local
    server saved as `providers.custom` shows as the server it is (remembered in desktop.json, or
    guessed from its port)."""
    try:
        name = resolve_provider(config).name
    except ConfigError:
        name = config.agents.defaults.provider.strip().lower().replace("-", "_")
    if name in ("custom", "ollama", "lm_studio"):
        entry, _ = provider_entry(config, name)
        base = entry.api_base if entry is not None else None
        remembered = (app.local_servers.get("custom") if app is not None else None)
        if name == "custom" and remembered is not None and remembered.api_base == base and remembered.kind in PRESETS:
            return remembered.kind
        return {"ollama": "ollama", "lm_studio": "lmstudio"}.get(name) or local_preset_for_base(base) or "custom"
    return name if name in PRESETS else "custom"


def serving_entry_text(config: Config) -> str:
    """Which `providers.<entry>` serves the configured model, as nanobot picks it (or why none does)."""
    try:
        resolved = resolve_provider(config)
    except ConfigError as error:
        return translate("Settings", "No provider entry can serve the model yet: {reason}").format(
            reason=error.message.split(": ", 1)[-1])
    forced = config.agents.defaults.provider
    model = repr(config.agents.defaults.model)
    if forced.strip().lower() != "auto":
        return translate("Settings", "{entry} serves {model} (agents.defaults.provider is \"{provider}\"), in the app and in "
                         "the nanobot CLI.").format(entry=resolved.entry, model=model, provider=forced)
    return translate("Settings", "{entry} serves {model} (chosen by the model name), in the app and in the nanobot "
                     "CLI.").format(entry=resolved.entry, model=model)


def provider_patch(config: Config, choice: ProviderChoice) -> dict[str, object]:
    """The settings to change for `choice`. Local servers (and any keyless endpoint) are written as
    `providers.custom` with a placeholder key — the form both nanobot 0.1.4 and 0.3.x run. A preset's
    default URL is not written into an entry that had none (the file stays as it was)."""
    preset = PRESETS[choice.name]
    entry_name = preset.entry
    entry, alias = provider_entry(config, entry_name)
    prefix = f"providers.{alias}"
    patch: dict[str, object] = {f"{prefix}.apiKey": choice.api_key or (LOCAL_KEY_PLACEHOLDER if entry_name == "custom" else "")}
    if (entry is not None and entry.api_base is not None) or choice.base_url != (preset.api_base or "") \
            or entry_name == "custom":
        patch[f"{prefix}.apiBase"] = choice.base_url
    patch["agents.defaults.provider"] = entry_name
    patch["agents.defaults.model"] = choice.model
    if entry_name == "custom":
        patch["app.localServers.custom"] = {"kind": choice.name, "apiBase": choice.base_url}
    return patch
