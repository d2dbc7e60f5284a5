"""The session list as a person uses it: Esc clears the search, typing in the search never switches the
open chat, branches sit under the session they came from, a new chat is "New chat" until its first
message names it — on real session files of a real Engine (branch files written by hand)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt

from nanobot_desktop.engine.sessions.listing import NEW_CHAT_TITLE
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.sessions.model import SessionRole
from nanobot_desktop.gui.sessions.panel import SessionsPanel
from tests.gui.sessions.panel_support import listed_panel

WAIT_MS = 10_000


def _write(folder: Path, key: str, updated: str, texts: list[str], branch_of: tuple[str, int] | None = None) -> None:
    """A session file as the branch feature writes it: a metadata line, then one line per message."""
    metadata = {"branch_of": {"key": branch_of[0], "at": branch_of[1]}} if branch_of else {}
    header = {"_type": "metadata", "key": key, "created_at": updated, "updated_at": updated, "metadata": metadata,
              "last_consolidated": 0}
    lines = [json.dumps(header)] + [
        json.dumps({"role": "user" if n % 2 == 0 else "assistant", "content": text, "timestamp": updated})
        for n, text in enumerate(texts)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (key.replace(":", "_", 1) + ".jsonl")).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def panel(qtbot, qloop, make_engine):
    engine = make_engine()
    folder = engine.sessions.sessions_dir
    _write(folder, "desktop:garden", "2026-11-20T09:00:00", ["Plan the garden", "Tomatoes go in May."])
    _write(folder, "desktop:garden-b1", "2026-11-20T09:30:00", ["Plan the garden", "Peppers, then."],
           ("desktop:garden", 1))
    _write(folder, "desktop:garden-b2", "2026-11-20T09:40:00", ["Plan the garden", "Beans would work too."],
           ("desktop:garden", 1))
    _write(folder, "desktop:trip", "2026-11-22T18:00:00", ["Book the train to Lyon", "Done: 08:12 from Paris."])
    _write(folder, "desktop:orphan", "2026-11-21T12:00:00", ["Which bread?", "Sourdough."], ("desktop:deleted", 1))
    _write(folder, "cli:direct", "2026-11-19T08:00:00", ["What is a banana split?", "Ice cream with a banana."])
    yield from listed_panel(qtbot, engine)


def _visible_rows(panel: SessionsPanel, parent: QModelIndex = QModelIndex(), depth: int = 0) -> list[tuple[int, str]]:
    """(depth, key or group title) of every row the view shows, top to bottom, through the view's own state."""
    rows = []
    model = panel.view.model()
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        rows.append((depth, index.data(SessionRole.KeyRole) or index.data()))
        if panel.view.isExpanded(index):
            rows += _visible_rows(panel, index, depth + 1)
    return rows


def _click(qtbot, panel: SessionsPanel, key: str) -> None:
    index = panel.model.index_of_key(key)
    assert index.isValid(), f"{key} is not shown"
    panel.view.scrollTo(index)
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=panel.view.visualRect(index).center())


def _show_branches(qtbot, panel: SessionsPanel, on: bool = True) -> None:
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.show_branches_action.setChecked(on)


def test_a_conversation_is_one_row_and_opens_at_its_latest_version(qtbot, panel):
    assert _visible_rows(panel) == [
        (0, "Desktop"),
        (1, "desktop:trip"),
        (1, "desktop:orphan"),  # its origin is gone: a row of its own
        (1, "desktop:garden"),  # stands for b1 and b2, in the place of the latest activity (09:40, b2)
        (0, "Command line"),
        (1, "cli:direct"),
    ]
    garden = panel.model.info("desktop:garden")
    assert (garden.title, garden.preview, garden.updated_at) == ("Plan the garden", "Beans would work too.",
                                                                 "2026-11-20T09:40:00")
    activated: list[str] = []
    panel.session_activated.connect(activated.append)
    _click(qtbot, panel, "desktop:garden")
    assert activated == ["desktop:garden-b2"]  # the version last worked on
    # the chat shows b1 (the switcher moved to it): its conversation's row is the one selected, and
    # the row does not switch the chat away from the version shown
    panel.set_current_key("desktop:garden-b1")
    assert panel.view.currentIndex() == panel.model.index_of_key("desktop:garden")
    assert panel.model.info("desktop:garden-b1").key == "desktop:garden"  # the window's title reads the row
    panel.view.setFocus()
    qtbot.keyClick(panel.view, Qt.Key.Key_Return)
    assert activated == ["desktop:garden-b2", "desktop:garden-b1"]
    # a search shows the conversation as its one row
    panel.search_box.setText("Plan the garden")
    qtbot.waitUntil(lambda: [key for _d, key in _visible_rows(panel)] == ["Desktop", "desktop:garden"],
                    timeout=WAIT_MS)


