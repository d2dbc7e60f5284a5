"""Reading an endpoint's `usage` object, cache counts included, the way each server family spells them.

OpenAI (and vLLM, LM Studio, OpenRouter) put cache hits in `prompt_tokens_details.cached_tokens`;
OpenRouter adds `prompt_tokens_details.cache_write_tokens` for providers that bill cache writes;
DeepSeek says `prompt_cache_hit_tokens`; Anthropic-style gateways `cache_read_input_tokens` and
`cache_creation_input_tokens`. In every family `prompt_tokens` already includes the cached part,
except the Anthropic-style fields, which come beside an `input_tokens` that does not: those are added
in, so `prompt_tokens` always means the whole input (as nanobot 0.3.5's usage record counts it).
"""

from __future__ import annotations

from typing import Any

from nanobot_desktop.engine.llm.types import Usage


def usage_from_wire(usage: dict[str, Any]) -> Usage:
    """The Usage an endpoint reported; a field that is missing or not a count is absent, never a crash."""
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    prompt, completion = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
    read = _first(details, "cached_tokens") if "cached_tokens" in details else _first(usage, "prompt_cache_hit_tokens")
    write = _first(details, "cache_write_tokens")
    anthropic_read, anthropic_write = _first(usage, "cache_read_input_tokens"), _first(usage, "cache_creation_input_tokens")
    if prompt == 0 and "input_tokens" in usage:  # Anthropic-style: input_tokens leaves the cached part out
        prompt = _count(usage, "input_tokens") + (anthropic_read or 0) + (anthropic_write or 0)
        completion = completion or _count(usage, "output_tokens")
    read = read if read is not None else anthropic_read
    write = write if write is not None else anthropic_write
    total = _count(usage, "total_tokens")
    return Usage(prompt, completion, max(total, prompt + completion), cache_read_tokens=read,
                 cache_write_tokens=write, reported=True)


def _first(mapping: dict[str, Any], key: str) -> int | None:
    """The count under `key`, or None when the endpoint did not send one."""
    value = mapping.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _count(mapping: dict[str, Any], key: str) -> int:
    return _first(mapping, key) or 0
