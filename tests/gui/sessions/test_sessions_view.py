"""The session list: grouped model (checked with qtmodeltester), in-place sync, search, rename,
delete + undo, export and reveal — on real session files of a real Engine."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QLineEdit

from nanobot_desktop.engine.events import ApprovalRequest, ApprovalRequested, TurnFinished, TurnStarted
from nanobot_desktop.engine.sessions.listing import SessionInfo
from nanobot_desktop.gui.sessions.model import group_title
from nanobot_desktop.gui.sessions.panel import SessionListModel, SessionRole, SessionsPanel
from tests.gui.sessions.panel_support import listed_panel

WAIT_MS = 10_000


def info(key: str, updated: str, title: str | None = None, preview: str = "") -> SessionInfo:
    channel = key.split(":", 1)[0]
    return SessionInfo(key=key, path=Path(f"/ws/sessions/{key.replace(':', '_')}.jsonl"), title=title or key,
                       channel=channel, created_at="2026-01-01T00:00:00", updated_at=updated, message_count=2,
                       preview=preview)


def listing(model: SessionListModel) -> list[tuple[str, list[str]]]:
    """(channel, [keys]) per group, read through the Qt interface only (each group fetched to its end, as
    a view scrolled through it would)."""
    groups = []
    for row in range(model.rowCount()):
        parent = model.index(row, 0)
        while model.has_more(parent):
            model.fetch_more(parent)
        keys = [model.index(child, 0, parent).data(SessionRole.KeyRole) for child in range(model.rowCount(parent))]
        groups.append((parent.data(SessionRole.ChannelRole), keys))
    return groups


SAMPLE = [
    info("telegram:42", "2026-03-09T10:00:00", "Phone chat"),
    info("desktop:2", "2026-03-08T12:00:00", "Second"),
    info("cli:direct", "2026-03-08T11:00:00", "From the terminal"),
    info("heartbeat", "2026-03-08T10:30:00"),
    info("desktop:1", "2026-03-08T10:00:00", "First"),
    info("cron:abc", "2026-03-07T10:00:00"),
    info("system:x", "2026-03-06T10:00:00"),
]


def test_the_model_groups_by_channel_newest_first_and_passes_the_model_tester(qtmodeltester):
    model = SessionListModel()
    model.set_sessions(SAMPLE)
    qtmodeltester.check(model)
    assert listing(model) == [("desktop", ["desktop:2", "desktop:1"]), ("cli", ["cli:direct"]),
                              ("heartbeat", ["heartbeat"]), ("cron", ["cron:abc"]), ("system", ["system:x"]),
                              ("telegram", ["telegram:42"])]
    group = model.index(0, 0)
    assert group.data(SessionRole.IsGroupRole) and group.data() == "Desktop"
    assert not group.flags() & Qt.ItemFlag.ItemIsSelectable
    assert group_title("telegram") == "Telegram" and group_title("cron") == "Scheduled"
    child = model.index(0, 0, group)
    assert child.data() == "Second" and child.data(SessionRole.ChannelRole) == "desktop"
    assert child.flags() & Qt.ItemFlag.ItemIsSelectable
    assert model.roleNames()[int(SessionRole.KeyRole)] == b"key"


def test_a_new_listing_changes_only_what_differs(qtmodeltester, qtbot):
    model = SessionListModel()
    model.set_sessions(SAMPLE)
    qtmodeltester.check(model)
    resets, moves, inserts, removes, changes = [], [], [], [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.rowsMoved.connect(lambda *args: moves.append(args[1:3]))
    model.rowsInserted.connect(lambda parent, first, last: inserts.append((parent.isValid(), first, last)))
    model.rowsRemoved.connect(lambda parent, first, last: removes.append((parent.isValid(), first, last)))
    model.dataChanged.connect(lambda top, _bottom, _roles: changes.append(top.data(SessionRole.KeyRole)))
    keep = QPersistentModelIndex(model.index_of_key("desktop:1"))

    # desktop:1 got a new message: it moves to the top of its group, nothing else happens
    newer = [info("desktop:1", "2026-03-10T09:00:00", "First", preview="new text")] + \
        [i for i in SAMPLE if i.key != "desktop:1"]
    model.set_sessions(newer)
    assert listing(model)[0] == ("desktop", ["desktop:1", "desktop:2"])
    assert len(moves) == 1 and not inserts and not removes and not resets
    assert changes == ["desktop:1"]
    assert keep.isValid() and keep.data(SessionRole.KeyRole) == "desktop:1"  # the selection follows
    assert keep.data(SessionRole.PreviewRole) == "new text"

    # two new sessions arrive together, one session and one whole group go away
    moves.clear()
    changes.clear()
    final = [info("desktop:4", "2026-03-11T09:00:00"), info("desktop:3", "2026-03-11T08:00:00")] + \
        [i for i in newer if i.key not in ("cron:abc", "desktop:2")]
    model.set_sessions(final)
    qtmodeltester.check(model)
    assert listing(model)[0] == ("desktop", ["desktop:4", "desktop:3", "desktop:1"])
    assert "cron" not in [channel for channel, _ in listing(model)]
    assert (True, 0, 1) in inserts and not resets and not moves and not changes
    assert (False, 3, 3) in removes  # the cron group
    model.set_sessions(final)  # the same listing again: no signal at all
    assert not resets and not moves and not changes


def test_inline_rename_through_set_data_and_marks(qtmodeltester):
    renamed = []

    def renamer(key: str, title: str):
        if title == "bad":
            raise ValueError("no such session")
        renamed.append((key, title))
        return None

    model = SessionListModel(renamer=renamer)
    model.set_sessions(SAMPLE)
    failures = []
    model.rename_failed.connect(lambda key, message: failures.append((key, message)))
    model.set_query("from the terminal")  # searched once: the titles' folded text is kept
    assert listing(model) == [("cli", ["cli:direct"])]
    model.set_query("")
    index = model.index_of_key("cli:direct")
    assert index.data(Qt.ItemDataRole.EditRole) == "From the terminal"
    assert model.setData(index, "  Terminal work  ")
    assert renamed == [("cli:direct", "Terminal work")] and index.data() == "Terminal work"
    model.set_query("terminal work")  # the new title is searched before the next listing comes
    assert listing(model) == [("cli", ["cli:direct"])]
    model.set_query("")
    index = model.index_of_key("cli:direct")
    assert not model.setData(index, "bad") and failures and "no such session" in failures[0][1]
    assert not model.setData(model.index(0, 0), "a group")  # group rows are not renamed
    model.set_busy("cli:direct", True)
    model.set_unread("desktop:2", True)
    assert index.data(SessionRole.BusyRole) and model.index_of_key("desktop:2").data(SessionRole.UnreadRole)
    qtmodeltester.check(model)


def test_the_model_filters_titles_and_message_hits_and_keeps_the_filter_across_listings(qtmodeltester):
    model = SessionListModel()
    model.set_sessions(SAMPLE)
    model.set_query("term")
    assert listing(model) == [("cli", ["cli:direct"])]
    qtmodeltester.check(model)
    model.set_message_hits("term", [("telegram:42", "…the term sheet…")])
    assert listing(model) == [("cli", ["cli:direct"]), ("telegram", ["telegram:42"])]
    assert model.index_of_key("telegram:42").data(SessionRole.PreviewRole) == "…the term sheet…"
    model.set_message_hits("other query", [("desktop:1", "x")])  # a stale answer is ignored
    assert not model.index_of_key("desktop:1").isValid()
    assert model.info("desktop:1").title == "First"  # filtered out, still listed
    # a listing that comes while the person searches is filtered the same way
    model.set_sessions([info("desktop:3", "2026-03-10T10:00:00", "Long term plans"), *SAMPLE])
    assert listing(model) == [("desktop", ["desktop:3"]), ("cli", ["cli:direct"]), ("telegram", ["telegram:42"])]
    model.set_query("te")  # too short to judge on the GUI thread: what is shown stays until the search answers
    assert listing(model) == [("desktop", ["desktop:3"]), ("cli", ["cli:direct"]), ("telegram", ["telegram:42"])]
    model.set_query("")  # erased: everything shows again
    assert sum(len(keys) for _channel, keys in listing(model)) == len(SAMPLE) + 1
    assert model.index_of_key("telegram:42").data(SessionRole.PreviewRole) == ""
    qtmodeltester.check(model)


def _shown_keys(panel: SessionsPanel) -> list[str]:
    """The sessions the list view shows (laid out in it), top to bottom, read through the view."""
    view = panel.view
    model = view.model()
    keys = []
    for row in range(model.rowCount()):
        parent = model.index(row, 0)
        for child in range(model.rowCount(parent)):
            index = model.index(child, 0, parent)
            if view.visualRect(index).isValid():
                keys.append(index.data(SessionRole.KeyRole))
    return keys


def _first_shown(panel: SessionsPanel) -> QModelIndex:
    """The first session row of the list view."""
    return panel.view.indexBelow(panel.view.model().index(0, 0))


# --- the panel on a real engine ------------------------------------------------------------------------


@pytest.fixture
def panel(qtbot, qloop, make_engine):
    engine = make_engine()
    store = engine.sessions
    for key, messages in [
        ("desktop:20260301-100000-000", ["Plan the garden", "Tomatoes go in May."]),
        ("cli:direct", ["What is a banana split?", "Ice cream with a banana."]),
        ("heartbeat", ["Check the heartbeat tasks", "Nothing to do."]),
        ("telegram:99", ["Hi from the phone", "Hello!"]),
    ]:
        session = store.get_or_create(key)
        store.append(session, [{"role": "user", "content": messages[0]},
                               {"role": "assistant", "content": messages[1]}])
    yield from listed_panel(qtbot, engine, 320, 500)


def test_listing_runs_off_the_gui_thread_and_groups_sessions(qtbot, panel):
    threads = []
    original = panel.engine.session_index.list_sessions

    def spy(*args):
        threads.append(threading.current_thread())
        return original(*args)

    panel.engine.session_index.list_sessions = spy
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.refresh_now()
    assert threads and threads[0] is not threading.main_thread()
    assert [channel for channel, _ in listing(panel.model)] == ["desktop", "cli", "heartbeat", "telegram"]
    assert panel.model.info("cli:direct").title == "What is a banana split?"


def test_search_finds_message_text_not_only_titles(qtbot, panel):
    panel.search_box.setFocus()
    with qtbot.waitSignal(panel.search_finished, timeout=WAIT_MS) as blocker:
        qtbot.keyClicks(panel.search_box, "tomatoes")
    assert blocker.args == ["tomatoes"]
    assert _shown_keys(panel) == ["desktop:20260301-100000-000"]
    first = _first_shown(panel)
    assert "Tomatoes" in first.data(SessionRole.PreviewRole)
    # the title filter answers at once, before the message search comes back
    panel.search_box.clear()
    qtbot.keyClicks(panel.search_box, "phone")
    assert _shown_keys(panel) == ["telegram:99"]
    panel.search_box.clear()
    assert len(_shown_keys(panel)) == 4


def test_a_two_letter_query_is_answered_by_the_engine_search_not_the_title_filter(qtbot, panel):
    while_typing = []  # what the list shows right after each keystroke (connected after the panel)
    panel.search_box.textChanged.connect(lambda _text: while_typing.append(_shown_keys(panel)))
    panel.search_box.setFocus()
    with qtbot.waitSignal(panel.search_finished, timeout=WAIT_MS) as blocker:
        qtbot.keyClicks(panel.search_box, "ay")
    assert blocker.args == ["ay"]
    assert [len(keys) for keys in while_typing] == [4, 4]  # no scan of every title on the GUI thread
    assert _shown_keys(panel) == ["desktop:20260301-100000-000"]  # "Tomatoes go in May."
    first = _first_shown(panel)
    assert "May" in first.data(SessionRole.PreviewRole)
    panel.search_box.clear()
    assert len(_shown_keys(panel)) == 4


def test_f2_renames_inline_and_the_title_reaches_the_file(qtbot, panel):
    activated = []
    panel.session_activated.connect(activated.append)
    index = panel.model.index_of_key("cli:direct")
    panel.view.setCurrentIndex(index)
    assert activated == ["cli:direct"]
    panel.view.setFocus()
    qtbot.keyClick(panel.view, Qt.Key.Key_F2)
    editor = QApplication.focusWidget()
    assert isinstance(editor, QLineEdit)
    editor.selectAll()
    qtbot.keyClicks(editor, "Dessert ideas")
    with qtbot.waitSignal(panel.session_renamed, timeout=WAIT_MS):
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    header = json.loads(panel.engine.sessions.path_for("cli:direct").read_text(encoding="utf-8").splitlines()[0])
    assert header["metadata"]["title"] == "Dessert ideas"
    assert panel.model.info("cli:direct").title == "Dessert ideas"
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.refresh_now()
    assert panel.model.info("cli:direct").title == "Dessert ideas"


def test_delete_moves_the_file_to_the_trash_and_undo_brings_it_back(qtbot, panel):
    path = panel.engine.sessions.path_for("telegram:99")
    original = path.read_bytes()
    panel.set_current_key("telegram:99")
    deleted = []
    panel.session_deleted.connect(deleted.append)
    panel.view.setFocus()
    qtbot.keyClick(panel.view, Qt.Key.Key_Delete)
    assert deleted == ["telegram:99"] and not path.exists()
    trashed = list((path.parent / ".trash").glob("telegram_99~*.jsonl"))
    assert len(trashed) == 1 and trashed[0].read_bytes() == original
    assert "telegram:99" not in panel.model.keys()
    assert "deleted" in panel.undo_bar.text() and panel.actions.undo_delete.isEnabled()
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        qtbot.keyClick(panel.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert path.read_bytes() == original and not list((path.parent / ".trash").glob("telegram_99~*"))
    assert "telegram:99" in panel.model.keys() and panel.undo_bar.isHidden()
    # the bar's Undo button does the same
    panel.delete_session("heartbeat")
    assert not panel.engine.sessions.path_for("heartbeat").exists()
    restored = []
    panel.session_restored.connect(restored.append)
    qtbot.mouseClick(panel.undo_bar.button("Undo"), Qt.MouseButton.LeftButton)
    assert restored == ["heartbeat"] and panel.engine.sessions.path_for("heartbeat").exists()


def test_export_writes_markdown_and_json_through_a_non_modal_dialog(qtbot, panel, tmp_path):
    for fmt, name in (("markdown", "garden.md"), ("json", "garden.json")):
        dialog = panel.export_session("desktop:20260301-100000-000", fmt)
        assert dialog.isVisible() and dialog.windowModality() != Qt.WindowModality.ApplicationModal
        target = tmp_path / "exports" / name
        target.parent.mkdir(exist_ok=True)
        dialog.selectFile(str(target))
        with qtbot.waitSignal(panel.export_finished, timeout=WAIT_MS) as blocker:
            dialog.accept()
        assert blocker.args == [str(target)]
        store = panel.engine.sessions
        expected = store.export_markdown("desktop:20260301-100000-000") if fmt == "markdown" \
            else store.export_json("desktop:20260301-100000-000")
        assert target.read_text(encoding="utf-8") == expected
    assert "Tomatoes go in May." in (tmp_path / "exports" / "garden.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "exports" / "garden.json").read_text(encoding="utf-8"))


class _UrlCatcher(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_reveal_opens_the_sessions_folder(qtbot, panel):
    catcher = _UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    try:
        panel.set_current_key("heartbeat")
        panel.actions.reveal_file.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(url.toLocalFile()) for url in catcher.urls] == [panel.engine.sessions.sessions_dir]


def test_other_sessions_events_mark_busy_and_unread(qtbot, panel):
    """The panel hears the engine through the fixture's bridge."""
    panel.set_current_key("cli:direct")
    bus = panel.engine.bus
    bus.publish(TurnStarted("heartbeat", turn_id="t1", user_text="tick"))
    assert panel.model.is_busy("heartbeat")
    assert panel.model.index_of_key("heartbeat").data(SessionRole.BusyRole)
    bus.publish(TurnFinished("heartbeat", turn_id="t1", reply="done"))
    assert not panel.model.is_busy("heartbeat") and panel.model.is_unread("heartbeat")
    bus.publish(TurnFinished("cli:direct", turn_id="t2", reply="seen"))
    assert not panel.model.is_unread("cli:direct")  # it is on screen
    bus.publish(ApprovalRequested("telegram:99", request=ApprovalRequest(
        tool="exec", arguments={}, diff=None, command=None, working_dir=None, session_key="telegram:99",
        call_id="c", turn_id="t3")))
    assert panel.model.is_unread("telegram:99")
    panel.set_current_key("heartbeat")
    assert not panel.model.is_unread("heartbeat")


