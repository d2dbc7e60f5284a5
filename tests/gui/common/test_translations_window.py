"""The whole window in zh_CN, as a person sees it after a chat with a tool card and an approval card
waiting for an answer: every dock and page (built, not only the shown ones), the session list with
sessions of several channels, a branch, an empty one and an archived one in it, the search box, the
list's context menus and its undo bar, the model switcher's menu, every menu and submenu, the tray
menu and the About box. Every text they show (labels, buttons, tooltips, placeholders, tabs, headers
and the cells of every table, tree and list) must be Chinese or a name (tests/gui/i18n_walk.py).
The same walk in English shows no Chinese but the sessions' own words, and many source strings.
"""

from __future__ import annotations

import errno
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication

from nanobot_desktop.gui.common.i18n import format_number, install_translators, remove_translators, translations_dir
from nanobot_desktop.gui.sessions.model import InfoRole
from tests.gui.i18n_walk import CJK, menu_texts, still_english, visible_texts
from tests.gui.window_fixtures import open_window, send, wait_idle

__all__ = ["open_window"]  # the fixture
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing)")  # the popup menus, offscreen

TS = translations_dir() / "nanobot_desktop_zh_CN.ts"
# Sessions on disk besides the chat the test has: (key, updated, messages, branch_of). Their words are
# the person's (content), in Chinese so that the zh_CN walk reads every row of the list too.
SESSIONS = [("desktop:garden", "2026-11-20T09:00:00", ["规划花园", "五月种番茄。"], None),
            ("desktop:garden-b1", "2026-11-20T09:30:00", ["规划花园", "那就种辣椒。"], ("desktop:garden", 1)),
            ("cli:direct", "2026-11-19T08:00:00", ["什么是香蕉船？", "冰淇淋配香蕉。"], None),
            ("telegram:42", "2026-11-18T08:00:00", ["明天的天气", "晴。"], None),
            ("subagent:7", "2026-11-17T08:00:00", ["查一下火车时刻", "08:12 发车。"], None),
            ("desktop:empty", "2026-11-16T08:00:00", [], None)]  # no title, no message: the engine's "New chat"
ARCHIVED = ("desktop:old", "2026-11-01T08:00:00", ["旧的对话", "好的。"], None)


def _write(folder: Path, key: str, updated: str, texts: list[str], branch_of: tuple[str, int] | None,
           name: str = "") -> None:
    metadata = {"branch_of": {"key": branch_of[0], "at": branch_of[1]}} if branch_of else {}
    header = {"_type": "metadata", "key": key, "created_at": updated, "updated_at": updated, "metadata": metadata,
              "last_consolidated": 0}
    lines = [json.dumps(header, ensure_ascii=False)] + [
        json.dumps({"role": "user" if n % 2 == 0 else "assistant", "content": text, "timestamp": updated},
                   ensure_ascii=False) for n, text in enumerate(texts)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (name or key.replace(":", "_", 1) + ".jsonl")).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _rows(model, parent: QModelIndex = QModelIndex()) -> list[QModelIndex]:
    found: list[QModelIndex] = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        found += [index, *_rows(model, index)]
    return found


