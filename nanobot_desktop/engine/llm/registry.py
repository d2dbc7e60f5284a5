"""Which endpoint serves a model: the provider registry of nanobot 0.1.4.post4, as OpenAI-compatible URLs.

Kept apart from config.py (the file format); `config` re-exports the public names, so callers import
them from either module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from nanobot_desktop.engine.config import Config, ConfigError, ProviderConfig, _display, default_config_path


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
    _ProviderSpec("ollama", "Ollama", "http://localhost:11434/v1", ("ollama",), local=True),
    _ProviderSpec("lmstudio", "LM Studio", "http://localhost:1234/v1", ("lmstudio", "lm-studio"),
                  ("lmstudio", "lm_studio"), local=True),
)
_SPECS = {spec.name: spec for spec in _REGISTRY}


class ProviderPreset(NamedTuple):
    name: str
    label: str
    api_base: str | None
    needs_key: bool


# The settings dialog's list: the common choices first, then the other gateways. The OAuth-only
# providers are left out: this app cannot log in to them.
_PRESET_ORDER = ("openai", "openrouter", "deepseek", "ollama", "lmstudio", "vllm", "custom", "anthropic",
                 "gemini", "groq", "moonshot", "minimax", "zhipu", "dashscope", "aihubmix", "siliconflow",
                 "volcengine", "azure_openai")
PROVIDER_PRESETS: list[ProviderPreset] = [
    ProviderPreset(name, _SPECS[name].label, _SPECS[name].api_base, not _SPECS[name].local)
    for name in _PRESET_ORDER
]


@dataclass(frozen=True)
class ResolvedProvider:
    """Everything needed to open an OpenAI-compatible client for the configured model."""

    name: str
    api_key: str = field(repr=False)
    api_base: str
    model: str  # as sent to the endpoint (the prefix naming this provider removed)
    extra_headers: dict[str, str]
    label: str


def _provider_name(value: str) -> str | None:
    """"azureOpenai", "azure_openai", "LM-Studio" … -> the registry name, or None."""
    plain = value.strip().lower().replace("-", "_")
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", value.strip()).lower()
    for candidate in (plain, snake, plain.replace("_", "")):
        if candidate in _SPECS:
            return candidate
    return {"lm_studio": "lmstudio", "azure": "azure_openai"}.get(plain)


def _prefix_names(spec: _ProviderSpec) -> tuple[str, ...]:
    return spec.prefixes or (spec.name,)


def _match(config: Config, model: str) -> _ProviderSpec | None:
    """Reference §11 steps 2-4, with local providers usable without a key."""
    lower = model.lower()
    normalised = lower.replace("-", "_")
    prefix = normalised.split("/", 1)[0] if "/" in lower else ""

    def entry(spec: _ProviderSpec) -> ProviderConfig:
        found: ProviderConfig = getattr(config.providers, spec.name)
        return found

    def has_key(spec: _ProviderSpec) -> bool:
        return bool(entry(spec).api_key.get_secret_value())

    def usable(spec: _ProviderSpec) -> bool:
        return spec.oauth or has_key(spec) or (spec.local and bool(entry(spec).api_base))

    for spec in _REGISTRY:
        if prefix and prefix in _prefix_names(spec) and (usable(spec) or spec.local):
            return spec
    for spec in _REGISTRY:
        if usable(spec) and any(k in lower or k.replace("-", "_") in normalised for k in spec.keywords):
            return spec
    for spec in _REGISTRY:
        if not spec.oauth and has_key(spec):
            return spec
    return next((s for s in _REGISTRY if s.local and entry(s).api_base), None)


def _model_for(spec: _ProviderSpec, model: str) -> str:
    head, sep, rest = model.partition("/")
    if sep and head.lower().replace("-", "_") in _prefix_names(spec):
        model = rest
    if spec.strip_vendor and "/" in model:
        model = model.rsplit("/", 1)[1]
    return model


def resolve_provider(config: Config, model: str | None = None) -> ResolvedProvider:
    """Pick the provider for `model` (default: the configured one) as the original does, as an
    OpenAI-compatible endpoint. Raises ConfigError saying what to set when none can serve it."""
    model = model or config.agents.defaults.model
    source = config.source_path or default_config_path()
    where = _display(source)
    forced = config.agents.defaults.provider
    if forced.strip().lower() != "auto":
        name = _provider_name(forced)
        if name is None:
            known = ", ".join(s.name for s in _REGISTRY)
            raise ConfigError(f"{where}: agents.defaults.provider: unknown provider {forced!r} "
                              f"(use \"auto\" or one of: {known})", field="agents.defaults.provider", path=source)
        spec = _SPECS[name]
    else:
        matched = _match(config, model)
        if matched is None:
            raise ConfigError(
                f"{where}: no provider has an API key for model {model!r}: set providers.<name>.apiKey "
                "(e.g. providers.openrouter.apiKey), or set agents.defaults.provider to a local server "
                '("ollama", "lmstudio", "vllm" or "custom")', field="providers", path=source)
        spec = matched
    entry: ProviderConfig = getattr(config.providers, spec.name)
    alias = type(config.providers).model_fields[spec.name].alias
    if spec.oauth:
        raise ConfigError(f"{where}: provider {alias} needs an OAuth login, which this app does not support; "
                          "choose another provider in agents.defaults.provider", field=f"providers.{alias}", path=source)
    api_key = entry.api_key.get_secret_value()
    if not api_key and not spec.local:
        raise ConfigError(f"{where}: providers.{alias}.apiKey is empty: set the API key for {spec.label}",
                          field=f"providers.{alias}.apiKey", path=source)
    api_base = entry.api_base or spec.api_base
    if not api_base:
        raise ConfigError(f"{where}: providers.{alias}.apiBase is empty: {spec.label} needs the endpoint URL",
                          field=f"providers.{alias}.apiBase", path=source)
    return ResolvedProvider(name=spec.name, api_key=api_key or "no-key", api_base=api_base,
                            model=_model_for(spec, model), extra_headers=dict(entry.extra_headers or {}),
                            label=spec.label)
