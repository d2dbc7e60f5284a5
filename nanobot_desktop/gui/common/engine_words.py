"""Words the engine says that the GUI shows, in the UI language. The engine stays English (its logs and
prompts use these words; it never imports Qt): it gives stable values, and the tables here, marked
with QT_TRANSLATE_NOOP, map each value to the text shown. A value not in a table (a newer engine's)
is shown as it is.

- provider names: the engine's display names (registry.py) translated where they are words ("Custom
  (OpenAI-compatible)") or where Chinese users know the provider by a Chinese name (智谱, 月之暗面 …);
  brand names (OpenAI, OpenRouter, DeepSeek, Ollama, vLLM, LM Studio …) stay as they are;
- the workspace layout: its name ("nanobot 0.1.4 workspace") and why it was chosen (engine/layout.py);
- the title of a session that has no messages and no title yet (`NEW_CHAT_TITLE`, "New chat");
- a failed write (the engine's StorageError): what happened and what to do, from its errno and path;
- the shell sandbox's status line (engine/tools/sandbox.py `SandboxSupport.summary`, and the approval
  card's `sandbox` from shell.py's `sandbox_status`): a few fixed lines and a few with a number in them;
- a failed model call: the sentence engine/llm/provider_errors.py names in `facts`, with its values;
- a failed memory consolidation: one sentence in people's words (the engine's reason is the detail).
"""

from __future__ import annotations

import errno
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP

from nanobot_desktop.gui.common.i18n import translate

PROVIDER_LABELS = {"Custom (OpenAI-compatible)": QT_TRANSLATE_NOOP("Settings", "Custom (OpenAI-compatible)"),
                   "Moonshot (Kimi)": QT_TRANSLATE_NOOP("Settings", "Moonshot (Kimi)"),
                   "Zhipu (GLM)": QT_TRANSLATE_NOOP("Settings", "Zhipu (GLM)"),
                   "DashScope (Qwen)": QT_TRANSLATE_NOOP("Settings", "DashScope (Qwen)"),
                   "SiliconFlow": QT_TRANSLATE_NOOP("Settings", "SiliconFlow"),
                   "VolcEngine": QT_TRANSLATE_NOOP("Settings", "VolcEngine")}
LAYOUT_REASONS = {
    "memory/history.jsonl exists": QT_TRANSLATE_NOOP("Layout", "memory/history.jsonl exists"),
    "memory/HISTORY.md exists": QT_TRANSLATE_NOOP("Layout", "memory/HISTORY.md exists"),
    "the workspace has a sessions/ folder": QT_TRANSLATE_NOOP("Layout", "the workspace has a sessions/ folder"),
    "chosen for a new workspace": QT_TRANSLATE_NOOP("Layout", "chosen for a new workspace"),
    "the config has nanobot 0.3 keys (contextWindowTokens, dream)":
        QT_TRANSLATE_NOOP("Layout", "the config has nanobot 0.3 keys (contextWindowTokens, dream)"),
    "no nanobot 0.3 marks on disk": QT_TRANSLATE_NOOP("Layout", "no nanobot 0.3 marks on disk"),
}

