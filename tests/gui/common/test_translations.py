"""The zh_CN translation: complete for the code as it is, compiled, loaded, and seen on screen.

- lupdate over the GUI into a copy of the .ts must leave 0 unfinished and 0 vanished entries (a string
  added or changed without `python3 dev.py translations` and a translation fails here);
- the shipped .qm is what lrelease makes of the .ts (a fresh clone shows Chinese without a build step);
- the harness opens each panel and dialog (HARNESS_AREAS; the whole window is walked in
  test_translations_window.py) in zh_CN and fails on visible text still in English, cells of tables
  and trees and single words included (tests/gui/i18n_walk.py); in English it finds the source strings.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import typing
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtWidgets import (
    QApplication, QWidget,
)

from nanobot_desktop.engine.config.models import AppSettings
from nanobot_desktop.engine.config.peek import LANGUAGES as PEEKED_LANGUAGES
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.gui.common.formatting import format_duration
from nanobot_desktop.gui.common.i18n import (LANGUAGES, format_number, install_translators, remove_translators,
                                             resolve_language, saved_language, translate, translations_dir)
from nanobot_desktop.gui.background.cron_view import CronView
from nanobot_desktop.gui.background.heartbeat_view import HeartbeatView
from nanobot_desktop.gui.background.mcp_dialogs import McpImportDialog, McpServerDialog
from nanobot_desktop.gui.background.mcp_view import McpView
from nanobot_desktop.gui.background.subagents_view import SubagentsView
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.inspector.panel import InspectorPanel
from nanobot_desktop.gui.settings.dialog import SettingsDialog
from nanobot_desktop.gui.settings.onboarding import OnboardingDialog
from nanobot_desktop.gui.workspace.files_view import WorkspaceFilesView
from nanobot_desktop.gui.workspace.memory_view import MemoryView
from tests.gui.i18n_walk import CJK, menu_texts, still_english, visible_texts
from tests.gui.window_fixtures import open_window

__all__ = ["open_window"]  # the fixture, used by the window-frame walk

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
import dev  # noqa: E402  (the same lupdate arguments as `python3 dev.py translations`)

TS = translations_dir() / "nanobot_desktop_zh_CN.ts"


def _lupdate_into(tmp_path: Path) -> Path:
    copy = tmp_path / TS.name
    shutil.copy(TS, copy)
    tool = dev.qt_tool(Path(sys.executable), "pyside6-lupdate")
    subprocess.run([tool, *dev.translation_sources(), "-ts", str(copy), "-target-language", "zh_CN",
                    "-locations", "none"], cwd=ROOT, check=True, capture_output=True)
    return copy


def test_lupdate_over_the_gui_leaves_no_unfinished_or_vanished_zh_cn_entry(tmp_path: Path) -> None:
    messages = list(ET.parse(_lupdate_into(tmp_path)).iter("message"))
    assert len(messages) > 50
    open_ones = [(m.findtext("source"), m.find("translation").get("type"))  # type: ignore[union-attr]
                 for m in messages if m.find("translation").get("type")]  # type: ignore[union-attr]
    assert open_ones == [], "run `python3 dev.py translations` and translate these in the .ts"


def test_the_shipped_qm_is_the_compiled_ts(tmp_path: Path) -> None:
    tool = dev.qt_tool(Path(sys.executable), "pyside6-lrelease")
    subprocess.run([tool, "-silent", str(TS), "-qm", str(tmp_path / "fresh.qm")], check=True)
    assert (tmp_path / "fresh.qm").read_bytes() == TS.with_suffix(".qm").read_bytes()


def test_the_language_choices_are_the_settings_values() -> None:
    field = AppSettings.model_fields["language"]
    assert typing.get_args(field.annotation) == LANGUAGES == PEEKED_LANGUAGES and field.default == "system"


# ------------------------------------------------------------------------------------ the harness


def skill_texts(engine: Engine) -> list[str]:
    """What the skills table shows from the skills' own files (longest first: a name inside a description)."""
    skills = engine.skills.list_skills()
    return sorted({text for skill in skills for text in (skill.description, str(skill.path), skill.name)},
                  key=len, reverse=True)


@pytest.fixture
def area_env(qtbot, qloop, make_engine):
    """(engine, bridge, widgets to shut down): one engine per walk, closed inside the loop afterwards."""
    engine = make_engine()
    bridge = EngineBridge(engine)
    opened: list[QWidget] = []
    yield engine, bridge, opened
    for widget in opened:
        shutdown = getattr(widget, "shutdown", None)
        if callable(shutdown):
            shutdown()
    bridge.detach()
    closing = asyncio.ensure_future(engine.shutdown())
    qtbot.waitUntil(closing.done, timeout=10_000)


def _shown(qtbot, opened: list[QWidget], widget: QWidget) -> QWidget:
    qtbot.addWidget(widget)
    opened.append(widget)
    widget.resize(900, 640)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _settings(qtbot, engine: Engine, bridge: EngineBridge, opened: list[QWidget]) -> QWidget:
    dialog = SettingsDialog(engine)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    return dialog