def test_session_actions_are_disabled_without_a_session(qtbot, panel):
    panel.set_current_key("desktop:not-saved-yet")
    panel.view.setCurrentIndex(QModelIndex())
    panel._update_actions()
    assert not panel.actions.delete_session.isEnabled() and not panel.actions.export_markdown.isEnabled()
    panel.set_current_key("heartbeat")
    assert panel.actions.delete_session.isEnabled()


@pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing)")  # the popup menu, offscreen
def test_the_context_menu_offers_the_session_actions(qtbot, panel):
    index = panel.model.index_of_key("heartbeat")
    position = panel.view.visualRect(index).center()
    panel.view.customContextMenuRequested.emit(position)
    menu = panel.context_menu
    texts = [action.text() for action in menu.actions() if not action.isSeparator()]
    assert texts == ["&Rename session…", "&Delete session", "Export as &Markdown…", "Export as &JSON…",
                     "Re&veal session file", "Show branches"]
    assert panel.selected_key() == "heartbeat"
    menu.close()


def test_a_big_reshuffle_resets_instead_of_moving_row_by_row(qtmodeltester):
    model = SessionListModel()
    many = [info(f"desktop:{n}", f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}") for n in range(300)]
    model.set_sessions(many)
    resets, moves = [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.rowsMoved.connect(lambda *args: moves.append(1))
    model.set_sessions(list(reversed(many)))
    assert resets == [1] and moves == []
    assert listing(model) == [("desktop", [i.key for i in reversed(many)])]
    qtmodeltester.check(model)
