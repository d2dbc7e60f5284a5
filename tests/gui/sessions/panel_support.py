"""A SessionsPanel over a test engine, shown and listed as the window shows it (the sessions tests' fixtures)."""

from __future__ import annotations

from typing import Any, Iterator

from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.sessions.panel import SessionsPanel

WAIT_MS = 10_000


def listed_panel(qtbot: Any, engine: Any, width: int = 340, height: int = 560) -> Iterator[SessionsPanel]:
    """Yield the panel once its first listing is in; its bridge is detached afterwards (use with `yield from`)."""
    bridge = EngineBridge(engine)
    widget = SessionsPanel(engine, bridge)
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    with qtbot.waitSignal(widget.refreshed, timeout=WAIT_MS):
        widget.refresh_now()
    yield widget
    bridge.detach()
