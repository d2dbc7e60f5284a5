"""The runtime block (time, channel, chat id) is for the model only: recognise it in saved messages.

The block rides in the current user message. 0.1.4.post4 and this app put it FIRST and strip it again
before saving (context.strip_runtime_for_save). nanobot 0.3.x puts it LAST, closed by
"[/Runtime Context]", and SAVES it, with a `_runtime_context` marker on the message; its own views
remove it for display. Sessions of either kind open here, so every text a person sees (chat, titles,
previews, search, export) and every branch copy goes through `without_runtime`. Recognising the block
by its tag (not only by the 0.3 marker) also cleans messages whose marker was lost.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["RUNTIME_END", "RUNTIME_MARKER", "RUNTIME_TAG", "public_message", "without_runtime", "without_runtime_text"]

RUNTIME_TAG = "[Runtime Context — metadata only, not instructions]"
RUNTIME_END = "[/Runtime Context]"
RUNTIME_MARKER = "_runtime_context"  # 0.3.x: on a saved user message, says which suffix is the block

# A closed (0.3) block at the very end, after a blank line or alone; its lines never hold another tag.
_TRAILING = re.compile(r"(?:^|\n\n)" + re.escape(RUNTIME_TAG) + r"\n(?:(?!" + re.escape(RUNTIME_TAG)
                       + r").)*?\n?" + re.escape(RUNTIME_END) + r"\s*\Z", re.DOTALL)
# A closed block at the very start (a 0.3 message whose text was empty, then more text after it).
_LEADING_CLOSED = re.compile(re.escape(RUNTIME_TAG) + r"\n(?:(?!" + re.escape(RUNTIME_TAG) + r").)*?\n?"
                             + re.escape(RUNTIME_END) + r"(?:\n\n|\s*\Z)", re.DOTALL)


def without_runtime_text(text: str) -> str:
    """`text` without runtime blocks: a leading one (up to the first blank line, or closed) and any
    closed ones at the end. Text that holds none is returned as it is (the common case costs one `in`)."""
    if RUNTIME_TAG not in text:
        return text
    while True:
        trimmed = _TRAILING.sub("", text, count=1)
        if trimmed == text:
            break
        text = trimmed
    if text.startswith(RUNTIME_TAG):
        closed = _LEADING_CLOSED.match(text)
        if closed is not None:
            text = text[closed.end():]
        else:
            _block, separator, rest = text.partition("\n\n")
            text = rest if separator else ""
    return text


def without_runtime(content: Any) -> Any:
    """A message's `content` (string, list of blocks, anything else) without runtime blocks; a list
    loses the text blocks that are runtime blocks and keeps its other blocks as they are."""
    if isinstance(content, str):
        return without_runtime_text(content)
    if isinstance(content, list) and any(
            isinstance(block, dict) and RUNTIME_TAG in str(block.get("text", "")) for block in content):
        kept: list[Any] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str) \
                    and RUNTIME_TAG in block["text"]:
                text = without_runtime_text(block["text"])
                if text.strip():
                    kept.append({**block, "text": text})
                continue
            kept.append(block)
        return kept
    return content


def public_message(message: dict[str, Any]) -> dict[str, Any]:
    """A user message as a person (or a branch copy) should have it: no runtime block, no 0.3 marker
    pointing at a block that is gone. Other messages are returned as they are."""
    if message.get("role") != "user":
        return message
    content = message.get("content")
    cleaned = without_runtime(content)
    if cleaned is content and RUNTIME_MARKER not in message:
        return message
    copy = {name: value for name, value in message.items() if name != RUNTIME_MARKER}
    copy["content"] = cleaned
    return copy
