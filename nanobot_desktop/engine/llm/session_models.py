"""A session's own model: `metadata["model"]` in its metadata line, used for that session's turns only.

The default stays the config's `agents.defaults.model`: a session without the field (every session
the CLI writes, and every other session of the app) uses it, and so does `nanobot agent`. The field
is changed with the store's metadata-line update, never by rewriting messages; for a chat that has
no file yet it is kept on the session and written with its first message, so choosing a model does
not put an empty chat in the list. The endpoint serving a chosen model is picked by the CLI's rules
(`resolve_provider`), the same answer the model switcher shows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from nanobot_desktop.engine.config import Config, ConfigError
from nanobot_desktop.engine.llm.registry import ResolvedProvider, resolve_provider
from nanobot_desktop.engine.llm.types import ChatProvider
from nanobot_desktop.engine.sessions.file import parse_header, read_first_line
from nanobot_desktop.engine.sessions.store import Session, SessionStore

if TYPE_CHECKING:
    from nanobot_desktop.engine.config import AppSettings
    from nanobot_desktop.engine.llm.catalog import ModelCatalog
    from nanobot_desktop.engine.agent.turn import AgentSettings

METADATA_FIELD = "model"
_KEPT_ENDPOINTS = 4  # endpoints of chosen models kept open at once (each holds a connection pool)


class SessionModels:
    """Reads and writes sessions' own models and gives the loop the settings and endpoint for one."""

    def __init__(self, config: Callable[[], Config], app_settings: Callable[[], "AppSettings"],
                 sessions: SessionStore, settings: Callable[[], "AgentSettings"],
                 default_provider: Callable[[], ChatProvider]) -> None:
        self._config = config
        self._app_settings = app_settings
        self._sessions = sessions
        self._settings = settings
        self._default_provider = default_provider
        self._providers: dict[tuple[Any, ...], ChatProvider] = {}
        self._catalog: ModelCatalog | None = None

    @property
    def catalog(self) -> "ModelCatalog":
        """The models to switch to (the composer's switcher), made on first use: a headless turn never asks."""
        if self._catalog is None:
            from nanobot_desktop.engine.llm.catalog import ModelCatalog

            self._catalog = ModelCatalog(self._config, lambda: self._app_settings().local_servers)
        return self._catalog

    # --- the choice ------------------------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        """The session's own model, or None when it uses the config's. Reads only the metadata line
        (or the session the store holds), so it is cheap even for a long session."""
        cached = self._sessions.cached(key)
        if cached is not None:
            return _model_of(cached.metadata)
        path = self._sessions.path_for(key)
        try:
            header = parse_header(read_first_line(path))
        except FileNotFoundError:
            return None
        metadata = header.get("metadata") if header is not None else None
        return _model_of(metadata) if isinstance(metadata, dict) else None

    def set(self, key: str, model: str | None) -> None:
        """Give the session its own model (None, "" or the config's model: back to the default).
        Raises StorageError / ValueError when the metadata line cannot be written (nothing changed)."""
        model = (model or "").strip() or None
        if model == self._config().agents.defaults.model:
            model = None
        session = self._sessions.get_or_create(key)
        self._sessions.note_metadata(session, **{METADATA_FIELD: model})  # no file yet: kept for its first line

    # --- for the loop -----------------------------------------------------------------------------------

    def endpoint_for(self, session: Session) -> tuple["AgentSettings", Callable[[], ChatProvider]] | None:
        """The settings and endpoint of the session's own model; None when it has none. An endpoint that
        cannot be built raises its ConfigError when the turn asks for it, so the turn fails with it."""
        model = _model_of(session.metadata)
        if model is None:
            return None
        config = self._config()
        try:
            resolved = resolve_provider(config, model)
        except ConfigError as error:
            problem = error

            def unusable() -> ChatProvider:
                raise problem
            return replace(self._settings(), model=model), unusable
        return replace(self._settings(), model=resolved.model), lambda: self._provider(config, resolved)

    def _provider(self, config: Config, resolved: ResolvedProvider) -> ChatProvider:
        from nanobot_desktop.engine.llm.provider import make_provider

        try:
            default = resolve_provider(config)
        except ConfigError:
            default = None
        if default is not None and (default.name, default.api_base, default.api_key, default.extra_headers) == \
                (resolved.name, resolved.api_base, resolved.api_key, resolved.extra_headers):
            return self._default_provider()  # the same endpoint: one connection, whatever the model
        app = self._app_settings()
        key = (resolved.name, resolved.api_base, resolved.api_key, tuple(sorted(resolved.extra_headers.items())),
               app.model_first_byte_timeout, app.model_idle_timeout, app.model_wait_for_local)
        provider = self._providers.get(key)
        if provider is None:
            if len(self._providers) >= _KEPT_ENDPOINTS:
                self._release_all()
            provider = make_provider(resolved.name, resolved.api_key, resolved.api_base, resolved.model,
                                     resolved.extra_headers, first_byte_timeout_s=app.model_first_byte_timeout,
                                     idle_timeout_s=app.model_idle_timeout,
                                     wait_for_local=app.model_wait_for_local)
            self._providers[key] = provider
        return provider

    def _release_all(self) -> None:
        for provider in self._providers.values():
            release = getattr(provider, "release", None)
            if release is not None:
                release()
        self._providers.clear()

    async def close(self) -> None:
        """Close the endpoints opened for sessions' own models (inside the loop that used them)."""
        providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            close = getattr(provider, "close", None)
            if close is not None:
                await close()


def _model_of(metadata: dict[str, Any]) -> str | None:
    value = metadata.get(METADATA_FIELD)
    return value.strip() if isinstance(value, str) and value.strip() else None
