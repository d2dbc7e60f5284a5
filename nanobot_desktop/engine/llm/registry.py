"""Which endpoint serves a model: nanobot's provider rules, as OpenAI-compatible URLs.

The choice follows nanobot 0.1.4.post4 (`Config._match_provider`): a forced `agents.defaults.provider`,
else a model prefix naming a provider with a key, else a keyword, else the first provider with a
key. After those, as nanobot 0.3.x does, a local server configured with only a base URL (0.3.x's
`providers.ollama` / `providers.lmStudio`, which live in the file as extras) serves the model.
The app itself writes every local server as `providers.custom` with a placeholder key: the one form
both CLIs run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Mapping
from typing import NamedTuple

from pydantic import ValidationError

from nanobot_desktop.engine.config.env_refs import expand_env_refs
from nanobot_desktop.engine.config.errors import ConfigError, display_path
from nanobot_desktop.engine.config.migrate import LOCAL_KEY_PLACEHOLDER
from nanobot_desktop.engine.config.models import Config, LocalServer, ProviderConfig
from nanobot_desktop.engine.config.paths import default_config_path


@dataclass(frozen=True)
class _ProviderSpec:
    name: str
    label: str
    api_base: str | None  # OpenAI-compatible default; None: must be configured
    keywords: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()  # model prefixes (normalised, "-" -> "_") that name this provider
    oauth: bool = False
    local: bool = False  # runs on the user's machine; needs no key
    strip_vendor: bool = False  # the gateway wants "claude-x", not "anthropic/claude-x"
    extra: bool = False  # not a field of post4's schema: read from the file's extras (0.3.x)


# Registry order matters (reference §11): gateways first, then standard providers; ours at the end.
_REGISTRY: tuple[_ProviderSpec, ...] = (
    _ProviderSpec("custom", "Custom (OpenAI-compatible)", "http://localhost:8000/v1", local=True),
    _ProviderSpec("azure_openai", "Azure OpenAI", None, ("azure", "azure-openai"), ("azure", "azure_openai")),
    _ProviderSpec("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", ("openrouter",)),
    _ProviderSpec("aihubmix", "AiHubMix", "https://aihubmix.com/v1", ("aihubmix",), strip_vendor=True),
    _ProviderSpec("siliconflow", "SiliconFlow", "https://api.siliconflow.cn/v1", ("siliconflow",)),
    _ProviderSpec("volcengine", "VolcEngine", "https://ark.cn-beijing.volces.com/api/v3",
                  ("volcengine", "volces", "ark")),
    _ProviderSpec("anthropic", "Anthropic", "https://api.anthropic.com/v1/", ("anthropic", "claude")),
    _ProviderSpec("openai", "OpenAI", "https://api.openai.com/v1", ("openai", "gpt")),
    _ProviderSpec("openai_codex", "OpenAI Codex (OAuth)", None, ("openai-codex",), oauth=True),
    _ProviderSpec("github_copilot", "GitHub Copilot (OAuth)", None, ("github_copilot", "copilot"), oauth=True),
    _ProviderSpec("deepseek", "DeepSeek", "https://api.deepseek.com/v1", ("deepseek",)),
    _ProviderSpec("gemini", "Google Gemini", "https://generativelanguage.googleapis.com/v1beta/openai/",
                  ("gemini",)),
    _ProviderSpec("zhipu", "Zhipu (GLM)", "https://open.bigmodel.cn/api/paas/v4", ("zhipu", "glm", "zai"),
                  ("zhipu", "zai")),
    _ProviderSpec("dashscope", "DashScope (Qwen)", "https://dashscope.aliyuncs.com/compatible-mode/v1",
                  ("qwen", "dashscope")),
    _ProviderSpec("moonshot", "Moonshot (Kimi)", "https://api.moonshot.ai/v1", ("moonshot", "kimi")),
    _ProviderSpec("minimax", "MiniMax", "https://api.minimax.io/v1", ("minimax",)),
    _ProviderSpec("vllm", "vLLM", "http://localhost:8000/v1", ("vllm",), ("vllm", "hosted_vllm"), local=True),
    _ProviderSpec("groq", "Groq", "https://api.groq.com/openai/v1", ("groq",)),
    # nanobot 0.3.x only (read from a config it wrote; the app never writes these entries)
    _ProviderSpec("ollama", "Ollama", "http://localhost:11434/v1", ("ollama",), local=True, extra=True),
    _ProviderSpec("lm_studio", "LM Studio", "http://localhost:1234/v1", ("lmstudio", "lm-studio", "lm_studio"),
                  ("lm_studio", "lmstudio"), local=True, extra=True),
)
_SPECS = {spec.name: spec for spec in _REGISTRY}


class ProviderPreset(NamedTuple):
    """A choice in the provider form. `entry` is the `providers.<entry>` block it writes: every local
    server (Ollama, LM Studio, vLLM, any OpenAI-compatible URL) is written as `custom`."""

    name: str
    label: str
    api_base: str | None
    needs_key: bool
    entry: str


_LOCAL_PRESETS = {"ollama": ("Ollama", "http://localhost:11434/v1"), "lmstudio": ("LM Studio", "http://localhost:1234/v1"),
                  "vllm": ("vLLM", "http://localhost:8000/v1"), "llamacpp": ("llama.cpp", "http://localhost:8080/v1")}
# The settings dialog's list: the common choices first, then the other gateways. The OAuth-only
# providers are left out: this app cannot log in to them.
_PRESET_ORDER = ("openai", "openrouter", "deepseek", "ollama", "lmstudio", "vllm", "llamacpp", "custom", "anthropic",
                 "gemini", "groq", "moonshot", "minimax", "zhipu", "dashscope", "aihubmix", "siliconflow",
                 "volcengine", "azure_openai")
PROVIDER_PRESETS: list[ProviderPreset] = [
    ProviderPreset(name, *_LOCAL_PRESETS[name], False, "custom") if name in _LOCAL_PRESETS else
    ProviderPreset(name, _SPECS[name].label, _SPECS[name].api_base, name != "custom", name)
    for name in _PRESET_ORDER
]


def local_preset_for_base(api_base: str | None) -> str | None:
    """Which local server a base URL most likely is (by its usual port), as nanobot 0.3.x guesses it."""
    for name, (_label, default) in _LOCAL_PRESETS.items():
        port = default.rsplit(":", 1)[1].split("/", 1)[0]
        if api_base and f":{port}" in api_base:
            return name
    return None


def shown_label(resolved: "ResolvedProvider", local_servers: Mapping[str, LocalServer]) -> str:
    """The provider's name as a person should read it: a local server the app saved as
    `providers.custom` is named by what it is (Ollama, LM Studio, vLLM, llama.cpp: remembered in
    desktop.json's `localServers`, else guessed from its usual port), never "Custom (OpenAI-compatible)"."""
    if resolved.name != "custom":
        return resolved.label
    remembered = local_servers.get("custom")
    kind = remembered.kind if remembered is not None and remembered.api_base == resolved.api_base \
        else local_preset_for_base(resolved.api_base)
    return _LOCAL_PRESETS[kind][0] if kind in _LOCAL_PRESETS else resolved.label


@dataclass(frozen=True)
class ResolvedProvider:
    """Everything needed to open an OpenAI-compatible client for the configured model."""

    name: str
    api_key: str = field(repr=False)
    api_base: str
    model: str  # as sent to the endpoint (the prefix naming this provider removed)
    extra_headers: dict[str, str]
    label: str
    entry: str = ""  # where it is in the file: "providers.custom", "providers.lmStudio", …


def _provider_name(value: str) -> str | None:
    """"azureOpenai", "azure_openai", "LM-Studio" … -> the registry name, or None."""
    plain = value.strip().lower().replace("-", "_")
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", value.strip()).lower()
    for candidate in (plain, snake, plain.replace("_", "")):
        if candidate in _SPECS:
            return candidate
    return {"lmstudio": "lm_studio", "azure": "azure_openai"}.get(plain)


def provider_entry(config: Config, name: str) -> tuple[ProviderConfig | None, str]:
    """The config block of a registry provider and its key in the file (None when absent or bad)."""
    spec = _SPECS[name]
    if not spec.extra:
        return getattr(config.providers, name), type(config.providers).model_fields[name].alias or name
    extras = config.providers.model_extra or {}
    camel = re.sub(r"_(\w)", lambda m: m.group(1).upper(), name)
    for key in (camel, name, name.replace("_", "")):
        raw = extras.get(key)
        if isinstance(raw, dict):
            try:
                return ProviderConfig.model_validate(raw), key
            except ValidationError:
                return None, key
    return None, camel


def _prefix_names(spec: _ProviderSpec) -> tuple[str, ...]:
    return spec.prefixes or (spec.name,)


def _match(config: Config, model: str) -> _ProviderSpec | None:
    """post4's auto rules (a key is needed at every step), then 0.3.x's configured local servers."""
    lower = model.lower()
    normalised = lower.replace("-", "_")
    prefix = normalised.split("/", 1)[0] if "/" in lower else ""

    def has_key(spec: _ProviderSpec) -> bool:
        entry, _ = provider_entry(config, spec.name)
        return entry is not None and bool(entry.api_key.get_secret_value())

    def local_ready(spec: _ProviderSpec) -> bool:
        entry, _ = provider_entry(config, spec.name)
        return spec.extra and entry is not None and bool(entry.api_base)

    post4 = [spec for spec in _REGISTRY if not spec.extra]
    for spec in post4:
        if prefix and prefix == spec.name and (spec.oauth or has_key(spec)):
            return spec
    for spec in _REGISTRY:  # 0.3.x: a prefix naming a configured local server wins too
        if prefix and prefix in _prefix_names(spec) and local_ready(spec):
            return spec
    for spec in post4:
        if any(k in lower or k.replace("-", "_") in normalised for k in spec.keywords) and (spec.oauth or has_key(spec)):
            return spec
    # 0.3.x asks its configured local servers before falling back to any provider with a key (a config
    # post4 wrote has none of these entries, so for it the order is post4's)
    for spec in _REGISTRY:
        if local_ready(spec) and not prefix:
            return spec
    for spec in post4:
        if not spec.oauth and has_key(spec):
            return spec
    return None


def _model_for(spec: _ProviderSpec, model: str) -> str:
    head, sep, rest = model.partition("/")
    if sep and spec.name != "custom" and head.lower().replace("-", "_") in _prefix_names(spec):
        model = rest
    if spec.strip_vendor and "/" in model:
        model = model.rsplit("/", 1)[1]
    return model


def _source(config: Config) -> Path:
    return config.source_path or default_config_path()


def _where(config: Config) -> str:
    """The config file as an error names it (worked out only for an error: it costs more than the lookup)."""
    return display_path(_source(config))


def resolve_provider(config: Config, model: str | None = None) -> ResolvedProvider:
    """Pick the provider for `model` (default: the configured one) as nanobot does, as an
    OpenAI-compatible endpoint. Raises ConfigError saying what to set when none can serve it."""
    model = model or config.agents.defaults.model
    forced = config.agents.defaults.provider
    if forced.strip().lower() != "auto":
        name = _provider_name(forced)
        if name is None:
            known = ", ".join(s.name for s in _REGISTRY if not s.extra)
            raise ConfigError(f"{_where(config)}: agents.defaults.provider: unknown provider {forced!r} "
                              f"(use \"auto\" or one of: {known})", field="agents.defaults.provider", path=_source(config))
        spec = _SPECS[name]
    else:
        found = _match(config, model)
        if found is None:
            raise ConfigError(
                f"{_where(config)}: no provider has an API key for model {model!r}: set providers.<name>.apiKey "
                "(e.g. providers.openrouter.apiKey), or for a local server set providers.custom.apiBase with "
                f"apiKey \"{LOCAL_KEY_PLACEHOLDER}\" and agents.defaults.provider \"custom\"",
                field="providers", path=_source(config))
        spec = found
    return _endpoint(config, spec, model)


def _endpoint(config: Config, spec: _ProviderSpec, model: str) -> ResolvedProvider:
    """`spec`'s configured endpoint serving `model`; ConfigError when its entry cannot be used."""
    entry, alias = provider_entry(config, spec.name)
    entry = entry or ProviderConfig()
    if spec.oauth:
        raise ConfigError(f"{_where(config)}: provider {alias} needs an OAuth login, which this app does not support; "
                          "choose another provider in agents.defaults.provider", field=f"providers.{alias}", path=_source(config))

    def where(key: str) -> Callable[[], str]:
        return lambda: f"{_where(config)}: providers.{alias}.{key}"

    api_key = expand_env_refs(entry.api_key.get_secret_value(), where("apiKey"))  # 0.3.5's ${NAME}
    if not api_key and not spec.local:
        raise ConfigError(f"{_where(config)}: providers.{alias}.apiKey is empty: set the API key for {spec.label}",
                          field=f"providers.{alias}.apiKey", path=_source(config))
    api_base = expand_env_refs(entry.api_base or "", where("apiBase")) or spec.api_base
    if not api_base:
        raise ConfigError(f"{_where(config)}: providers.{alias}.apiBase is empty: {spec.label} needs the endpoint URL",
                          field=f"providers.{alias}.apiBase", path=_source(config))
    return ResolvedProvider(name=spec.name, api_key=api_key or LOCAL_KEY_PLACEHOLDER, api_base=api_base,
                            model=_model_for(spec, model),
                            extra_headers={name: expand_env_refs(value, where(f"extraHeaders.{name}"))
                                           if isinstance(value, str) else value
                                           for name, value in (entry.extra_headers or {}).items()},
                            label=spec.label, entry=f"providers.{alias}")


def configured_endpoints(config: Config) -> list[ResolvedProvider]:
    """Every endpoint the CLI's rules could send a model to (a key, or 0.3.x's local server with a base
    URL), in registry order, model left empty: the endpoints whose `/models` the model switcher lists.
    A provider forced by `agents.defaults.provider` is the only one, since every model goes to it."""
    if config.agents.defaults.provider.strip().lower() != "auto":
        forced = _provider_name(config.agents.defaults.provider)
        specs = [_SPECS[forced]] if forced is not None else []
    else:
        specs = [spec for spec in _REGISTRY if not spec.oauth and _could_serve(config, spec)]
    found: list[ResolvedProvider] = []
    for spec in specs:
        try:
            found.append(_endpoint(config, spec, ""))
        except ConfigError:
            continue  # an entry that cannot be used lists nothing; resolve_provider says why when chosen
    return found


def _could_serve(config: Config, spec: _ProviderSpec) -> bool:
    """The condition `_match` puts on a provider: a key (post4), or a base URL for 0.3.x's local servers."""
    entry, _ = provider_entry(config, spec.name)
    if entry is None:
        return False
    return bool(entry.api_key.get_secret_value()) or (spec.extra and bool(entry.api_base))


# --- several providers at once (Settings) ------------------------------------------------------------

_V03_LOCAL_ENTRIES = {"ollama": "ollama", "lmstudio": "lm_studio"}  # 0.3.x names these servers itself


class ConfiguredEntry(NamedTuple):
    """A `providers.<alias>` block that can serve models: a key, or (0.3.x) a local server's base URL."""

    name: str  # registry name ("custom", "openrouter", "lm_studio")
    alias: str  # its key in the file ("custom", "azureOpenai", "lmStudio")
    api_base: str  # as written ("" when the provider's default applies)
    api_key: str  # as written (may be the local placeholder or a ${NAME} reference)


def preset_entry(preset: ProviderPreset, v03: bool) -> str:
    """The registry name of the block a preset is written to: a nanobot 0.3.x config names Ollama and
    LM Studio by themselves (`providers.ollama`, `providers.lmStudio`, which 0.3.x runs); 0.1.4.post4
    knows only `providers.custom` for a local server, so every other local preset is written there."""
    return _V03_LOCAL_ENTRIES.get(preset.name, preset.entry) if v03 else preset.entry


def provider_entries(config: Config) -> list[ConfiguredEntry]:
    """Every provider block the file configures (OAuth ones left out), in registry order, whether or
    not `agents.defaults.provider` forces one: what Settings lists as the configured providers."""
    found: list[ConfiguredEntry] = []
    for spec in _REGISTRY:
        if spec.oauth or not _could_serve(config, spec):
            continue
        entry, alias = provider_entry(config, spec.name)
        if entry is not None:
            found.append(ConfiguredEntry(spec.name, alias, entry.api_base or "", entry.api_key.get_secret_value()))
    return found


def with_entries(config: Config, entries: Mapping[str, tuple[str, str] | None]) -> Config:
    """A copy of `config` (nothing written) whose provider blocks are set to `entries`
    ({registry name: (key, base) or None to clear}) and `agents.defaults.provider` is "auto"."""
    copy = config.model_copy(deep=True)
    copy._source_path = config.source_path
    extras = copy.providers.model_extra if copy.providers.model_extra is not None else {}
    for name, values in entries.items():
        key, base = values if values is not None else ("", "")
        if _SPECS[name].extra:
            extras[provider_entry(copy, name)[1]] = {"apiKey": key, "apiBase": base or None}
        else:
            setattr(copy.providers, name, ProviderConfig.model_validate({"apiKey": key, "apiBase": base or None}))
    copy.agents.defaults.provider = "auto"
    return copy


def default_route(config: Config, name: str, model: str) -> tuple[str, str]:
    """How to write the default model so that `name` serves it: (agents.defaults.model,
    agents.defaults.provider). "auto" whenever nanobot's rules pick `name` for the plain model, or
    for `<name>/<model>` (not for a custom endpoint: the CLI would send the prefix to the server);
    only when neither does is the provider forced, which leaves the other providers unused."""
    auto = config if config.agents.defaults.provider.strip().lower() == "auto" else with_entries(config, {})
    candidates = [model]
    if name != "custom" and not model.lower().replace("-", "_").startswith(f"{name}/"):
        candidates.append(f"{name}/{model}")
    for candidate in candidates:
        try:
            if resolve_provider(auto, candidate).name == name:
                return candidate, "auto"
        except ConfigError:
            continue
    return model, provider_entry(config, name)[1]
