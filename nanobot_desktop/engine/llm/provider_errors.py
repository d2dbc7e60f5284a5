"""What a failed call to the endpoint means: retry or not, after how long, and the sentence to show.

The SDK's exceptions (`openai.APIStatusError`, `APIConnectionError`, `APITimeoutError`) are read here
by their attributes; `openai` itself is imported only when an error has to be classified, so the
provider module stays cheap to import.
"""

from __future__ import annotations

import email.utils
import socket
import time
from typing import Any

from nanobot_desktop.engine.llm.server_diagnosis import diagnose

MAX_RETRY_AFTER_S = 30.0
_DNS_FAILURES = ("name or service not known", "nodename nor servname", "getaddrinfo failed",
                 "temporary failure in name resolution")
REFUSAL_WORDS = ("unsupported", "not supported", "does not support", "unrecognized", "unknown parameter")
_NOT_RETRIED = ("context_overflow", "tools_unsupported", "out_of_memory")
ADAPTABLE_PARAMETERS = ("max_tokens", "temperature", "reasoning_effort", "stream_options")


def retry_delay(exc: Exception, attempt: int, max_retries: int, base_delay_s: float) -> float | None:
    """Seconds to wait before retrying, or None when this error is final."""
    if attempt >= max_retries:
        return None
    status = getattr(exc, "status_code", None)
    found = diagnose(status, server_message(exc), error_code(exc), None) if status is not None else None
    if found is not None and found.kind in _NOT_RETRIED:
        return None  # the same request would fail the same way
    if status is None:
        if not is_connection_error(exc):
            return None  # e.g. an error event inside the stream
    elif not (status in (408, 409, 429) or status >= 500):
        return None
    elif status == 429 and error_code(exc) == "insufficient_quota":
        return None  # waiting will not add credit
    delay = base_delay_s * 2.0**attempt
    retry_after = retry_after_s(exc)
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER_S))
    return delay


def refused_parameter(exc: Exception, request: dict[str, Any], refused: set[str]) -> str | None:
    """A 400 naming a parameter this model does not support (e.g. gpt-5 and `max_tokens` or a
    non-default `temperature`): the request's parameter it refused and not refused before, else None."""
    if getattr(exc, "status_code", None) != 400:
        return None
    body = getattr(exc, "body", None)
    param = body.get("param") if isinstance(body, dict) else None
    text = server_message(exc).lower()
    refusal = any(word in text for word in REFUSAL_WORDS)
    for name in ADAPTABLE_PARAMETERS:
        named = refusal and (param == name or name in text)  # not e.g. "max_tokens is too large"
        if named and name in request and name not in refused:
            return name
    return None


def describe_failure(exc: Exception, *, api_base: str, model: str | None, attempts: int,
                     timeout_s: float) -> tuple[str, str, int | None, dict[str, Any]]:
    """(kind, text, status, facts): one sentence of what happened (the server's own words quoted as
    such), one of what to do; `facts` names that sentence ("sentence") and holds the values in it, so
    a front end can say the same in the person's language (the GUI's gui/chat/failures.py)."""
    status = getattr(exc, "status_code", None)
    server = " ".join(server_message(exc).split()).rstrip(".")
    said = _quoted(server)
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    facts: dict[str, Any] = {"status": status, "said": server, "attempts": attempts, "api_base": api_base,
                             "model": model or "", "timeout_s": timeout_s}
    found = diagnose(status, server, error_code(exc), model) if status not in (401, 403) else None
    if found is not None:
        kind, sentence, text = found.kind, found.sentence, found.text
        facts.update(window=found.window or 0, requested=found.requested or 0)
    elif status in (401, 403):
        kind, sentence, text = "auth", "auth", f"The endpoint rejected the API key ({status}). Check the API key in Settings."
    elif status == 404 and model and (error_code(exc) == "model_not_found" or "model" in said.lower()):
        kind, sentence, text = "model_not_found", "model_not_found", (
            f"The endpoint does not know the model '{model}' (404){said}. Pick a model from the endpoint's list in Settings.")
    elif status == 404:
        kind, sentence, text = "other", "not_found", (f"{api_base} answered 404 Not Found{said}. "
                                                      "Check the base URL in Settings (it usually ends in /v1).")
    elif status == 429:
        quota = error_code(exc) == "insufficient_quota"
        kind, sentence, text = "rate_limit", "quota" if quota else "rate_limit", (
            f"The endpoint is rate-limiting requests (429){tries}{said}. "
            + ("Check the account's quota or billing." if quota else "Wait a moment, then send again."))
    elif status is not None and status >= 500:
        kind, sentence, text = "server", "server_status", (f"The endpoint had a server error ({status}){tries}{said}. "
                                                           "Try again in a moment.")
    elif status is not None:
        kind, sentence, text = "bad_request", "bad_request", (f"The endpoint rejected the request ({status}){said}. "
                                                              "Check the model and the endpoint in Settings.")
    elif is_timeout(exc):
        kind, sentence, text = "timeout", "timeout", (f"{api_base} did not answer within {timeout_s:g} s{tries}. "
                                                      "Try again, or check the endpoint and its timeouts in Settings.")
    elif is_connection_error(exc):
        facts["why"] = why = _connection_failure(exc)
        kind, sentence, text = "unreachable", "unreachable", (
            f"Could not connect to {api_base} ({why}){tries}. "
            "Check that the server is running and that its URL in Settings is right.")
    else:
        facts["error_type"] = type(exc).__name__
        kind, sentence, text = "server", "server_error", (f"The endpoint reported an error{said or ' (' + type(exc).__name__ + ')'}. "
                                                          "Try again in a moment.")
    facts["sentence"] = sentence
    return kind, text, status, facts


def retry_reason(exc: Exception) -> str:
    """A few words on why a call is retried, for "Retrying (2/4) in 3 s…"."""
    status = getattr(exc, "status_code", None)
    if status == 429:
        return "rate limited (429)"
    if status is not None:
        return f"server error {status}"
    return "timed out" if is_timeout(exc) else "connection failed"


def is_openai_error(exc: Exception) -> bool:
    import openai

    return isinstance(exc, openai.OpenAIError)


def is_connection_error(exc: Exception) -> bool:
    import openai

    return isinstance(exc, openai.APIConnectionError)


def is_timeout(exc: Exception) -> bool:
    import openai

    return isinstance(exc, openai.APITimeoutError)


def error_code(exc: Exception) -> str | None:
    code = getattr(exc, "code", None)
    return str(code) if code else None


def server_message(exc: Exception) -> str:
    """The endpoint's own words: OpenAI's {"error": {"message"}}, or FastAPI/Ollama variants."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        for key in ("message", "detail", "error", "msg"):
            text = body.get(key)
            if isinstance(text, str) and text.strip():
                return text.strip()
    if isinstance(body, str) and body.strip() and not body.lstrip().startswith("<"):  # not an HTML page
        return body.strip()[:300]
    response = getattr(exc, "response", None)
    if response is not None:
        return getattr(response, "reason_phrase", "") or ""
    return str(getattr(exc, "message", "") or "")


def retry_after_s(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value: str | None = response.headers.get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _quoted(server: str) -> str:
    """The endpoint's own message (whitespace collapsed) as a quotation to append to our sentence
    ("" when it said nothing)."""
    return f"; it said: “{server}”" if server else ""


def _connection_failure(exc: BaseException) -> str:
    """Walk the cause chain for the socket-level reason."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return "connection refused"
        if isinstance(seen, socket.gaierror) or any(s in str(seen).lower() for s in _DNS_FAILURES):
            return "host not found"
        seen = seen.__cause__ or seen.__context__
    return "connection failed"
