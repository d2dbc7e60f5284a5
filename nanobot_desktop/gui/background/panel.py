"""What the Heartbeat, Scheduled and Subagents panels share.

Each shows what the engine does in the background, so each holds the engine and the bridge its
events come through, refreshes itself on a timer (relative times, durations of what is running),
and starts engine work from a button (a job run, a tick, a cancel). That work belongs to the
engine — it goes on if the panel is closed for good — but its end is reported back to the panel
only while the panel lives (`OwnedWork.when_done`), so a late result never reaches a deleted one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from nanobot_desktop.gui.common.owned import OwnedWork

if TYPE_CHECKING:
    from nanobot_desktop.engine import Engine
    from collections.abc import Mapping

    from nanobot_desktop.gui.common.bridge import EngineBridge, Handler

log = logging.getLogger(__name__)


class BackgroundPanel(QWidget):
    """A panel over one of the engine's background services (see the module docstring)."""

    def __init__(self, engine: Engine, bridge: EngineBridge, object_name: str, refresh_interval_ms: int,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.engine = engine
        self.bridge = bridge
        self._work = OwnedWork(self)
        self._timer = QTimer(self)
        self._timer.setInterval(refresh_interval_ms)
        self._timer.timeout.connect(self.refresh)

    def refresh(self) -> None:
        """Show the service's current state (each panel says how)."""
        raise NotImplementedError

    def _handlers(self) -> Mapping[type, Handler]:
        """The engine events this panel follows, each with its handler (each panel says which)."""
        raise NotImplementedError

    def _listen(self) -> None:
        """Start following the engine's events (once the panel's widgets exist)."""
        self.bridge.subscribe(self._handlers(), self)

    def _start_engine_work(self, key: str, awaitable: Awaitable[Any], pending: dict[str, asyncio.Future[Any]],
                           what: str) -> asyncio.Future[Any]:
        """Run `awaitable` as the engine's work, listed in `pending` under `key` until it ends; then,
        if the panel still lives, its failure is logged as `what` and the panel refreshed."""
        future = asyncio.ensure_future(awaitable)
        pending[key] = future

        def done(finished: asyncio.Future[Any]) -> None:
            pending.pop(key, None)
            if not finished.cancelled() and finished.exception() is not None:
                log.warning("%s %s failed: %s", what, key, finished.exception())
            self.refresh()

        self._work.when_done(future, done)
        return future

    def shutdown(self) -> None:
        """Stop refreshing and following events (the window owner calls this when quitting)."""
        self._timer.stop()
        self.bridge.unsubscribe(self)