def test_branches_are_shown_under_their_origin_and_an_orphan_branch_at_the_top(qtbot, panel):
    _show_branches(qtbot, panel)
    assert _visible_rows(panel) == [
        (0, "Desktop"),
        (1, "desktop:trip"),
        (1, "desktop:orphan"),  # its origin is gone: a top-level row of its own
        (1, "desktop:garden"),  # in the place of its family's latest activity (09:40, b2)
        (2, "desktop:garden-b1"),
        (2, "desktop:garden-b2"),
        (0, "Command line"),
        (1, "cli:direct"),
    ]
    assert panel.model.branch_origin("desktop:garden-b2") == "desktop:garden"
    assert panel.model.info("desktop:garden-b1").branch_of == "desktop:garden"
    # a branch opens like any session
    activated: list[str] = []
    panel.session_activated.connect(activated.append)
    _click(qtbot, panel, "desktop:garden-b2")
    assert activated == ["desktop:garden-b2"]
    # the origin's arrow folds its branches away
    origin = panel.model.index_of_key("desktop:garden")
    panel.view.setFocus()
    panel.view.setCurrentIndex(origin)
    qtbot.keyClick(panel.view, Qt.Key.Key_Left)
    assert not panel.view.isExpanded(origin)
    assert (2, "desktop:garden-b1") not in _visible_rows(panel)


def test_a_new_branch_appears_under_its_origin_while_the_app_runs(qtbot, panel):
    _show_branches(qtbot, panel)
    _write(panel.engine.sessions.sessions_dir, "desktop:trip-b1", "2026-11-23T07:00:00",
           ["Book the train to Lyon", "The 10:12 is cheaper."], ("desktop:trip", 2))
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.refresh_now()
    rows = _visible_rows(panel)
    assert rows[:3] == [(0, "Desktop"), (1, "desktop:trip"), (2, "desktop:trip-b1")]


def test_esc_in_the_search_box_clears_the_search(qtbot, panel):
    panel.search_box.setFocus()
    with qtbot.waitSignal(panel.search_finished, timeout=WAIT_MS):
        qtbot.keyClicks(panel.search_box, "lyon")
    assert [key for depth, key in _visible_rows(panel) if depth] == ["desktop:trip"]
    qtbot.keyClick(panel.search_box, Qt.Key.Key_Escape)
    assert panel.search_box.text() == ""
    assert len([key for depth, key in _visible_rows(panel) if depth]) == 4  # garden stands for its two branches


def test_typing_in_the_search_never_switches_the_open_chat(qtbot, panel):
    activated: list[str] = []
    panel.session_activated.connect(activated.append)
    _click(qtbot, panel, "desktop:trip")
    assert activated == ["desktop:trip"]
    panel.set_current_key("desktop:trip")  # the chat shows it now
    panel.search_box.setFocus()
    # "b…" keeps the trip visible ("Book the train"), "be…" hides it while its siblings stay: Qt moves
    # the current row to a sibling, and that must not open it
    with qtbot.waitSignal(panel.search_finished, timeout=WAIT_MS):
        qtbot.keyClicks(panel.search_box, "beans")
    assert [key for depth, key in _visible_rows(panel) if depth] == ["desktop:garden"]  # by its latest version
    qtbot.keyClick(panel.search_box, Qt.Key.Key_Escape)
    assert panel.selected_key() == "desktop:trip"  # the open chat is selected again when the filter goes
    _write(panel.engine.sessions.sessions_dir, "desktop:trip", "2026-11-18T18:00:00", ["Book the train to Lyon"])
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.refresh_now()  # a listing that moves the open chat's row opens nothing either
    assert activated == ["desktop:trip"]
    assert panel.current_key == "desktop:trip" and panel.selected_key() == "desktop:trip"
    # Return in the search box is a person's pick: it opens the first match
    panel.search_box.setFocus()
    with qtbot.waitSignal(panel.search_finished, timeout=WAIT_MS):
        qtbot.keyClicks(panel.search_box, "sourdough")
    qtbot.keyClick(panel.search_box, Qt.Key.Key_Return)
    assert activated == ["desktop:trip", "desktop:orphan"]


