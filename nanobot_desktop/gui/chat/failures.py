"""What a failed turn tells the person: one sentence of what happened and one of what to do.

The engine's provider errors already are both sentences ("The endpoint rejected the API key (401).
Check the API key in Settings."), with the server's own words quoted as such; adding our own hint
after them is what once produced "Check the key in Settings. Check the API key in Settings.". So a
hint is added only where the engine's text has none: a configuration problem (no provider yet) and
an unexpected error (a bug). The main window asks `needs_settings` whether its notice bar should offer
the Settings button.
"""

from __future__ import annotations

from typing import Any

from nanobot_desktop.gui.common.engine_words import model_call_failure
from nanobot_desktop.gui.common.i18n import translate

NEW_BLOCKED = "new_blocked"  # the engine's TurnFailed.kind for a /new that memory archival stopped
_SETTINGS_KINDS = ("auth", "model_not_found", "unreachable", "timeout", "bad_request", "config", "not_an_api")
_ENGINE_SAYS_WHAT_TO_DO = ("auth", "model_not_found", "unreachable", "timeout", "rate_limit", "server",
                           "bad_request", "not_an_api", "empty", "storage")


def failure_hint(kind: str) -> str:
    """What the person can do, for failures whose engine text does not say it."""
    if kind == "config":
        return translate("Chat", "Open Settings to choose a provider and model.")
    if kind in ("cut", "stalled", "malformed"):
        return translate("Chat", "Send the message again to get a whole reply.")
    if kind == "unexpected":
        return translate("Chat", "Try again; if it happens again, the log (Help → Open log folder) has the details.")
    return ""


def failure_kind(event: Any) -> str:
    """The event's kind, with configuration problems (no provider yet) told apart from bugs."""
    if event.kind == "other" and "ConfigError" in event.error:
        return "config"
    return str(event.kind)


def needs_settings(kind: str) -> bool:
    """Whether the fix for a failure of this kind is in the Settings dialog."""
    return kind in _SETTINGS_KINDS


def failure_detail(error: str, kind: str) -> str:
    """The technical words behind a failure worded for people (shown one click away), or "" when the
    failure's text already is the whole story."""
    return error if kind == NEW_BLOCKED else ""


def failure_text(error: str, kind: str, config: Any = None, facts: tuple[tuple[str, Any], ...] = ()) -> str:
    """The error with what to do (`config` is accepted for callers; the engine's text names the URL).
    A model call's failure whose `facts` the engine gave is worded here, in the UI language; a /new
    that memory stopped is said in people's words (the model's fault is its `failure_detail`)."""
    if kind == NEW_BLOCKED:
        return translate("Chat", "The conversation was not cleared: it could not be summarised into memory. Nothing "
                                 "was lost; you can try again, or start a new chat and keep this one.")
    worded = model_call_failure(facts)
    if worded is not None:
        return worded
    if kind == "config" and "ConfigError: " in error:  # not a bug: drop the "Unexpected error" wording
        error = error.split("ConfigError: ", 1)[1]
    error = error.strip()
    if error and error[-1] not in ".?!”)":
        error += "."
    if kind == "other" and error.startswith("Unexpected error"):
        kind = "unexpected"
    if kind in _ENGINE_SAYS_WHAT_TO_DO:
        return error
    hint = failure_hint(kind)
    if not hint or hint.rstrip(".").lower() in error.lower():
        return error
    return f"{error} {hint}"

