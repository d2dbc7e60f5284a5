"""What the provider form means for the config: the preset serving the model now, and the patch a choice makes.

Qt-free apart from the sentences' translation: the form (provider_form.py) shows a `ProviderChoice`;
Settings and onboarding turn it into the config keys to change (`provider_patch`), in the form both
nanobot 0.1.4 and 0.3.x run.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from nanobot_desktop.engine import (LOCAL_KEY_PLACEHOLDER, PROVIDER_PRESETS, AppSettings, Config, ConfigError,
                                    ConfiguredEntry, ProviderPreset, default_route, local_preset_for_base,
                                    preset_entry, provider_entries, provider_entry, resolve_provider, with_entries)
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


def default_entry_name(config: Config) -> str:
    """The registry name of the block serving the default model now ("" when none can)."""
    try:
        return resolve_provider(config).name
    except ConfigError:
        return ""


def entry_preset(config: Config, entry: ConfiguredEntry, app: AppSettings | None = None) -> str:
    """The preset a configured block is shown as: a local server by what it is, else the provider itself."""
    if entry.name == "custom":
        remembered = app.local_servers.get("custom") if app is not None else None
        if remembered is not None and remembered.api_base == entry.api_base and remembered.kind in PRESETS:
            return remembered.kind
        return local_preset_for_base(entry.api_base) or "custom"
    return {"ollama": "ollama", "lm_studio": "lmstudio"}.get(entry.name) or (entry.name if entry.name in PRESETS else "custom")


def duplicate_problem(choices: list[ProviderChoice], v03: bool) -> str | None:
    """Why these providers cannot all be written (two of them would share one `providers.<entry>`)."""
    seen: dict[str, ProviderChoice] = {}
    for choice in choices:
        entry = preset_entry(PRESETS[choice.name], v03)
        if entry in seen:
            first = seen[entry]
            if entry == "custom":
                return translate("Settings", "{first} and {second} would both be written as providers.custom: the "
                                 "nanobot CLI keeps one OpenAI-compatible server there. Keep one of them.").format(
                    first=preset_label(PRESETS[first.name]), second=preset_label(PRESETS[choice.name]))
            return translate("Settings", "{provider} is listed twice: keep one.").format(
                provider=preset_label(PRESETS[choice.name]))
        seen[entry] = choice
    return None


def provider_patch(config: Config, choice: ProviderChoice, others: tuple[ProviderChoice, ...] = (),
                   v03: bool = False, removed: tuple[str, ...] = ()) -> dict[str, object]:
    """The settings to change for the default provider `choice` and the `others` configured beside it
    (each with its own key and URL); the blocks named in `removed` (registry names the person took
    off the list) are emptied.
    Local servers are written as `providers.custom` with a placeholder key (nanobot 0.1.4 and 0.3.x
    run it), or in a 0.3.x workspace Ollama and LM Studio under their own names. The provider is
    left to nanobot's rules ("auto") whenever they send the default model to `choice`
    (`default_route`); a preset's default URL is not written into a block that had none."""
    patch: dict[str, object] = {}
    entries: dict[str, tuple[str, str] | None] = {}
    for item in (choice, *others):
        preset = PRESETS[item.name]
        name = preset_entry(preset, v03)
        entry, alias = provider_entry(config, name)
        prefix = f"providers.{alias}"
        local = name == "custom" or not preset.needs_key
        key = item.api_key or (LOCAL_KEY_PLACEHOLDER if name == "custom" else "")
        if key or not local:
            patch[f"{prefix}.apiKey"] = key
        if (entry is not None and entry.api_base is not None) or item.base_url != (preset.api_base or "") or local:
            patch[f"{prefix}.apiBase"] = item.base_url
        entries[name] = (key, item.base_url)
        if name == "custom":
            patch["app.localServers.custom"] = {"kind": item.name, "apiBase": item.base_url}
    for old in provider_entries(config):
        if old.name in removed and old.name not in entries:  # the block stays, emptied (the file keeps its shape)
            patch[f"providers.{old.alias}.apiKey"] = ""
            patch[f"providers.{old.alias}.apiBase"] = None
            entries[old.name] = None
    model, provider = default_route(with_entries(config, entries), preset_entry(PRESETS[choice.name], v03), choice.model)
    patch["agents.defaults.provider"] = provider
    patch["agents.defaults.model"] = model
    return patch
