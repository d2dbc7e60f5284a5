"""EngineBridge: engine events as one Qt signal, so widgets subscribe the Qt way.

With qasync the engine publishes on the GUI thread already, so the bridge only re-emits; it exists
so that panels never touch the engine's EventBus directly and can be tested by emitting events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine


class EngineBridge(QObject):
    engine_event = Signal(object)
    """Every engine event (an `engine.events.Event` dataclass), in publishing order."""

    def __init__(self, engine: Engine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self._unsubscribe = engine.bus.subscribe(self.engine_event.emit)

    def detach(self) -> None:
        """Stop relaying (at shutdown, before widgets go away)."""
        self._unsubscribe()