def walk_the_window(qtbot, open_window, make_engine, fake_openai, ask: str, answer: str) -> tuple[list, list[str]]:
    """(where, text) for everything the window shows after a chat with a tool call, and the content
    (the person's words, the skills' and the model's names) the check leaves out."""
    fake_openai.add_tool_calls([("read_file", {"path": "notes.txt"})])
    fake_openai.add_text(answer)
    engine = make_engine()
    for key, updated, texts, branch_of in SESSIONS:
        _write(engine.sessions.sessions_dir, key, updated, texts, branch_of)
    _write(engine.sessions.archive_dir, *ARCHIVED, name="desktop_old.2026-11-01.jsonl")
    window = open_window(engine, use_tray=True)
    send(qtbot, window, ask)
    qtbot.waitUntil(lambda: [item.kind for item in window.chat.model.items()][-1:] == ["assistant"], timeout=10_000)
    wait_idle(qtbot, window)
    fake_openai.add_tool_calls([("exec", {"command": "echo hi"})])  # and an approval card, waiting
    fake_openai.add_text(answer)
    send(qtbot, window, "echo hi")
    qtbot.waitUntil(lambda: bool(window.chat.pending_approvals(window.current_key)), timeout=10_000)
    chat_key = window.current_key
    assert window.panel_errors == []  # every dock and page built
    panel = window.sessions_panel
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.refresh_now()
    rows = _rows(panel.view.model())  # what the list view shows
    channels = {index.data(InfoRole).channel for index in rows if index.data(InfoRole) is not None}
    assert {"desktop", "cli", "telegram", "subagent", "archived"} <= channels

    texts = visible_texts(window)
    for index in rows:  # the list's context menus: a session's, an archived conversation's
        info = index.data(InfoRole)
        if info is not None and (info.archived or info.key == "desktop:garden"):
            panel.view.customContextMenuRequested.emit(panel.view.visualRect(index).center())
            texts += menu_texts(panel.context_menu, f"context menu of {info.key}")
            panel.context_menu.close()
    switcher = window.composer.model_switcher
    switcher.open_menu()
    qtbot.waitUntil(lambda: engine.session_models.catalog.cached() is not None, timeout=10_000)
    texts += menu_texts(switcher.open_menu(), "model menu")
    switcher.menu.close()
    for name, menu in window.menus.items():
        texts += menu_texts(menu, f"menu {name}")
    window.tray.update_menu_texts()
    texts += menu_texts(window.tray.menu, "tray menu")
    window.actions.about.trigger()
    qtbot.waitUntil(lambda: window.commands.about_box is not None and window.commands.about_box.isVisible())
    texts += visible_texts(window.commands.about_box)
    window.commands.about_box.close()
    window.show_and_open_session(chat_key)  # the context menus picked other rows: back to the chat
    qtbot.waitUntil(lambda: window.current_key == chat_key and not window.chat.is_loading(chat_key))
    approval = window.chat.model.row_of_call(window.chat.pending_approvals(chat_key)[0], "approval")
    qtbot.mouseClick(window.chat_view.widget_for_row(approval).deny_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    panel.delete_session("cli:direct")  # the list's undo bar
    qtbot.waitUntil(panel.undo_bar.isVisible)
    texts += visible_texts(panel.undo_bar)

    content = [*(text for _key, _updated, messages, _branch in (*SESSIONS, ARCHIVED) for text in messages),
               ask, answer, "echo hi", "fake-model", str(engine.workspace.root), str(engine.config_path)]
    content += [text for skill in engine.skills.list_skills() for text in (skill.description, skill.name)]
    return texts, sorted(set(content), key=len, reverse=True)


@pytest.fixture
def chinese(qapp: QApplication):
    assert install_translators(qapp, "zh_CN") == "zh_CN"
    yield
    remove_translators(qapp)


def test_the_whole_window_is_chinese_in_zh_cn(qtbot, chinese: None, open_window, make_engine, fake_openai) -> None:
    texts, content = walk_the_window(qtbot, open_window, make_engine, fake_openai, "notes.txt", "读完了。")
    assert len(texts) > 300 and sum(bool(CJK.search(text)) for _where, text in texts) > 200
    assert [(where, text) for where, text in texts if still_english(text, content)] == []
    shown = {text for _where, text in texts}
    assert {"桌面", "命令行", "子代理", "已归档", "Telegram", "搜索会话（Ctrl+K）", "在新对话中继续", "新对话", "拒绝", "撤销"} <= shown


def test_the_whole_window_in_english_shows_the_source_strings(qtbot, open_window, make_engine, fake_openai) -> None:
    texts, content = walk_the_window(qtbot, open_window, make_engine, fake_openai, "Read notes.txt", "Done.")
    sources = {m.findtext("source") for m in ET.parse(TS).iter("message")}
    chinese = []
    for where, text in texts:
        for piece in content:
            text = text.replace(piece, " ")
        if CJK.search(text) and text != "简体中文":
            chinese.append((where, text))
    assert chinese == []
    assert sum(text in sources for _where, text in texts) > 100


def test_the_engines_words_the_gui_shows_are_mapped_to_chinese(chinese: None, tmp_path: Path) -> None:
    """Sandbox lines, layout reasons and provider names come from the engine in English; the GUI's tables
    word each one (a value the tables do not know is shown as it is)."""
    from nanobot_desktop.engine import detect_layout, sandbox_support
    from nanobot_desktop.engine.tools.shell import ExecTool
    from nanobot_desktop.gui.common.engine_words import layout_reason, provider_label, sandbox_line

    tool = ExecTool()
    lines = [sandbox_support().summary, tool.sandbox_status(True), tool.sandbox_status(False),
             "not sandboxed: no sandbox is wired up on darwin", "sandboxed (Landlock ABI 3, subreaper); network off",
             "not sandboxed: this kernel has no Landlock (Linux 5.13 or newer needed)",
             "not sandboxed: the packaged app cannot start the sandbox launcher"]
    for line in lines:
        assert CJK.search(sandbox_line(line)) and not still_english(sandbox_line(line)), line
    assert sandbox_line("sandboxed by something new") == "Sandboxed by something new"
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    reasons = [detect_layout(workspace, tmp_path / "config.json").reason]
    (workspace / "memory" / "HISTORY.md").write_text("", encoding="utf-8")
    reasons.append(detect_layout(workspace, tmp_path / "config.json").reason)
    for reason in reasons:
        assert CJK.search(layout_reason(reason)) and not still_english(layout_reason(reason)), reason
    assert provider_label("Custom (OpenAI-compatible)") == "自定义（OpenAI 兼容）"
    assert provider_label("OpenRouter") == "OpenRouter"


def test_dates_and_counts_of_the_lists_follow_the_ui_locale(qapp: QApplication) -> None:
    """The session list's time column (weekday names from QLocale) and the history search's counts."""
    from datetime import datetime

    from nanobot_desktop.gui.sessions.rows import format_when
    from nanobot_desktop.gui.workspace.history_search import HistorySearchPane

    now = datetime(2026, 11, 25, 9, 0)  # a Wednesday
    assert (format_when("2026-11-25T08:30:00", now), format_when("2026-11-23T14:05:00", now)) == ("08:30", "Mon 14:05")
    matched, total = format_number(1234), format_number(56789)  # the system's digit grouping in English
    assert HistorySearchPane._count_text(200, 1234, 56789) == f"{matched} of {total} entries match (first 200 shown)"
    try:
        install_translators(qapp, "zh_CN")
        assert format_when("2026-11-23T14:05:00", now) == "周一 14:05"
        assert format_when("2026-03-08T14:05:00", now) == "2026-03-08"
        assert CJK.search(HistorySearchPane._count_text(200, 1234, 56789))
        assert "56,789" in HistorySearchPane._count_text(200, 1234, 56789)
    finally:
        remove_translators(qapp)


@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EIO,
                                    errno.ENAMETOOLONG])
def test_a_failed_write_is_worded_by_the_gui_in_both_languages(qapp: QApplication, tmp_path: Path, number: int) -> None:
    """In English the GUI's sentence is the engine's own (StorageError.sentence); in zh_CN it is Chinese."""
    from nanobot_desktop.engine import storage_error
    from nanobot_desktop.gui.common.engine_words import storage_problem

    error = storage_error(tmp_path / "MEMORY.md", OSError(number, os.strerror(number)))
    assert storage_problem(error) == error.sentence()
    try:
        install_translators(qapp, "zh_CN")
        assert CJK.search(storage_problem(error)) and str(tmp_path) in storage_problem(error)
        assert not still_english(storage_problem(error), [os.strerror(number)])  # the system's words stay its own
    finally:
        remove_translators(qapp)
