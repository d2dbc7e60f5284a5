"""Text views of session messages: titles, previews, search snippets, and Markdown / JSON exports.

The session *is* the JSONL file; these functions only read message dicts, so they work the same on
a loaded `Session` and on lines scanned straight from disk.
"""

from __future__ import annotations

import json
import re
from typing import Any

from nanobot_desktop.engine.runtime_block import public_message, without_runtime_text

TITLE_MAX_CHARS = 60
PREVIEW_MAX_CHARS = 120
_WHITESPACE = re.compile(r"\s+")
# Markdown read as plain text for one-line previews: (what must be in the text for the rule to apply,
# pattern, replacement), applied in order. The cheap `in` test skips most rules for most texts: a
# first listing summarises 20,000 sessions.
_MARKDOWN_TO_PLAIN = [(needles, re.compile(pattern, re.MULTILINE), replacement) for needles, pattern, replacement in (
    (("```", "~~~"), r"^\s*(?:`{3,}|~{3,}).*$", ""),                        # code fences (the code stays)
    (("|",), r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$", ""),         # a table's separator row
    (("---", "***", "___"), r"^\s{0,3}(?:[-*_]\s*){3,}$", ""),             # horizontal rules
    (("![",), r"!\[([^\]]*)\]\([^)]*\)", r"\1"),                           # images: their alt text
    (("](",), r"\[([^\]]+)\]\([^)]*\)", r"\1"),                             # links: their text
    (("#",), r"^\s{0,3}#{1,6}\s+", ""),                                    # heading hashes
    ((">",), r"^\s{0,3}>\s?", ""),                                         # quote marks
    (("- ", "* ", "+ "), r"^\s*[-*+]\s+(?:\[[ xX]\]\s+)?", ""),             # bullets (and task boxes)
    (("**", "__", "~~", "`"), r"\*\*|__|~~|`+", ""),                         # strong, strike-through, code ticks
    (("*",), r"(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])", r"\1"),           # *emphasis*
    (("_",), r"(?<!\w)_(?=\S)([^_\n]*?\S)_(?!\w)", r"\1"),                    # _emphasis_
    (("|",), r"\s*\|\s*", " "),                                            # table cell borders
)]


def message_text(content: Any) -> str:
    """The readable text of a message's `content` (a string, a list of blocks, or None), without the
    runtime block meant for the model only (engine/runtime_block.py)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return without_runtime_text(content)
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(without_runtime_text(block))
            elif isinstance(block, dict):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    text = without_runtime_text(block["text"])
                    if text or not block["text"]:
                        parts.append(text)
                elif block.get("type") in ("image_url", "image", "input_image"):
                    parts.append("[image]")
        return "\n".join(parts)
    return str(content)


def message_media(message: dict[str, Any]) -> list[str]:
    """The image paths saved with a user message (`media`, as nanobot 0.3.5 and this app keep them)."""
    media = message.get("media")
    return [path for path in media if isinstance(path, str) and path] if isinstance(media, list) else []


def user_text(message: dict[str, Any]) -> str:
    """What the person wrote in a user message: its text, without the "[image]" stand-ins when the
    images themselves are known (`media`), so the chat shows thumbnails instead."""
    content = message.get("content")
    if isinstance(content, list) and message_media(message):
        content = [block for block in content
                   if not (isinstance(block, dict) and block.get("type") == "text" and block.get("text") == "[image]")]
    return message_text(content)


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis (cheap on huge texts)."""
    flat = _WHITESPACE.sub(" ", text[: limit * 8 + 64]).strip()
    if len(flat) <= limit and len(text) <= limit * 8 + 64:
        return flat
    return flat[: limit - 1].rstrip() + "…"


# The prompt every run of a scheduled job starts with (post4's gateway and engine/background/cron.py write it alike):
# titled by the job's name, else every job's session would read "[Scheduled Task] Timer finished. …".
_SCHEDULED_PROMPT = re.compile(r"\[Scheduled Task\] Timer finished\.\s+Task '(?P<name>.+?)' has been triggered\.",
                               re.DOTALL)


def derive_title(messages: list[dict[str, Any]]) -> str:
    """A title from the first user message with text ("" when there is none); a scheduled job's run is
    titled by the job's name."""
    for message in messages:
        if message.get("role") == "user":
            text = user_text(message)
            if text.strip():
                scheduled = _SCHEDULED_PROMPT.match(text[:TITLE_MAX_CHARS * 8])
                return shorten(scheduled["name"] if scheduled else text, TITLE_MAX_CHARS)
    return ""


def preview_text(message: dict[str, Any]) -> str:
    """The list preview of a user or assistant message ("" for tool calls without text, tools, etc.)."""
    if message.get("role") not in ("user", "assistant"):
        return ""
    return shorten(plain_text(message_text(message.get("content"))[:PREVIEW_MAX_CHARS * 8]), PREVIEW_MAX_CHARS)


def plain_text(markdown: str) -> str:
    """Markdown as the words a person reads ("# Notes Here is a **bold** [link](u)" -> "Notes Here is a
    bold link"), for one-line previews; not a renderer, so an odd construct may keep a mark."""
    for needles, pattern, replacement in _MARKDOWN_TO_PLAIN:
        if any(needle in markdown for needle in needles):
            markdown = pattern.sub(replacement, markdown)
    return markdown


def snippet(text: str, index: int, length: int, before: int = 50, after: int = 70) -> str:
    """A one-line excerpt of `text` around the match at `index`."""
    start = max(0, index - before)
    end = min(len(text), index + length + after)
    excerpt = _WHITESPACE.sub(" ", text[start:end]).strip()
    return ("…" if start > 0 else "") + excerpt + ("…" if end < len(text) else "")


def _fence(text: str, info: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run inside `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}"


def _pretty_arguments(arguments: Any) -> tuple[str, str]:
    """Tool-call arguments as pretty JSON (the model sends a JSON string; it may be malformed)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments, ""
    return json.dumps(arguments, ensure_ascii=False, indent=2), "json"


def _reasoning(message: dict[str, Any]) -> str:
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        return reasoning
    blocks = message.get("thinking_blocks")
    if isinstance(blocks, list):
        texts = [b["thinking"] for b in blocks if isinstance(b, dict) and isinstance(b.get("thinking"), str)]
        return "\n\n".join(t for t in texts if t.strip())
    return ""


def _heading(role: str, timestamp: Any) -> str:
    name = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool result"}.get(
        role, role.title() or "Message")
    return f"## {name}" + (f" · {timestamp}" if isinstance(timestamp, str) and timestamp else "")


def _tool_result_lines(result: dict[str, Any]) -> list[str]:
    name = result.get("name") or "tool"
    lines = [f"**Result of `{name}`**" + (f" · {result['timestamp']}" if result.get("timestamp") else ""), ""]
    lines += [_fence(message_text(result.get("content"))), ""]
    return lines


def render_markdown(title: str, key: str, created_at: str, updated_at: str,
                    messages: list[dict[str, Any]]) -> str:
    """A readable transcript: each message with its time, tool calls with their results, reasoning folded."""
    out = [f"# {title}", "", f"- Session: `{key}`", f"- Created: {created_at}", f"- Updated: {updated_at}",
           f"- Messages: {len(messages)}", ""]
    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool" and m.get("tool_call_id")}
    shown_results: set[int] = set()
    for message in messages:
        role = str(message.get("role", ""))
        if role == "tool" and id(message) in shown_results:
            continue
        out += [_heading(role, message.get("timestamp")), ""]
        if role == "tool":
            out += _tool_result_lines(message)
            continue
        reasoning = _reasoning(message)
        if reasoning:
            out += ["<details><summary>Reasoning</summary>", "", reasoning.strip(), "", "</details>", ""]
        text = message_text(message.get("content"))
        if text.strip():
            out += [text.strip(), ""]
        for call in message.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            function = call.get("function")
            if not isinstance(function, dict):
                function = {}
            name = function.get("name") or "tool"
            arguments, info = _pretty_arguments(function.get("arguments", ""))
            out += [f"**Tool call `{name}`**" + (f" (`{call['id']}`)" if call.get("id") else ""), "",
                    _fence(arguments, info), ""]
            result = results.get(call.get("id"))
            if result is not None and id(result) not in shown_results:
                shown_results.add(id(result))
                out += _tool_result_lines(result)
        tools_used = message.get("tools_used")
        if isinstance(tools_used, list) and tools_used:
            out += ["_Tools used: " + ", ".join(str(t) for t in tools_used) + "_", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def render_json(header: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """The session as one JSON document: its metadata line and its messages (without runtime blocks)."""
    messages = [public_message(message) for message in messages]
    return json.dumps({"metadata": header, "messages": messages}, ensure_ascii=False, indent=2) + "\n"
