"""Spoken activity: what the agent does, said to a screen reader once per step, never per token.

A sighted person sees a reply grow, an error bar or an approval card appear; a screen-reader user
hears nothing unless the app says so. `ActivityAnnouncer` listens to the engine's events (through
the bridge) and turns the few that matter into Qt accessibility announcements
(`QAccessibleAnnouncementEvent`, Qt 6.8+, sent on Linux as AT-SPI `object:announcement`):

    reply started · reply finished (with its length) · reply failed · approval waiting
    (assertive: it blocks the agent) · background task finished (heartbeat, scheduled job, subagent)

Streamed text is never announced: the finished reply's length is, and the reply itself is one
focusable message with its own name and description. `app.announcements` in desktop.json turns them
down: "all", "important" (failures and approvals only) or "off".
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QWidget

from nanobot_desktop.engine import (
    ApprovalRequested, CronJobRan, HeartbeatRan, SubagentFinished, TurnFailed, TurnFinished,
    TurnStarted,
)
from nanobot_desktop.gui.common.accessibility import describe_reply
from nanobot_desktop.gui.common.i18n import translate

LEVELS = ("all", "important", "off")
SPOKEN_KEPT = 20  # announcements remembered in `ActivityAnnouncer.spoken`


class ActivityAnnouncer(QObject):
    """Announces the engine's activity on `window` for assistive technology (see the module docstring)."""

    announced = Signal(str, bool)
    """(text, important) for every announcement made: what a screen reader was told."""

    def __init__(self, window: QWidget, current_key: Callable[[], str], level: str = "all") -> None:
        super().__init__(window)
        self._window = window
        self._current_key = current_key
        self.level = level if level in LEVELS else "all"
        self.spoken: list[str] = []
        """The newest SPOKEN_KEPT announcements, oldest first (the tests read it; a person hears it). Bounded:
        a window open for days announces every turn twice."""

    def say(self, text: str, *, important: bool = False) -> None:
        """Announce `text` now unless the level turns it down; `important` interrupts (assertive)."""
        if not self._allows(important):
            return
        event = QAccessibleAnnouncementEvent(self._window, text)
        event.setPoliteness(QAccessible.AnnouncementPoliteness.Assertive if important
                            else QAccessible.AnnouncementPoliteness.Polite)
        QAccessible.updateAccessibility(event)
        self.spoken.append(text)
        del self.spoken[:-SPOKEN_KEPT]
        self.announced.emit(text, important)

    def _allows(self, important: bool) -> bool:
        return self.level == "all" or (self.level == "important" and important)

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        """The engine events that are announced, each with what is said (EngineBridge.subscribe)."""
        return {TurnStarted: self._turn_started, TurnFinished: self._turn_finished, TurnFailed: self._turn_failed,
                ApprovalRequested: self._approval_requested,
                SubagentFinished: self._subagent_finished, CronJobRan: self._cron_job_ran, HeartbeatRan: self._heartbeat_ran}

    def on_event(self, event: object) -> None:
        """Announce one event, if it is one that is announced (for a caller without a bridge)."""
        handler = self.handlers().get(type(event))
        if handler is not None:
            handler(event)

    def _turn_started(self, event: TurnStarted) -> None:
        if event.session_key == self._current_key():
            self.say(translate("Accessibility", "nanobot is replying"))

    def _turn_finished(self, event: TurnFinished) -> None:
        if event.session_key == self._current_key() and event.reply and self._allows(important=False):
            # Said on the loop's next pass: counting a long reply's words and wording its shape took ~2.7 ms
            # (64k reply, bench/stream_stall.py) of the step that also saves the reply and shows it whole.
            QTimer.singleShot(0, self, lambda reply=event.reply: self._say_reply_finished(reply))

    def _say_reply_finished(self, reply: str) -> None:
        count = len(reply.split())
        words = translate("Accessibility", "%n word(s)", None, count)
        self.say(translate("Accessibility", "Reply finished: {shape}, {words}").format(
            shape=describe_reply(reply), words=words))

    def _turn_failed(self, event: TurnFailed) -> None:
        self.say(translate("Accessibility", "The reply failed: {error}").format(error=event.error), important=True)

    def _approval_requested(self, event: ApprovalRequested) -> None:
        if event.request.source.background:
            self.say(translate("Accessibility", "Approval needed: {title}").format(title=event.request.title),
                     important=True)
            return
        self.say(translate("Accessibility", "Approval needed: nanobot wants to run the tool “{tool}”. "
                                            "Press Ctrl+Shift+A to answer.").format(tool=event.request.tool), important=True)

    def _subagent_finished(self, event: SubagentFinished) -> None:
        self.say(translate("Accessibility", "Background task “{label}” finished: {status}").format(
            label=event.label, status=event.status))

    def _cron_job_ran(self, event: CronJobRan) -> None:
        self.say(translate("Accessibility", "Scheduled task “{name}” finished: {status}").format(
            name=event.name, status=event.status))

    def _heartbeat_ran(self, event: HeartbeatRan) -> None:
        if event.decision == "run":
            self.say(translate("Accessibility", "Heartbeat finished: {outcome}").format(
                outcome=translate("Accessibility", "error") if event.error else translate("Accessibility", "ok")))
