"""Credentials written into URLs (`https://user:token@host/v1`, `?api_key=…`) never shown or logged.

An `apiBase` may carry its key in the URL itself; every message that names the endpoint (a failed
call, a timeout, the model list) goes through `hide_url_secrets` first, and so do the logs.
"""

from __future__ import annotations

import re

MASK = "***"
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]+@")
_QUERY_SECRET = re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access[_-]?token|auth|secret|password|sig|signature)=)"
                           r"[^&#\s\"']+")


def hide_url_secrets(text: str) -> str:
    """`text` with every URL's user:password and secret-named query values replaced by ***."""
    if "://" not in text and "=" not in text:
        return text
    return _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text))
