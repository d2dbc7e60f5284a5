"""One conversation with its versions, and nothing meant for the model in front of the person — driven
in the real window on real session files.

- Regenerate and Edit make versions inside the conversation (‹ 2/2 ›), not entries in the session list;
  "Show branches" lists them.
- The runtime block (time, channel, chat id) appears in no text the window shows (chat, list, window
  title, inspector turn labels), no search result and no export, for a session nanobot 0.3 wrote (which
  keeps the block in its file) — nor in the branch a Regenerate makes of it.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QComboBox, QLabel, QLineEdit, QTextEdit, QWidget

from nanobot_desktop.gui.chat.model import AssistantMessage, UserMessage
from nanobot_desktop.gui.inspector.context_view import ContextView
from nanobot_desktop.gui.inspector.details import LLMCallDetail
from nanobot_desktop.gui.sessions.model import SessionRole
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle

__all__ = ["open_window"]

TAG = "[Runtime Context — metadata only, not instructions]"
BLOCK_03 = f"{TAG}\nCurrent Time: 2026-11-28 10:00 (Saturday) (UTC)\nChannel: cli\nChat ID: direct\n[/Runtime Context]"
BLOCK_APP = f"{TAG}\nCurrent Time: 2026-11-28 10:01 (Saturday) (UTC)\nChannel: desktop\nChat ID: x"


def session_rows(window) -> list[str]:
    """Keys of the session rows the list shows (every level), top to bottom."""
    model = window.sessions_panel.view.model()
    keys: list[str] = []

    def walk(parent: QModelIndex) -> None:
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            key = index.data(SessionRole.KeyRole)
            if key:
                keys.append(key)
            walk(index)

    walk(QModelIndex())
    return keys


def row_widget(window, kind: type, nth: int):
    rows = [row for row, item in enumerate(window.chat.model.items()) if isinstance(item, kind)]
    return window.chat_view.widget_for_row(rows[nth])


def item_texts(model, parent: QModelIndex = QModelIndex()) -> list[str]:
    """Display texts, tooltips and session previews of every item of `model`, at every level."""
    flat = isinstance(model, QAbstractListModel)  # its columnCount is private in PySide6
    texts: list[str] = []
    for row in range(model.rowCount(parent)):
        for column in range(1 if flat else model.columnCount(parent)):
            index = model.index(row, column, parent)
            for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, SessionRole.PreviewRole):
                value = index.data(role)
                texts.append(value if isinstance(value, str) else "")
        if not flat:
            texts += item_texts(model, model.index(row, 0, parent))
    return texts


def shown_texts(root: QWidget) -> list[str]:
    """Every text the widgets under `root` show or tell (labels, buttons, editors, tooltips, accessible
    names, item views' and combo boxes' items), but the inspector's views of the exact request."""
    technical = [w for w in root.findChildren(QWidget) if isinstance(w, (ContextView, LLMCallDetail))]
    texts: list[str] = []
    for widget in [root, *root.findChildren(QWidget)]:
        if any(widget is t or t.isAncestorOf(widget) for t in technical):
            continue
        texts += [widget.toolTip(), widget.accessibleName(), widget.accessibleDescription(), widget.windowTitle()]
        if isinstance(widget, (QLabel, QAbstractButton, QLineEdit)):
            texts.append(widget.text())
        elif isinstance(widget, QTextEdit):
            texts.append(widget.toPlainText())
        elif isinstance(widget, QComboBox):
            texts += [widget.itemText(i) for i in range(widget.count())]
        elif isinstance(widget, QAbstractItemView) and widget.model() is not None:
            texts += item_texts(widget.model())
    return texts


