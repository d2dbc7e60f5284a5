"""nanobot 0.3.5's hidden history messages are not chat turns (issue 29)."""

from __future__ import annotations

from nanobot_desktop.gui.chat.history import items_from_messages
from nanobot_desktop.gui.chat.model import AssistantMessage, UserMessage


def test_hidden_history_messages_are_not_shown_in_the_chat() -> None:
    messages = [{"role": "user", "content": "plan the trip"},
                {"role": "user", "content": "Continue from the summary.", "_hidden_history": True},
                {"role": "assistant", "content": "Inner step.", "_hidden_history": {"subagent": "x"}},
                {"role": "assistant", "content": "Day one: the coast."}]
    items = items_from_messages(messages)
    assert [type(item) for item in items] == [UserMessage, AssistantMessage]
    assert [getattr(item, "text", "") for item in items] == ["plan the trip", "Day one: the coast."]
