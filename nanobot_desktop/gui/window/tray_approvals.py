"""Background approvals in the tray: a notification with buttons, one menu entry each, answers.

When background work (heartbeat, a scheduled job, a subagent) waits for the person, the engine's
`Approvals` publishes `ApprovalRequested` (its request's source is not the chat). This turns it into
- a notification "Heartbeat wants to run a command" / "`echo fed` …" whose Allow once / Deny buttons
  answer directly (org.freedesktop.Notifications, see dbus_notifier.py); clicking its body opens the
  window on that session, where the approval card is; without a server with actions, a plain tray
  message that opens the session when clicked;
- an entry in the tray menu per pending approval (Allow once / Deny / Show in window), so a person
  without a notification server can answer too.
Each answers through the engine's one method (`Engine.approvals.answer`), naming itself as the surface;
the engine's `ApprovalAnswered` then settles the card in the chat too, and withdraws the notification
and the menu entry however the approval ended (answered in the chat, expired, stopped).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QT_TRANSLATE_NOOP, QObject, Signal
from PySide6.QtWidgets import QMenu

from nanobot_desktop.engine import (ApprovalAnswer, ApprovalAnswered, ApprovalRefused, ApprovalReply, ApprovalRequest,
                                    ApprovalRequested, ApprovalSurface)
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.dbus_notifier import DBusNotifier

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

log = logging.getLogger(__name__)

ANSWER_LABELS = ((ApprovalAnswer.ALLOW_ONCE, QT_TRANSLATE_NOOP("Tray", "Allow once")),
                 (ApprovalAnswer.DENY, QT_TRANSLATE_NOOP("Tray", "Deny")))
"""The answers a notification and a menu entry offer (labels translated where they are shown)."""


def approval_body(request: ApprovalRequest) -> str:
    """"`echo fed` — unanswered, it counts as Deny at 14:35"."""
    until = datetime.fromtimestamp(request.expires_at or request.asked_at).astimezone().strftime("%H:%M %Z").strip()
    return translate("Tray", "`{command}` — unanswered, it counts as Deny at {time}.").format(command=request.summary, time=until)


def _answer_labels() -> list[tuple[ApprovalAnswer, str]]:
    return [(answer, translate("Tray", str(label))) for answer, label in ANSWER_LABELS]


def menu_text(request: ApprovalRequest) -> str:
    summary = request.summary if len(request.summary) <= 48 else request.summary[:47] + "…"
    return f"{request.asker}: {request.tool} `{summary}`"


class TrayApprovals(QObject):
    """Pending background approvals, as notifications and tray-menu entries."""

    changed = Signal()
    """The set of pending approvals changed (the tray recomputes its state)."""
    open_session_requested = Signal(str)
    """(session_key): show that session (its approval card) in the window."""

    def __init__(self, engine: Engine, menu: QMenu, *, notify_fallback: Callable[[str, str, str], None],
                 use_dbus: bool = True, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.menu = menu
        self._notify_fallback = notify_fallback
        self.pending: dict[str, ApprovalRequest] = {}
        """call id -> the background work's request waiting for an answer, oldest first."""
        self._detach = engine.approvals.attach(ApprovalSurface.TRAY)  # somebody can answer background work now
        self.notifier = DBusNotifier(self)
        self.notifier.action_invoked.connect(self._on_action)
        self._notification_of: dict[str, int] = {}  # call id -> notification id
        self._menus: list[QMenu] = []
        self._separator: Any = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.notified: list[tuple[str, str, list[str]]] = []
        """Every approval notification sent (title, body, button labels), for tests and logs."""
        self._started = self._spawn(self.notifier.start()) if use_dbus else None

    # --- events ----------------------------------------------------------------------------------

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        """The engine events this follows (the tray subscribes them on the bridge for it)."""
        return {ApprovalRequested: self._on_requested, ApprovalAnswered: self._on_answered}

    def _on_requested(self, event: ApprovalRequested) -> None:
        request = event.request
        if not request.source.background or self.engine.approvals.get(request.call_id) is None:
            return  # a chat turn's ask is the card's; an ask already over is nothing to list
        self.pending[request.call_id] = request
        self._spawn(self._announce(request))
        self._rebuild_menu()
        self.changed.emit()

    def _on_answered(self, event: ApprovalAnswered) -> None:
        if event.call_id not in self.pending:
            return
        self.pending.pop(event.call_id)
        notification = self._notification_of.pop(event.call_id, 0)
        if notification:
            self._spawn(self.notifier.close(notification))
        self._rebuild_menu()
        self.changed.emit()

    async def _announce(self, request: ApprovalRequest) -> None:
        if self._started is not None:
            await asyncio.shield(self._started)
        body = approval_body(request)
        if self.notifier.available and self.notifier.supports_actions:
            actions = [*((answer.value, label) for answer, label in _answer_labels()),
                       ("default", translate("Tray", "Show in window"))]
            self.notified.append((request.title, body, [label for _key, label in actions]))
            notification = await self.notifier.notify(request.title, body, actions, critical=True, timeout_ms=0)
            if notification and request.call_id in self.pending:
                self._notification_of[request.call_id] = notification
            elif notification:  # answered while the notification was on its way
                await self.notifier.close(notification)
            return
        self.notified.append((request.title, body, []))
        self._notify_fallback(request.title, translate("Tray", "{text} Answer from the tray menu or the window.").format(text=body),
                              request.session_key)

    # --- answering -------------------------------------------------------------------------------

    def answer(self, call_id: str, answer: ApprovalAnswer, surface: ApprovalSurface = ApprovalSurface.TRAY) -> bool:
        """Answer one pending approval through the engine; False when it was not taken (answered
        elsewhere first, expired), which the engine's ApprovalAnswered already shows here."""
        try:
            self.engine.approvals.answer(call_id, ApprovalReply(answer), surface)
        except ApprovalRefused as refused:
            log.info("the %s's answer was not taken: %s", surface.value, refused)
            return False
        return True

    def show(self, call_id: str) -> None:
        request = self.pending.get(call_id)
        if request is not None:
            self.open_session_requested.emit(request.session_key)

    def _on_action(self, notification: int, key: str) -> None:
        """A notification's button: the notification is the surface that answers."""
        call_id = next((c for c, n in self._notification_of.items() if n == notification), None)
        if call_id is None:
            return
        if key == "default":
            self.show(call_id)
        elif key in (ApprovalAnswer.ALLOW_ONCE.value, ApprovalAnswer.DENY.value):
            self.answer(call_id, ApprovalAnswer(key), ApprovalSurface.NOTIFICATION)

    # --- the menu --------------------------------------------------------------------------------

    def _rebuild_menu(self) -> None:
        for submenu in self._menus:
            self.menu.removeAction(submenu.menuAction())
            submenu.deleteLater()
        self._menus.clear()
        if self._separator is not None:
            self.menu.removeAction(self._separator)
            self._separator = None
        if not self.pending:
            return
        existing = self.menu.actions()
        if not existing:
            return  # the tray menu always has its own actions; nothing to insert before otherwise
        first = existing[0]
        for call_id, request in self.pending.items():
            submenu = QMenu(menu_text(request), self.menu)
            submenu.setObjectName(f"trayApproval_{call_id}")
            submenu.setToolTip(f"{request.title}: {request.summary}")
            for answer, label in _answer_labels():
                action = submenu.addAction(label)
                action.setObjectName(f"trayApproval_{call_id}_{answer.value}")
                action.triggered.connect(lambda _checked=False, c=call_id, a=answer: self.answer(c, a))
            show = submenu.addAction(translate("Tray", "Show in window"))
            show.setObjectName(f"trayApproval_{call_id}_show")
            show.triggered.connect(lambda _checked=False, c=call_id: self.show(c))
            self.menu.insertMenu(first, submenu)
            self._menus.append(submenu)
        self._separator = self.menu.insertSeparator(first)

    def menu_entries(self) -> list[QMenu]:
        """The submenus shown for pending approvals, oldest first."""
        return list(self._menus)

    # --- plumbing --------------------------------------------------------------------------------

    def _spawn(self, coroutine: Coroutine[Any, Any, object]) -> asyncio.Future[object] | None:
        try:
            future = asyncio.ensure_future(coroutine)
        except RuntimeError:  # no event loop (a test without one): nothing to notify with
            coroutine.close()
            return None
        self._tasks.add(future)
        future.add_done_callback(self._tasks.discard)
        return future

    def detach(self) -> None:
        """The tray no longer answers (quitting): background asks then go to the other surfaces, if any."""
        self._detach()

    async def stop(self) -> None:
        """Withdraw our approval notifications (their buttons would answer nothing after quitting)."""
        for future in list(self._tasks):
            if future is not self._started:
                future.cancel()
        for notification in list(self._notification_of.values()):
            await self.notifier.close(notification)
        self._notification_of.clear()
        await self.notifier.stop()
