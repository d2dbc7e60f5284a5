"""The models a person can switch to: what each configured endpoint lists at `/models`, and who serves each.

Every endpoint the CLI's provider rules could use (`registry.configured_endpoints`) is asked for its
model list, all at once, with no retries and a short time limit, on an event loop of its own in a
worker thread (the window's loop is not slowed, not even by the first import of the openai SDK):
a provider that cannot be reached is reported as such (its `error`), never waited for. Lists are cached per endpoint until `refresh`, and
each choice is named by the string that goes into a session's `metadata["model"]` — the model id
itself, or `<provider>/<id>` when only that prefix makes the CLI's rules pick the endpoint that
listed it. `served_by` is what `resolve_provider` says for that string: the provider the turn will
really use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

from nanobot_desktop.engine.config import Config, ConfigError
from nanobot_desktop.engine.config.models import LocalServer
from nanobot_desktop.engine.llm.registry import ResolvedProvider, configured_endpoints, resolve_provider, shown_label
from nanobot_desktop.engine.llm.types import ProviderError

LIST_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ModelOption:
    """One model to switch to. `model` is what a session stores; `label` what the person reads."""

    model: str
    label: str
    served_by: str  # the provider's display name ("OpenAI", "Custom (OpenAI-compatible)")
    api_base: str


@dataclass(frozen=True)
class ProviderModels:
    """One endpoint's answer: its models as options, or why it could not be asked."""

    name: str
    label: str
    api_base: str
    options: tuple[ModelOption, ...] = ()
    error: str | None = None


class ModelCatalog:
    """Fetches and caches the model lists of the configured endpoints (on the running event loop)."""

    def __init__(self, config: Callable[[], Config],
                 local_servers: Callable[[], Mapping[str, LocalServer]] = dict) -> None:
        self._config = config
        self._local_servers = local_servers  # desktop.json's record of what each local entry is
        self._cache: dict[tuple[str, str, str], list[str] | str] = {}  # endpoint -> ids, or the error text

    def default_option(self) -> ModelOption:
        """The config's `agents.defaults.model` and who serves it (the choice "no model of its own")."""
        model = self._config().agents.defaults.model
        return self.option_for(model)

    def option_for(self, model: str) -> ModelOption:
        """`model` as an option, with the provider the CLI's rules send it to ("" when none can)."""
        try:
            resolved = resolve_provider(self._config(), model)
        except ConfigError:
            return ModelOption(model, model, "", "")
        return ModelOption(model, resolved.model, self._label(resolved), resolved.api_base)

    def _label(self, resolved: ResolvedProvider) -> str:
        return shown_label(resolved, self._local_servers())

    def cached(self) -> list[ProviderModels] | None:
        """The lists as last fetched, or None when some endpoint has not been asked yet."""
        endpoints = configured_endpoints(self._config())
        if any(_cache_key(endpoint) not in self._cache for endpoint in endpoints):
            return None
        return [self._listing(endpoint, self._cache[_cache_key(endpoint)]) for endpoint in endpoints]

    async def providers(self, refresh: bool = False) -> list[ProviderModels]:
        """Every configured endpoint with its models (asked now when not cached or when `refresh`)."""
        endpoints = configured_endpoints(self._config())
        missing = [e for e in endpoints if refresh or _cache_key(e) not in self._cache]
        answers = await asyncio.to_thread(_ask_all, missing) if missing else []
        for endpoint, answer in zip(missing, answers, strict=True):
            self._cache[_cache_key(endpoint)] = answer
        return [self._listing(endpoint, self._cache[_cache_key(endpoint)]) for endpoint in endpoints]

    def _listing(self, endpoint: ResolvedProvider, answer: list[str] | str) -> ProviderModels:
        if isinstance(answer, str):
            return ProviderModels(endpoint.name, self._label(endpoint), endpoint.api_base, error=answer)
        options = tuple(self._option(endpoint, model) for model in answer)
        return ProviderModels(endpoint.name, self._label(endpoint), endpoint.api_base, options)

    def _option(self, endpoint: ResolvedProvider, model: str) -> ModelOption:
        """The string to store for `model` listed by `endpoint`: plain when the rules send it there,
        else `<provider>/<model>` when that prefix does; otherwise plain, shown with who really serves it."""
        config = self._config()
        candidates = [model] if endpoint.name == "custom" else [model, f"{endpoint.name}/{model}"]
        for candidate in candidates:
            try:
                resolved = resolve_provider(config, candidate)
            except ConfigError:
                continue
            if resolved.name == endpoint.name:
                return ModelOption(candidate, model, self._label(resolved), resolved.api_base)
        return self.option_for(model)


def _ask_all(endpoints: list[ResolvedProvider]) -> list[list[str] | str]:
    """In a worker thread: every endpoint asked at once on a loop of this thread's own."""
    async def ask() -> list[list[str] | str]:
        return list(await asyncio.gather(*(_list_models(endpoint) for endpoint in endpoints)))
    return asyncio.run(ask())


def _cache_key(endpoint: ResolvedProvider) -> tuple[str, str, str]:
    return endpoint.name, endpoint.api_base, endpoint.api_key


async def _list_models(endpoint: ResolvedProvider) -> list[str] | str:
    """The endpoint's model ids, or one sentence saying why it could not be asked."""
    from nanobot_desktop.engine.llm.provider import make_provider

    provider = make_provider(endpoint.name, endpoint.api_key, endpoint.api_base, "", endpoint.extra_headers)
    provider.max_retries = 0  # the switcher shows "cannot be reached" at once; Refresh asks again
    try:
        return await asyncio.wait_for(provider.list_models(), LIST_TIMEOUT_S)
    except ProviderError as error:
        return error.message
    except TimeoutError:
        from nanobot_desktop.engine.url_secrets import hide_url_secrets

        return hide_url_secrets(f"{endpoint.api_base} did not answer within {LIST_TIMEOUT_S:.0f} seconds.")
    finally:
        await provider.close()
