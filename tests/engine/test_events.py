"""Events behave as frozen dataclasses: value equality, a dataclass repr, hashing, no assignment.

Their repr, == and hash are written once on the base class (engine/events.py says why), so this checks
they still mean what the generated ones meant.
"""

from __future__ import annotations

import dataclasses

import pytest

from nanobot_desktop.engine import events as ev


def test_events_compare_by_type_and_every_field() -> None:
    first = ev.TextDelta("cli:direct", turn_id="t1", text="Hel", at=1.0)
    assert first == ev.TextDelta("cli:direct", turn_id="t1", text="Hel", at=1.0)
    assert first != ev.TextDelta("cli:direct", turn_id="t1", text="Hello", at=1.0)
    assert first != ev.TextDelta("cli:direct", turn_id="t1", text="Hel", at=2.0)
    assert first != ev.ReasoningDelta("cli:direct", turn_id="t1", text="Hel", at=1.0)  # same fields, other type
    assert len({first, ev.TextDelta("cli:direct", turn_id="t1", text="Hel", at=1.0)}) == 1


def test_an_event_reads_like_a_dataclass_and_cannot_be_changed() -> None:
    event = ev.TurnFinished("desktop:1", turn_id="t2", reply="Done.", at=3.5)
    assert repr(event) == ("TurnFinished(session_key='desktop:1', at=3.5, started_by=<Origin.PERSON: 'person'>, "
                           "turn_id='t2', reply='Done.', continued_in='')")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.reply = "changed"  # type: ignore[misc]
    assert dataclasses.replace(event, reply="Other.").reply == "Other."
    # who started the work: the person unless the work's context says else, and kept by replace()
    assert event.started_by is ev.Origin.PERSON
    assert ev.origin_context(ev.Origin.CRON).run(ev.TurnFinished, "cron:j", turn_id="t", reply="").started_by \
        is ev.Origin.CRON
    assert dataclasses.replace(event, started_by=ev.Origin.HEARTBEAT, reply="x").started_by is ev.Origin.HEARTBEAT


def test_an_event_with_a_dict_field_is_not_hashable_as_before() -> None:
    event = ev.ToolCallStarted("s", turn_id="t", call_id="c", name="exec", arguments={"command": "ls"})
    with pytest.raises(TypeError):
        hash(event)
