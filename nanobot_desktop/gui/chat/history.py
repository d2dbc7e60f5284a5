"""Turning a session's stored messages into chat items: pure functions, safe to run in an executor.

A session file is the truth; the chat shows it the way the live turn looked: user bubbles, assistant
messages (reasoning kept apart), one tool card per call with the status its result implies, the
"stopped" marker, and messages the system sent on the agent's behalf (subagent results) as notices.
"""

from __future__ import annotations

import json
from typing import Any

from nanobot_desktop.engine import CANCELLED_RESULT, is_hidden_message, message_media, message_text, user_text
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.chat.model import AssistantMessage, ChatItem, Notice, ToolCard, UserMessage

STOPPED_TEXT = str(QT_TRANSLATE_NOOP("Chat", "Stopped"))  # shown as translate("Chat", STOPPED_TEXT)
# Messages read from the session file per page (the newest page on open, older ones as the user
# scrolls up); a page starts at a user message, so a tool call and its result are never split.
HISTORY_PAGE_MESSAGES = 150
_SYSTEM_PREFIXES = ("[Subagent '", "[System:")
_DENIED_PREFIXES = ("Error: the user denied running", "Error: the user's tool policy does not allow")


def is_system_origin(text: str) -> bool:
    """A message the system put into the session (a subagent's report), not something the person typed."""
    return text.lstrip().startswith(_SYSTEM_PREFIXES)


def system_notice_text(text: str) -> str:
    """The first line of a system message ("[Subagent 'x' completed successfully]") as a short notice."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.strip("[]") or translate("Chat", "System message")


def tool_status_of(result: str) -> str:
    """The card status a stored tool result implies (the live status is not stored)."""
    if result.startswith(CANCELLED_RESULT):
        return "cancelled"
    if result.startswith(_DENIED_PREFIXES):
        return "denied"
    if result.startswith("Error"):
        return "error"
    return "ok"


def _arguments_of(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    if not isinstance(function, dict):
        function = {}
    raw = function.get("arguments")
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


def items_from_messages(messages: list[dict[str, Any]], *, turn_running: bool = False) -> list[ChatItem]:
    """Chat items for stored messages, oldest first.

    A tool call without a stored result is "running" while the session's turn still runs
    (`turn_running`), else "cancelled" (the app was stopped or killed mid-call).
    """
    items: list[ChatItem] = []
    cards: dict[str, ToolCard] = {}
    for message in messages:
        if is_hidden_message(message):
            continue  # nanobot 0.3's hidden history: for the model, never a chat turn
        role = message.get("role")
        if role == "user":
            text = user_text(message)
            media = message_media(message)
            if is_system_origin(text):
                items.append(Notice(system_notice_text(text)))
            elif text.strip() or media:
                items.append(UserMessage(text, attachments=tuple(media)))
        elif role == "assistant":
            _add_assistant(items, cards, message)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            result = message_text(message.get("content"))
            card = cards.pop(call_id, None)
            if card is None:  # a result whose call is not in the file (trimmed by hand, or an old format)
                card = ToolCard(call_id=call_id, name=str(message.get("name") or "tool"))
                items.append(card)
            card.status = tool_status_of(result)
            if message.get("stopped"):
                items.append(Notice(translate("Chat", STOPPED_TEXT), "stopped"))
    for card in cards.values():
        card.status = "running" if turn_running else "cancelled"
    return items


def _add_assistant(items: list[ChatItem], cards: dict[str, ToolCard], message: dict[str, Any]) -> None:
    text = message_text(message.get("content")).strip()
    reasoning = message.get("reasoning_content")
    stopped = bool(message.get("stopped"))
    if stopped and text in ("", "(stopped)"):
        items.append(Notice(translate("Chat", STOPPED_TEXT), "stopped"))
    elif text or (isinstance(reasoning, str) and reasoning.strip()):
        items.append(AssistantMessage(text=text, reasoning=reasoning if isinstance(reasoning, str) else "",
                                      stopped=stopped, cut=bool(message.get("cut_off"))))
    for call in message.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        card = ToolCard.from_call(str(call.get("id") or ""), str(function.get("name") or "tool"), _arguments_of(call))
        items.append(card)
        cards[card.call_id] = card