def test_a_new_chat_is_titled_new_chat_until_its_first_message_is_written(qtbot, panel, fake_openai):
    engine = panel.engine
    key = "desktop:20261124-195728-170"
    session = engine.sessions.get_or_create(key)
    engine.sessions.append(session, [{"role": "user", "content": "An old question"}])
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        engine.sessions.clear(engine.sessions.get_or_create(key))  # /new: an empty file for the key
    qtbot.waitUntil(lambda: panel.model.info(key) is not None and panel.model.info(key).title == NEW_CHAT_TITLE,
                    timeout=WAIT_MS)
    index = panel.model.index_of_key(key)
    assert index.data(Qt.ItemDataRole.DisplayRole) == "New chat"
    fake_openai.add_text("Ferns and hostas.")
    turn = asyncio.ensure_future(engine.loop.process(key, "Which plants like shade?"))
    qtbot.waitUntil(turn.done, timeout=WAIT_MS)
    turn.result()
    qtbot.waitUntil(lambda: panel.model.info(key).title == "Which plants like shade?", timeout=WAIT_MS)


def test_a_session_changed_while_the_app_was_closed_is_corrected_right_after_the_first_paint(qtbot, qloop,
                                                                                              make_engine):
    engine = make_engine()
    folder = engine.sessions.sessions_dir
    _write(folder, "desktop:trip", "2026-11-22T18:00:00", ["Book the train to Lyon", "Done."])
    engine.session_index.list_sessions()  # the last run of the app left this in its index
    engine.session_index.close()
    _write(folder, "desktop:trip", "2026-11-23T18:00:00", ["Book the train to Marseille", "Done."])  # app closed
    bridge = EngineBridge(engine)
    widget = SessionsPanel(engine, bridge)
    qtbot.addWidget(widget)
    widget.show()
    with qtbot.waitSignal(widget.refreshed, timeout=WAIT_MS):
        widget.refresh_now()
    assert widget.model.info("desktop:trip").title == "Book the train to Lyon"  # at once, from the index
    qtbot.waitUntil(lambda: widget.model.info("desktop:trip").title == "Book the train to Marseille",
                    timeout=WAIT_MS)  # then every file is compared with it
    bridge.detach()


def test_a_conversation_new_put_aside_stays_reachable_and_continues_in_a_new_chat(qtbot, panel):
    store = panel.engine.sessions
    session = store.get_or_create("desktop:trip")
    archived = store.clear(session)  # what /new does: the old conversation goes to sessions/.archive/
    assert archived is not None
    before = archived.read_bytes()
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.refresh_now()
    rows = _visible_rows(panel)
    assert rows[-2:] == [(0, "Archived"), (1, f"archived:{archived.name}")]
    assert panel.model.info("desktop:trip").title == NEW_CHAT_TITLE
    archived_row = panel.model.info(f"archived:{archived.name}")
    assert archived_row.title == "Book the train to Lyon" and archived_row.message_count == 2
    activated: list[str] = []
    panel.session_activated.connect(activated.append)
    _click(qtbot, panel, f"archived:{archived.name}")  # selecting it opens nothing
    assert activated == []
    index = panel.model.index_of_key(f"archived:{archived.name}")
    qtbot.mouseDClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=panel.view.visualRect(index).center())
    assert len(activated) == 1 and activated[0].startswith("desktop:") and activated[0] != "desktop:trip"
    continued = store.load(activated[0])
    assert [m["content"] for m in continued.messages] == ["Book the train to Lyon", "Done: 08:12 from Paris."]
    assert continued.metadata["title"] == "Book the train to Lyon"
    assert archived.read_bytes() == before  # the archive is never rewritten
    qtbot.waitUntil(lambda: panel.model.info(activated[0]) is not None, timeout=WAIT_MS)
