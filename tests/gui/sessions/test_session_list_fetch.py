"""A big session list hands the view its rows a few hundred at a time per channel group: on 2,000 real
session files of a real Engine, the model holds fewer rows than there are sessions, a person paging
down with the keyboard or dragging the scrollbar to the end gets the rest, a new session arriving does
not hand the view more, and opening a session not fetched yet selects it and scrolls to it. Model-level
checks with qtmodeltester: a new listing keeps what was fetched, marks and branches of unfetched rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QRect, Qt

from nanobot_desktop.engine.sessions.listing import SessionInfo
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.sessions.model import FETCH_ROWS, SessionListModel, SessionRole
from nanobot_desktop.gui.sessions.panel import SessionsPanel
from tests.gui.sessions.panel_support import listed_panel

WAIT_MS = 10_000
DESKTOP, CLI = 1_200, 800


def _stamp(number: int) -> str:
    return f"2026-{1 + number // 2000 % 12:02d}-{1 + number // 80 % 28:02d}T{number // 60 % 24:02d}:{number % 60:02d}:00"


def _write_sessions(folder: Path) -> None:
    """DESKTOP desktop sessions and CLI command-line ones, `desktop:00000` the oldest of its group."""
    folder.mkdir(parents=True, exist_ok=True)
    for channel, count, offset in (("desktop", DESKTOP, 0), ("cli", CLI, DESKTOP)):
        for number in range(count):
            key = f"{channel}:{number:05d}"
            stamp = _stamp(offset + number)
            header = {"_type": "metadata", "key": key, "created_at": stamp, "updated_at": stamp, "metadata": {},
                      "last_consolidated": 0}
            lines = [json.dumps(header), json.dumps({"role": "user", "content": f"Topic {key}", "timestamp": stamp}),
                     json.dumps({"role": "assistant", "content": "Noted.", "timestamp": stamp})]
            (folder / f"{channel}_{number:05d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def big_panel(qtbot, qloop, make_engine):
    engine = make_engine()
    _write_sessions(engine.sessions.sessions_dir)
    yield from listed_panel(qtbot, engine)


def _group(panel: SessionsPanel, channel: str) -> QModelIndex:
    model = panel.model
    return next(model.index(row, 0) for row in range(model.rowCount())
                if model.index(row, 0).data(SessionRole.ChannelRole) == channel)


def _fetched(panel: SessionsPanel, channel: str) -> list[str]:
    group = _group(panel, channel)
    return [panel.model.index(row, 0, group).data(SessionRole.KeyRole) for row in range(panel.model.rowCount(group))]


def _newest_first(channel: str, count: int) -> list[str]:
    return [f"{channel}:{number:05d}" for number in reversed(range(count))]


def test_the_view_gets_a_few_hundred_rows_and_every_session_stays_listed(big_panel):
    assert len(big_panel.model.keys()) == DESKTOP + CLI
    for channel, count in (("desktop", DESKTOP), ("cli", CLI)):
        fetched = _fetched(big_panel, channel)
        assert FETCH_ROWS <= len(fetched) < count
        assert fetched == _newest_first(channel, count)[:len(fetched)]  # the newest, in order
        assert _group(big_panel, channel).data(SessionRole.MessageCountRole) == count  # the heading counts them all


def test_a_start_with_the_index_on_disk_shows_each_groups_newest_first_then_every_session(qtbot, make_engine,
                                                                                          big_panel):
    big_panel.engine.session_index.close()  # the app quit; the index stays on disk
    engine = make_engine()
    bridge = EngineBridge(engine)
    panel = SessionsPanel(engine, bridge)
    qtbot.addWidget(panel)
    panel.resize(340, 560)
    panel.show()
    listed: list[int] = []
    panel.refreshed.connect(lambda: listed.append(len(panel.model.keys())))
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.refresh_now()
    assert listed == [2 * FETCH_ROWS]  # the first listing: what the groups show before anyone scrolls
    assert _fetched(panel, "desktop") == _newest_first("desktop", DESKTOP)[:FETCH_ROWS]
    qtbot.waitUntil(lambda: len(listed) == 2, timeout=WAIT_MS)  # the next listing, at once, has every session
    assert listed[1] == DESKTOP + CLI
    assert _group(panel, "cli").data(SessionRole.MessageCountRole) == CLI
    assert _fetched(panel, "desktop") == _newest_first("desktop", DESKTOP)[:FETCH_ROWS]  # nothing moved on screen
    panel.set_current_key("desktop:00000")
    assert panel.view.currentIndex().data(SessionRole.KeyRole) == "desktop:00000"
    bridge.detach()


def test_a_session_arriving_adds_its_row_and_nothing_more(qtbot, big_panel):
    qtbot.waitUntil(lambda: big_panel.view.verticalScrollBar().maximum() > 0, timeout=WAIT_MS)  # laid out
    before = {channel: len(_fetched(big_panel, channel)) for channel in ("desktop", "cli")}
    folder = big_panel.engine.sessions.sessions_dir
    header = {"_type": "metadata", "key": "desktop:new", "created_at": "2027-01-01T00:00:00",
              "updated_at": "2027-01-01T00:00:00", "metadata": {}, "last_consolidated": 0}
    (folder / "desktop_new.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    with qtbot.waitSignal(big_panel.refreshed, timeout=WAIT_MS):
        big_panel.refresh_now()
    qtbot.waitUntil(lambda: big_panel.view.visualRect(big_panel.model.index_of_key("desktop:new", fetch=False))
                    .isValid(), timeout=WAIT_MS)  # the view laid the new row out
    assert _fetched(big_panel, "desktop")[0] == "desktop:new"
    assert {channel: len(_fetched(big_panel, channel)) for channel in ("desktop", "cli")} == before


def test_paging_down_with_the_keyboard_goes_through_every_session_of_a_group(qtbot, big_panel):
    view = big_panel.view
    view.setFocus()
    view.setCurrentIndex(big_panel.model.index(0, 0, _group(big_panel, "desktop")))
    cli = _group(big_panel, "cli")
    seen: list[str] = []
    for _press in range(DESKTOP):  # a page at a time until the cursor leaves the desktop group
        qtbot.keyClick(view, Qt.Key.Key_PageDown)
        current = view.currentIndex()
        if current.parent() == cli or current == cli:
            break
        seen.append(current.data(SessionRole.KeyRole))
    page = view.viewport().height() // view.visualRect(view.currentIndex()).height() + 1
    assert int(seen[-1].split(":")[1]) < page  # the cursor reached the last page of desktop sessions, then left
    assert _fetched(big_panel, "desktop") == _newest_first("desktop", DESKTOP)
    assert len(_fetched(big_panel, "cli")) < CLI  # only what was shown was fetched


def test_dragging_the_scrollbar_to_the_end_fetches_the_last_group_as_it_shows(qtbot, big_panel):
    bar = big_panel.view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=WAIT_MS)
    assert len(_fetched(big_panel, "cli")) < CLI
    for _drag in range(CLI // FETCH_ROWS + 1):
        fetched, end = len(_fetched(big_panel, "cli")), bar.maximum()
        if fetched == CLI:
            break
        bar.setValue(end)  # the scrollbar dragged to its end: the list grows, and is dragged again
        qtbot.waitUntil(lambda fetched=fetched, end=end: len(_fetched(big_panel, "cli")) > fetched
                        and bar.maximum() > end, timeout=WAIT_MS)
    assert _fetched(big_panel, "cli") == _newest_first("cli", CLI)
    assert len(_fetched(big_panel, "desktop")) < DESKTOP  # the group above was scrolled past, not shown


def test_opening_a_session_not_fetched_yet_selects_it_and_scrolls_to_it(qtbot, big_panel):
    oldest = "desktop:00000"
    assert oldest not in _fetched(big_panel, "desktop")
    big_panel.set_current_key(oldest)
    current = big_panel.view.currentIndex()
    assert current.data(SessionRole.KeyRole) == oldest and big_panel.selected_key() == oldest
    viewport = QRect(0, 0, big_panel.view.viewport().width(), big_panel.view.viewport().height())
    qtbot.waitUntil(lambda: viewport.intersects(big_panel.view.visualRect(big_panel.view.currentIndex())),
                    timeout=WAIT_MS)
    assert _fetched(big_panel, "desktop")[-1] != oldest or len(_fetched(big_panel, "desktop")) == DESKTOP


def test_a_search_finds_an_old_session_the_view_had_not_fetched(qtbot, big_panel):
    with qtbot.waitSignal(big_panel.search_finished, timeout=WAIT_MS):
        qtbot.keyClicks(big_panel.search_box, "Topic cli:00003")
    assert [key for _channel, keys in _listing_keys(big_panel) for key in keys] == ["cli:00003"]


def _listing_keys(panel: SessionsPanel) -> list[tuple[str, list[str]]]:
    model = panel.model
    return [(model.index(row, 0).data(SessionRole.ChannelRole), _fetched(panel, model.index(row, 0).data(
        SessionRole.ChannelRole))) for row in range(model.rowCount())]


# --- the model alone ---------------------------------------------------------------------------------------


def _info(key: str, number: int, branch_of: str = "") -> SessionInfo:
    stamp = f"2026-03-{1 + number // 1440:02d}T{number // 60 % 24:02d}:{number % 60:02d}:00"
    return SessionInfo(key=key, path=Path(f"/ws/sessions/{key.replace(':', '_')}.jsonl"), title=key,
                       channel=key.split(":", 1)[0], created_at=stamp, updated_at=stamp, message_count=2, preview="",
                       branch_of=branch_of)


def test_a_new_listing_keeps_what_the_view_fetched_and_marks_wait_for_their_row(qtmodeltester):
    model = SessionListModel()
    many = [_info(f"desktop:{n:04d}", n) for n in reversed(range(3 * FETCH_ROWS))]
    model.set_sessions(many)
    group = model.index(0, 0)
    assert model.rowCount(group) == FETCH_ROWS and model.has_more(group)
    model.fetch_more(group)
    assert model.rowCount(group) == 2 * FETCH_ROWS
    resets, inserts, removes = [], [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.rowsInserted.connect(lambda _parent, first, last: inserts.append((first, last)))
    model.rowsRemoved.connect(lambda _parent, first, last: removes.append((first, last)))
    newest = _info("desktop:new", 10_000)
    model.set_sessions([newest] + many)  # a new chat: one row in, the last fetched one goes back to the rest
    assert not resets and inserts == [(0, 0)] and removes == [(2 * FETCH_ROWS - 1, 2 * FETCH_ROWS - 1)]
    assert model.rowCount(group) == 2 * FETCH_ROWS and model.index(0, 0, group).data(SessionRole.KeyRole) == "desktop:new"
    old = "desktop:0000"
    model.set_busy(old, True)  # a turn runs in a session not fetched: its row is not fetched for that
    assert model.rowCount(group) == 2 * FETCH_ROWS and not model.index_of_key(old, fetch=False).isValid()
    index = model.index_of_key(old)  # asked for: fetched, with the rows above it
    assert index.isValid() and index.data(SessionRole.BusyRole) and model.rowCount(group) == 3 * FETCH_ROWS + 1
    assert not model.has_more(group)
    qtmodeltester.check(model)


def test_a_branch_of_a_session_not_fetched_yet_is_fetched_with_its_origin(qtmodeltester):
    from nanobot_desktop.gui.sessions.rows import arrange_listing

    model = SessionListModel()
    many = [_info(f"desktop:{n:04d}", n + 10) for n in reversed(range(2 * FETCH_ROWS))]
    branch = _info("desktop:0000-b1", 5, branch_of="desktop:0000")
    model.set_sessions(arrange_listing(many + [branch], show_branches=True))
    assert model.branch_origin("desktop:0000-b1") == "desktop:0000"
    assert not model.index_of_key("desktop:0000-b1", fetch=False).isValid()
    index = model.index_of_key("desktop:0000-b1")
    assert index.isValid() and index.parent().data(SessionRole.KeyRole) == "desktop:0000"
    assert model.rowCount(index.parent()) == 1
    qtmodeltester.check(model)


def test_typing_a_query_folds_no_session_text_on_the_gui_thread(qtbot, big_panel, monkeypatch):
    import threading

    from nanobot_desktop.gui.sessions.filter import TextFolder

    folded_on_gui: list[str] = []
    fold = TextFolder.text

    def text(self: TextFolder, info: SessionInfo) -> str:
        if threading.current_thread() is threading.main_thread():
            folded_on_gui.append(info.key)
        return fold(self, info)

    monkeypatch.setattr(TextFolder, "text", text)
    with qtbot.waitSignal(big_panel.refreshed, timeout=WAIT_MS):
        big_panel.refresh_now()  # a listing made with the texts folded in its executor
    with qtbot.waitSignal(big_panel.search_finished, timeout=WAIT_MS):
        qtbot.keyClicks(big_panel.search_box, "topic desktop:0111")
    assert [key for _channel, keys in _listing_keys(big_panel) for key in keys] == \
        [f"desktop:0111{digit}" for digit in reversed(range(10))]
    assert folded_on_gui == []


def test_a_branch_of_an_old_session_opens_under_its_origin_once_fetched(qtbot, big_panel):
    folder = big_panel.engine.sessions.sessions_dir
    stamp = _stamp(0)
    header = {"_type": "metadata", "key": "desktop:00000-b1", "created_at": stamp, "updated_at": stamp,
              "metadata": {"branch_of": {"key": "desktop:00000", "at": 1}}, "last_consolidated": 0}
    (folder / "desktop_00000-b1.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    with qtbot.waitSignal(big_panel.refreshed, timeout=WAIT_MS):
        big_panel.show_branches_action.setChecked(True)
    assert "desktop:00000" not in _fetched(big_panel, "desktop")
    origin = big_panel.model.index_of_key("desktop:00000")  # fetched, as scrolling down to it would
    assert big_panel.view.isExpanded(origin)  # a session with branches among the fetched rows shows them
    big_panel.set_current_key("desktop:00000-b1")
    current = big_panel.view.currentIndex()
    assert current.data(SessionRole.KeyRole) == "desktop:00000-b1" and current.parent() == origin
