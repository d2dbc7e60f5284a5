"""What crosses the wire besides the stream: outgoing messages made acceptable to endpoints, and
tool-call argument strings turned into objects. Pure functions, kept apart so they are easy to test
and so `provider.py` stays readable."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlparse

# Endpoints whose thinking models reject a follow-up request that lacks the assistant's
# `reasoning_content` (reference §6, issues #1313/#2579/#3665). It is only sent where it is needed:
# other endpoints do not expect the extra field.
_KEEP_REASONING_HOSTS = ("deepseek", "moonshot", "kimi")
_SANITIZED_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
_CLEAN_KEYS = frozenset(_SANITIZED_KEYS)



def parse_tool_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse a tool call's argument string into a JSON object: (arguments, parse_error).

    Only unambiguous repairs are tried (a ```json fence, trailing commas, brackets left open at the
    end of a truncated object, a JSON object encoded as a JSON string); anything else comes back as
    ({}, "arguments are not valid JSON: ...") for the loop to hand to the model. Never raises.
    """
    text = (raw or "").strip()
    if not text:
        return {}, None
    try:
        value = json.loads(text)
    except ValueError as first_error:
        repaired = _close_open_brackets(_drop_trailing_commas(_strip_code_fence(text)))
        try:
            value = json.loads(repaired)
        except ValueError:  # report the error in what the model sent, not in our repair attempt
            return {}, f"arguments are not valid JSON: {_describe_json_error(first_error)}"
    if isinstance(value, str):  # double-encoded: "{\"path\": \"a\"}"
        try:
            inner = json.loads(value)
        except ValueError:
            inner = None
        if isinstance(inner, dict):
            value = inner
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {_json_type(value)}"
    return value, None


def _describe_json_error(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        joiner = " char" if exc.msg.endswith(" at") else " at char"  # "Unterminated string starting at"
        return f"{exc.msg}{joiner} {exc.pos}"
    return str(exc)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _strip_code_fence(text: str) -> str:
    match = re.fullmatch(r"```[a-zA-Z]*\s*\n?(.*?)\n?\s*```", text, re.DOTALL)
    return match.group(1).strip() if match else text


def _scan(text: str) -> tuple[list[tuple[int, str]], bool]:
    """Walk the JSON text outside strings: (structural characters with positions, ends inside a string)."""
    marks: list[tuple[int, str]] = []
    in_string = escaped = False
    for pos, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{}[],":
            marks.append((pos, char))
    return marks, in_string


def _drop_trailing_commas(text: str) -> str:
    """Remove commas directly followed (after whitespace) by a closing bracket, outside strings."""
    marks, _ = _scan(text)
    following = marks[1:] + [(len(text), "end")]  # a comma at the very end was cut off after it
    drop = {pos for (pos, char), (next_pos, next_char) in zip(marks, following, strict=False)
            if char == "," and next_char in ("}", "]", "end") and not text[pos + 1 : next_pos].strip()}
    return "".join(c for i, c in enumerate(text) if i not in drop)


def _close_open_brackets(text: str) -> str:
    """Close brackets a truncated object left open; a cut inside a string is not guessed at."""
    marks, in_string = _scan(text)
    if in_string or not text.startswith("{"):
        return text
    stack: list[str] = []
    for _, char in marks:
        if char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack or stack.pop() != char:
                return text  # mismatched: not ours to fix
    return text.rstrip().rstrip(",") + "".join(reversed(stack)) if stack else text


def sanitize_messages(messages: list[dict[str, Any]], keep_reasoning: bool = False) -> list[dict[str, Any]]:
    """The messages as the endpoint accepts them (reference §11, LiteLLM's sanitizing).

    Only role/content/tool_calls/tool_call_id/name are kept (timestamps and other session fields
    go), plus the assistant's `reasoning_content` when `keep_reasoning`. Empty content becomes
    "(empty)" (several endpoints reject it), except an assistant message with tool calls gets None.
    Tool-call arguments are sent as JSON strings. The input is not modified.
    """
    clean: list[dict[str, Any]] = []
    for message in messages:
        if _already_clean(message):
            clean.append(message)  # a history entry as the session hands it out: sent as it is, not copied
            continue
        out = {key: message[key] for key in _SANITIZED_KEYS if key in message}
        role = out.get("role")
        if keep_reasoning and role == "assistant" and message.get("reasoning_content"):
            out["reasoning_content"] = message["reasoning_content"]
        if out.get("tool_calls"):
            out["tool_calls"] = [_clean_tool_call(call) for call in out["tool_calls"]]
        else:
            out.pop("tool_calls", None)
        if out.get("content") in (None, "", []):
            out["content"] = None if (role == "assistant" and out.get("tool_calls")) else "(empty)"
        clean.append(out)
    return clean


def _already_clean(message: dict[str, Any]) -> bool:
    """Whether `message` is what sanitizing would make of it: only the kept keys, text content, no tool calls.

    Most of a prompt is such entries; each call used to copy all of them once more, and the copies of
    a long session's prompt were the largest thing a turn allocated.
    """
    content = message.get("content")
    return (isinstance(content, str) and content != "" and "tool_calls" not in message
            and all(key in _CLEAN_KEYS for key in message))


def _clean_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call.get("id", ""), "type": call.get("type", "function"),
            "function": {"name": function.get("name", ""), "arguments": arguments}}


def keeps_reasoning_content(api_base: str) -> bool:
    """Whether assistant `reasoning_content` must be sent back to this endpoint (DeepSeek, Kimi)."""
    host = (urlparse(api_base).hostname or "").lower()
    return any(name in host for name in _KEEP_REASONING_HOSTS)
