"""Making a prompt fit the model's context window before it is sent.

A local server with a small window either refuses a prompt that is too long (llama.cpp) or silently
cuts its start (Ollama: the tools and the memory go first). So when the window is known, the prompt
is built to fit: what the reply may use is kept free (`maxTokens`, at most a quarter of the window),
then the history is trimmed from its oldest end (at a user message), then the skills summary is
compacted to names and locations; the current message is never cut. If the system prompt, the tools
and the current message alone do not fit, nothing is sent and the person is told what to change.

Tokens are estimated from characters (token_window.py), with a margin, since no tokenizer is at hand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from nanobot_desktop.engine.agent.context import SECTION_SEPARATOR, PromptSection
from nanobot_desktop.engine.agent.token_window import CHARS_PER_TOKEN, estimate_tokens

MARGIN = 1.1  # the character estimate is rough: keep a tenth spare
MESSAGE_OVERHEAD_TOKENS = 4  # role and separators a chat template adds per message
_SKILL_DETAIL_TAGS = ("<description>", "<requires>")


class PromptTooLong(Exception):
    """The system prompt, tools and current message alone are longer than the window: not sent."""

    def __init__(self, message: str, needed: int, window: int) -> None:
        super().__init__(message)
        self.message, self.needed, self.window = message, needed, window


@dataclass
class PromptFit:
    sections: list[PromptSection]
    history: list[dict[str, Any]]
    tokens: int  # the estimated prompt size
    window: int
    dropped: int = 0  # history messages left out
    compacted: tuple[str, ...] = field(default_factory=tuple)  # sections made shorter ("skills")


def reply_reserve(window: int, max_tokens: int) -> int:
    """Tokens kept free for the reply: `maxTokens`, but never more than a quarter of the window (a
    default of 8,192 would leave nothing of a 4,096-token local window)."""
    return max(1, min(max_tokens, window // 4))


def tokens_of_text(chars: int) -> int:
    return int(chars / CHARS_PER_TOKEN * MARGIN) + MESSAGE_OVERHEAD_TOKENS


def tokens_of(messages: list[dict[str, Any]]) -> int:
    return sum(int(estimate_tokens(message) * MARGIN) + MESSAGE_OVERHEAD_TOKENS for message in messages)


def tokens_of_tools(tools: list[dict[str, Any]]) -> int:
    return int(len(json.dumps(tools, ensure_ascii=False)) / CHARS_PER_TOKEN * MARGIN) if tools else 0


def compact_skills(section: PromptSection) -> PromptSection:
    """The skills summary with names and locations only (each SKILL.md still says the rest)."""
    lines = [line for line in section.text.split("\n") if not line.strip().startswith(_SKILL_DETAIL_TAGS)]
    return PromptSection(section.name, "\n".join(lines))


def fit_prompt(sections: list[PromptSection], history: list[dict[str, Any]], current: dict[str, Any],
               tools: list[dict[str, Any]], window: int, max_tokens: int, model: str = "") -> PromptFit:
    """The sections and the newest history that fit `window` with the current message; raises
    PromptTooLong when even no history and compacted skills do not fit."""
    reserve = reply_reserve(window, max_tokens)
    fixed = tokens_of([current]) + tokens_of_tools(tools)
    room = window - reserve - fixed  # for the system prompt and the history
    system = _system_tokens(sections)
    kept = _fit(history, room - system)
    compacted: tuple[str, ...] = ()
    if (system > room or (history and not kept)) and any(section.name == "skills" for section in sections):
        sections = [compact_skills(section) if section.name == "skills" else section for section in sections]
        compacted = ("skills",)
        system = _system_tokens(sections)
        kept = _fit(history, room - system)
    if system > room:
        needed = system + fixed + reserve
        raise PromptTooLong(_too_long(needed, window, reserve, model), needed, window)
    return PromptFit(sections, kept, system + tokens_of(kept) + fixed, window, len(history) - len(kept), compacted)


def _system_tokens(sections: list[PromptSection]) -> int:
    return tokens_of_text(len(SECTION_SEPARATOR.join(section.text for section in sections)))


def _fit(history: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """The newest history within `budget` tokens (this module's estimate), starting at a user message."""
    used, start = 0, len(history)
    for index in range(len(history) - 1, -1, -1):
        used += tokens_of([history[index]])
        if used > budget:
            break
        start = index
    kept = history[start:]
    first_user = next((i for i, message in enumerate(kept) if message.get("role") == "user"), None)
    return kept[first_user:] if first_user is not None else []


def _too_long(needed: int, window: int, reserve: int, model: str) -> str:
    name = f"'{model}'" if model else "the model"
    return (f"This message was not sent: the system prompt, the tools and your message need about {needed:,} "
            f"tokens with {reserve:,} kept for the reply, but the context window of {name} holds {window:,}. Give the "
            "model a larger window on the server (llama.cpp: --ctx-size / --n_ctx; Ollama: num_ctx; LM Studio: "
            "Context Length) and set it in Settings, or make MEMORY.md and the workspace's AGENTS.md, SOUL.md, "
            "USER.md and TOOLS.md shorter, or switch skills off in Settings.")
