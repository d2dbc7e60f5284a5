"""Desktop notifications with buttons, over org.freedesktop.Notifications on the session bus (Linux).

Why not QSystemTrayIcon.showMessage: it cannot carry actions (buttons). Why not QtDBus: PySide6 cannot
marshal the uint32 `replaces_id` that Notify requires, and the server sends `ActionInvoked` only to the
connection that created the notification. So this module holds one small asyncio D-Bus connection of
its own (jeepney, pure Python, on the app's qasync loop), sends Notify/CloseNotification on it and turns
the server's ActionInvoked / NotificationClosed signals into Qt signals. When there is no session bus,
no notification server or jeepney, `available` stays False and the tray falls back to showMessage.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QObject, Signal

from nanobot_desktop.identity import APP_ID, APP_NAME

log = logging.getLogger(__name__)

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"


class DBusNotifier(QObject):
    """Notify / close / hear clicks; every call is a coroutine on the running asyncio loop."""

    action_invoked = Signal(int, str)
    """(notification id, action key): the person pressed a button (or the body: "default")."""
    closed = Signal(int)
    """(notification id): the notification went away (dismissed, expired or closed by us)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.available = False
        self.supports_actions = False
        self.server = ""
        self._router: Any = None
        self._listener: asyncio.Task[None] | None = None
        self._address: Any = None
        self._member_field: Any = None

    async def start(self) -> bool:
        """Connect to the session bus and ask the server what it can do; False when there is none."""
        try:
            from jeepney import DBusAddress, HeaderFields, MatchRule, message_bus, new_method_call  # type: ignore[import-untyped]
            from jeepney.io.asyncio import DBusRouter, Proxy, open_dbus_connection  # type: ignore[import-untyped]
        except ImportError:
            log.info("jeepney is not installed: notifications without buttons")
            return False
        try:
            connection = await asyncio.wait_for(open_dbus_connection(bus="SESSION"), 5)
            self._router = DBusRouter(connection)
            self._address = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=INTERFACE)
            reply = await asyncio.wait_for(
                self._router.send_and_get_reply(new_method_call(self._address, "GetCapabilities")), 5)
            if reply.header.message_type.name == "error":
                raise RuntimeError(" ".join(map(str, reply.body)) or "GetCapabilities failed")
            capabilities = [str(item) for item in reply.body[0]] if reply.body else []
            info = await asyncio.wait_for(
                self._router.send_and_get_reply(new_method_call(self._address, "GetServerInformation")), 5)
            self.server = str(info.body[0]) if info.body else ""
            rule = MatchRule(type="signal", interface=INTERFACE, path=OBJECT_PATH)
            await asyncio.wait_for(Proxy(message_bus, self._router).AddMatch(rule), 5)
        except Exception as exc:  # noqa: BLE001 - no bus, no server, a refused call: fall back quietly
            log.info("no desktop notification server on the session bus (%s): notifications without buttons", exc)
            await self.stop()
            return False
        await self._own_app_id(Proxy(message_bus, self._router))
        self.supports_actions = "actions" in capabilities
        self.available = True
        self._member_field = HeaderFields.member
        self._listener = asyncio.ensure_future(self._listen(rule))
        log.info("notifications via %s (actions: %s)", self.server or "a notification server", self.supports_actions)
        return True

    async def _own_app_id(self, bus: Any) -> None:
        """Take the app's id as our well-known name on the session bus, so the desktop can tell the
        sender is this app (not upstream's); a second instance (another config) simply goes without it."""
        do_not_queue = 4
        try:
            reply = await asyncio.wait_for(bus.RequestName(APP_ID, do_not_queue), 5)
        except Exception as exc:  # noqa: BLE001 - a bus that refuses names still carries notifications
            log.info("could not own the D-Bus name %s: %s", APP_ID, exc)
            return
        log.info("D-Bus name %s: %s", APP_ID, "owned" if reply and reply[0] in (1, 4) else "held by another instance")

    async def _listen(self, rule: Any) -> None:
        with self._router.filter(rule, bufsize=64) as queue:
            while True:
                message = await queue.get()
                member = message.header.fields.get(self._member_field)
                body = message.body
                try:
                    if member == "ActionInvoked" and len(body) >= 2:
                        self.action_invoked.emit(int(body[0]), str(body[1]))
                    elif member == "NotificationClosed" and body:
                        self.closed.emit(int(body[0]))
                except RuntimeError:  # the Qt side is gone (quitting)
                    return

    async def notify(self, title: str, body: str, actions: list[tuple[str, str]] | None = None, *,
                     critical: bool = False, timeout_ms: int = -1, replaces: int = 0) -> int | None:
        """Show a notification; `actions` are (key, label) buttons ("default" is a click on it). Its id."""
        if not self.available:
            return None
        from jeepney import new_method_call

        flat: list[str] = []
        for key, label in (actions or []) if self.supports_actions else []:
            flat += [key, label]
        hints: dict[str, tuple[str, Any]] = {"urgency": ("y", 2 if critical else 1),
                                             "desktop-entry": ("s", APP_ID)}
        message = new_method_call(self._address, "Notify", "susssasa{sv}i",
                                  (APP_NAME, replaces, "", title, body, flat, hints, timeout_ms))
        try:
            reply = await asyncio.wait_for(self._router.send_and_get_reply(message), 5)
        except Exception as exc:  # noqa: BLE001 - the server went away: say so in the log, go on
            log.warning("could not send a notification: %s", exc)
            return None
        return int(reply.body[0]) if reply.body and isinstance(reply.body[0], int) else None

    async def close(self, notification_id: int) -> None:
        if not self.available or not notification_id:
            return
        from jeepney import new_method_call

        try:
            await asyncio.wait_for(self._router.send_and_get_reply(
                new_method_call(self._address, "CloseNotification", "u", (notification_id,))), 5)
        except Exception as exc:  # noqa: BLE001
            log.info("could not close notification %s: %s", notification_id, exc)

    async def stop(self) -> None:
        """Close the connection (the tray calls this when the app quits)."""
        self.available = False
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            try:
                await listener
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        router, self._router = self._router, None
        if router is not None:
            try:
                await router.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001
                pass
            try:
                await router._conn.close()  # jeepney keeps the connection on the router
            except Exception:  # noqa: BLE001
                pass
