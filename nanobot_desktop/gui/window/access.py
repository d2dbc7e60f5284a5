"""The window's keyboard and screen-reader paths (a part MainWindow owns, like layout.py).

- **Tab** visits only what is on screen (`accessibility.focus_next_shown`): a panel behind a dock tab
  is "visible" to Qt but sits off screen.
- **F6 / Shift+F6** cycle the window's regions: the session list, the centre (the composer when the
  chat is shown) and each dock on screen, as in a browser or a mail client.
- **Ctrl+Shift+A** jumps to the approval the agent waits for (this session's first, else another
  session's, which is opened); the card then answers to keys (chat/cards.py).
- **Ctrl+= / Ctrl+- / Ctrl+0** make the whole UI's text larger, smaller or the default size; the
  size is saved (`app.textSize`) like the Settings page's.
- Spoken activity: an `ActivityAnnouncer` hears the engine's events (gui/common/announcements.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.text_size import apply_text_size, next_text_size
from nanobot_desktop.gui.window.base import ChatParts, Frame
from nanobot_desktop.gui.window.layout import DockLayout
from nanobot_desktop.gui.window.panels import SESSIONS_DOCK

if TYPE_CHECKING:  # the announcer hears engine events: loaded with the engine, after the first paint
    from collections.abc import Callable

    from nanobot_desktop.engine import ConfigChanged

    from nanobot_desktop.gui.common.announcements import ActivityAnnouncer
    from nanobot_desktop.gui.window.shortcuts_dialog import ShortcutsDialog


class WindowAccess:
    """Tab order, regions, the approval shortcut, text size and announcements of one window."""

    def __init__(self, frame: Frame, docking: DockLayout) -> None:
        self._window = frame.window
        self._frame = frame
        self._docking = docking
        self._parts: ChatParts | None = None
        self._open_session: Callable[[str], None] = lambda _key: None
        self.announcer: ActivityAnnouncer | None = None
        self.shortcuts_dialog: ShortcutsDialog | None = None
        self._tab_bar_check_pending = False
        a = frame.actions
        a.next_region.triggered.connect(lambda: self.cycle_region(True))
        a.previous_region.triggered.connect(lambda: self.cycle_region(False))
        a.keyboard_shortcuts.triggered.connect(self.show_keyboard_shortcuts)

    def attach(self, parts: ChatParts, open_session: Callable[[str], None]) -> None:
        """Call from attach_engine, once the chat, the composer and the bridge exist."""
        # Loaded here, after the frame has painted (their Qt types cost start-up time otherwise).
        from nanobot_desktop.engine import ConfigChanged
        from nanobot_desktop.gui.common.announcements import ActivityAnnouncer
        from nanobot_desktop.gui.common.focus_ring import FocusRings
        from nanobot_desktop.gui.common.theme import set_high_contrast

        self._parts = parts
        self._open_session = open_session
        settings = parts.engine.app_settings
        app = QApplication.instance()
        if isinstance(app, QApplication):
            FocusRings.install(app)
            if settings.text_size != 100:
                apply_text_size(app, settings.text_size)
            set_high_contrast(app, settings.high_contrast)
        self.announcer = ActivityAnnouncer(self._window, lambda: parts.chat.current_key, settings.announcements)
        parts.bridge.subscribe(self.announcer.handlers(), self.announcer)
        parts.bridge.subscribe({ConfigChanged: self._on_access_setting_changed}, self._window)
        for dock in self._frame.docks.values():
            dock.visibilityChanged.connect(self.schedule_dock_tab_bar_check)
            dock.dockLocationChanged.connect(self.schedule_dock_tab_bar_check)
        self.schedule_dock_tab_bar_check()
        a = self._frame.actions
        a.go_to_approval.triggered.connect(self.focus_waiting_approval)
        a.larger_text.triggered.connect(lambda: self.step_text_size(1))
        a.smaller_text.triggered.connect(lambda: self.step_text_size(-1))
        a.default_text.triggered.connect(lambda: self.step_text_size(0))

    def child_added(self) -> None:
        """QMainWindow makes a tab bar for each group of tabbed docks and keeps spare ones, empty but
        "visible" off screen, where Tab and a screen reader would find a nameless control (called from
        MainWindow.childEvent: at ChildAdded the child is not constructed yet, so look once it is)."""
        self.schedule_dock_tab_bar_check()

    def schedule_dock_tab_bar_check(self, *_: object) -> None:
        if not self._tab_bar_check_pending:
            self._tab_bar_check_pending = True
            QTimer.singleShot(0, self._window, self._tidy_dock_tab_bars)

    def _tidy_dock_tab_bars(self) -> None:
        """Only a dock tab bar with tabs takes focus (Qt names a tab bar by its current tab: an empty
        one has no name to give)."""
        from PySide6.QtWidgets import QTabBar

        self._tab_bar_check_pending = False
        for bar in self._window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            bar.setFocusPolicy(Qt.FocusPolicy.TabFocus if bar.count() else Qt.FocusPolicy.NoFocus)

    def focus_next(self, forward: bool) -> bool:
        """Tab and Shift+Tab over what is on screen only; False to leave it to Qt."""
        from nanobot_desktop.gui.common.accessibility import focus_next_shown

        return focus_next_shown(self._window, forward)

    # --- regions (F6) ------------------------------------------------------------------------------

    def regions(self) -> list[QWidget]:
        """The window's regions on screen, in F6 order: sessions, the centre, then the docks."""
        found: list[QWidget] = []
        sessions = self._frame.docks.get(SESSIONS_DOCK)
        if sessions is not None:
            found.append(sessions)
        found.append(self._frame.pages)
        found += [dock for name, dock in self._frame.docks.items() if name != SESSIONS_DOCK]
        return [region for region in found if region.isVisible() and not region.visibleRegion().isEmpty()]

    def cycle_region(self, forward: bool) -> None:
        regions = self.regions()
        if not regions:
            return
        focus = QApplication.focusWidget()
        current = next((i for i, region in enumerate(regions) if focus is not None and region.isAncestorOf(focus)), -1)
        start = current if current >= 0 else (-1 if forward else 0)
        for step in range(1, len(regions) + 1):
            region = regions[(start + (step if forward else -step)) % len(regions)]
            if self._focus_region(region):
                return

    def _focus_region(self, region: QWidget) -> bool:
        """Focus `region`'s main control: the composer for the chat, else its first on-screen one."""
        from nanobot_desktop.gui.common.accessibility import takes_tab_focus

        composer = self._parts.composer if self._parts is not None else None
        if region is self._frame.pages and composer is not None and region.isAncestorOf(composer.edit) \
                and not composer.edit.visibleRegion().isEmpty():
            composer.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return True
        target: QWidget | None = region
        for _ in range(2000):
            target = target.nextInFocusChain() if target is not None else None
            if target is None or target is region:
                break
            if region.isAncestorOf(target) and takes_tab_focus(target):
                target.setFocus(Qt.FocusReason.ShortcutFocusReason)
                return True
        return False

    # --- the waiting approval ----------------------------------------------------------------------

    def focus_waiting_approval(self) -> bool:
        """Focus the first waiting approval card (opening its session if it is another); False if none."""
        if self._parts is None or self.announcer is None:
            return False
        chat, chat_view = self._parts.chat, self._parts.chat_view
        pending = chat.pending_approvals(chat.current_key)
        if not pending:
            elsewhere = chat.pending_approvals(None)
            if not elsewhere:
                self.announcer.say(translate("Accessibility", "No approval is waiting."), important=True)
                return False
            key = chat.approvals.session_of(elsewhere[0])
            self._open_session(key)
            QTimer.singleShot(200, self._window, self.focus_waiting_approval)  # once the session's chat is shown
            return True
        row = chat.model.row_of_call(pending[0], "approval")
        if chat_view.widget_for_row(row) is None:
            chat_view.scroll_to_bottom()  # a waiting card is among the newest rows
        from nanobot_desktop.gui.chat.cards import ApprovalCardWidget

        widget = chat_view.widget_for_row(row)
        if not isinstance(widget, ApprovalCardWidget):
            return False
        chat_view.scroll_area.ensureWidgetVisible(widget)
        widget.focus_answer()
        return True

    # --- text size ---------------------------------------------------------------------------------

    def step_text_size(self, direction: int) -> None:
        """One step larger (1), smaller (-1) or back to 100 % (0); applied now, saved to desktop.json."""
        if self._parts is None:
            return
        engine = self._parts.engine
        size = next_text_size(engine.app_settings.text_size, direction)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_text_size(app, size)
        if size != engine.app_settings.text_size:
            try:
                engine.update_config({"app.textSize": size})
            except (OSError, ValueError) as error:
                self._parts.notice_bar.show_notice(str(error), "error", topic="text-size")

    def _on_access_setting_changed(self, event: ConfigChanged) -> None:
        from nanobot_desktop.gui.common.theme import set_high_contrast

        if self._parts is None:
            return
        settings = self._parts.engine.app_settings
        if event.touches("app.announcements") and self.announcer is not None:
            self.announcer.level = settings.announcements
        app = QApplication.instance()
        if event.touches("app.highContrast") and isinstance(app, QApplication):
            set_high_contrast(app, settings.high_contrast)
        if event.touches("app.textSize") and isinstance(app, QApplication):
            apply_text_size(app, settings.text_size)
            QTimer.singleShot(0, self._window, self._after_text_size)

    def _after_text_size(self) -> None:
        """Dock widths are in characters of the font: weigh them again for the new size."""
        if self._window.isVisible():
            self._docking.balance_docks()

    # --- Help → Keyboard shortcuts -----------------------------------------------------------------

    def show_keyboard_shortcuts(self) -> ShortcutsDialog:
        from nanobot_desktop.gui.window.shortcuts_dialog import ShortcutsDialog

        dialog = self.shortcuts_dialog
        if dialog is None:
            dialog = self.shortcuts_dialog = ShortcutsDialog(self._frame.actions, self._window)
            dialog.destroyed.connect(self._forget_shortcuts_dialog)
        if dialog.isVisible():  # asked again: bring it forward
            dialog.raise_()
            dialog.activateWindow()
        else:
            dialog.show()
        return dialog

    def _forget_shortcuts_dialog(self) -> None:
        self.shortcuts_dialog = None

