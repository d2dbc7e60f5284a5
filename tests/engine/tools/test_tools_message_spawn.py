"""message and spawn: they reach the loop's services through the per-call context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.events import ToolStatus
from nanobot_desktop.engine.tools.base import ToolContext, failed
from nanobot_desktop.engine.tools.message import SENT_TO_CURRENT_CHAT, MessageTool
from nanobot_desktop.engine.tools.registry import build_default_registry
from nanobot_desktop.engine.tools.spawn import SpawnTool


class Outbox:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str, list[str]]] = []

    async def __call__(self, channel: str, chat_id: str, content: str, media: list[str]) -> None:
        self.sent.append((channel, chat_id, content, media))


@pytest.fixture
def outbox() -> Outbox:
    return Outbox()


@pytest.fixture
def ctx(tmp_path: Path, outbox: Outbox) -> ToolContext:
    return ToolContext(workspace=tmp_path, channel="gui", chat_id="s1", session_key="gui:s1", send_message=outbox)


async def test_message_defaults_to_current_chat_and_marks_it(ctx: ToolContext, outbox: Outbox) -> None:
    assert await MessageTool().execute(ctx, content="hi") == "Message sent to gui:s1"
    assert outbox.sent == [("gui", "s1", "hi", [])]
    assert ctx.extra[SENT_TO_CURRENT_CHAT] is True


async def test_message_to_other_chat_does_not_mark(ctx: ToolContext, outbox: Outbox) -> None:
    assert await MessageTool().execute(ctx, content="yo", channel="telegram", chat_id="42") == "Message sent to telegram:42"
    assert outbox.sent == [("telegram", "42", "yo", [])]
    assert SENT_TO_CURRENT_CHAT not in ctx.extra
    await MessageTool().execute(ctx, content="yo", chat_id="other")
    assert outbox.sent[-1][:2] == ("gui", "other") and SENT_TO_CURRENT_CHAT not in ctx.extra


async def test_message_with_attachments(ctx: ToolContext, outbox: Outbox) -> None:
    (ctx.workspace / "a.png").write_bytes(b"png")
    (ctx.workspace / "b.txt").write_text("b", encoding="utf-8")
    result = await MessageTool().execute(ctx, content="files", media=["a.png", "b.txt"])
    assert result == "Message sent to gui:s1 with 2 attachments"
    assert outbox.sent[0][3] == [str((ctx.workspace / "a.png").resolve()), str((ctx.workspace / "b.txt").resolve())]


async def test_message_attachment_errors(ctx: ToolContext, outbox: Outbox) -> None:
    assert await MessageTool().execute(ctx, content="x", media=["missing.png"]) == failed("Error: Attachment not found: missing.png")
    ctx.restrict_to_workspace = True
    result = await MessageTool().execute(ctx, content="x", media=["/etc/passwd"])
    assert result.status is ToolStatus.ERROR and result.text.startswith("Error: Path /etc/passwd is outside allowed directory")
    assert outbox.sent == []


async def test_message_without_target_or_sender(tmp_path: Path, outbox: Outbox) -> None:
    no_target = ToolContext(workspace=tmp_path, channel="", chat_id="", send_message=outbox)
    assert await MessageTool().execute(no_target, content="x") == failed("Error: No target channel/chat specified")
    no_sender = ToolContext(workspace=tmp_path)
    assert await MessageTool().execute(no_sender, content="x") == failed("Error: Message sending not configured")
    assert outbox.sent == []


async def test_message_send_failure_is_reported(tmp_path: Path) -> None:
    async def broken(*_: Any) -> None:
        raise ConnectionError("channel down")

    ctx = ToolContext(workspace=tmp_path, send_message=broken)
    assert await MessageTool().execute(ctx, content="x") == failed("Error sending message: channel down")
    assert SENT_TO_CURRENT_CHAT not in ctx.extra


async def test_spawn_delegates_to_manager(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []

    async def spawn(**kwargs: Any) -> str:
        calls.append(kwargs)
        return "Subagent [report] started (id: 1a2b3c4d). I'll notify you when it completes."

    ctx = ToolContext(workspace=tmp_path, spawn=spawn)
    result = await build_default_registry().execute("spawn", {"task": "write a report", "label": "report"}, ctx)
    assert result == "Subagent [report] started (id: 1a2b3c4d). I'll notify you when it completes."
    await SpawnTool().execute(ctx, task="t")
    assert calls == [{"task": "write a report", "label": "report"}, {"task": "t", "label": None}]


async def test_spawn_without_manager(tmp_path: Path) -> None:
    result = await SpawnTool().execute(ToolContext(workspace=tmp_path), task="t")
    assert result.status is ToolStatus.ERROR and result.text.startswith("Error: Subagents are not available here")
