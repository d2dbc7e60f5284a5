"""message: let the agent send a message (with attachments) to a chat, the current one by default.

When the agent messages the chat it is answering, the loop must not send its final reply again, so the
tool marks that in `ctx.extra["message_sent_to_current_chat"]`.
"""

from __future__ import annotations

from typing import Any

from nanobot_desktop.engine.tools.base import Tool, ToolContext, ToolResult, failed
from nanobot_desktop.engine.tools.paths import PathOutsideWorkspace
from nanobot_desktop.engine.tools.safe_files import FileToolError, file_size, locate

SENT_TO_CURRENT_CHAT = "message_sent_to_current_chat"


class MessageTool(Tool):
    name = "message"
    description = ("Send a message to the user, optionally with file attachments. Use it only to reach a "
                   "specific chat channel; for a normal answer just reply with text.")
    parameters = {
        "type": "object",
        "properties": {
            "content": {"type": "string", "description": "The message content to send"},
            "channel": {"type": "string", "description": "Optional: target channel (e.g. cli, telegram)"},
            "chat_id": {"type": "string", "description": "Optional: target chat or user ID"},
            "media": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Optional: list of file paths to attach",
            },
        },
        "required": ["content"],
    }

    async def execute(self, ctx: ToolContext, content: str, channel: str | None = None,
                      chat_id: str | None = None, media: list[str] | None = None, **_: Any) -> str | ToolResult:
        channel = channel or ctx.channel
        chat_id = chat_id or ctx.chat_id
        if not channel or not chat_id:
            return failed("Error: No target channel/chat specified")
        if ctx.send_message is None:
            return failed("Error: Message sending not configured")
        attachments: list[str] = []
        for raw in media or []:
            try:
                place = locate(raw, ctx)
                size = file_size(place, raw)  # refuses hard-linked files under the restriction
            except (PathOutsideWorkspace, FileToolError) as exc:
                return failed(str(exc))
            if size is None:
                return failed(f"Error: Attachment not found: {raw}")
            attachments.append(str(place.path))
        try:
            await ctx.send_message(channel, chat_id, content, attachments)
        except Exception as exc:  # noqa: BLE001 - a channel failure is the model's to know about, not a crashed turn
            return failed(f"Error sending message: {exc}")
        if channel == ctx.channel and chat_id == ctx.chat_id:
            ctx.extra[SENT_TO_CURRENT_CHAT] = True
        suffix = f" with {len(attachments)} attachments" if attachments else ""
        return f"Message sent to {channel}:{chat_id}{suffix}"