def _cron_form(qtbot, engine: Engine, bridge: EngineBridge, opened: list[QWidget]) -> QWidget:
    view = _shown(qtbot, opened, CronView(engine, bridge))
    qtbot.mouseClick(view.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(view.form.isVisible)
    return view


def _mcp_import_dialog(qtbot, engine: Engine, bridge: EngineBridge, opened: list[QWidget]) -> QWidget:
    dialog = McpImportDialog(engine)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    return dialog


def _mcp_dialog(qtbot, engine: Engine, bridge: EngineBridge, opened: list[QWidget]) -> QWidget:
    dialog = McpServerDialog(engine)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    return dialog


def _editor(qtbot, engine: Engine, bridge: EngineBridge, opened: list[QWidget]) -> QWidget:
    editor = _shown(qtbot, opened, MarkdownEditor())
    editor.open_file(engine.config.workspace_path / "HEARTBEAT.md")
    editor.show_find()
    qtbot.waitUntil(lambda: editor.pages.currentWidget() is not editor.loading_label)
    return editor


def _onboarding(qtbot, engine: Engine, bridge: EngineBridge, opened: list[QWidget]) -> QWidget:
    """First-run setup, walked to its second page (no local server to find: the scan says so)."""
    folder = engine.config.source_path.parent / "fresh-workspace"
    dialog = _shown(qtbot, opened, OnboardingDialog(folder.parent / "fresh-config.json", folder, candidates=()))
    qtbot.mouseClick(dialog.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.pages.currentIndex() == 1 and bool(dialog.scan_status.text())
                    and dialog.scan_button.isEnabled())
    return dialog


def _panel(kind: type[QWidget]) -> Callable[..., QWidget]:
    def open_panel(qtbot, engine: Engine, bridge: EngineBridge, opened: list[QWidget]) -> QWidget:
        return _shown(qtbot, opened, kind(engine, bridge))  # type: ignore[call-arg]
    return open_panel


# Each panel and dialog on its own (the whole window is walked in test_translations_window.py).
HARNESS_AREAS: dict[str, Callable[..., QWidget]] = {
    "settings dialog": _settings, "inspector": _panel(InspectorPanel), "heartbeat": _panel(HeartbeatView),
    "scheduled, with the job form": _cron_form, "subagents": _panel(SubagentsView), "mcp": _panel(McpView),
    "mcp server dialog": _mcp_dialog, "mcp import dialog": _mcp_import_dialog, "editor with find bar": _editor,
    "memory page": _panel(MemoryView), "first-run setup, both pages": _onboarding,
    "workspace files and skills": _panel(WorkspaceFilesView),
}


@pytest.fixture
def chinese(qapp: QApplication):
    assert install_translators(qapp, "zh_CN") == "zh_CN"
    yield
    remove_translators(qapp)


@pytest.mark.parametrize("area", sorted(HARNESS_AREAS))
def test_every_visible_text_of_the_area_is_chinese_in_zh_cn(qtbot, area_env, chinese: None, area: str) -> None:
    texts = visible_texts(HARNESS_AREAS[area](qtbot, *area_env))
    assert sum(bool(CJK.search(text)) for _where, text in texts) >= 3
    content = skill_texts(area_env[0])  # the workspace's skills: names and descriptions are the files' words
    assert [(where, text) for where, text in texts if still_english(text, content)] == []


@pytest.mark.parametrize("area", sorted(HARNESS_AREAS))
def test_the_same_walk_in_english_finds_the_source_strings(qtbot, area_env, area: str) -> None:
    sources = {m.findtext("source") for m in ET.parse(TS).iter("message")}
    texts = [text for _where, text in visible_texts(HARNESS_AREAS[area](qtbot, *area_env))]
    assert not any(CJK.search(text) for text in texts if text != "简体中文")  # the language's own name
    assert sum(text in sources for text in texts) >= 3


# ------------------------------------------------------------------------------------ the window's frame


def frame_texts(window) -> tuple[list[tuple[str, str]], list[str]]:
    """(where, text) for the window's own words: menus and every QAction in them, dock titles, page
    tabs, the status bar and the tray menu; and the menu entries' texts alone (each must be a source)."""
    found: list[tuple[str, str]] = []
    entries: list[str] = []
    for name, menu in window.menus.items():
        walked = menu_texts(menu, f"menu {name}")
        found += walked
        entries += [text for where, text in walked if not where.endswith("tooltip")]
    found += [(f"dock {name}", dock.windowTitle()) for name, dock in window.docks.items()]
    found += [(f"page tab {i}", window.pages.tabText(i)) for i in range(window.pages.count())]
    found += [(f"page tab {i} tooltip", window.pages.tabToolTip(i)) for i in range(window.pages.count())]
    found += [("status " + label.objectName(), label.text()) for label in (window.commands.busy_label, window.commands.model_label,
                                                                         window.commands.workspace_label)]
    found.append(("notice bar close", window.notice_bar.close_button.toolTip()))
    if window.tray is not None:
        window.tray.update_menu_texts()
        found += [(f"tray {action.objectName()}", action.text()) for action in window.tray.menu.actions()
                  if not action.isSeparator()]
    return [(where, text) for where, text in found if text.strip()], entries


def test_the_window_frame_menus_docks_and_tray_are_chinese_in_zh_cn(qtbot, chinese: None, open_window) -> None:
    window = open_window(use_tray=True)
    texts, entries = frame_texts(window)
    assert len(entries) > 30 and any(text == "文件(&F)" for _where, text in texts)
    assert [(where, text) for where, text in texts if still_english(text.replace("&", ""))] == []
    assert all(CJK.search(text) for text in entries if text not in ("MCP",))


def test_the_window_frame_in_english_shows_the_source_strings(qtbot, open_window) -> None:
    sources = {m.findtext("source") for m in ET.parse(TS).iter("message")}
    window = open_window(use_tray=True)
    texts, entries = frame_texts(window)
    assert not any(CJK.search(text) for _where, text in texts)
    assert {text for text in entries if text not in sources} == {"MCP"}  # a name, the same in every language


def _chat_with_a_tool_card(qtbot, open_window, fake_openai, ask: str, answer: str):
    """The window after one turn that called a tool and replied: the chat's cards and the composer."""
    from tests.gui.window_fixtures import send, wait_idle

    fake_openai.add_tool_calls([("read_file", {"path": "notes.txt"})])
    fake_openai.add_text(answer)
    window = open_window()
    send(qtbot, window, ask)
    qtbot.waitUntil(lambda: [item.kind for item in window.chat.model.items()][-1:] == ["assistant"], timeout=10_000)
    wait_idle(qtbot, window)
    assert "tool" in [item.kind for item in window.chat.model.items()]
    return window, visible_texts(window.chat_view) + visible_texts(window.composer)


def test_the_chat_with_a_reply_and_a_tool_card_is_chinese_in_zh_cn(qtbot, chinese: None, open_window, fake_openai) -> None:
    window, texts = _chat_with_a_tool_card(qtbot, open_window, fake_openai, "notes.txt", "读完了。")  # keyClicks types Latin-1 only
    assert sum(bool(CJK.search(text)) for _where, text in texts) >= 8
    model = (window.engine.config.agents.defaults.model,)  # the reply's model id is a name, the same in every language
    assert [(where, text) for where, text in texts if still_english(text, model)] == []


def test_the_chat_in_english_shows_the_source_strings(qtbot, open_window, fake_openai) -> None:
    sources = {m.findtext("source") for m in ET.parse(TS).iter("message")}
    _window, texts = _chat_with_a_tool_card(qtbot, open_window, fake_openai, "Read notes.txt", "Done.")
    assert not any(CJK.search(text) for _where, text in texts)
    assert sum(text in sources for _where, text in texts) >= 8


# ------------------------------------------------------------------------------------ the setting


def test_the_language_is_chosen_in_settings_and_saved_in_desktop_json(qtbot, area_env) -> None:
    engine = area_env[0]
    dialog = _settings(qtbot, engine, area_env[1], area_env[2])
    dialog.tabs.setCurrentIndex(4)  # Appearance
    combo = dialog.language_combo
    assert [combo.itemData(i) for i in range(combo.count())] == list(LANGUAGES)
    assert [combo.itemText(i) for i in range(1, combo.count())] == ["English", "简体中文"]
    combo.setCurrentIndex(combo.findData("zh_CN"))
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    desktop_json = engine.config.source_path.parent / "desktop.json"
    assert json.loads(desktop_json.read_text(encoding="utf-8"))["language"] == "zh_CN"
    assert saved_language(engine.config.source_path) == "zh_CN"


def test_the_saved_language_is_read_without_the_settings_models(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    assert saved_language(config) == "system"  # no desktop.json
    for content, expected in (('{"language": "zh_CN"}', "zh_CN"), ('{"language": "en", "theme": "dark"}', "en"),
                              ('{"language": "fr"}', "system"), ("[1, 2]", "system"), ("{not json", "system")):
        (tmp_path / "desktop.json").write_text(content, encoding="utf-8")
        assert saved_language(config) == expected


def test_the_system_locale_picks_chinese_or_english() -> None:
    assert resolve_language("system", QLocale("zh_CN")) == "zh_CN"
    assert resolve_language("system", QLocale("zh_TW")) == "zh_CN"
    assert resolve_language("system", QLocale("de_DE")) == "en"
    assert resolve_language("en", QLocale("zh_CN")) == "en"


def test_plurals_and_numbers_in_english_and_chinese(qapp: QApplication) -> None:
    count = 1
    assert translate("Settings", "Connected: %n model(s)", None, count) == "Connected: 1 model"
    count = 3
    assert translate("Settings", "Connected: %n model(s)", None, count) == "Connected: 3 models"
    assert format_number(1234567) in ("1,234,567", "1.234.567", "1 234 567", "1\u00a0234\u00a0567")
    try:
        install_translators(qapp, "zh_CN")
        assert translate("Settings", "Connected: %n model(s)", None, count) == "已连接：3 个模型"
        assert format_number(1234567) == "1,234,567"
        assert format_duration(2.4) == "2.4 秒" and format_duration(185) == "3 分 05 秒"
    finally:
        remove_translators(qapp)
    assert format_duration(185) == "3 min 05 s"
