"""EngineBridge: engine events delivered to the GUI, each to the handlers of its type.

With qasync the engine publishes on the GUI thread (all but the usage recorder, whose events the
bridge queues onto it), so the bridge mostly hands events on; it exists so that panels never touch
the engine's EventBus directly and can be tested by delivering events. A listener subscribes to the
event types it handles (`subscribe({TurnStarted: ...}, owner)`), so no slot receives every event to
pick its own out with a cascade of isinstance checks; an event of a subclass reaches the handlers
of its base classes too. `engine_event` carries every event first (for recorders: tests, benchmarks);
then the handlers of its type run, in subscription order (the chat's controller, built before the
rest, subscribes first). `handlers_for` is that lookup, for a table dispatched by hand (chat/relay.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

Handler = Callable[[Any], object]
"""Called with one event of the type it was subscribed to (typed per handler where it is defined)."""

H = TypeVar("H")


def handlers_for(kind: type, table: Iterable[tuple[type, H]]) -> list[H]:
    """The handlers in `table` (in its order) registered for `kind` or one of its base classes: the one
    rule by which an event finds its handlers, in the bridge and in a type-keyed table of one listener."""
    return [handler for wanted, handler in table if issubclass(kind, wanted)]


class EngineBridge(QObject):
    engine_event = Signal(object)
    """Every engine event (an `engine.events.Event` dataclass), in publishing order."""
    _arrived = Signal(object)
    """The bus's events; one published on another thread (the usage recorder's) is queued onto the
    bridge's (the GUI) thread, so every handler runs there."""

    def __init__(self, engine: Engine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self._handlers: list[tuple[type, Handler, int]] = []
        """(event type, handler, id of the owner) in subscription order."""
        self._by_type: dict[type, list[Handler]] = {}
        """An event's own type -> the handlers it reaches (built on first use, cleared on every change)."""
        self._arrived.connect(self.deliver)
        self._unsubscribe = engine.bus.subscribe(self._arrived.emit)

    def subscribe(self, handlers: Mapping[type, Handler], owner: QObject) -> None:
        """Call each handler with the events of its type (and of the type's subclasses) until `owner`
        is destroyed — as a Qt connection ends with its receiver."""
        key = id(owner)
        self._handlers += [(kind, handler, key) for kind, handler in handlers.items()]
        self._by_type.clear()
        owner.destroyed.connect(lambda *_: self._forget(key))

    def deliver(self, event: object) -> None:
        """Hand `event` to `engine_event`'s listeners, then to the handlers of its type, in the order they
        subscribed (the chat's controller, the window's parts, then its panels)."""
        self.engine_event.emit(event)
        kind = type(event)
        handlers = self._by_type.get(kind)
        if handlers is None:
            handlers = self._by_type[kind] = handlers_for(kind, ((wanted, handler) for wanted, handler, _owner
                                                                 in self._handlers))
        for handler in handlers:
            handler(event)

    def unsubscribe(self, owner: QObject) -> None:
        """Stop calling `owner`'s handlers (before it is destroyed, e.g. when the app quits)."""
        self._forget(id(owner))

    def _forget(self, owner: int) -> None:
        self._handlers = [entry for entry in self._handlers if entry[2] != owner]
        self._by_type.clear()

    def detach(self) -> None:
        """Stop relaying (at shutdown, before widgets go away)."""
        self._unsubscribe()
