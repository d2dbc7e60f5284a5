"""The inspector: timeline model, tool/LLM call details, context view — driven by a real engine turn."""

from __future__ import annotations

import asyncio
import json

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QFontMetrics, QGuiApplication

from nanobot_desktop.engine.agent.context import SECTION_SEPARATOR
from nanobot_desktop.engine.tools.policy import ApprovalAnswer
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.inspector.context_view import content_text, split_system_prompt
from nanobot_desktop.gui.inspector.details import RESULT_PREVIEW_LINES
from nanobot_desktop.gui.inspector.panel import InspectorPanel
from nanobot_desktop.gui.inspector.model import (
    NAME_COLUMN, SUMMARY_COLUMN, TIME_COLUMN, CallIdRole, DurationRole, KindRole, StatusRole, TimelineModel,
)

SECTION_NAMES = ["identity", "bootstrap", "memory", "active_skills", "skills"]


@pytest.fixture
def env(make_engine, qloop, qtbot):
    """(engine, panel) on a tmp workspace; the engine is shut down inside the loop afterwards."""
    engine = make_engine()
    bridge = EngineBridge(engine)
    panel = InspectorPanel(engine, bridge)
    qtbot.addWidget(panel)
    panel.resize(560, 900)
    yield engine, panel
    bridge.detach()
    closing = asyncio.ensure_future(engine.shutdown())
    qtbot.waitUntil(closing.done, timeout=10_000)
    closing.result()


def run_turn(qtbot, engine, session_key: str, text: str):
    task = asyncio.ensure_future(engine.loop.process(session_key, text))
    qtbot.waitUntil(task.done, timeout=10_000)
    return task.result()


def tool_chain(fake_openai) -> None:
    fake_openai.add_tool_calls([("list_dir", {"path": "."})], usage=(120, 7))
    fake_openai.add_text("done", usage=(150, 2))


def column(model: TimelineModel, column_number: int, role: int = Qt.ItemDataRole.DisplayRole) -> list:
    return [model.index(row, column_number).data(role) for row in range(model.rowCount())]


