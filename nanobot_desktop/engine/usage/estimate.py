"""The usage facts of one finished call, for its LLMCallFinished: as reported, or estimated when not.

An endpoint that sends no usage (some local servers, a stream cut before its last chunk) still spent
tokens; the record then holds an estimate of about four characters a token, marked as an estimate,
so a week of heartbeat ticks on such a server is not counted as free.
"""

from __future__ import annotations

import json
from typing import Any

from nanobot_desktop.engine.llm.types import LLMResponse

CHARS_PER_TOKEN = 4


def estimate_tokens(payload: Any) -> int:
    """A rough count for text or JSON-able data (at least 1 for anything non-empty)."""
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, default=str)
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def usage_fields(response: LLMResponse, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """prompt/completion/cache tokens and `estimated` for the call's LLMCallFinished."""
    usage = response.usage
    if usage.reported:
        return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens}
    output = (response.content or "") + (response.reasoning_content or "")
    output += "".join(call.raw_arguments or json.dumps(call.arguments) for call in response.tool_calls)
    return {"prompt_tokens": estimate_tokens([messages, tools] if tools else messages),
            "completion_tokens": estimate_tokens(output) if output else 0, "estimated": True}
