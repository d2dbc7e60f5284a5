"""The process's QApplication: the platform's request to quit reaches the lifecycle without an
application-wide event filter.

An event filter installed on the application object is called for every event of every object in
the process; a Python filter makes each of them a call into Python (it cost the GUI thread ~100 ms
while the Usage page built its chart, bench/usage_page.py, and a share of every streamed frame). The
lifecycle needs only the Quit event the platform sends to the application object itself (the desktop
session ending, a Dock's Quit), so this class overrides `event()`, which Qt calls for the
application's own events alone.
"""

from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication


class DesktopApplication(QApplication):
    def __init__(self, argv: Sequence[str]) -> None:
        super().__init__(list(argv))
        self._on_quit: Callable[[], bool] | None = None

    def route_quit(self, handler: Callable[[], bool] | None) -> None:
        """`handler()` sees each Quit event first; returning True keeps it from Qt (which would end
        the event loop at once instead of letting the lifecycle shut down in order)."""
        self._on_quit = handler

    def event(self, event: QEvent) -> bool:
        # The handler first: until the lifecycle attaches (after the first paint) no event looks at its
        # type, whose Python enum (QEvent.Type, ~180 members) costs milliseconds to make.
        if self._on_quit is not None and event.type() == QEvent.Type.Quit and self._on_quit():
            return True
        return super().event(event)
