"""Approval cards: the engine's approver, answered in the session's chat instead of a modal dialog.

The engine's approver coroutine adds a card to the session's chat and awaits a future that the card's
buttons (or the tray's) resolve, so the turn waits while the window stays responsive, and several
sessions can each have a card waiting. Which model a card goes into is the controller's business
(controller.py); this module keeps the waiting futures and the cards' states.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Awaitable, Callable

from nanobot_desktop.engine import ApprovalAnswer, ApprovalReply, ApprovalRequest, ApprovalRequested
from nanobot_desktop.gui.chat.model import ApprovalCard, ChatModel


class ApprovalCards:
    """The approvals waiting in the chats: call id -> (future of the answer, session key)."""

    def __init__(self, open_model: Callable[[str], Awaitable[ChatModel]],
                 model_for: Callable[[str], ChatModel | None], requested: Callable[[str, str], None]) -> None:
        self._open_model = open_model  # the session's model, its history loaded (a session not on screen too)
        self._model_for = model_for  # the session's model if it has one now
        self._requested = requested  # (key, tool): a card was added
        self._pending: dict[str, tuple[asyncio.Future[tuple[str, str]], str]] = {}
        self._last_event: dict[str, ApprovalRequested] = {}

    def note_requested(self, event: ApprovalRequested) -> None:
        """The engine's event comes before the approver is asked: the card takes its call id."""
        self._last_event[event.session_key] = event

    async def approve(self, request: ApprovalRequest) -> ApprovalReply:
        """A card in the session's chat, answered by its buttons (a Deny may carry the person's reason,
        which the model reads in the tool result)."""
        key = request.session_key
        event = self._last_event.pop(key, None)
        call_id = event.call_id if event is not None and event.name == request.tool else f"ask-{uuid.uuid4().hex[:8]}"
        model = await self._open_model(key)
        card = ApprovalCard(call_id=call_id, tool=request.tool, arguments=dict(request.arguments), diff=request.diff,
                            command=request.command, working_dir=request.working_dir, sandbox=request.sandbox,
                            origin=request.origin)
        future: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = (future, key)
        model.append(card)
        self._requested(key, request.tool)
        try:
            answer, reason = await future
        except asyncio.CancelledError:
            if card.state == "pending" and model.row_of_call(call_id, "approval") >= 0:
                model.set_approval_state(call_id, "denied")
            raise
        finally:
            self._pending.pop(call_id, None)
        return ApprovalReply(ApprovalAnswer(answer), reason if answer == "deny" else "")

    def answer(self, call_id: str, answer: str, reason: str = "") -> None:
        """Resolve a waiting approval ("allow_once", "allow_always" or "deny"; a deny may give a reason)."""
        entry = self._pending.get(call_id)
        if entry is None:
            return
        future, key = entry
        ApprovalAnswer(answer)  # a wrong answer string fails here, loudly, not in the engine
        model = self._model_for(key)
        if model is not None and model.row_of_call(call_id, "approval") >= 0:
            card = model.item(model.row_of_call(call_id, "approval"))
            if isinstance(card, ApprovalCard) and card.state == "pending":
                model.set_approval_state(call_id, "denied" if answer == "deny" else "allowed", answer,
                                         reason=reason if answer == "deny" else "")
        if not future.done():
            future.set_result((answer, reason.strip()))

    def pending(self, key: str | None = None) -> list[str]:
        """Call ids of approval cards waiting for an answer (in `key`, or anywhere)."""
        return [call_id for call_id, (_f, session) in self._pending.items() if key is None or session == key]

    def session_of(self, call_id: str) -> str:
        """The session whose chat holds the waiting approval `call_id` ("" when none waits)."""
        entry = self._pending.get(call_id)
        return entry[1] if entry is not None else ""

    def deny_all(self) -> None:
        """At shutdown: every waiting approval is answered Deny."""
        for future, _key in list(self._pending.values()):
            if not future.done():
                future.set_result(("deny", ""))
