"""The app's log file: `<config dir>/logs/nanobot-desktop.log`, rotated, with secrets redacted.

A log file gets attached to bug reports, so no API key may ever reach it: every record passing the
file handler is formatted, then scrubbed of anything that looks like a key (`sk-…`, `Bearer …`,
`"apiKey": "…"`) and of every secret value configured in config.json (provider keys, channel tokens,
MCP headers), whatever shape it has. The scrub runs on the handler, so records from every logger,
including third-party ones, are covered.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
from pathlib import Path
from typing import Any, Iterable

from nanobot_desktop.engine import ConfigError, load_config, logs_dir

__all__ = ["LOG_FILE_NAME", "SecretRedactor", "collect_secrets", "redact", "setup_logging", "update_secrets"]

LOG_FILE_NAME = "nanobot-desktop.log"
MAX_BYTES = 1_000_000
BACKUP_COUNT = 5
MIN_SECRET_LENGTH = 6  # shorter configured values ("x", "test") would blank out ordinary words
MASK = "[redacted]"
_HANDLER_MARK = "_nanobot_desktop_file_handler"

_SECRET_KEY_NAME = re.compile(r"(key|token|secret|password|authorization|cookie)$", re.IGNORECASE)
_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{7,}"),  # OpenAI / Anthropic / DeepSeek style keys
    re.compile(r"(?i)(\bBearer\s+)[A-Za-z0-9._~+/=\-]{6,}"),
    re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://)[^/\s@?#]+(?=@)"),  # user:password in a URL (an apiBase)
    re.compile(r"(?i)([\"']?(?:api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token|password)[\"']?\s*[:=]\s*[\"']?)"
               r"[^\s\"',}]{4,}"),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with configured secret values and key-shaped strings replaced by "[redacted]"."""
    for secret in sorted(set(secrets), key=len, reverse=True):  # longest first: one may contain another
        if len(secret) >= MIN_SECRET_LENGTH and secret in text:
            text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + MASK, text)
    return text


def collect_secrets(config: Any) -> set[str]:
    """Every configured value that must not be logged: SecretStr fields and values under key-like names."""
    found: set[str] = set()
    try:
        tree = config.model_dump(mode="json", by_alias=True, context={"reveal_secrets": True})
    except Exception:  # noqa: BLE001 - a config that cannot be dumped has no secrets we can read
        return found

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for child_key, child in value.items():
                walk(child, str(child_key))
        elif isinstance(value, list):
            for child in value:
                walk(child, key)
        elif isinstance(value, str) and value and _SECRET_KEY_NAME.search(key):
            found.add(value)
            if value.lower().startswith("bearer "):
                found.add(value[7:].strip())

    walk(tree)
    return {secret for secret in found if len(secret) >= MIN_SECRET_LENGTH}


class SecretRedactor(logging.Filter):
    """Rewrites each record so its message, arguments, traceback and stack carry no secret."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets: set[str] = set(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string still gets logged, scrubbed
            message = f"{record.msg!r} % {record.args!r}"
        record.msg = redact(message, self.secrets)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        return True


def _our_handler() -> logging.Handler | None:
    return next((h for h in logging.getLogger().handlers if getattr(h, _HANDLER_MARK, False)), None)


def setup_logging(config_path: str | Path, level: int = logging.INFO) -> Path:
    """Log to a rotating file (1 MB x 5) beside the config; returns the folder ("Open log folder").

    Calling it again (another config) replaces the earlier handler instead of adding a second one.
    """
    folder = logs_dir(Path(config_path).expanduser())
    folder.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    previous = _our_handler()
    if previous is not None:
        root.removeHandler(previous)
        previous.close()
    handler = logging.handlers.RotatingFileHandler(folder / LOG_FILE_NAME, maxBytes=MAX_BYTES,
                                                   backupCount=BACKUP_COUNT, encoding="utf-8")
    setattr(handler, _HANDLER_MARK, True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    secrets: set[str] = set()
    try:
        secrets = collect_secrets(load_config(Path(config_path).expanduser()))
    except (ConfigError, OSError):
        pass  # the app reports a bad config itself; the patterns still scrub key-shaped strings
    handler.addFilter(SecretRedactor(secrets))
    handler.setLevel(level)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    return folder


def update_secrets(config: Any) -> None:
    """After Settings saved a new key: teach the file handler's redactor the new values too."""
    handler = _our_handler()
    if handler is None:
        return
    for log_filter in handler.filters:
        if isinstance(log_filter, SecretRedactor):
            log_filter.secrets |= collect_secrets(config)