def test_a_regenerate_and_an_edit_leave_one_entry_in_the_list_with_2_of_2_in_the_chat(qtbot, open_window,
                                                                                      fake_openai):
    window = open_window()
    fake_openai.add_text("Paris.")
    send(qtbot, window, "capital of France?")
    wait_idle(qtbot, window)
    fake_openai.add_text("Berlin.")
    send(qtbot, window, "capital of Germany?")
    wait_idle(qtbot, window)
    origin = window.current_key
    qtbot.waitUntil(lambda: session_rows(window) == [origin], timeout=WAIT_MS)
    # Regenerate the first reply
    fake_openai.add_text("Paris, on the Seine.")
    qtbot.mouseClick(row_widget(window, AssistantMessage, 0).message_actions.regenerate_button,
                     Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current_key != origin, timeout=WAIT_MS)
    regenerated = window.current_key
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: row_widget(window, AssistantMessage, 0).message_actions.switcher.isVisible(),
                    timeout=WAIT_MS)
    assert row_widget(window, AssistantMessage, 0).message_actions.switcher.position_label.text() == "2/2"
    # Edit the message in the regenerated version
    fake_openai.add_text("Berlin, still.")
    send(qtbot, window, "capital of Germany?")
    wait_idle(qtbot, window)
    bubble = row_widget(window, UserMessage, 1)
    qtbot.mouseClick(bubble.message_actions.edit_button, Qt.MouseButton.LeftButton)
    bubble.message_actions.edit_box.selectAll()
    qtbot.keyClicks(bubble.message_actions.edit_box, "capital of Italy?")
    fake_openai.add_text("Rome.")
    qtbot.mouseClick(bubble.message_actions.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current_key not in (origin, regenerated), timeout=WAIT_MS)
    edited = window.current_key
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: row_widget(window, UserMessage, 1).message_actions.switcher.isVisible(), timeout=WAIT_MS)
    assert row_widget(window, UserMessage, 1).message_actions.switcher.position_label.text() == "2/2"
    qtbot.waitUntil(lambda: row_widget(window, AssistantMessage, 0).message_actions.switcher.position_label.text()
                    == "2/2", timeout=WAIT_MS)  # the regenerated reply's fork, inherited by the edited version
    # three files, one conversation: one entry, selected, titled as the conversation
    assert all(window.engine.sessions.path_for(key).exists() for key in (origin, regenerated, edited))
    window.sessions_panel.refresh_now()
    qtbot.waitUntil(lambda: session_rows(window) == [origin], timeout=WAIT_MS)
    panel = window.sessions_panel
    assert panel.view.currentIndex() == panel.model.index_of_key(edited)
    # the title comes from the listing's info on the new version: the refresh asked for above may still be
    # queued behind one that started before the version's file existed
    qtbot.waitUntil(lambda: window.windowTitle().endswith("capital of France?"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: panel.model.info(origin).preview == "Rome.", timeout=WAIT_MS)  # the latest version's words
    # "Show branches" lists the versions under the conversation
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.show_branches_action.setChecked(True)
    assert session_rows(window) == [origin, regenerated, edited]
    with qtbot.waitSignal(panel.refreshed, timeout=WAIT_MS):
        panel.show_branches_action.setChecked(False)
    assert session_rows(window) == [origin]


def _write_03_session(window, key: str) -> Path:
    """A conversation as nanobot 0.3.5 saves it: the runtime block at the end of the user message,
    with the `_runtime_context` marker; then one as an older program left it, block first."""
    path = window.engine.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"_type": "metadata", "key": key, "created_at": "2026-11-28T10:00:00",
              "updated_at": "2026-11-28T10:01:05", "metadata": {}, "last_consolidated": 0}
    messages = [
        {"role": "user", "content": f"hello there\n\n{BLOCK_03}", "timestamp": "2026-11-28T10:00:00",
         "_runtime_context": {"version": 1, "sources": ["runtime"], "suffix": BLOCK_03}},
        {"role": "assistant", "content": "Hi! How can I help?", "timestamp": "2026-11-28T10:00:05"},
        {"role": "user", "content": f"{BLOCK_APP}\n\nwhat day is it?", "timestamp": "2026-11-28T10:01:00"},
        {"role": "assistant", "content": "Saturday.", "timestamp": "2026-11-28T10:01:05"},
    ]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in [header, *messages]),
                    encoding="utf-8")
    return path