def click_row(qtbot, panel: InspectorPanel, row: int) -> None:
    index = panel.model.index(row, NAME_COLUMN)
    rect = panel.timeline.visualRect(index)
    qtbot.mouseClick(panel.timeline.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert panel.timeline.currentIndex().row() == row


# --- timeline -------------------------------------------------------------------------------------


def test_rows_appear_in_order_with_tokens_latency_and_duration(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    assert panel.summary_label.isHidden() and panel.conversation_label.isHidden()  # no blank lines before a turn
    model = panel.model
    resets, inserted = [], []
    model.modelReset.connect(lambda: resets.append(True))
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    tool_chain(fake_openai)

    result = run_turn(qtbot, engine, "desktop:a", "list the files")

    assert result.reply == "done"
    assert column(model, 0, KindRole) == ["llm", "tool", "llm"]
    assert column(model, 0, StatusRole) == ["ok", "ok", "ok"]
    assert column(model, NAME_COLUMN) == ["LLM · fake-model", "list_dir", "LLM · fake-model"]
    assert column(model, SUMMARY_COLUMN) == ["120 → 7 tokens", ".", "150 → 2 tokens"]
    durations = column(model, 0, DurationRole)
    assert all(isinstance(seconds, float) and seconds >= 0 for seconds in durations)
    assert all(text.endswith((" ms", " s")) for text in column(model, TIME_COLUMN))
    # one reset when the new turn became the shown one, then one row inserted per call, in order
    assert resets == [True]
    assert inserted == [(0, 0), (1, 1), (2, 2)]
    assert "ok · 2 LLM calls · 270 → 9 tokens · 1 tool call" in panel.summary_label.text()
    assert not panel.summary_label.isHidden()
    assert panel.turn_selector.currentText().startswith("Turn 1 ·")
    assert "list the files" in panel.turn_selector.currentText()


def test_model_passes_the_qt_model_tester_while_a_turn_runs_and_sessions_switch(env, fake_openai, qtbot,
                                                                                 qtmodeltester):
    engine, panel = env
    qtmodeltester.check(panel.model)  # keeps watching every change below
    panel.set_session("desktop:a")
    tool_chain(fake_openai)
    run_turn(qtbot, engine, "desktop:a", "list the files")
    fake_openai.add_text("hello")
    run_turn(qtbot, engine, "desktop:b", "hi")
    qtmodeltester.check(panel.model)
    panel.set_session("desktop:b")
    qtmodeltester.check(panel.model)
    panel.set_session("desktop:none")
    qtmodeltester.check(panel.model)


def test_a_failed_llm_call_shows_its_error_and_the_turn_fails(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    fake_openai.add_error(401, "Incorrect API key provided")

    result = run_turn(qtbot, engine, "desktop:a", "hi")

    assert result.status == "failed"
    assert column(panel.model, 0, StatusRole) == ["error"]
    assert column(panel.model, SUMMARY_COLUMN)[0].startswith("error: The endpoint rejected the API key (401)")
    click_row(qtbot, panel, 0)
    assert panel.llm_detail.error_label.isVisibleTo(panel)
    assert "401" in panel.llm_detail.error_label.text()
    assert panel.summary_label.text().startswith("failed ·")
    assert "[failed]" in panel.turn_selector.currentText()


def test_a_stopped_turn_marks_the_cut_off_llm_call_cancelled(env, fake_openai, qtbot, qloop):
    engine, panel = env
    panel.set_session("desktop:a")
    fake_openai.add_hang("partial")
    task = engine.loop.submit("desktop:a", "tell me a story")
    qtbot.waitUntil(lambda: column(panel.model, 0, StatusRole) == ["running"], timeout=10_000)
    assert column(panel.model, TIME_COLUMN) == ["running…"]

    stopping = asyncio.ensure_future(engine.loop.stop("desktop:a"))
    qtbot.waitUntil(lambda: stopping.done() and task.done(), timeout=10_000)

    assert column(panel.model, 0, StatusRole) == ["cancelled"]
    assert panel.model.shown_turn.status == "cancelled"


# --- tool call details ----------------------------------------------------------------------------


def test_selecting_the_tool_row_shows_pretty_arguments_and_the_result(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    tool_chain(fake_openai)
    run_turn(qtbot, engine, "desktop:a", "list the files")

    click_row(qtbot, panel, 1)

    detail = panel.tool_detail
    assert panel.details.currentWidget() is detail
    assert detail.arguments_view.toPlainText() == '{\n  "path": "."\n}'
    metrics = QFontMetrics(detail.arguments_view.font())  # monospace: every glyph as wide as the next
    assert metrics.horizontalAdvance("iiii") == metrics.horizontalAdvance("WWWW")
    result = detail.result_view.toPlainText()
    for name in ("AGENTS.md", "SOUL.md", "memory", "skills"):
        assert name in result
    assert detail.status_label.text().startswith("ok · ")
    assert not detail.error_label.isVisibleTo(panel)
    assert not detail.expand_button.isVisibleTo(panel)  # 8 lines: nothing to expand

    qtbot.mouseClick(detail.copy_arguments_button, Qt.MouseButton.LeftButton)
    assert json.loads(QGuiApplication.clipboard().text()) == {"path": "."}
    qtbot.mouseClick(detail.copy_result_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == detail.call.result


def test_a_long_result_starts_collapsed_and_expands(env, fake_openai, qtbot):
    engine, panel = env
    folder = engine.workspace.root / "many"
    folder.mkdir()
    for number in range(45):
        (folder / f"file{number:02d}.txt").write_text("x", encoding="utf-8")
    panel.set_session("desktop:a")
    fake_openai.add_tool_calls([("list_dir", {"path": "many"})])
    fake_openai.add_text("done")
    run_turn(qtbot, engine, "desktop:a", "list many")

    click_row(qtbot, panel, 1)
    detail = panel.tool_detail
    collapsed = detail.result_view.toPlainText().splitlines()
    assert collapsed[:RESULT_PREVIEW_LINES] == [f"📄 file{n:02d}.txt" for n in range(RESULT_PREVIEW_LINES)]
    assert collapsed[-1] == f"… ({45 - RESULT_PREVIEW_LINES} more lines: Expand)"
    assert detail.expand_button.isVisibleTo(panel) and detail.expand_button.text() == "Expand"
    assert detail.result_info.text() == "45 lines · " + f"{len(detail.call.result):,} characters"

    qtbot.mouseClick(detail.expand_button, Qt.MouseButton.LeftButton)
    assert detail.result_view.toPlainText() == detail.call.result
    assert detail.expand_button.text() == "Collapse"
    qtbot.mouseClick(detail.expand_button, Qt.MouseButton.LeftButton)
    assert len(detail.result_view.toPlainText().splitlines()) == RESULT_PREVIEW_LINES + 1


def test_an_error_result_is_shown_as_the_error(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    fake_openai.add_tool_calls([("list_dir", {"path": "no-such-folder"})])
    fake_openai.add_text("sorry")
    run_turn(qtbot, engine, "desktop:a", "list it")

    assert column(panel.model, 0, StatusRole)[1] == "error"
    click_row(qtbot, panel, 1)
    assert panel.tool_detail.error_label.isVisibleTo(panel)
    assert panel.tool_detail.error_label.text().startswith("error: Error: Directory not found: no-such-folder")


def test_a_call_waiting_for_approval_shows_the_diff_then_its_result(env, fake_openai, qtbot):
    engine, panel = env
    answer: asyncio.Future = asyncio.get_event_loop().create_future()

    async def approver(_request):
        return await answer

    engine.approvals.respond_with(approver)
    panel.set_session("desktop:a")
    fake_openai.add_tool_calls([("write_file", {"path": "note.txt", "content": "hello\n"})])
    fake_openai.add_text("written")
    task = engine.loop.submit("desktop:a", "write a note")
    qtbot.waitUntil(lambda: "awaiting approval" in column(panel.model, 0, StatusRole), timeout=10_000)

    click_row(qtbot, panel, 1)
    detail = panel.tool_detail
    assert detail.diff_view.isVisibleTo(panel)
    assert "+hello" in detail.diff_view.toPlainText()
    assert detail.result_info.text() == "(waiting for the user's answer)"

    answer.set_result(ApprovalAnswer.ALLOW_ONCE)
    qtbot.waitUntil(task.done, timeout=10_000)
    assert column(panel.model, 0, StatusRole) == ["ok", "ok", "ok"]
    assert panel.timeline.currentIndex().row() == 1  # the selection survives the update
    assert "note.txt" in detail.result_view.toPlainText()
    assert (engine.workspace.root / "note.txt").read_text(encoding="utf-8") == "hello\n"


# --- show_call, sessions, turns --------------------------------------------------------------------


def test_show_call_selects_and_reveals_the_call_even_in_an_earlier_turn(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    fake_openai.add_tool_calls([("list_dir", {"path": "."}, "call_first")])
    fake_openai.add_tool_calls([("read_file", {"path": "AGENTS.md"}, "call_read")])
    fake_openai.add_text("done")
    run_turn(qtbot, engine, "desktop:a", "look around")
    fake_openai.add_text("second")
    run_turn(qtbot, engine, "desktop:a", "again")
    assert panel.model.rowCount() == 1  # the latest turn is shown

    assert panel.show_call("call_read") is True

    assert panel.model.shown_turn.number == 1
    assert panel.turn_selector.currentIndex() == 0
    current = panel.timeline.currentIndex()
    assert current.row() == 3 and current.data(CallIdRole) == "call_read"
    assert panel.details.currentWidget() is panel.tool_detail
    assert panel.tool_detail.title_label.text().startswith("read_file")
    assert panel.show_call("call_first") is True
    assert panel.timeline.currentIndex().row() == 1
    assert panel.show_call("never-seen") is False


def test_switching_session_shows_that_sessions_turns(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    tool_chain(fake_openai)
    run_turn(qtbot, engine, "desktop:a", "list the files")
    fake_openai.add_text("hello from b")
    run_turn(qtbot, engine, "desktop:b", "hi b")
    assert panel.model.rowCount() == 3  # a turn elsewhere does not take over the shown session

    panel.set_session("desktop:b")
    assert column(panel.model, 0, KindRole) == ["llm"]
    assert "hi b" in panel.turn_selector.currentText()

    panel.set_session("desktop:empty")
    assert panel.model.rowCount() == 0
    assert not panel.turn_selector.isEnabled()
    assert "No turns in this session" in panel.placeholder.text()
    assert panel.details.currentWidget() is panel.placeholder

    panel.set_session("desktop:a")
    assert column(panel.model, 0, KindRole) == ["llm", "tool", "llm"]


def test_turn_selector_shows_earlier_turns_and_the_newest_follows(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    tool_chain(fake_openai)
    run_turn(qtbot, engine, "desktop:a", "first")
    fake_openai.add_text("two")
    run_turn(qtbot, engine, "desktop:a", "second")
    assert panel.turn_selector.count() == 2
    assert panel.turn_selector.currentIndex() == 1 and panel.model.rowCount() == 1

    panel.turn_selector.activated.emit(0)  # what choosing an item in the popup does
    assert panel.model.rowCount() == 3 and not panel.model.follows_latest

    fake_openai.add_text("three")
    run_turn(qtbot, engine, "desktop:a", "third")
    assert panel.turn_selector.count() == 3
    assert panel.turn_selector.currentIndex() == 0 and panel.model.rowCount() == 3  # still pinned

    panel.turn_selector.setCurrentIndex(2)
    panel.turn_selector.activated.emit(2)
    assert panel.model.follows_latest and panel.model.shown_turn.user_text == "third"
    fake_openai.add_text("four")
    run_turn(qtbot, engine, "desktop:a", "fourth")
    assert panel.model.shown_turn.user_text == "fourth"
    assert panel.turn_selector.currentText().startswith("Turn 4 ·")


def test_the_requests_kept_for_the_context_view_share_the_history_instead_of_copying_it(env, fake_openai, qtbot):
    """Each call's request is kept whole (the context view shows it), but a message sent again in a
    later call is the same entry: what the inspector holds grows with the messages, not with calls x
    history (bench/long_session_memory.py)."""
    engine, panel = env
    panel.set_session("desktop:a")
    turns = 8
    for number in range(turns):
        fake_openai.add_text(f"reply {number}")
        run_turn(qtbot, engine, "desktop:a", f"question {number}")
    calls = [entry for turn in panel.model.turns("desktop:a") for entry in turn.entries if entry.kind == "llm"]
    assert len(calls) == turns
    assert [len(call.messages) for call in calls] == [2 * number + 2 for number in range(turns)]  # all of it
    assert [m["content"] for m in calls[-1].messages[1:-1:2]] == [f"question {n}" for n in range(turns - 1)]
    kept = {id(message) for call in calls for message in call.messages}
    # per call its system prompt and new question, once each stored message: 4 x turns - 2 (a copy per
    # call would be 2 x turns + turns x (turns - 1) = 72)
    assert len(kept) == 4 * turns - 2
    # and the calls share the runs of references to them too, not a tuple of all of them each (the
    # test below counts them over 300 turns)
    assert calls[-1].messages.runs[1] is calls[-2].messages.runs[1]
    assert calls[-1].tools and calls[-1].tools is calls[-2].tools  # unchanged: kept once
    assert calls[-1].system_sections and calls[-1].system_sections is calls[-2].system_sections


def test_shared_messages_hold_o_n_log_n_references_for_a_long_session_and_read_as_sent():
    from nanobot_desktop.gui.inspector.records import SharedMessages

    history: list[dict] = []
    previous = None
    calls = []
    for number in range(300):  # a turn: its question, then the reply joins the history
        sent = ({"role": "system", "content": f"prompt {number}"}, *history, {"role": "user", "content": f"q{number}"})
        previous = SharedMessages.sharing(sent, previous)
        calls.append((sent, previous))
        history += [{"role": "user", "content": f"q{number}"}, {"role": "assistant", "content": f"a{number}"}]
    for sent, shared in calls[::37]:
        assert list(shared) == list(sent) and len(shared) == len(sent)
        assert shared[0] is sent[0] and shared[-1] is sent[-1] and shared[len(sent) // 2] is sent[len(sent) // 2]
        assert shared[1:-1:2] == sent[1:-1:2]
    assert max(len(shared.runs) for _, shared in calls) <= 12  # O(log n) runs per call
    references = sum({id(run): len(run) for _, shared in calls for run in shared.runs}.values())
    one_tuple_each = sum(len(sent) for sent, _ in calls)  # ~ n² / 2 = 90,300
    assert references < one_tuple_each / 10
    with pytest.raises(IndexError):
        calls[-1][1][len(calls[-1][0])]


# --- context view ----------------------------------------------------------------------------------


def test_context_view_of_the_first_llm_call_lists_sections_with_sizes_and_the_user_message(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    tool_chain(fake_openai)
    run_turn(qtbot, engine, "desktop:a", "list the files")
    expected_sizes = [(section.name, section.chars) for section in engine.context.system_sections()]
    assert [name for name, _ in expected_sizes] == SECTION_NAMES

    click_row(qtbot, panel, 0)

    view = panel.llm_detail.context_view
    assert panel.details.currentWidget() is panel.llm_detail
    assert panel.llm_detail.numbers_label.text().startswith("Tokens: 120 in · 7 out")
    tree = view.tree
    system = tree.topLevelItem(0)
    assert system.text(0) == "System prompt (5 sections)" and system.isExpanded()
    sections = [(system.child(i).text(0), system.child(i).text(1)) for i in range(system.childCount())]
    assert sections == [(name, f"{chars:,}") for name, chars in expected_sizes]
    sent_system = fake_openai.requests[0]["messages"][0]["content"]
    assert system.text(1) == f"{len(sent_system):,}"
    texts = [system.child(i).data(0, Qt.ItemDataRole.UserRole).text for i in range(system.childCount())]
    assert SECTION_SEPARATOR.join(texts) == sent_system  # exactly what was sent, cut at the right places

    bootstrap = system.child(1)
    assert [bootstrap.child(i).text(0) for i in range(bootstrap.childCount())][:4] == \
        ["AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md"]

    messages = tree.topLevelItem(1)
    assert messages.text(0) == "Messages (1)"
    assert messages.child(0).text(0) == "user (this turn): list the files"
    tools = tree.topLevelItem(2)
    tool_names = [tools.child(i).text(0) for i in range(tools.childCount())]
    assert tool_names == [tool["function"]["name"] for tool in fake_openai.requests[0]["tools"]]
    list_dir = tools.child(tool_names.index("list_dir"))
    assert list_dir.child(0).text(0) == "path: string"
    total = len(sent_system) + len(fake_openai.requests[0]["messages"][1]["content"]) \
        + sum(len(json.dumps(tool, ensure_ascii=False)) for tool in fake_openai.requests[0]["tools"])
    assert view.summary_label.text().startswith(f"Sent: system prompt + 1 message + 10 tools — {total:,} characters")
    assert view.summary_label.text().endswith(" · 120 prompt tokens")

    tree.setCurrentItem(system.child(2))
    assert view.preview.toPlainText().startswith("# Memory")
    assert view.preview_title.text() == f"memory — {expected_sizes[2][1]:,} characters"
    tree.setCurrentItem(list_dir)
    assert json.loads(view.preview.toPlainText())["function"]["name"] == "list_dir"
    tree.setCurrentItem(messages.child(0))
    assert view.preview.toPlainText().endswith("list the files")
    qtbot.mouseClick(view.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == fake_openai.requests[0]["messages"][1]["content"]


def test_context_view_of_the_second_llm_call_shows_the_tool_round_trip(env, fake_openai, qtbot):
    engine, panel = env
    panel.set_session("desktop:a")
    tool_chain(fake_openai)
    run_turn(qtbot, engine, "desktop:a", "list the files")

    click_row(qtbot, panel, 2)

    messages = panel.llm_detail.context_view.tree.topLevelItem(1)
    labels = [messages.child(i).text(0) for i in range(messages.childCount())]
    assert labels[0] == "user (this turn): list the files"
    assert labels[1] == "assistant → list_dir"
    assert labels[2].startswith("tool list_dir: ")
    assistant = messages.child(1).data(0, Qt.ItemDataRole.UserRole)
    assert '→ list_dir' in assistant.text and '"path": "."' in assistant.text


def test_system_prompt_split_falls_back_to_separators_when_sizes_do_not_fit():
    text = SECTION_SEPARATOR.join(["# A", "# B"])
    assert split_system_prompt(text, (("a", 3), ("b", 3))) == ([("a", "# A"), ("b", "# B")], True)
    parts, exact = split_system_prompt(text, (("a", 5), ("b", 3)))
    assert not exact and parts == [("a", "# A"), ("b", "# B")]
    parts, exact = split_system_prompt(text, (("only", 99),))
    assert not exact and parts == [("part 1", "# A"), ("part 2", "# B")]


def test_inline_images_are_described_not_dumped():
    url = "data:image/png;base64," + "A" * 4096
    shown, size = content_text([{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": url}}])
    assert shown == "look\n\n[image: image/png, 3 KB inline]"
    assert size == 4 + len(url)


def test_a_panel_made_before_any_session_is_chosen_follows_the_first_active_session(env, fake_openai, qtbot):
    engine, panel = env
    assert panel.placeholder.text() == "No session selected."
    fake_openai.add_text("hi")
    run_turn(qtbot, engine, "desktop:x", "hello")
    assert panel.model.session_key == "desktop:x" and panel.model.rowCount() == 1
    assert panel.model.index(0, 0, QModelIndex()).data(StatusRole) == "ok"


def test_turn_selector_adds_a_row_per_turn_without_rebuilding_the_others(env, fake_openai, qtbot):
    """The selector's rows are read from the timeline: a new turn is one inserted row (an open popup and
    its scroll position stay), not the whole list cleared and filled again, and nothing is copied per turn."""
    engine, panel = env
    panel.set_session("desktop:a")
    fake_openai.add_text("one")
    run_turn(qtbot, engine, "desktop:a", "first")
    rows = panel.turn_selector.model()
    resets: list[bool] = []
    inserted: list[tuple[int, int]] = []
    rows.modelReset.connect(lambda: resets.append(True))
    rows.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    for text in ("second", "third"):
        fake_openai.add_text("ok")
        run_turn(qtbot, engine, "desktop:a", text)
    assert resets == [] and inserted == [(1, 1), (2, 2)]
    assert [panel.turn_selector.itemText(row).split(" · ")[::2] for row in range(3)] == [
        ["Turn 1", "first"], ["Turn 2", "second"], ["Turn 3", "third"]]
    assert panel.turn_selector.itemData(2) == panel.model.shown_turn.turn_id
    assert panel.turn_selector.currentIndex() == 2

    panel.set_session("desktop:empty")  # another session: its own rows (none), said in words
    assert panel.turn_selector.count() == 0 and panel.turn_selector.currentIndex() == -1
    assert panel.turn_selector.placeholderText() == "No turns yet" and not panel.turn_selector.isEnabled()
    panel.set_session("desktop:a")
    assert panel.turn_selector.count() == 3 and panel.turn_selector.currentIndex() == 2
