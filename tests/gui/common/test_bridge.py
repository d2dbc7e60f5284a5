"""EngineBridge: a listener subscribes to the event types it handles and gets only those, from the
engine's own bus, in subscription order, until its owner is gone."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject

from nanobot_desktop.engine import Event, TurnFinished, TurnStarted, events
from nanobot_desktop.gui.common.bridge import EngineBridge


def test_handlers_get_only_their_types_from_the_engine_bus_in_subscription_order(qtbot: Any, make_engine: Any) -> None:
    engine = make_engine()
    bridge = EngineBridge(engine)
    first, second = QObject(), QObject()
    heard: list[tuple[str, object]] = []
    every: list[object] = []
    bridge.engine_event.connect(every.append)
    bridge.subscribe({TurnStarted: lambda event: heard.append(("first started", event)),
                      TurnFinished: lambda event: heard.append(("first finished", event))}, first)
    bridge.subscribe({TurnStarted: lambda event: heard.append(("second started", event))}, second)

    started = TurnStarted("cli:a", turn_id="t", user_text="hi")
    notice = events.Notice("cli:a", topic="x", text="a notice nobody subscribed to")
    finished = TurnFinished("cli:a", turn_id="t", reply="hello")
    for event in (started, notice, finished):
        engine.bus.publish(event)

    assert heard == [("first started", started), ("second started", started), ("first finished", finished)]
    assert every == [started, notice, finished]  # engine_event still carries everything, for recorders


def test_a_handler_of_a_base_type_gets_its_subclasses_and_an_owner_gone_hears_nothing(qtbot: Any, make_engine: Any) -> None:
    engine = make_engine()
    bridge = EngineBridge(engine)
    owner = QObject()
    heard: list[object] = []
    bridge.subscribe({Event: heard.append}, owner)
    started = TurnStarted("cli:a", turn_id="t", user_text="hi")
    engine.bus.publish(started)
    assert heard == [started]

    staying = QObject()
    stayed: list[object] = []
    bridge.subscribe({TurnStarted: stayed.append}, staying)
    with qtbot.waitSignal(owner.destroyed):
        owner.deleteLater()
    engine.bus.publish(started)
    assert heard == [started] and stayed == [started]

    bridge.unsubscribe(staying)
    engine.bus.publish(started)
    assert stayed == [started]
    bridge.detach()
    bridge.deliver(started)  # what a test does: hand an event to the bridge directly
    assert stayed == [started] and heard == [started]


def test_an_event_published_on_another_thread_is_handled_on_the_gui_thread(qtbot: Any, make_engine: Any) -> None:
    import threading

    engine = make_engine()
    bridge = EngineBridge(engine)
    owner = QObject()
    threads: list[threading.Thread] = []
    bridge.subscribe({TurnStarted: lambda _event: threads.append(threading.current_thread())}, owner)
    publisher = threading.Thread(target=lambda: engine.bus.publish(TurnStarted("cli:a", turn_id="t", user_text="hi")))
    publisher.start()
    publisher.join()
    qtbot.waitUntil(lambda: bool(threads))
    assert threads == [threading.main_thread()]
