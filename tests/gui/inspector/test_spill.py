"""The inspector's older turns live in a temporary file, not in memory (spill.py): driven by real engine
turns against the fake endpoint, checked against what the endpoint received, and read back as a person
reaches them (the turn selector, a tool card's click)."""

from __future__ import annotations

import json
import os
import tempfile

from PySide6.QtCore import Qt

from nanobot_desktop.gui.inspector import spill
from nanobot_desktop.gui.inspector.model import NAME_COLUMN, TURNS_IN_MEMORY, CallIdRole, SpilledTurn
from nanobot_desktop.gui.inspector.records import LLMCall, ToolCall, TurnTimeline
from tests.gui.inspector.test_inspector import click_row, env, run_turn

__all__ = ["env"]  # the fixture
WAIT_MS = 10_000
KEY = "desktop:a"


def turns_of(panel) -> list:
    return panel.model.turns(KEY)


def all_written(panel) -> bool:
    return all(not isinstance(turn, SpilledTurn) or (turn.where >= 0 and turn.pending is None)
               for turn in turns_of(panel))


def as_json(value):
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def run_turns(qtbot, engine, fake_openai, count: int) -> None:
    """Turn 1 calls a tool (list_dir, call id "call_look"); the others answer at once."""
    fake_openai.add_tool_calls([("list_dir", {"path": "."}, "call_look")], usage=(120, 7))
    fake_openai.add_text("listed", usage=(150, 2))
    run_turn(qtbot, engine, KEY, "question 1: list the files")
    for number in range(2, count + 1):
        fake_openai.add_text(f"reply {number}")
        run_turn(qtbot, engine, KEY, f"question {number}")


