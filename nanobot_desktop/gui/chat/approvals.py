"""Approval cards: the engine's approval requests, drawn in the session's chat and answered there.

The engine publishes each request once (`ApprovalRequested`, keyed by the tool call's id) and takes
one answer from whichever surface is first (`Engine.approvals.answer`). This module is the chat's
surface: it adds a card to the session's chat (its history read first, for a session not on screen
too), answers through the engine when a button is pressed, and settles the card from the engine's
`ApprovalAnswered` — so an answer from the tray or a notification shows on the card, with where it
came from. The turn waits in the engine; the window stays responsive, and several sessions can each
have a card waiting. Which model a card goes into is the controller's business (controller.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from nanobot_desktop.engine import (ApprovalAnswer, ApprovalAnswered, ApprovalRefused, ApprovalReply, ApprovalRequest,
                                    ApprovalSurface)
from nanobot_desktop.gui.chat.model import ApprovalCard, ChatModel

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

log = logging.getLogger(__name__)


class ApprovalCards:
    """The approval cards waiting in the chats: call id -> session key."""

    def __init__(self, engine: Engine, open_model: Callable[[str], Awaitable[ChatModel]],
                 model_for: Callable[[str], ChatModel | None], requested: Callable[[str, str], None],
                 track: Callable[["asyncio.Future[Any]"], None]) -> None:
        self._approvals = engine.approvals
        self._open_model = open_model  # the session's model, its history loaded (a session not on screen too)
        self._model_for = model_for  # the session's model if it has one now
        self._requested = requested  # (key, tool): a card was added
        self._track = track  # the controller owns the tasks that add cards
        self._waiting: dict[str, str] = {}
        self._detach: Callable[[], None] | None = self._approvals.attach(ApprovalSurface.CARD)

    def show(self, request: ApprovalRequest) -> None:
        """An `ApprovalRequested` of the engine: a card in the request's session, once its history is read."""
        self._track(asyncio.ensure_future(self._add_card(request)))

    async def _add_card(self, request: ApprovalRequest) -> None:
        model = await self._open_model(request.session_key)
        call_id = request.call_id
        if self._approvals.get(call_id) is None or model.row_of_call(call_id, "approval") >= 0:
            return  # answered (or stopped) while the history was read: nothing to ask any more
        model.append(ApprovalCard(call_id=call_id, tool=request.tool, arguments=dict(request.arguments),
                                  diff=request.diff, command=request.command, working_dir=request.working_dir,
                                  sandbox=request.sandbox, origin=request.origin))
        self._waiting[call_id] = request.session_key
        self._requested(request.session_key, request.tool)

    def settle(self, event: ApprovalAnswered) -> None:
        """The engine's one answer: the card shows it, and who gave it, whichever surface that was."""
        key = self._waiting.pop(event.call_id, event.session_key)
        model = self._model_for(key)
        if model is None or model.row_of_call(event.call_id, "approval") < 0:
            return
        denied = event.answer is ApprovalAnswer.DENY
        model.set_approval_state(event.call_id, "denied" if denied else "allowed", event.answer.value,
                                 reason=event.reply.reason, by=event.surface.value, why=event.why)

    def answer(self, call_id: str, answer: str, reason: str = "") -> bool:
        """The card's buttons: answer through the engine ("allow_once", "allow_always" or "deny"; a deny may
        give a reason). False when the engine refused it (answered elsewhere first, expired)."""
        try:
            self._approvals.answer(call_id, ApprovalReply(ApprovalAnswer(answer), reason), ApprovalSurface.CARD)
        except ApprovalRefused as refused:
            log.info("the card's answer was not taken: %s", refused)
            settled = self._approvals.settled(call_id)
            if settled is not None:
                self.settle(settled)  # the card shows the answer that counted, not the click
            return False
        return True

    def pending(self, key: str | None = None) -> list[str]:
        """Call ids of approval cards waiting for an answer (in `key`, or anywhere)."""
        return [call_id for call_id, session in self._waiting.items() if key is None or session == key]

    def session_of(self, call_id: str) -> str:
        """The session whose chat holds the waiting approval `call_id` ("" when none waits)."""
        return self._waiting.get(call_id, "")

    def detach(self) -> None:
        """At shutdown: the chat no longer answers (with no other surface left, the engine denies what waits)."""
        if self._detach is not None:
            self._detach()
            self._detach = None