def test_no_runtime_context_in_any_view_preview_search_export_or_branch(qtbot, open_window, fake_openai, tmp_path):
    window = open_window()
    assert window.panel("inspector") is not None  # built now, so it sees the turn below
    key = "desktop:20261128-100000-000"
    path = _write_03_session(window, key)
    before = path.read_bytes()
    panel = window.sessions_panel
    panel.refresh_now()
    qtbot.waitUntil(lambda: key in session_rows(window), timeout=WAIT_MS)
    window.open_session(key)
    qtbot.waitUntil(lambda: [i.text for i in window.chat.model.items() if isinstance(i, UserMessage)] ==
                    ["hello there", "what day is it?"], timeout=WAIT_MS)
    # Regenerate the last reply: a branch copy, and the person's message sent again
    fake_openai.add_text("It is Saturday.")
    qtbot.mouseClick(row_widget(window, AssistantMessage, 1).message_actions.regenerate_button,
                     Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current_key != key, timeout=WAIT_MS)
    branch = window.current_key
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: any(isinstance(i, AssistantMessage) and i.text == "It is Saturday."
                                for i in window.chat.model.items()), timeout=WAIT_MS)
    assert [(i.kind, i.text) for i in window.chat.model.items() if isinstance(i, (UserMessage, AssistantMessage))] == [
        ("user", "hello there"), ("assistant", "Hi! How can I help?"), ("user", "what day is it?"),
        ("assistant", "It is Saturday.")]
    sent = fake_openai.requests[-1]["messages"]
    assert sent[-1]["content"].count(TAG) == 1 and sent[-1]["content"].endswith("\n\nwhat day is it?")
    assert [m["content"] for m in sent[1:-1]] == ["hello there", "Hi! How can I help?"]
    copied = session_lines(window, branch)
    assert TAG not in json.dumps(copied) and "_runtime_context" not in json.dumps(copied)
    assert path.read_bytes() == before  # the origin, as 0.3.5 wrote it, untouched
    window.panel("inspector").show()
    panel.refresh_now()
    qtbot.waitUntil(lambda: session_rows(window) == [key], timeout=WAIT_MS)
    # the reply's document renders in steps after the text arrived (chat/view.py's flush timer)
    qtbot.waitUntil(lambda: "It is Saturday." in "\n".join(shown_texts(window)), timeout=WAIT_MS)
    texts = "\n".join(shown_texts(window))
    assert "what day is it?" in texts and "It is Saturday." in texts  # the walk reaches the chat
    assert "Turn 1" in texts  # and the inspector's turn list
    for technical in ("Runtime Context", "Current Time", "Chat ID"):
        assert technical not in texts
    # search: the block's words find nothing, the person's words find the conversation
    for query, found in (("Current Time", []), ("Chat ID", []), ("day is it", [key]), ("Saturday.", [key])):
        with qtbot.waitSignal(panel.search_finished, timeout=WAIT_MS):
            panel.search_box.setText(query)
        assert session_rows(window) == found, query
        assert not any("Runtime" in text or "Current Time" in text for text in panel.model.message_hits().values())
    panel.search_box.clear()
    # exports of the origin and of the branch, through the export dialog
    for source in (key, branch):
        for fmt, suffix in (("markdown", ".md"), ("json", ".json")):
            target = tmp_path / "exports" / f"{source.replace(':', '_')}{suffix}"
            target.parent.mkdir(exist_ok=True)
            dialog = panel.export_session(source, fmt)
            dialog.selectFile(str(target))
            with qtbot.waitSignal(panel.export_finished, timeout=WAIT_MS):
                dialog.accept()
            text = target.read_text(encoding="utf-8")
            assert "what day is it?" in text and "Runtime Context" not in text and "Current Time" not in text
