"""A history window measured in tokens, for nanobot 0.3 workspaces (`contextWindowTokens`).

post4 replays the last `memoryWindow` messages; 0.3 replays everything not yet archived and archives
when the prompt would outgrow the model's context window. Here that is: the history sent is cut (at a
user turn) to what fits in the window after the system prompt and the reply's `maxTokens`, and
consolidation starts once the unconsolidated messages fill most of that budget, keeping the newest
half of it. Tokens are estimated as characters / 4 (no tokenizer dependency; a rough but steady
measure, as the decision only needs to be monotonic).
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4
SAFETY_TOKENS = 1024  # tool definitions and the per-message overhead the estimate does not see
CONSOLIDATE_AT = 0.8  # share of the budget the unconsolidated messages may fill before consolidating


def estimate_tokens(message: dict[str, Any]) -> int:
    """A rough token count of one message (text, tool calls, names), at least 1."""
    content = message.get("content")
    if isinstance(content, str):
        size = len(content)
    elif content is None:
        size = 0
    else:
        size = len(json.dumps(content, ensure_ascii=False))
    for name in ("tool_calls", "name", "tool_call_id", "reasoning_content"):
        value = message.get(name)
        if value:
            size += len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False))
    return max(1, size // CHARS_PER_TOKEN)


def history_budget(context_window_tokens: int, max_tokens: int, system_chars: int) -> int:
    """Tokens left for the history once the system prompt and the reply are accounted for."""
    return max(0, context_window_tokens - max_tokens - system_chars // CHARS_PER_TOKEN - SAFETY_TOKENS)


def fit_history(history: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """The newest messages of `history` that fit in `budget` tokens, starting at a user message."""
    used = 0
    start = len(history)
    for index in range(len(history) - 1, -1, -1):
        used += estimate_tokens(history[index])
        if used > budget:
            break
        start = index
    kept = history[start:]
    first_user = next((i for i, message in enumerate(kept) if message.get("role") == "user"), None)
    return kept[first_user:] if first_user is not None else []


def consolidation_window(messages: list[dict[str, Any]], budget: int) -> int | None:
    """A `memory_window` for consolidation when `messages` (the unconsolidated ones) fill most of the
    budget: twice the number of newest messages that fit in half of it. None: no need yet."""
    total = sum(estimate_tokens(message) for message in messages)
    if budget <= 0 or total < budget * CONSOLIDATE_AT:
        return None
    keep, used = 0, 0
    for message in reversed(messages):
        used += estimate_tokens(message)
        if used > budget // 2:
            break
        keep += 1
    return 2 * keep


def archived_summary(metadata: dict[str, Any]) -> str | None:
    """The summary nanobot 0.3 keeps for a compacted session (`metadata["_last_summary"]`), worded as
    0.3 puts it into the system prompt; None when the session has none."""
    raw = metadata.get("_last_summary")
    if not isinstance(raw, dict):
        return None
    text, last_active = raw.get("text"), raw.get("last_active")
    if not isinstance(text, str) or not text or text == "(nothing)":
        return None
    when = last_active if isinstance(last_active, str) and last_active else "unknown"
    return f"[Archived Context Summary]\n\nPrevious conversation summary (last active {when}):\n{text}"