SANDBOX_LINES = {
    "not sandboxed: the packaged app cannot start the sandbox launcher":
        QT_TRANSLATE_NOOP("Sandbox", "Not sandboxed: the packaged app cannot start the sandbox launcher"),
    "not sandboxed: this kernel has no Landlock (Linux 5.13 or newer needed)":
        QT_TRANSLATE_NOOP("Sandbox", "Not sandboxed: this kernel has no Landlock (Linux 5.13 or newer needed)"),
    "not sandboxed: the workspace restriction is off (Settings → Tools)":
        QT_TRANSLATE_NOOP("Sandbox", "Not sandboxed: the workspace restriction is off (Settings → Tools)"),
}
_NO_SANDBOX_ON = re.compile(r"not sandboxed: no sandbox is wired up on (\S+)")
_SANDBOXED = re.compile(r"sandboxed \(Landlock ABI (\d+), (PID/network namespaces|subreaper)\)(?:; network (on|off))?")
_SANDBOXED_LINES = {  # (isolation, network) -> the line; every combination a whole sentence
    ("PID/network namespaces", None): QT_TRANSLATE_NOOP("Sandbox", "Sandboxed (Landlock ABI {abi}, PID/network namespaces)"),
    ("subreaper", None): QT_TRANSLATE_NOOP("Sandbox", "Sandboxed (Landlock ABI {abi}, subreaper)"),
    ("PID/network namespaces", "on"): QT_TRANSLATE_NOOP("Sandbox", "Sandboxed (Landlock ABI {abi}, PID/network namespaces); "
                                                                   "network on"),
    ("PID/network namespaces", "off"): QT_TRANSLATE_NOOP("Sandbox", "Sandboxed (Landlock ABI {abi}, PID/network namespaces); "
                                                                    "network off"),
    ("subreaper", "on"): QT_TRANSLATE_NOOP("Sandbox", "Sandboxed (Landlock ABI {abi}, subreaper); network on"),
    ("subreaper", "off"): QT_TRANSLATE_NOOP("Sandbox", "Sandboxed (Landlock ABI {abi}, subreaper); network off"),
}


def sandbox_line(status: str) -> str:
    """The engine's sandbox status ("sandboxed (Landlock ABI 7, …)", "not sandboxed: …") as the UI says it."""
    if status in SANDBOX_LINES:
        return translate("Sandbox", SANDBOX_LINES[status])
    if match := _NO_SANDBOX_ON.fullmatch(status):
        return translate("Sandbox", "Not sandboxed: no sandbox is wired up on {platform}").format(platform=match[1])
    if (match := _SANDBOXED.fullmatch(status)) and (match[2], match[3]) in _SANDBOXED_LINES:
        return translate("Sandbox", _SANDBOXED_LINES[(match[2], match[3])]).format(abi=match[1])
    return status[:1].upper() + status[1:]


def storage_problem(error: OSError) -> str:
    """What a failed write means and what to do ("The disk holding … is full: free some space."), worded
    by the GUI from the error's errno and path (`StorageError.path`, else the error's file name)."""
    path = str(getattr(error, "path", None) or error.filename or "")
    folder = str(Path(path).parent) if path else ""
    number = getattr(getattr(error, "cause", None), "errno", None) or error.errno
    if number == errno.ENOSPC:
        return translate("Storage", "The disk holding {folder} is full: free some space.").format(folder=folder)
    if number == getattr(errno, "EDQUOT", -1):
        return translate("Storage", "Your disk quota for {folder} is used up: free some space.").format(folder=folder)
    if number == errno.EFBIG:
        return translate("Storage", "{path} cannot grow any larger (the file size limit was reached): raise the limit "
                                    "or move the file away.").format(path=path)
    if number == errno.EROFS:
        return translate("Storage", "{folder} is on a read-only file system: make it writable or use another "
                                    "folder.").format(folder=folder)
    if number in (errno.EACCES, errno.EPERM):
        return translate("Storage", "You have no permission to write {path}: fix the permissions of the file and its "
                                    "folder.").format(path=path)
    if number == errno.EIO:
        return translate("Storage", "The disk holding {path} reported an I/O error: check the disk.").format(path=path)
    reason = getattr(getattr(error, "cause", None), "strerror", None) or error.strerror or type(error).__name__
    return translate("Storage", "{path} could not be written ({reason}): check the disk and the folder.").format(
        path=path, reason=reason)


def session_title(title: str, message_count: int) -> str:
    """A session's title as shown: the engine's placeholder for an empty, untitled session in the UI language."""
    from nanobot_desktop.engine import NEW_CHAT_TITLE

    return translate("Sessions", "New chat") if title == NEW_CHAT_TITLE and not message_count else title


def provider_label(label: str) -> str:
    """The engine's display name of a provider, as the UI shows it (translated where PROVIDER_LABELS has it)."""
    return translate("Settings", PROVIDER_LABELS[label]) if label in PROVIDER_LABELS else label


