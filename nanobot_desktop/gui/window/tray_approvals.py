"""Background approvals in the tray: a notification with buttons, one menu entry each, answers.

When background work (heartbeat, a scheduled job, a subagent) waits for the person, the engine's
`BackgroundApprovals` publishes `BackgroundApprovalPending`. This turns it into
- a notification "Heartbeat wants to run a command" / "`echo fed` …" whose Allow once / Deny buttons
  answer directly (org.freedesktop.Notifications, see dbus_notifier.py); clicking its body opens the
  window on that session, where the approval card is; without a server with actions, a plain tray
  message that opens the session when clicked;
- an entry in the tray menu per pending approval (Allow once / Deny / Show in window), so a person
  without a notification server can answer too.
An answer from any of these also settles the session's approval card (`card_answerer`), and the
notification is withdrawn when the approval ends any other way (answered in the chat, expired).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QT_TRANSLATE_NOOP, QObject, Signal
from PySide6.QtWidgets import QMenu

from nanobot_desktop.engine import BackgroundApprovalPending, BackgroundApprovalResolved
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.dbus_notifier import DBusNotifier

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

log = logging.getLogger(__name__)

ANSWER_LABELS = (("allow_once", QT_TRANSLATE_NOOP("Tray", "Allow once")), ("deny", QT_TRANSLATE_NOOP("Tray", "Deny")))
"""The answers a notification and a menu entry offer (labels translated where they are shown)."""


def approval_body(event: BackgroundApprovalPending) -> str:
    """"`echo fed` — asked by Heartbeat; counts as Deny at 14:35 if unanswered"."""
    until = datetime.fromtimestamp(event.expires_at).astimezone().strftime("%H:%M %Z").strip()
    return translate("Tray", "`{command}` — unanswered, it counts as Deny at {time}.").format(command=event.summary, time=until)


def _answer_labels() -> list[tuple[str, str]]:
    return [(key, translate("Tray", str(label))) for key, label in ANSWER_LABELS]


def menu_text(event: BackgroundApprovalPending) -> str:
    summary = event.summary if len(event.summary) <= 48 else event.summary[:47] + "…"
    return f"{event.source}: {event.tool} `{summary}`"


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
        self.pending: dict[str, BackgroundApprovalPending] = {}
        """approval id -> the event that announced it, oldest first."""
        self.card_answerer: Callable[[str, str], None] | None = None
        """Set by the window: answers the session's approval card (ChatController.answer_approval)."""
        self.notifier = DBusNotifier(self)
        self.notifier.action_invoked.connect(self._on_action)
        self._notification_of: dict[str, int] = {}  # approval id -> notification id
        self._menus: list[QMenu] = []
        self._separator: Any = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.notified: list[tuple[str, str, list[str]]] = []
        """Every approval notification sent (title, body, button labels), for tests and logs."""
        self._started = self._spawn(self.notifier.start()) if use_dbus else None

    # --- events ----------------------------------------------------------------------------------

    def handle_event(self, event: Any) -> None:
        if isinstance(event, BackgroundApprovalPending):
            self.pending[event.approval_id] = event
            self._spawn(self._announce(event))
            self._rebuild_menu()
            self.changed.emit()
        elif isinstance(event, BackgroundApprovalResolved) and event.approval_id in self.pending:
            self.pending.pop(event.approval_id)
            if event.via not in ("the approval card", "") and event.call_id and self.card_answerer is not None:
                self.card_answerer(event.call_id, event.answer)
            notification = self._notification_of.pop(event.approval_id, 0)
            if notification:
                self._spawn(self.notifier.close(notification))
            self._rebuild_menu()
            self.changed.emit()

    async def _announce(self, event: BackgroundApprovalPending) -> None:
        if self._started is not None:
            await asyncio.shield(self._started)
        body = approval_body(event)
        if self.notifier.available and self.notifier.supports_actions:
            actions = [*_answer_labels(), ("default", translate("Tray", "Show in window"))]
            self.notified.append((event.title, body, [label for _key, label in actions]))
            notification = await self.notifier.notify(event.title, body, actions, critical=True, timeout_ms=0)
            if notification and event.approval_id in self.pending:
                self._notification_of[event.approval_id] = notification
            elif notification:  # answered while the notification was on its way
                await self.notifier.close(notification)
            return
        self.notified.append((event.title, body, []))
        self._notify_fallback(event.title, translate("Tray", "{text} Answer from the tray menu or the window.").format(text=body),
                              event.session_key)

    # --- answering -------------------------------------------------------------------------------

    def answer(self, approval_id: str, answer: str, via: str = "the tray menu") -> bool:
        """Answer one pending approval ("allow_once" or "deny")."""
        return bool(self.engine.background_approvals.answer(approval_id, answer, via=via))

    def show(self, approval_id: str) -> None:
        event = self.pending.get(approval_id)
        if event is not None:
            self.open_session_requested.emit(event.session_key)

    def _on_action(self, notification: int, key: str) -> None:
        approval_id = next((a for a, n in self._notification_of.items() if n == notification), None)
        if approval_id is None:
            return
        if key == "default":
            self.show(approval_id)
        elif key in ("allow_once", "deny"):
            self.answer(approval_id, key, via="the notification")

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
        for approval_id, event in self.pending.items():
            submenu = QMenu(menu_text(event), self.menu)
            submenu.setObjectName(f"trayApproval_{approval_id}")
            submenu.setToolTip(f"{event.title}: {event.summary}")
            for key, label in _answer_labels():
                action = submenu.addAction(label)
                action.setObjectName(f"trayApproval_{approval_id}_{key}")
                action.triggered.connect(lambda _checked=False, a=approval_id, k=key: self.answer(a, k))
            show = submenu.addAction(translate("Tray", "Show in window"))
            show.setObjectName(f"trayApproval_{approval_id}_show")
            show.triggered.connect(lambda _checked=False, a=approval_id: self.show(a))
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

    async def stop(self) -> None:
        """Withdraw our approval notifications (their buttons would answer nothing after quitting)."""
        for future in list(self._tasks):
            if future is not self._started:
                future.cancel()
        for notification in list(self._notification_of.values()):
            await self.notifier.close(notification)
        self._notification_of.clear()
        await self.notifier.stop()
