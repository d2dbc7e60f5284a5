"""Help → Check for updates, Help → Roll back, and the daily check the person may turn on in Settings.

The check itself (nanobot_desktop/updates/check.py, tufup) blocks on the network, so it runs in the
loop's executor; the answer comes back to the GUI thread through OwnedWork and is shown in a
window-modal box opened with `open()` (a check the person asked for) or in the notice bar (the daily
check, which says nothing unless a new version is there). The daily check is off until the person turns
it on (desktop.json `checkForUpdates`); it runs at most once a day, remembered in QSettings.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.owned import OwnedWork

if TYPE_CHECKING:
    from nanobot_desktop.updates.check import Outcome

log = logging.getLogger(__name__)

LAST_CHECK_KEY = "updates/lastCheck"
DAY_S = 24 * 3600
POLL_MS = 3600 * 1000  # the daily check looks once an hour whether a day has passed (a laptop sleeps)
STARTUP_DELAY_MS = 60_000  # and a minute after the start, when the window has settled


def outcome_text(outcome: Outcome) -> str:
    """The outcome's one sentence, in the UI's language."""
    from nanobot_desktop.updates.check import State

    texts = {
        State.CURRENT: translate("Updates", "nanobot Desktop {current} is the newest version."),
        State.STAGED: translate("Updates", "Version {new} is downloaded and verified. It starts the next time you open "
                                           "nanobot Desktop; version {current} is kept, and Help → Roll back goes back to it."),
        State.AVAILABLE: translate("Updates", "Version {new} is available (this is {current}). Get it with: {detail}"),
        State.UNCONFIGURED: translate("Updates", "This copy of nanobot Desktop was built without the release keys' root "
                                                 "metadata, so it cannot check for signed updates."),
        State.UNREACHABLE: translate("Updates", "Could not reach the update server ({detail}); nothing was changed."),
        State.EXPIRED: translate("Updates", "The update server's signed metadata has expired ({detail}); the update was "
                                            "refused and nothing was changed."),
        State.BAD_SIGNATURE: translate("Updates", "The update server's metadata is not signed by the keys this app trusts "
                                                  "({detail}); the update was refused and nothing was changed."),
        State.TAMPERED: translate("Updates", "The downloaded archive of version {new} does not match its signed length and "
                                             "hash; it was discarded and nothing was changed."),
        State.FAILED: translate("Updates", "Could not prepare version {new} ({detail}); the installed app was not changed."),
    }
    return texts[outcome.state].format(current=outcome.current, new=outcome.new, detail=outcome.detail)


class UpdateChecks(QObject):
    """The window's update commands; one check at a time."""

    finished = Signal(object)
    """(Outcome): a check ended (shown to the person already)."""

    def __init__(self, window: QWidget, settings: QSettings, enabled: Any, notice: Any) -> None:
        """`enabled()` says whether the daily check is on (read each time: Settings may change it);
        `notice(text)` shows the daily check's news in the window."""
        super().__init__(window)
        self._window = window
        self._settings = settings
        self._enabled = enabled
        self._notice = notice
        self._work = OwnedWork(self)
        self._running: asyncio.Task[None] | None = None
        self.box: QMessageBox | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.check_if_due)
        self._timer.start()
        QTimer.singleShot(STARTUP_DELAY_MS, self, self.check_if_due)

    @property
    def busy(self) -> bool:
        return self._running is not None and not self._running.done()

    def check_now(self) -> None:
        """Help → Check for updates: the answer is shown whatever it is."""
        self._start(interactive=True)

    def check_if_due(self) -> bool:
        """The daily check: only when turned on and a day has passed since the last one."""
        if not self._enabled() or self.busy:
            return False
        stored = self._settings.value(LAST_CHECK_KEY, 0.0, type=float)
        last = float(stored) if isinstance(stored, (int, float)) else 0.0
        if time.time() - last < DAY_S:
            return False
        self._start(interactive=False)
        return True

    def _start(self, *, interactive: bool) -> None:
        if self.busy:
            return
        self._running = self._work.spawn(self._check(interactive))

    async def _check(self, interactive: bool) -> None:
        from nanobot_desktop import __version__
        from nanobot_desktop.updates import install
        from nanobot_desktop.updates.check import check_for_update

        installation = install.detect()
        outcome = await asyncio.get_running_loop().run_in_executor(None, check_for_update, installation, __version__)
        self._settings.setValue(LAST_CHECK_KEY, time.time())
        self._settings.sync()
        log.info("update check: %s", outcome.sentence())
        text = outcome_text(outcome)
        if interactive:
            self._show(text, outcome.ok)
        elif outcome.new and outcome.ok:
            self._notice(text)
        self.finished.emit(outcome)

    def roll_back(self) -> None:
        """Help → Roll back: the version kept before the last update starts next time."""
        from nanobot_desktop.updates import bundle, install

        installation = install.detect()
        if not installation.updates_itself:
            self._show(translate("Updates", "This copy was installed with {tool}; go back to an older version with "
                                            "that tool.").format(tool=installation.kind.value), False)
            return
        try:
            version = bundle.stage_rollback(installation.app_dir)
        except (bundle.BundleProblem, OSError) as problem:
            if isinstance(problem, bundle.BundleProblem):
                text = translate("Updates", "There is no previous version to roll back to: none was kept, because this "
                                            "copy has not been updated yet.")
            else:
                text = str(problem)
            self._show(text, False)
            return
        self._show(translate("Updates", "Version {version} starts the next time you open nanobot Desktop.")
                   .format(version=version), True)

    def _show(self, text: str, ok: bool) -> None:
        if self.box is not None:
            self.box.close()
        box = QMessageBox(QMessageBox.Icon.Information if ok else QMessageBox.Icon.Warning,
                          translate("Updates", "Updates"), text, QMessageBox.StandardButton.Ok, self._window)
        box.setObjectName("updateBox")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda _result, shown=box: self._forget(shown))
        self.box = box
        box.open()

    def _forget(self, box: QMessageBox) -> None:
        if self.box is box:
            self.box = None
