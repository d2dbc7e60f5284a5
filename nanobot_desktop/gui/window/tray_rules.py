"""The tray's rules as pure functions, testable without a tray: which state the icon shows, its
tooltip, and which engine events deserve a notification (only those with something to tell: a
heartbeat or cron run that produced a reply or failed, never a skip / nothing-to-do tick).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP
from PySide6.QtGui import QIcon

from nanobot_desktop.data import resources_dir
from nanobot_desktop.engine import BudgetCrossed, CronJobRan, HeartbeatRan, OutboundMessage
from nanobot_desktop.gui.common.i18n import translate

TRAY_STATES = ("idle", "running", "error", "paused", "waiting")
NOTIFICATION_TEXT_LIMIT = 240
_SHORT_DECISION = {"skipped": QT_TRANSLATE_NOOP("Tray", "skipped"), "skip": QT_TRANSLATE_NOOP("Tray", "skip"),
                   "run": QT_TRANSLATE_NOOP("Tray", "ran"), "error": QT_TRANSLATE_NOOP("Tray", "failed")}
_STATE_WORDS = {"idle": QT_TRANSLATE_NOOP("Tray", "idle"), "running": QT_TRANSLATE_NOOP("Tray", "running"),
                "error": QT_TRANSLATE_NOOP("Tray", "error"), "paused": QT_TRANSLATE_NOOP("Tray", "paused"),
                "waiting": QT_TRANSLATE_NOOP("Tray", "waiting for you")}  # translated in tooltip_text
_CANCELLED_PREFIX = "cancelled"  # a tick stopped at quit is recorded as an error; that is no news


# --- pure pieces (tested without a tray) -------------------------------------------------------------

def tray_state(*, busy: bool, failed: bool, paused: bool, waiting: bool = False) -> str:
    """Waiting for the person wins over work in progress, which wins over an unseen failure, which
    wins over a paused heartbeat."""
    if waiting:
        return "waiting"
    if busy:
        return "running"
    if failed:
        return "error"
    return "paused" if paused else "idle"


def tray_icon_path(state: str) -> Path:
    """The SVG for `state`: a dark face with a light outline, so it shows on light and dark panels alike.

    The panel's colour is not the app's theme (a dark app on a light panel is common), and Qt cannot
    tell it: one icon that works on both is the reliable choice.
    """
    if state not in TRAY_STATES:
        raise ValueError(f"unknown tray state {state!r}; expected one of {', '.join(TRAY_STATES)}")
    return resources_dir() / "icons" / f"tray-{state}.svg"


def app_icon() -> QIcon:
    """The application's own icon (window title bar, task switcher, notifications)."""
    return QIcon(str(resources_dir() / "icons" / "app.svg"))


def tooltip_text(state: str, last_tick: Any, next_tick_at: datetime | None, *, paused: bool,
                 enabled: bool) -> str:
    """e.g. "nanobot — idle · last heartbeat 14:05 (skip) · next 14:35"."""
    parts = [f"nanobot — {translate('Tray', _STATE_WORDS.get(state, state))}"]
    if last_tick is not None:
        word = translate("Tray", _SHORT_DECISION.get(last_tick.decision, last_tick.decision))
        parts.append(translate("Tray", "last heartbeat {time} ({outcome})").format(
            time=last_tick.started_at.strftime("%H:%M"), outcome=word))
    if not enabled:
        parts.append(translate("Tray", "heartbeat off"))
    elif paused:
        parts.append(translate("Tray", "heartbeat paused"))
    elif next_tick_at is not None:
        parts.append(translate("Tray", "next {time}").format(time=next_tick_at.strftime("%H:%M")))
    return " · ".join(parts)


@dataclass(frozen=True)
class Notification:
    title: str
    text: str
    session_key: str
    is_error: bool = False


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= NOTIFICATION_TEXT_LIMIT else text[: NOTIFICATION_TEXT_LIMIT - 1] + "…"


def _is_background_session(session_key: str) -> bool:
    return session_key == "heartbeat" or session_key.startswith("cron:")


def notification_for(event: object) -> Notification | None:
    """What to tell the person about `event`, or None when there is nothing worth a notification."""
    rule = _RULES.get(type(event))
    return rule(event) if rule is not None else None


def _heartbeat_ran(event: HeartbeatRan) -> Notification | None:
    if event.error:
        if event.error.startswith(_CANCELLED_PREFIX):
            return None
        return Notification(translate("Tray", "Heartbeat failed"), _shorten(event.error), event.session_key or "heartbeat", True)
    if event.decision == "run" and event.result and event.result.strip():
        return Notification(translate("Tray", "Heartbeat"), _shorten(event.result), event.session_key or "heartbeat")
    return None


def _cron_job_ran(event: CronJobRan) -> Notification | None:
    key = event.session_key or f"cron:{event.job_id}"
    if event.error:
        title = translate("Tray", "Scheduled task failed: {name}").format(name=event.name)
        return Notification(title, _shorten(event.error), key, True)
    if event.result and event.result.strip():
        return Notification(translate("Tray", "Scheduled: {name}").format(name=event.name), _shorten(event.result), key)
    return None


def _budget_crossed(event: BudgetCrossed) -> Notification:
    period = translate("Tray", "today") if event.period == "day" else translate("Tray", "this month")
    spent = translate("Tray", "${spent} of ${limit} spent {period}.").format(
        spent=f"{event.spent:.2f}", limit=f"{event.limit:.2f}", period=period)
    if event.level >= 1.0:
        return Notification(translate("Tray", "Usage budget spent"), spent + " " + translate(
            "Tray", "The heartbeat, scheduled jobs and subagents wait until you resume them (Usage page)."), "", True)
    return Notification(translate("Tray", "Usage budget at {percent} %").format(percent=round(event.level * 100)),
                        spent, "")


def _outbound_message(event: OutboundMessage) -> Notification | None:
    # The message tool delivered a background run's reply itself (the turn's own reply is then None).
    if _is_background_session(event.session_key) and event.content.strip():
        title = translate("Tray", "Heartbeat") if event.session_key == "heartbeat" else translate("Tray", "Scheduled task")
        return Notification(title, _shorten(event.content), event.session_key)
    return None


_RULES: dict[type, Callable[[Any], Notification | None]] = {
    HeartbeatRan: _heartbeat_ran, CronJobRan: _cron_job_ran, BudgetCrossed: _budget_crossed, OutboundMessage: _outbound_message,
}
"""The events worth a notification, each with its rule."""
NOTIFYING_EVENTS: tuple[type, ...] = tuple(_RULES)
"""The event types `notification_for` may have something to say about (the tray subscribes to these)."""


