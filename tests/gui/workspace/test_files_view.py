"""WorkspaceFilesView and the skills manager against a real engine and real files: bootstrap files,
skills appearing from outside, broken SKILL.md, enable/disable saved to config.json, New skill."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem

from nanobot_desktop.engine.workspace import atomic_write_text
from nanobot_desktop.gui.common.bridge import EngineBridge
from nanobot_desktop.gui.workspace.files_view import WorkspaceFilesView
from nanobot_desktop.gui.workspace.skills_model import SkillsModel
from nanobot_desktop.gui.workspace.watcher import WorkspaceWatcher
from nanobot_desktop.gui.workspace.sync import WorkspaceSync

BROKEN = '---\nname: broken\ndescription: "half a list"\nalways: [true\n---\n# Broken\n'  # not YAML: loads, editor warns
BOMB = ('---\nname: bomb\na: &a [x, x, x, x, x, x, x, x, x, x]\n'
        + "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcdefg", "bcdefgh", strict=True))
        + "---\n# Bomb\n")  # aliases expanding to 10^8 values: refused


@pytest.fixture
def files_setup(qtbot, make_engine):
    """(engine, view, sync): a shown WorkspaceFilesView with hot reload."""
    engine = make_engine()
    watcher = WorkspaceWatcher(quiet_ms=50)
    sync = WorkspaceSync(engine, watcher)
    bridge = EngineBridge(engine)
    view = WorkspaceFilesView(engine, bridge, sync)
    qtbot.addWidget(view)
    view.resize(1200, 620)
    view.show()
    yield engine, view, sync
    view.shutdown()
    sync.close()
    watcher.stop()
    bridge.detach()


def write_skill(engine, name: str, text: str) -> Path:
    path = engine.workspace.skills_dir / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str, description: str, bins: list[str] | None = None) -> str:
    meta = f'\nmetadata: {{"nanobot": {{"requires": {{"bins": {json.dumps(bins)}}}}}}}' if bins else ""
    return f'---\nname: {name}\ndescription: "{description}"{meta}\n---\n# {name}\n\nDo the thing.\n'


def type_at_end(qtbot, editor, text: str) -> None:
    """Click into the text (which gives it the focus, so Ctrl+S reaches the editor) and type at the end."""
    qtbot.mouseClick(editor.text_edit.viewport(), Qt.MouseButton.LeftButton)
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor.text_edit, text)


def row_data(model: SkillsModel, name: str, column: int, role=Qt.ItemDataRole.DisplayRole):
    return model.data(model.index(model.row_of(name), column), role)


def click_check_box(qtbot, view, row: int) -> None:
    """Click the "On" check box of a row where a person would: on its indicator."""
    table = view.skills_view.table
    index = table.model().index(row, SkillsModel.ON)
    option = QStyleOptionViewItem()
    option.initFrom(table)
    option.rect = table.visualRect(index)
    option.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
    indicator = table.style().subElementRect(QStyle.SubElement.SE_ItemViewItemCheckIndicator, option, table)
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=indicator.center())


# ---- bootstrap files ------------------------------------------------------------------------------
def test_bootstrap_files_listed_identity_appears_and_saves_reach_the_prompt(qtbot, files_setup):
    engine, view, _sync = files_setup
    assert view.listed_files() == ["AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md", "HEARTBEAT.md"]
    atomic_write_text(engine.workspace.root / "IDENTITY.md", "# Identity\n")
    qtbot.waitUntil(lambda: "IDENTITY.md" in view.listed_files(), timeout=5000)

    view.file_list.setCurrentRow(view.listed_files().index("SOUL.md"))
    editor = view.current_editor()
    assert editor is not None and editor.path == engine.workspace.root / "SOUL.md"
    qtbot.waitUntil(lambda: not editor.is_loading)
    before = (engine.workspace.root / "SOUL.md").read_bytes()
    type_at_end(qtbot, editor, "Loves puns.")
    assert view.file_list.currentItem().text().startswith("SOUL.md •")
    with qtbot.waitSignal(editor.saved, timeout=5000):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert (engine.workspace.root / "SOUL.md").read_bytes() == before + b"Loves puns.\n"  # the final newline is kept
    assert not view.file_list.currentItem().text().startswith("SOUL.md •")
    assert "Loves puns." in engine.context.build_system_prompt()


def test_switching_files_keeps_unsaved_edits(qtbot, files_setup):
    _engine, view, _sync = files_setup
    agents = view.open_file("AGENTS.md")
    qtbot.waitUntil(lambda: not agents.is_loading)
    type_at_end(qtbot, agents, "draft")
    view.open_file("USER.md")
    assert view.open_file("AGENTS.md") is agents and agents.is_dirty and agents.text().endswith("draft")
    assert view.has_unsaved_changes()


# ---- skills list ----------------------------------------------------------------------------------
def test_skill_written_from_outside_appears_in_list_and_prompt(qtbot, files_setup, qtmodeltester):
    engine, view, _sync = files_setup
    model = view.skills_view.model
    assert model.row_of("hello") == -1
    write_skill(engine, "hello", skill_md("hello", "Greets people warmly."))
    qtbot.waitUntil(lambda: model.row_of("hello") >= 0, timeout=5000)
    assert row_data(model, "hello", SkillsModel.STATUS) == "Available"
    assert row_data(model, "hello", SkillsModel.SOURCE) == "Workspace"
    assert "<name>hello</name>" in engine.context.build_system_prompt()
    assert row_data(model, "memory", SkillsModel.ALWAYS) == "Always on"
    assert row_data(model, "memory", SkillsModel.SOURCE) == "Built-in"
    qtmodeltester.check(model)


def test_availability_missing_and_override_markers(qtbot, files_setup, monkeypatch):
    engine, view, _sync = files_setup
    monkeypatch.delenv("NB_TEST_TOKEN", raising=False)
    write_skill(engine, "github", '---\nname: github\ndescription: "gh"\nmetadata: {"nanobot": {"requires": '
                                  '{"bins": ["gh-not-installed-here"], "env": ["NB_TEST_TOKEN"]}}}\n---\n# gh\n')
    write_skill(engine, "cron", skill_md("cron", "My own cron notes."))
    model = view.skills_view.model
    qtbot.waitUntil(lambda: model.row_of("github") >= 0 and
                    row_data(model, "cron", SkillsModel.SOURCE) == "Workspace (overrides built-in)", timeout=5000)
    assert row_data(model, "github", SkillsModel.STATUS) == "Missing CLI: gh-not-installed-here, ENV: NB_TEST_TOKEN"
    assert row_data(model, "github", 0, SkillsModel.StateRole) == "missing"


def test_broken_skill_shows_its_error_in_red_and_in_the_editor(qtbot, files_setup):
    engine, view, _sync = files_setup
    skills = view.skills_view
    model = skills.model
    view.tabs.setCurrentIndex(1)
    write_skill(engine, "bomb", BOMB)
    qtbot.waitUntil(lambda: model.row_of("bomb") >= 0, timeout=5000)
    status = row_data(model, "bomb", SkillsModel.STATUS)
    assert status.startswith("Broken: the frontmatter's YAML aliases expand"), status
    red = row_data(model, "bomb", SkillsModel.STATUS, Qt.ItemDataRole.ForegroundRole)
    assert red is not None and red.red() > red.green() + 60 and red.red() > red.blue() + 60

    # A header that is not YAML loads, read line by line as nanobot 0.1.4 does; its editor says why it is odd.
    write_skill(engine, "broken", BROKEN)
    qtbot.waitUntil(lambda: model.row_of("broken") >= 0, timeout=5000)
    assert row_data(model, "broken", SkillsModel.STATUS) == "Available"

    assert skills.select_skill("broken")
    editor = skills.current_editor()
    qtbot.waitUntil(lambda: editor is not None and editor.error_bar.isVisible(), timeout=5000)
    assert "line 4" in editor.error_bar.text and editor.text_edit.marked_line == 4

    # Saving keeps refusing a broken header, pointing at the line.
    type_at_end(qtbot, editor, "more")
    with qtbot.waitSignal(editor.save_failed, timeout=5000):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert (engine.workspace.skills_dir / "broken" / "SKILL.md").read_text(encoding="utf-8") == BROKEN

    # Fixed from outside: the list and the editor follow.
    with qtbot.waitSignal(editor.conflict_changed, timeout=5000):
        atomic_write_text(engine.workspace.skills_dir / "broken" / "SKILL.md", skill_md("broken", "Fixed now."))
    qtbot.mouseClick(editor.conflict_bar.button("Reload"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not editor.error_bar.isVisible(), timeout=5000)
    assert editor.text_edit.marked_line is None


def test_disabling_a_skill_saves_config_and_leaves_the_prompt(qtbot, files_setup):
    engine, view, _sync = files_setup
    write_skill(engine, "weather", skill_md("weather", "Forecasts."))
    model = view.skills_view.model
    view.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: model.row_of("weather") >= 0, timeout=5000)
    assert "<name>weather</name>" in engine.context.build_system_prompt()

    click_check_box(qtbot, view, model.row_of("weather"))
    app_file = engine.config_path.parent / "desktop.json"
    assert json.loads(app_file.read_text(encoding="utf-8"))["disabledSkills"] == ["weather"]
    assert "disabledSkills" not in engine.config_path.read_text(encoding="utf-8")  # the CLI's file is untouched
    assert "<name>weather</name>" not in engine.context.build_system_prompt()
    assert row_data(model, "weather", SkillsModel.ON, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked

    click_check_box(qtbot, view, model.row_of("weather"))
    assert json.loads(app_file.read_text(encoding="utf-8"))["disabledSkills"] == []
    assert "<name>weather</name>" in engine.context.build_system_prompt()


def test_new_skill_is_created_from_the_template_and_opened(qtbot, files_setup):
    engine, view, _sync = files_setup
    skills = view.skills_view
    view.tabs.setCurrentIndex(1)
    write_skill(engine, "taken", skill_md("taken", "Already here."))
    qtbot.waitUntil(lambda: skills.model.row_of("taken") >= 0, timeout=5000)

    qtbot.mouseClick(skills.new_button, Qt.MouseButton.LeftButton)
    assert skills.new_row.isVisible() and skills.name_field.hasFocus()
    qtbot.keyClicks(skills.name_field, "bad name")
    assert not skills.create_button.isEnabled() and "letters, digits" in skills.name_hint.text()
    skills.name_field.clear()
    qtbot.keyClicks(skills.name_field, "taken")
    assert not skills.create_button.isEnabled() and "already exists" in skills.name_hint.text()
    qtbot.keyClick(skills.name_field, Qt.Key.Key_Return)
    assert (engine.workspace.skills_dir / "taken" / "SKILL.md").read_text(encoding="utf-8") == skill_md("taken", "Already here.")

    skills.name_field.clear()
    qtbot.keyClicks(skills.name_field, "hello-world")
    assert skills.create_button.isEnabled()
    qtbot.keyClick(skills.name_field, Qt.Key.Key_Return)
    target = engine.workspace.skills_dir / "hello-world" / "SKILL.md"
    text = target.read_text(encoding="utf-8")
    assert "{{name}}" not in text and 'name: "hello-world"' in text and "# hello-world" in text
    assert not skills.new_row.isVisible()
    assert skills.selected_skill().name == "hello-world"
    editor = skills.current_editor()
    assert editor is not None and editor.path == target
    qtbot.waitUntil(lambda: editor.text() == text, timeout=5000)
    assert "<name>hello-world</name>" in engine.context.build_system_prompt()


def test_builtin_skill_is_read_only_and_can_be_copied_to_the_workspace(qtbot, files_setup):
    engine, view, _sync = files_setup
    skills = view.skills_view
    view.tabs.setCurrentIndex(1)
    assert skills.select_skill("cron")
    builtin = Path(skills.selected_skill().path)
    original = builtin.read_bytes()
    editor = skills.current_editor()
    qtbot.waitUntil(lambda: not editor.is_loading)
    type_at_end(qtbot, editor, "x")
    with qtbot.waitSignal(editor.save_failed, timeout=5000):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert builtin.read_bytes() == original and "read-only" in editor.error_bar.text

    assert skills.copy_button.isVisible()
    qtbot.mouseClick(skills.copy_button, Qt.MouseButton.LeftButton)
    copy = engine.workspace.skills_dir / "cron" / "SKILL.md"
    assert copy.read_bytes() == original.replace(b"\r\n", b"\n") or copy.read_bytes() == original
    assert row_data(skills.model, "cron", SkillsModel.SOURCE) == "Workspace (overrides built-in)"
    assert skills.current_editor().path == copy and not skills.copy_button.isVisible()


def test_skills_screenshot(qtbot, files_setup, monkeypatch, tmp_path):
    engine, view, _sync = files_setup
    write_skill(engine, "weather", skill_md("weather", "Weather forecasts with curl.", bins=["sh"]))
    write_skill(engine, "github", skill_md("github", "Work with GitHub through the gh CLI.", bins=["gh-not-installed"]))
    write_skill(engine, "broken", BOMB)
    skills = view.skills_view
    view.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: all(skills.model.row_of(n) >= 0 for n in ("weather", "github", "broken")), timeout=5000)
    states = {n: row_data(skills.model, n, 0, SkillsModel.StateRole) for n in ("weather", "github", "broken")}
    assert states == {"weather": "available", "github": "missing", "broken": "broken"}
    skills.select_skill("github")
    qtbot.waitUntil(lambda: skills.current_editor() is not None and not skills.current_editor().is_loading)
    view.grab().save(str(tmp_path / "skills.png"))
    assert os.path.getsize(tmp_path / "skills.png") > 0


def test_a_failed_skill_listing_says_so_until_a_listing_works_again(qtbot, files_setup, monkeypatch):
    engine, view, _sync = files_setup
    skills_view = view.skills_view
    working = engine.skills.list_skills

    def failing(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(engine.workspace.skills_dir))

    monkeypatch.setattr(engine.skills, "list_skills", failing)
    skills_view.refresh()
    assert not skills_view.status_label.isHidden()  # (the Skills tab need not be the one in front)
    assert skills_view.status_label.text().startswith("Could not list the skills ([Errno 13] Permission denied")
    monkeypatch.setattr(engine.skills, "list_skills", working)
    write_skill(engine, "hello", skill_md("hello", "Greets people warmly."))  # the next change lists again
    qtbot.waitUntil(lambda: skills_view.model.row_of("hello") >= 0, timeout=5000)
    assert skills_view.status_label.isHidden()
