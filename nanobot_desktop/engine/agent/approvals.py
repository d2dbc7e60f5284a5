"""One approval object: the pending asks, each answered exactly once, from whichever surface is first.

A tool call the policy says to ask about becomes one `ApprovalRequest` (events.py), keyed by the
model's tool call id. `ask()` publishes it once as `ApprovalRequested` and waits. Every surface — the
chat's card, the tray menu, a notification's buttons, the CLI's prompt — renders from that event and
answers through `answer()`, which settles the request once, publishes `ApprovalAnswered` naming the
surface, and refuses any later answer (or an unknown id) with `ApprovalRefused` saying why. A chat
turn's ask and background work's ask take this same path.

Background work (heartbeat, scheduled jobs, subagents) runs while nobody watches, so its asks expire
(the person's setting, default 30 minutes) and then count as Deny, with the reason in the tool result
the model receives and in the run's timeline. Each ask waits on its own future, so other work goes on.

Surfaces say they are there with `attach()`. With nobody attached (`heartbeat --once`) an ask is
denied at once, and when the last surface leaves (the window closes) what still waits is denied:
there is nobody to ask. `respond_with()` is a surface that answers by a coroutine (the CLI's prompt,
its --yes, a test).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Callable

from nanobot_desktop.engine.background.log import short_arguments
from nanobot_desktop.engine.events import (ApprovalAnswer, ApprovalAnswered, ApprovalReply, ApprovalRequest,
                                           ApprovalRequested, ApprovalSurface, Event, EventBus)
from nanobot_desktop.engine.tools.policy import Approver, as_reply

log = logging.getLogger(__name__)

DEFAULT_EXPIRY_S = 30 * 60
NOBODY_TO_ASK = "approval needed and nobody to ask (headless run: ask counts as deny)"
NOBODY_LEFT = "approval needed and nobody is left to answer it (the window was closed)"
STOPPED = "the run was stopped"
_REMEMBERED = 512  # settled asks kept to say why a late answer is refused
_ANSWER_WORDS = {ApprovalAnswer.ALLOW_ONCE: "allowed once", ApprovalAnswer.ALLOW_ALWAYS: "always allowed",
                 ApprovalAnswer.DENY: "denied"}


class ApprovalRefused(Exception):
    """An answer that was not taken: the request was answered already, expired, or is not known."""


@dataclass
class _Waiting:
    request: ApprovalRequest
    future: asyncio.Future[ApprovalAnswered]
    responders: set[asyncio.Task[None]]


class Approvals:
    """The pending approvals, asked by the tool runner and answered once by any surface (or expired)."""

    def __init__(self, bus: EventBus, expiry_s: Callable[[], float] = lambda: DEFAULT_EXPIRY_S) -> None:
        self._bus = bus
        self._expiry_s = expiry_s
        self._waiting: dict[str, _Waiting] = {}
        self._settled: OrderedDict[str, ApprovalAnswered] = OrderedDict()
        self._surfaces: list[object] = []  # one token per attach(), so each detach removes its own
        self._ids = itertools.count(2)

    # --- who can answer ----------------------------------------------------------------------------

    def attach(self, surface: ApprovalSurface) -> Callable[[], None]:
        """`surface` can answer from now on; returns the function that detaches it again."""
        token = object()
        self._surfaces.append(token)

        def detach() -> None:
            if token in self._surfaces:
                self._surfaces.remove(token)
                if not self._surfaces:
                    for call_id in list(self._waiting):
                        self._settle(call_id, ApprovalReply(ApprovalAnswer.DENY), ApprovalSurface.ENGINE, NOBODY_LEFT)

        log.debug("approval surface attached: %s", surface.value)
        return detach

    @property
    def attended(self) -> bool:
        """Whether any surface is there to answer."""
        return bool(self._surfaces)

    def respond_with(self, answerer: Approver, surface: ApprovalSurface = ApprovalSurface.TERMINAL) -> Callable[[], None]:
        """A surface that answers each request by awaiting `answerer(request)` (the CLI's prompt, --yes);
        returns the function that stops it. Its answer goes through `answer()` like any other."""
        detach = self.attach(surface)

        def on_event(event: Event) -> None:
            if isinstance(event, ApprovalRequested) and event.call_id in self._waiting:
                task = asyncio.ensure_future(self._respond(answerer, event.request, surface))
                self._waiting[event.call_id].responders.add(task)

        unsubscribe = self._bus.subscribe(on_event)

        def stop() -> None:
            unsubscribe()
            detach()

        return stop

    async def _respond(self, answerer: Approver, request: ApprovalRequest, surface: ApprovalSurface) -> None:
        try:
            reply = as_reply(await answerer(request))
        except Exception:  # a broken answerer leaves the ask to the others (or its expiry)
            log.exception("the %s could not answer the approval of %s", surface.value, request.tool)
            return
        try:
            self.answer(request.call_id, reply, surface)
        except ApprovalRefused as refused:
            log.info("the %s's answer was not taken: %s", surface.value, refused)

    # --- asking and answering ----------------------------------------------------------------------

    def pending(self) -> list[ApprovalRequest]:
        """The requests waiting for an answer, oldest first."""
        return sorted((w.request for w in self._waiting.values()), key=lambda r: r.asked_at)

    def get(self, call_id: str) -> ApprovalRequest | None:
        """The request `call_id` if it still waits."""
        waiting = self._waiting.get(call_id)
        return waiting.request if waiting is not None else None

    def settled(self, call_id: str) -> ApprovalAnswered | None:
        """How `call_id` was answered, if it was (recent ones only)."""
        return self._settled.get(call_id)

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswered:
        """Publish `request` once and wait for its one answer (a person's, or the engine's: expired,
        stopped, nobody to ask). Background work's asks expire; a chat turn's wait as long as it runs."""
        loop = asyncio.get_running_loop()
        call_id = request.call_id or f"ask-{next(self._ids)}"
        if call_id in self._waiting or call_id in self._settled:  # another server's "call_0" may be waiting
            call_id = f"{call_id}-{next(self._ids)}"
        now = time.time()
        expiry = max(0.0, float(self._expiry_s())) if request.source.background else None
        request = replace(request, call_id=call_id, asked_at=now,
                          expires_at=now + expiry if expiry is not None else None,
                          summary=request.summary or short_arguments(request.tool, request.arguments))
        waiting = _Waiting(request, loop.create_future(), set())
        self._waiting[call_id] = waiting
        self._bus.publish(ApprovalRequested(request.session_key, request=request))
        if not self._surfaces:
            self._settle(call_id, ApprovalReply(ApprovalAnswer.DENY), ApprovalSurface.ENGINE, NOBODY_TO_ASK)
        timer = loop.call_later(expiry, self._expire, call_id) if expiry is not None else None
        try:
            return await asyncio.shield(waiting.future)
        except asyncio.CancelledError:
            self._settle(call_id, ApprovalReply(ApprovalAnswer.DENY), ApprovalSurface.ENGINE, STOPPED)
            raise
        finally:
            if timer is not None:
                timer.cancel()
            for task in waiting.responders:
                task.cancel()  # answered elsewhere or expired: a prompt stops waiting
            self._waiting.pop(call_id, None)

    def answer(self, call_id: str, reply: ApprovalReply | ApprovalAnswer,
               surface: ApprovalSurface) -> ApprovalAnswered:
        """The one answer to `call_id`, from `surface`; a Deny may carry the person's reason. Raises
        ApprovalRefused when it was answered already (saying by whom), expired, or is not known."""
        waiting = self._waiting.get(call_id)
        if waiting is None or waiting.future.done():
            settled = self._settled.get(call_id)
            if settled is None:
                raise ApprovalRefused(f"no approval with id {call_id!r} is waiting")
            words = _ANSWER_WORDS[settled.answer]
            if settled.surface is ApprovalSurface.ENGINE:
                raise ApprovalRefused(f"the approval of {settled.request.tool} is over: {words}, {settled.why}")
            raise ApprovalRefused(f"the approval of {settled.request.tool} was already answered from the "
                                  f"{settled.surface.value} ({words})")
        if surface is ApprovalSurface.ENGINE:
            raise ValueError("the engine settles approvals itself; a person's answer names its surface")
        reply = as_reply(reply)
        reason = " ".join(reply.reason.split()) if reply.answer is ApprovalAnswer.DENY else ""
        return self._settle(call_id, ApprovalReply(reply.answer, reason), surface)

    def _expire(self, call_id: str) -> None:
        waiting = self._waiting.get(call_id)
        if waiting is None or waiting.request.expires_at is None:
            return
        seconds = waiting.request.expires_at - waiting.request.asked_at
        waited = f"{seconds:g} s" if seconds < 90 else f"{round(seconds / 60)} min"
        self._settle(call_id, ApprovalReply(ApprovalAnswer.DENY), ApprovalSurface.ENGINE,
                     f"nobody answered within {waited}, so it expired and counts as deny")

    def _settle(self, call_id: str, reply: ApprovalReply, surface: ApprovalSurface, why: str = "") -> ApprovalAnswered:
        waiting = self._waiting[call_id]
        if waiting.future.done():
            return waiting.future.result()
        request = waiting.request
        answered = ApprovalAnswered(request.session_key, request=request, reply=reply, surface=surface, why=why,
                                    waited_s=max(0.0, time.time() - request.asked_at))
        waiting.future.set_result(answered)
        self._settled[call_id] = answered
        while len(self._settled) > _REMEMBERED:
            self._settled.popitem(last=False)
        log.info("approval %s (%s %s): %s from the %s%s", call_id, request.tool, request.summary,
                 reply.answer.value, surface.value, f" — {why}" if why else "")
        self._bus.publish(answered)
        return answered
