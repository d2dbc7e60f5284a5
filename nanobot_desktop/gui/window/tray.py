"""The resident assistant's face when the window is away: a tray icon, its menu and notifications.

Why it is shaped like this:
- A tray may not exist (GNOME without the AppIndicator extension, offscreen tests). Then nothing
  here creates an icon, the first close of the window asks whether to keep running in the
  background (tray_less.py), and the app must never start hidden, or the person is locked out of it
  (`may_start_hidden()` is False).
- Notifications are decided by a pure function of engine events (`notification_for`), so the rule
  "only when there is something to tell" is testable without a tray: a heartbeat or cron run that
  produced a reply or failed, never a skip / nothing-to-do tick.
- The icon's state is recomputed from the engine's public state on each relevant event and on a
  one-second poll, because a heartbeat tick's first phase (the model deciding) has no start event.
- Background work that waits for an approval gets the distinct "waiting" state, a notification with
  Allow once / Deny buttons and an entry in the menu (tray_approvals.py); the tray is one of the
  surfaces that answer the engine's approvals (with none, a background ask is refused at once).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QObject, QSettings, QTimer, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon, QWidget

from nanobot_desktop.engine import (
    ConfigError, CronJobRan, Event, HeartbeatDecided, HeartbeatRan, SubagentFinished, SubagentStarted, TurnCancelled, TurnFailed,
    TurnFinished, TurnStarted,
)
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.window.raising import bring_forward, toggle_shown
from nanobot_desktop.gui.window.tray_approvals import TrayApprovals
from nanobot_desktop.gui.window.tray_less import ask_keep_running, was_asked
from nanobot_desktop.gui.window.tray_rules import (_CANCELLED_PREFIX, NOTIFYING_EVENTS, TRAY_STATES, Notification,
                                                   app_icon, notification_for, tooltip_text, tray_icon_path, tray_state)

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge

__all__ = ["ACTION_KEYS", "CLOSE_NOTICE_KEY", "Notification", "TRAY_STATES", "TrayController", "app_icon",
           "notification_for", "tooltip_text", "tray_icon_path", "tray_state"]

log = logging.getLogger(__name__)

ACTION_KEYS = ("toggle_window", "new_chat", "heartbeat_run", "heartbeat_pause", "quit")
"""Keys of the actions the tray menu shows; pass any of them in `actions` to share the window's."""
CLOSE_NOTICE_KEY = "tray/closeNoticeShown"
MESSAGE_TIMEOUT_MS = 10_000


# --- the controller --------------------------------------------------------------------------------