def layout_label(layout: Any) -> str:
    """The workspace layout's name (engine/layout.py's WorkspaceLayout, or None when unknown)."""
    if layout is None:
        return translate("Settings", "nanobot workspace")
    return translate("Settings", "nanobot 0.3 workspace") if layout.is_v03 else translate("Settings", "nanobot 0.1.4 workspace")


def layout_reason(reason: str) -> str:
    """Why the engine chose the layout, as the UI says it ("<file> exists" for the marker files)."""
    if reason in LAYOUT_REASONS:
        return translate("Layout", LAYOUT_REASONS[reason])
    path, separator, rest = reason.partition(" exists")
    if separator and not rest and " " not in path:
        return translate("Layout", "{path} exists").format(path=path)
    return reason


def model_call_failure(given: Mapping[str, Any] | tuple[tuple[str, Any], ...]) -> str | None:
    """The engine's sentence for a failed model call (provider_errors.describe_failure) in the UI
    language, from the sentence's name and values (an event's `facts` as they come); None when there
    are none or for a sentence this version does not know. In English it is the engine's own text,
    word for word (tests/gui/chat/test_failure_words.py)."""
    facts = dict(given)
    template = _MODEL_CALL_SENTENCES.get(str(facts.get("sentence")))
    if template is None:
        return None
    said = facts.get("said") or ""
    quoted = translate("Chat", "; it said: “{words}”").format(words=said) if said else ""
    attempts = facts.get("attempts") or 1
    tries = translate("Chat", " after {count} attempts").format(count=attempts) if attempts > 1 else ""
    values = {"status": facts.get("status"), "model": facts.get("model", ""), "api_base": facts.get("api_base", ""),
              "said": quoted, "tries": tries, "seconds": f"{facts.get('timeout_s') or 0:g}",
              "why": _CONNECTION_FAILURES.get(str(facts.get("why")), lambda: str(facts.get("why")))()}
    if facts.get("sentence") == "server_error" and not said:
        values["said"] = f" ({facts.get('error_type', '')})"
    return template().format(**values)


_CONNECTION_FAILURES = {
    "connection refused": lambda: translate("Chat", "connection refused"),
    "host not found": lambda: translate("Chat", "host not found"),
    "connection failed": lambda: translate("Chat", "connection failed"),
}

# One per sentence of provider_errors.describe_failure (looked up when used: the UI language is set at start).
_MODEL_CALL_SENTENCES = {
    "auth": lambda: translate("Chat", "The endpoint rejected the API key ({status}). Check the API key in Settings."),
    "model_not_found": lambda: translate(
        "Chat", "The endpoint does not know the model '{model}' (404){said}. Pick a model from the endpoint's list in Settings."),
    "not_found": lambda: translate(
        "Chat", "{api_base} answered 404 Not Found{said}. Check the base URL in Settings (it usually ends in /v1)."),
    "rate_limit": lambda: translate(
        "Chat", "The endpoint is rate-limiting requests (429){tries}{said}. Wait a moment, then send again."),
    "quota": lambda: translate(
        "Chat", "The endpoint is rate-limiting requests (429){tries}{said}. Check the account's quota or billing."),
    "server_status": lambda: translate(
        "Chat", "The endpoint had a server error ({status}){tries}{said}. Try again in a moment."),
    "bad_request": lambda: translate(
        "Chat", "The endpoint rejected the request ({status}){said}. Check the model and the endpoint in Settings."),
    "timeout": lambda: translate(
        "Chat", "{api_base} did not answer within {seconds} s{tries}. Try again, or check the endpoint and its timeouts "
                "in Settings."),
    "unreachable": lambda: translate(
        "Chat", "Could not connect to {api_base} ({why}){tries}. Check that the server is running and that its URL in "
                "Settings is right."),
    "server_error": lambda: translate("Chat", "The endpoint reported an error{said}. Try again in a moment."),
}


def consolidation_failure_words() -> str:
    """What a failed consolidation means to a person; the engine's reason ("the model did not call
    save_memory; not retried until …") is shown only as the detail under it."""
    return translate("Memory", "Older messages could not be summarised into memory this time; MEMORY.md and "
                               "HISTORY.md were left as they were.")
