"""What a failed turn tells the person: the engine's one-line error plus what to do about it.

The engine already says what went wrong ("The endpoint rejected the API key (401)"); this adds the
way out for the kind of failure (which setting to check, which URL to look at), and tells the main
window whether the fix lives in Settings, so its notice bar can offer the button.
"""

from __future__ import annotations

from typing import Any

_SETTINGS_KINDS = ("auth", "model_not_found", "unreachable", "timeout", "bad_request", "config", "not_an_api")


def failure_hint(kind: str, api_base: str | None = None) -> str:
    """What the person can do about a failed turn, by the provider's error kind."""
    if kind == "auth":
        return "Check the API key in Settings."
    if kind == "model_not_found":
        return "Pick a model the endpoint offers in Settings."
    if kind == "unreachable":
        return f"Is the server running at {api_base}?" if api_base else "Is the server running?"
    if kind == "timeout":
        return "The endpoint did not answer in time: try again, or check the endpoint in Settings."
    if kind == "rate_limit":
        return "Wait a moment, then send again."
    if kind == "config":
        return "Open Settings to choose a provider and model."
    if kind == "server":
        return "The endpoint had a problem: try again in a moment."
    return ""


def failure_kind(event: Any) -> str:
    """The event's kind, with configuration problems (no provider yet) told apart from bugs."""
    if event.kind == "other" and "ConfigError" in event.error:
        return "config"
    return event.kind


def needs_settings(kind: str) -> bool:
    """Whether the fix for a failure of this kind is in the Settings dialog."""
    return kind in _SETTINGS_KINDS


def failure_text(error: str, kind: str, config: Any = None) -> str:
    """The error with its hint; for "unreachable" the hint names the endpoint's URL from `config`."""
    api_base = None
    if kind == "unreachable" and config is not None:
        try:
            from nanobot_desktop.engine import resolve_provider

            api_base = resolve_provider(config).api_base
        except Exception:  # noqa: BLE001 - the hint is a courtesy; the error itself is already clear
            api_base = None
    if kind == "config" and "ConfigError: " in error:  # not a bug: drop the "Unexpected error" wording
        error = error.split("ConfigError: ", 1)[1]
    hint = failure_hint(kind, api_base)
    if not hint or hint.rstrip("?.").lower() in error.lower():
        return error
    if kind == "unreachable" and "Is the server running?" in error and api_base:
        return error.replace("Is the server running?", hint)
    return f"{error} {hint}"