class TrayController(QObject):
    """Owns the tray icon (when a tray exists), its menu, the state icon and notifications."""

    open_session_requested = Signal(str)
    """(session_key): the person clicked a notification; show that session."""
    new_chat_requested = Signal()
    """The tray's own "New chat" action was used (not emitted for an action passed in)."""
    state_changed = Signal(str)
    """The icon's state changed: one of TRAY_STATES."""

    POLL_INTERVAL_MS = 1000

    def __init__(self, engine: Engine, bridge: EngineBridge, window: QWidget, parent: QObject | None = None, *,
                 actions: dict[str, QAction] | None = None, settings: QSettings | None = None,
                 use_dbus: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("trayController")
        self.engine = engine
        self.bridge = bridge
        self.window = window
        self.available: bool = QSystemTrayIcon.isSystemTrayAvailable()
        self.notifications_sent: list[tuple[str, str, str]] = []
        """Every notification decided (title, text, session_key), shown or not (for tests and logs)."""
        self.messages_shown = 0
        """How many balloons were really handed to the tray (only when one exists)."""
        self._settings = settings if settings is not None else QSettings()
        self._state = ""
        self._failed: set[str] = set()  # "heartbeat" or "cron:<id>" whose last run failed, unseen
        self._message_session = ""
        self._tasks: set[asyncio.Future[Any]] = set()
        self._work = OwnedWork(self)  # the engine's work started here reports back only while this lives
        self._closed = False
        self._result_notifications: dict[int, str] = {}  # D-Bus notification id -> session key
        self._question: QWidget | None = None  # the open "keep running?" box (no tray)
        self.running_in_background = False
        """The window was closed without a tray and the app stayed (tray_less.py)."""

        self.actions = self._make_actions(actions or {})
        self.menu = QMenu(window)
        self.menu.setObjectName("trayMenu")
        for key in ACTION_KEYS:
            if key == "quit":
                self.menu.addSeparator()
            self.menu.addAction(self.actions[key])
        self.menu.aboutToShow.connect(self._on_menu_about_to_show)
        self.approvals = TrayApprovals(engine, self.menu, notify_fallback=self._notify_plain, use_dbus=use_dbus,
                                       parent=self)
        self.approvals.changed.connect(self.refresh)
        self.approvals.open_session_requested.connect(self._open_session)
        self.approvals.notifier.action_invoked.connect(self._on_notification_action)

        self.icon: QSystemTrayIcon | None = None
        if self.available:
            self.icon = QSystemTrayIcon(self)
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(self._on_activated)
            self.icon.messageClicked.connect(self.open_last_notification)
            QApplication.setQuitOnLastWindowClosed(False)

        bridge.subscribe(self.approvals.handlers(), self.approvals)  # its state first, as the icon reads it
        bridge.subscribe(self._handlers(), self)
        self._poll = QTimer(self)
        self._poll.setInterval(self.POLL_INTERVAL_MS)
        self._poll.timeout.connect(self.refresh)
        self._poll.start()
        self.refresh()
        if self.icon is not None:
            self.icon.show()

    # --- public state ------------------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self._state

    def should_close_to_tray(self) -> bool:
        """Closing the window only hides it (the tray's Quit ends the app); False without a tray."""
        return self.available and bool(self.engine.app_settings.close_to_tray)

    def may_start_hidden(self) -> bool:
        """Starting without a window is only allowed when a tray icon can bring it back."""
        return self.available

    def handle_close(self, quit_app: Callable[[], None]) -> bool:
        """The person closed the window: True when the app stays (hidden to the tray, hidden in the
        background, or asking first, with `quit_app` called if the answer is Quit); False: quit now."""
        if self.should_close_to_tray():
            self.window.hide()
            self.note_closed_to_tray()
            return True
        if self.available or not self.engine.app_settings.close_to_tray:
            return False
        answer = self.engine.app_settings.keep_running_without_tray
        if answer is False:  # answered Quit on a desktop without a tray (a desktop with one still hides)
            return False
        if answer is True or was_asked(self._settings):
            self._run_in_background()
            return True
        if self._question is None:
            def answered(keep: bool) -> None:
                self._question = None
                try:  # for tray-less desktops only; Settings shows it and can change it
                    self.engine.update_config({"app.keepRunningWithoutTray": keep})
                except (ConfigError, OSError, ValueError) as error:
                    log.warning("could not save the answer to 'keep running': %s", error)
                if keep:
                    self._run_in_background()
                    return
                quit_app()

            self._question = ask_keep_running(self.window, self._settings, answered)
        return True

    def _run_in_background(self) -> None:
        """No tray: hide the window, keep the app (and its heartbeat) running, say how to come back."""
        QApplication.setQuitOnLastWindowClosed(False)
        self.window.hide()
        self.running_in_background = True
        if self._settings.value(CLOSE_NOTICE_KEY, False, type=bool):
            return
        self._settings.setValue(CLOSE_NOTICE_KEY, True)
        self._settings.sync()
        self.notify(Notification(translate("Tray", "nanobot keeps running in the background"),
                                 translate("Tray", "Open it again with “Show or Hide the Window” in its menu entry, "
                                                   "or run nanobot-desktop --toggle."), ""))

    def note_closed_to_tray(self) -> bool:
        """Call after the window hid itself on close: tells once, ever, where the app went."""
        if self._settings.value(CLOSE_NOTICE_KEY, False, type=bool):
            return False
        self._settings.setValue(CLOSE_NOTICE_KEY, True)
        self._settings.sync()
        if self.icon is not None:
            self.icon.showMessage(translate("Tray", "nanobot keeps running in the tray"),
                                  translate("Tray", "Click the tray icon to open the window again; Quit is in its menu."),
                                  QSystemTrayIcon.MessageIcon.Information, MESSAGE_TIMEOUT_MS)
            self.messages_shown += 1
        return True

    # --- events --------------------------------------------------------------------------------------

    def _handlers(self) -> dict[type, Callable[[Any], None]]:
        """Per event type: an outcome to remember, a notification (tray_rules.py) and the icon's state."""
        handlers: dict[type, Callable[[Any], None]] = dict.fromkeys(NOTIFYING_EVENTS, self._notify_about)
        return handlers | {
            HeartbeatRan: self._on_heartbeat_ran, CronJobRan: self._on_cron_job_ran,
            TurnFinished: self._on_turn_ended, TurnFailed: self._on_turn_ended, TurnCancelled: self._on_turn_ended,
            TurnStarted: self._on_work_changed, SubagentStarted: self._on_work_changed,
            SubagentFinished: self._on_work_changed, HeartbeatDecided: self._on_work_changed,
        }

    def _notify_about(self, event: Event) -> None:
        notification = notification_for(event)
        if notification is not None:
            self.notify(notification)

    def _on_heartbeat_ran(self, event: HeartbeatRan) -> None:
        self._note_outcome("heartbeat", failed=bool(event.error) and not (event.error or "").startswith(_CANCELLED_PREFIX))
        self._notify_about(event)
        self.refresh(tick_ending=True)  # published from inside the tick, which still counts as ticking

    def _on_cron_job_ran(self, event: CronJobRan) -> None:
        self._note_outcome(f"cron:{event.job_id}", failed=event.status == "error" or bool(event.error))
        self._notify_about(event)
        self.refresh()

    def _on_turn_ended(self, event: TurnFinished | TurnFailed | TurnCancelled) -> None:
        # Published from inside the turn it ends, which still counts as busy: leave that turn out so
        # the icon does not linger on "running" until the next poll.
        self._notify_about(event)
        self.refresh(ending_turn=event.session_key)

    def _on_work_changed(self, event: Event) -> None:
        self._notify_about(event)
        self.refresh()

    def _note_outcome(self, source: str, *, failed: bool) -> None:
        if failed:
            self._failed.add(source)
        else:
            self._failed.discard(source)

    def notify(self, notification: Notification) -> None:
        """Record and (with a tray) show a notification, unless notifications are turned off."""
        if not self.engine.app_settings.notifications:
            return
        self.notifications_sent.append((notification.title, notification.text, notification.session_key))
        self._message_session = notification.session_key
        notifier = self.approvals.notifier
        if notifier.available:  # the same server as the approvals: clicking it opens the session
            future = asyncio.ensure_future(notifier.notify(notification.title, notification.text,
                                                           [("default", translate("Tray", "Open"))], critical=notification.is_error))
            session_key = notification.session_key

            def remember(done: asyncio.Future[int | None]) -> None:
                self._remember_result_notification(done, session_key)

            self._work.when_done(future, remember)
            self.messages_shown += 1
            return
        if self.icon is None:
            return
        kind = QSystemTrayIcon.MessageIcon.Warning if notification.is_error else QSystemTrayIcon.MessageIcon.Information
        self.icon.showMessage(notification.title, notification.text, kind, MESSAGE_TIMEOUT_MS)
        self.messages_shown += 1

    def _notify_plain(self, title: str, text: str, session_key: str) -> None:
        """A message without buttons (no notification server with actions): clicking opens the session."""
        self._message_session = session_key
        if self.icon is not None:
            self.icon.showMessage(title, text, QSystemTrayIcon.MessageIcon.Warning, MESSAGE_TIMEOUT_MS)
            self.messages_shown += 1

    def _remember_result_notification(self, future: asyncio.Future[Any], session_key: str) -> None:
        if future.cancelled() or future.exception() is not None or not future.result():
            return
        self._result_notifications[int(future.result())] = session_key

    def _on_notification_action(self, notification: int, key: str) -> None:
        session_key = self._result_notifications.pop(notification, None)
        if session_key is not None and key == "default":
            self._open_session(session_key)

    def _open_session(self, session_key: str) -> None:
        self.show_window()
        if session_key:  # "" is news about the app itself (the usage budget): the window is all it opens
            self.open_session_requested.emit(session_key)

    def refresh(self, *, ending_turn: str | None = None, tick_ending: bool = False) -> None:
        """Recompute the state, icon and tooltip from the engine's public state."""
        if self._closed:
            return
        heartbeat = self.engine.heartbeat
        busy_sessions = [key for key in self.engine.loop.busy_sessions() if key != ending_turn]
        busy = (bool(busy_sessions) or (heartbeat.ticking and not tick_ending)
                or any(record.status == "running" for record in self.engine.subagents.list()))
        state = tray_state(busy=busy, failed=bool(self._failed), paused=heartbeat.paused,
                           waiting=bool(self.approvals.pending))
        changed = state != self._state
        self._state = state
        if self.icon is not None:
            if changed:
                self._apply_icon()
            tip = tooltip_text(state, heartbeat.last_tick, heartbeat.next_tick_at, paused=heartbeat.paused,
                               enabled=heartbeat.enabled)
            if tip != self.icon.toolTip():
                self.icon.setToolTip(tip)
        if changed:
            self.state_changed.emit(state)

    def _apply_icon(self) -> None:
        if self.icon is None or not self._state:
            return
        self.icon.setIcon(QIcon(str(tray_icon_path(self._state))))

    # --- actions and menu ----------------------------------------------------------------------------

    def _make_actions(self, given: dict[str, QAction]) -> dict[str, QAction]:
        own = {
            "toggle_window": (translate("Tray", "Show window"), self.toggle_window),
            "new_chat": (translate("Tray", "New chat"), self._new_chat),
            "heartbeat_run": (translate("Tray", "Run heartbeat now"), self.run_heartbeat_now),
            "heartbeat_pause": (translate("Tray", "Pause heartbeat"), self.toggle_heartbeat_pause),
            "quit": (translate("Tray", "Quit"), self._quit),
        }
        actions: dict[str, QAction] = {}
        for key, (text, slot) in own.items():
            if key in given:
                actions[key] = given[key]
                continue
            action = QAction(text, self)
            action.setObjectName(f"tray_{key}")
            action.triggered.connect(slot)
            actions[key] = action
        return actions

    def _on_menu_about_to_show(self) -> None:
        self._failed.clear()  # the person has looked: the error badge has done its job
        self.update_menu_texts()
        self.refresh()

    def update_menu_texts(self) -> None:
        shown = self.window.isVisible() and not self.window.isMinimized()
        self.actions["toggle_window"].setText(translate("Tray", "Hide window") if shown else translate("Tray", "Show window"))
        paused = self.engine.heartbeat.paused
        self.actions["heartbeat_pause"].setText(translate("Tray", "Resume heartbeat") if paused
                                                else translate("Tray", "Pause heartbeat"))
        self.actions["heartbeat_run"].setEnabled(not self.engine.heartbeat.ticking)

    def toggle_window(self) -> None:
        toggle_shown(self.window)

    def show_window(self) -> None:
        bring_forward(self.window)

    def _new_chat(self) -> None:
        self.show_window()
        self.new_chat_requested.emit()

    def _quit(self) -> None:
        # The lifecycle turns Qt's quit into the one orderly shutdown (see gui/lifecycle.py).
        QApplication.quit()

    def run_heartbeat_now(self) -> asyncio.Future[Any]:
        """Start one heartbeat tick (both phases); the icon shows "running" until it ends."""
        future = asyncio.ensure_future(self.engine.heartbeat.trigger_now())
        self._tasks.add(future)
        future.add_done_callback(self._tasks.discard)
        self._work.when_done(future, self._on_tick_done)
        self.refresh()
        return future

    def _on_tick_done(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.warning("the heartbeat tick from the tray failed: %s", future.exception())
        self.refresh()

    def toggle_heartbeat_pause(self) -> None:
        heartbeat = self.engine.heartbeat
        if heartbeat.paused:
            heartbeat.resume()
        else:
            heartbeat.pause()
        self.update_menu_texts()
        self.refresh()

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.toggle_window()

    def open_last_notification(self) -> None:
        """The person clicked the balloon: bring the window up on the session it was about."""
        self.show_window()
        if self._message_session:
            self.open_session_requested.emit(self._message_session)

    # --- teardown ------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Remove the icon and stop listening (the window owner calls this when quitting)."""
        if self._closed:
            return
        self._closed = True
        self._poll.stop()
        self.approvals.detach()
        stopping = asyncio.ensure_future(self.approvals.stop()) if _has_loop() else None
        if stopping is not None:
            self._tasks.add(stopping)
        self.bridge.unsubscribe(self.approvals)
        self.bridge.unsubscribe(self)
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        if self.icon is not None:
            self.icon.hide()
        for future in list(self._tasks):
            if future is not stopping:
                future.cancel()


def _has_loop() -> bool:
    try:
        asyncio.get_event_loop()
    except RuntimeError:
        return False
    return True