def test_turns_older_than_the_newest_ten_are_kept_in_the_file_and_read_back_as_they_were(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session(KEY)
    fake_openai.add_tool_calls([("list_dir", {"path": "."}, "call_look")], usage=(120, 7))
    fake_openai.add_text("listed", usage=(150, 2))
    run_turn(qtbot, engine, KEY, "question 1: list the files")
    first = turns_of(panel)[0]
    assert isinstance(first, TurnTimeline)
    kept = as_json([[entry.kind, entry.call_id, list(entry.messages) if isinstance(entry, LLMCall) else entry.result]
                    for entry in first.entries])
    for number in range(2, TURNS_IN_MEMORY + 4):
        fake_openai.add_text(f"reply {number}")
        run_turn(qtbot, engine, KEY, f"question {number}")
    qtbot.waitUntil(lambda: all_written(panel), timeout=WAIT_MS)

    turns = turns_of(panel)
    assert [type(turn) for turn in turns] == [SpilledTurn] * 3 + [TurnTimeline] * TURNS_IN_MEMORY
    assert [turn.number for turn in turns] == list(range(1, TURNS_IN_MEMORY + 4))
    stub = turns[0]
    assert not hasattr(stub, "entries") and stub.pending is None  # nothing of its calls is in memory
    assert stub.label().startswith("Turn 1 · ") and "question 1: list the files" in stub.label()
    assert [panel.turn_selector.itemText(i) for i in range(3)] == [turn.label() for turn in turns[:3]]

    # a person picks turn 1 in the selector: read back, shown, the same as when it was in memory
    with qtbot.waitSignal(panel.model.shown_turn_changed, timeout=WAIT_MS):
        panel.turn_selector.setCurrentIndex(0)
        panel.turn_selector.activated.emit(0)
    shown = panel.model.shown_turn
    assert shown.number == 1 and shown.status == "ok" and shown.user_text == "question 1: list the files"
    assert [entry.kind for entry in shown.entries] == ["llm", "tool", "llm"]
    assert as_json([[entry.kind, entry.call_id, list(entry.messages) if isinstance(entry, LLMCall) else entry.result]
                    for entry in shown.entries]) == kept
    sent = fake_openai.requests[0]["messages"]  # what reached the endpoint for the first call
    first_call = shown.entries[0]
    assert [(m["role"], m["content"]) for m in first_call.messages] == [(m["role"], m["content"]) for m in sent]
    assert first_call.prompt_tokens == 120 and first_call.completion_tokens == 7
    assert isinstance(first_call.tools, tuple) and first_call.tools
    assert all(isinstance(section, tuple) for section in first_call.system_sections)
    tool = shown.entries[1]
    assert isinstance(tool, ToolCall) and tool.arguments == {"path": "."} and tool.status == "ok"
    assert panel.turn_selector.currentIndex() == 0 and not panel.model.follows_latest
    click_row(qtbot, panel, 0)  # its context view, as for a turn in memory
    messages = panel.llm_detail.context_view.tree.topLevelItem(1)
    assert messages.child(0).text(0) == "user (this turn): question 1: list the files"

    # a new turn still comes in while an old one is shown; the newest is followed again when picked
    fake_openai.add_text("reply 14")
    run_turn(qtbot, engine, KEY, "question 14")
    assert panel.model.shown_turn.number == 1
    last = panel.turn_selector.count() - 1
    panel.turn_selector.setCurrentIndex(last)
    panel.turn_selector.activated.emit(last)
    assert panel.model.follows_latest and panel.model.shown_turn.number == TURNS_IN_MEMORY + 4


def test_a_tool_card_of_a_turn_in_the_file_selects_its_call_once_read_back(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session(KEY)
    run_turns(qtbot, engine, fake_openai, TURNS_IN_MEMORY + 1)
    qtbot.waitUntil(lambda: isinstance(turns_of(panel)[0], SpilledTurn) and all_written(panel), timeout=WAIT_MS)

    with qtbot.waitSignal(panel.model.shown_turn_changed, timeout=WAIT_MS):
        assert panel.show_call("call_look") is True  # what the chat's tool card does
    current = panel.timeline.currentIndex()
    assert panel.model.shown_turn.number == 1 and current.row() == 1 and current.data(CallIdRole) == "call_look"
    assert panel.details.currentWidget() is panel.tool_detail
    assert panel.tool_detail.title_label.text().startswith("list_dir")
    assert panel.turn_selector.currentIndex() == 0
    assert panel.model.index(1, NAME_COLUMN).data(Qt.ItemDataRole.DisplayRole) == "list_dir"


def test_when_the_file_cannot_be_written_the_turns_stay_in_memory(env, fake_openai, qtbot, monkeypatch):
    engine, panel = env
    panel.set_session(KEY)

    def disk_full(self, turn: TurnTimeline) -> tuple[int, int]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill.TurnSpill, "_write", disk_full)
    run_turns(qtbot, engine, fake_openai, TURNS_IN_MEMORY + 2)
    qtbot.waitUntil(lambda: all(isinstance(turn, TurnTimeline) for turn in turns_of(panel)), timeout=WAIT_MS)
    fake_openai.add_text("one more")
    run_turn(qtbot, engine, KEY, "one more")  # no further attempt: every turn stays in memory
    assert all(isinstance(turn, TurnTimeline) for turn in turns_of(panel))
    panel.turn_selector.setCurrentIndex(0)
    panel.turn_selector.activated.emit(0)
    assert panel.model.shown_turn.number == 1 and panel.model.rowCount() == 3


def test_the_file_has_no_name_in_the_temporary_folder(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session(KEY)
    before = set(os.listdir(tempfile.gettempdir()))
    run_turns(qtbot, engine, fake_openai, TURNS_IN_MEMORY + 2)
    qtbot.waitUntil(lambda: isinstance(turns_of(panel)[1], SpilledTurn) and all_written(panel), timeout=WAIT_MS)
    added = {name for name in set(os.listdir(tempfile.gettempdir())) - before if "inspector" in name}
    assert added == set()


def file_size(store: spill.TurnSpill) -> int:
    assert store._file is not None
    return os.fstat(store._file.fileno()).st_size


def settled(store: spill.TurnSpill) -> None:
    """Wait until the worker has run everything asked of it so far (its queue is in order)."""
    store._worker().submit(lambda: None).result(timeout=10)


def test_the_file_is_rewritten_once_the_turns_let_go_of_outweigh_the_kept_ones(monkeypatch):
    """A window left running: turns the inspector lets go of leave dead bytes; past the threshold, and
    once they outweigh the live ones, the live records are copied to a new file, and every kept turn
    still reads back the same."""
    monkeypatch.setattr(spill, "COMPACT_AFTER_BYTES", 10_000)
    store = spill.TurnSpill()
    written: list[tuple[SpilledTurn, bool]] = []
    sizes = [6_000, 6_000, 100, 6_000, 6_000, 6_000]  # random bytes as hex: ~7.2 kB a record compressed
    turns = [TurnTimeline(KEY, f"turn-{number}", number, os.urandom(size).hex(), float(number))
             for number, size in enumerate(sizes, start=1)]
    stubs = [store.put(turn, lambda stub, ok: written.append((stub, ok))) for turn in turns]
    settled(store)
    assert [ok for _stub, ok in written] == [True] * 6
    lengths = [stub.where & 0xFFFFFFFF for stub in stubs]
    assert file_size(store) == sum(lengths) > 5 * 7_000

    store.forget(stubs[0])  # ~7 kB dead: under the threshold
    settled(store)
    assert file_size(store) == sum(lengths)
    store.forget(stubs[1])
    store.forget(stubs[2])  # ~15 kB dead: past the threshold, but less than the ~22 kB still needed
    settled(store)
    assert file_size(store) == sum(lengths)
    store.forget(stubs[3])  # ~22 kB dead against ~14 kB live: rewritten
    settled(store)
    assert file_size(store) == lengths[4] + lengths[5]
    assert [stub.where >> 32 for stub in stubs[4:]] == [0, lengths[4]]  # moved to the front, in order

    read: list[TurnTimeline | None] = []
    for stub in stubs[4:]:
        store.get(stub, read.append)
    settled(store)
    assert [(turn.number, turn.user_text) for turn in read] == [(t.number, t.user_text) for t in turns[4:]]
    store.close()


def test_a_rewrite_that_fails_keeps_the_file_as_it_was(monkeypatch, caplog):
    monkeypatch.setattr(spill, "COMPACT_AFTER_BYTES", 1)
    store = spill.TurnSpill()
    stubs = [store.put(TurnTimeline(KEY, f"turn-{n}", n, os.urandom(3_000).hex(), 0.0), lambda stub, ok: None)
             for n in range(1, 4)]
    settled(store)
    before = [stub.where for stub in stubs]
    size = file_size(store)

    real_temporary_file = spill.tempfile.TemporaryFile

    def no_space(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill.tempfile, "TemporaryFile", no_space)
    store.forget(stubs[0])
    store.forget(stubs[1])
    settled(store)
    assert file_size(store) == size and stubs[2].where == before[2]
    assert "could not rewrite the inspector's temporary file" in caplog.text
    read: list[TurnTimeline | None] = []
    store.get(stubs[2], read.append)
    settled(store)
    assert read[0] is not None and read[0].number == 3

    # Space again: the next copy, once the dead bytes pass the raised threshold, goes through and the
    # threshold is back where it was.
    monkeypatch.setattr(spill.tempfile, "TemporaryFile", real_temporary_file)
    big, small = (store.put(TurnTimeline(KEY, f"turn-{n}", n, os.urandom(size).hex(), 0.0), lambda stub, ok: None)
                  for n, size in ((4, 10_000), (5, 3_000)))
    store.forget(stubs[2])  # three small records dead (~11 kB): under the ~15 kB the failed copy asked for
    settled(store)
    assert file_size(store) == size + (big.where & 0xFFFFFFFF) + (small.where & 0xFFFFFFFF)
    store.forget(big)  # ~23 kB dead: rewritten
    settled(store)
    assert file_size(store) == small.where & 0xFFFFFFFF and small.where >> 32 == 0
    assert store._compact_at == spill.COMPACT_AFTER_BYTES
    store.close()


def test_turns_beyond_a_conversations_limit_leave_the_file(env, fake_openai, qtbot, monkeypatch):
    """The model lets go of a conversation's oldest turns beyond its limit; their records leave the file."""
    from nanobot_desktop.gui.inspector import model as timeline_model

    monkeypatch.setattr(timeline_model, "MAX_TURNS_PER_SESSION", TURNS_IN_MEMORY + 2)
    monkeypatch.setattr(spill, "COMPACT_AFTER_BYTES", 1)  # rewrite as soon as the dead bytes outweigh the live ones
    engine, panel = env
    panel.model._spill._compact_at = 1  # the store was made (with the threshold of its time) before the patch
    panel.set_session(KEY)
    run_turns(qtbot, engine, fake_openai, TURNS_IN_MEMORY + 6)
    qtbot.waitUntil(lambda: all_written(panel), timeout=WAIT_MS)
    store = panel.model._spill
    settled(store)
    turns = turns_of(panel)
    assert [turn.number for turn in turns] == list(range(5, TURNS_IN_MEMORY + 7))  # turns 1-4 let go of
    kept = [turn for turn in turns if isinstance(turn, SpilledTurn)]
    assert len(kept) == 2
    live = sum(turn.where & 0xFFFFFFFF for turn in kept)
    # The six records written were 3x the two kept; what is left beside the kept ones is less than they are.
    assert live < file_size(store) < 2 * live or file_size(store) == live
    with qtbot.waitSignal(panel.model.shown_turn_changed, timeout=WAIT_MS):
        panel.turn_selector.setCurrentIndex(0)
        panel.turn_selector.activated.emit(0)
    assert panel.model.shown_turn.number == 5 and panel.model.shown_turn.user_text == "question 5"


def test_turns_let_go_of_below_the_rewrite_threshold_leave_the_store_and_count_once(monkeypatch):
    """A long conversation whose file never reaches the threshold: the stubs the inspector let go of do
    not pile up in the store (it keeps at most twice the live ones), a second `forget` of one changes
    nothing, and the turns still kept read back as they were."""
    monkeypatch.setattr(spill, "COMPACT_AFTER_BYTES", 1 << 30)
    store = spill.TurnSpill()
    stubs = [store.put(TurnTimeline(KEY, f"turn-{n}", n, f"question {n}", float(n)), lambda stub, ok: None)
             for n in range(1, 41)]
    settled(store)
    lengths = [stub.where & 0xFFFFFFFF for stub in stubs]
    for stub in stubs[:36]:
        store.forget(stub)
    store.forget(stubs[0])
    settled(store)
    assert store._dead == sum(lengths[:36])
    assert len(store._live) <= 2 * 4 and set(stubs[36:]) <= set(store._live)
    assert all(stub.where == -2 for stub in stubs[:36])
    read: list[TurnTimeline | None] = []
    for stub in stubs[36:]:
        store.get(stub, read.append)
    settled(store)
    assert [turn.user_text for turn in read if turn is not None] == [f"question {n}" for n in range(37, 41)]
    store.close()


def test_a_turn_in_the_file_finds_its_own_calls_not_ones_its_text_quotes():
    """The stub keeps the selector's line and the call ids together; `find` looks only at the ids."""
    store = spill.TurnSpill()
    turn = TurnTimeline(KEY, "turn-1", 1, "why did tool:call_typed fail? · …", 1.0)
    turn.entries.append(ToolCall(call_id="call_real", turn_id="turn-1", name="list_dir", arguments={}, started_at=1.0))
    label = turn.label()
    stub = store.put(turn, lambda stub, ok: None)
    settled(store)
    assert stub.label() == label
    assert stub.find("tool", "call_real") == 0
    assert stub.find("tool", "call_typed") == -1 and stub.find("llm", "call_real") == -1
    store.close()
