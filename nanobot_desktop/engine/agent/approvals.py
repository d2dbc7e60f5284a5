"""Approvals asked by background work (heartbeat, scheduled jobs, subagents) while nobody watches.

A chat turn can wait for its approval card: the person is looking at it. A background run cannot: it
must tell the person (the GUI turns `BackgroundApprovalPending` into a notification and a tray entry),
accept an answer from any of those places, and never wait forever. So every pending background
approval has an expiry (the person's setting, default 30 minutes); an unanswered one counts as Deny,
with the reason in the tool result the model receives and in the run's timeline. Each approval waits on
its own future, so other background work (and the next heartbeat) goes on meanwhile.

Without an interactive front end (the CLI) `interactive` is False: an "ask" goes to the CLI's own
prompt when it has one (`agent`, which also honours --yes) and is refused at once otherwise
(`heartbeat --once`), as before: there is nobody to ask.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable

from nanobot_desktop.engine.background_log import short_arguments
from nanobot_desktop.engine.events import BackgroundApprovalPending, BackgroundApprovalResolved, EventBus
from nanobot_desktop.engine.tools.policy import ApprovalAnswer, Approver, ApprovalReply, ApprovalRequest, as_reply

log = logging.getLogger(__name__)

DEFAULT_EXPIRY_S = 30 * 60
_ids = itertools.count(1)


def what_it_wants(tool: str) -> str:
    """"wants to run a command", "wants to write a file", … for the notification's title."""
    return {"exec": "wants to run a command", "write_file": "wants to write a file",
            "edit_file": "wants to edit a file", "web_fetch": "wants to fetch a web page",
            "web_search": "wants to search the web", "spawn": "wants to start a subagent",
            "message": "wants to send a message", "cron": "wants to change a scheduled job"}.get(
                tool, f"wants to use {tool}")


@dataclass
class PendingApproval:
    """One background approval waiting for the person."""

    approval_id: str
    source: str  # "Heartbeat", "Scheduled task “Feed the cat”", "Subagent “notes”"
    request: ApprovalRequest
    asked_at: datetime
    expires_at: datetime
    future: asyncio.Future[tuple[ApprovalReply, str]] = field(repr=False)
    call_id: str = ""

    @property
    def session_key(self) -> str:
        return self.request.session_key

    @property
    def tool(self) -> str:
        return self.request.tool

    @property
    def summary(self) -> str:
        """The short form of the arguments: the command, the path, …"""
        return short_arguments(self.request.tool, self.request.arguments)

    @property
    def title(self) -> str:
        """"Heartbeat wants to run a command"."""
        return f"{self.source} {what_it_wants(self.request.tool)}"


class BackgroundApprovals:
    """The pending background approvals: asked by the tool runner, answered by the GUI (or expired)."""

    def __init__(self, bus: EventBus, expiry_s: Callable[[], float] = lambda: DEFAULT_EXPIRY_S) -> None:
        self._bus = bus
        self._expiry_s = expiry_s
        self._pending: dict[str, PendingApproval] = {}
        self.interactive = False
        """Set by the GUI: somebody can answer. False (the CLI): an ask is refused at once."""

    def pending(self) -> list[PendingApproval]:
        """Waiting approvals, oldest first."""
        return sorted(self._pending.values(), key=lambda p: p.asked_at)

    def get(self, approval_id: str) -> PendingApproval | None:
        return self._pending.get(approval_id)

    async def ask(self, request: ApprovalRequest, source: str, *, call_id: str = "",
                  card: Approver | None = None) -> tuple[ApprovalReply, str]:
        """Wait for an answer from the GUI, the session's approval `card`, or the expiry.

        Returns (reply, why): why is "" for a person's answer (whose own reason is in the reply), else
        the reason it was denied.
        """
        if not self.interactive:
            if card is not None:  # a terminal front end (the CLI's prompt, --yes)
                reply, why, via = as_reply(await card(request)), "", "the terminal"
            else:
                reply, why, via = (ApprovalReply(ApprovalAnswer.DENY),
                                   "approval needed and nobody to ask (headless run: ask counts as deny)", "")
            self._bus.publish(BackgroundApprovalResolved(
                request.session_key, approval_id="", call_id=call_id, tool=request.tool,
                summary=short_arguments(request.tool, request.arguments), answer=reply.answer.value, reason=why,
                via=via))
            return reply, why
        loop = asyncio.get_running_loop()
        expiry = max(0.0, float(self._expiry_s()))
        now = datetime.now().astimezone()
        pending = PendingApproval(f"bg-{next(_ids)}", source, request, now, now + timedelta(seconds=expiry),
                                  loop.create_future(), call_id)
        self._pending[pending.approval_id] = pending
        self._bus.publish(BackgroundApprovalPending(
            request.session_key, approval_id=pending.approval_id, call_id=call_id, source=source, tool=request.tool,
            summary=pending.summary, title=pending.title, expires_at=pending.expires_at.timestamp()))
        card_task = asyncio.ensure_future(card(request)) if card is not None else None
        if card_task is not None:
            card_task.add_done_callback(lambda task: self._card_answered(pending.approval_id, task))
        timer = loop.call_later(expiry, self._expire, pending.approval_id)
        try:
            return await asyncio.shield(pending.future)
        except asyncio.CancelledError:
            self._resolve(pending.approval_id, ApprovalAnswer.DENY, "the run was stopped")
            raise
        finally:
            timer.cancel()
            self._pending.pop(pending.approval_id, None)
            if card_task is not None and not card_task.done():
                card_task.cancel()  # answered elsewhere or expired: the card stops waiting

    def answer(self, approval_id: str, answer: ApprovalAnswer | str, via: str = "the tray") -> bool:
        """The person answered (notification button, tray menu). False when it is no longer pending."""
        return self._resolve(approval_id, ApprovalAnswer(answer), "", via)

    def _card_answered(self, approval_id: str, task: "asyncio.Future[ApprovalAnswer | ApprovalReply]") -> None:
        if task.cancelled() or task.exception() is not None:
            return
        reply = as_reply(task.result())
        self._resolve(approval_id, reply.answer, "", "the approval card", reply.reason)

    def _expire(self, approval_id: str) -> None:
        pending = self._pending.get(approval_id)
        if pending is None:
            return
        seconds = (pending.expires_at - pending.asked_at).total_seconds()
        waited = f"{seconds:g} s" if seconds < 90 else f"{round(seconds / 60)} min"
        self._resolve(approval_id, ApprovalAnswer.DENY, f"nobody answered within {waited}, so it expired and counts as deny")

    def _resolve(self, approval_id: str, answer: ApprovalAnswer, why: str, via: str = "",
                 person_reason: str = "") -> bool:
        pending = self._pending.get(approval_id)
        if pending is None or pending.future.done():
            return False
        pending.future.set_result((ApprovalReply(answer, person_reason), why))
        log.info("background approval %s (%s %s): %s%s", approval_id, pending.tool, pending.summary,
                 answer.value, f" — {why}" if why else "")
        self._bus.publish(BackgroundApprovalResolved(
            pending.session_key, approval_id=approval_id, call_id=pending.call_id, tool=pending.tool,
            summary=pending.summary, answer=answer.value, reason=why, via=via))
        return True
