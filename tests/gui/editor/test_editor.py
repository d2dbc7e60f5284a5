"""MarkdownEditor: highlighting, loading, saving, and what happens when the file changes on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QPlainTextDocumentLayout

import nanobot_desktop.gui.editor.editor as editor_module
from nanobot_desktop.engine.workspace import atomic_write_text
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.editor.diff_view import diff_tint
from nanobot_desktop.gui.editor.file_io import read_snapshot
from nanobot_desktop.gui.editor.md_highlighter import (STATE_COMMENT, STATE_FENCE_BACKTICK, STATE_FRONTMATTER,
                                                MarkdownHighlighter)


# ---- helpers ------------------------------------------------------------------------------------
@pytest.fixture
def make_editor(qtbot):
    editors: list[MarkdownEditor] = []

    def make(**kwargs) -> MarkdownEditor:
        editor = MarkdownEditor(**kwargs)
        qtbot.addWidget(editor)
        editor.resize(640, 360)
        editor.show()
        editors.append(editor)
        return editor

    yield make
    for editor in editors:
        editor.shutdown()


def open_and_wait(qtbot, editor: MarkdownEditor, path: Path, timeout: int = 5000) -> None:
    with qtbot.waitSignal(editor.loaded, timeout=timeout):
        editor.open_file(path)


def settle(editor: MarkdownEditor) -> None:
    """Let the editor's worker finish and deliver its results to the GUI thread."""
    for _ in range(5):
        assert editor.flush_pending(5.0)
        QCoreApplication.processEvents()


def type_at_end(qtbot, editor: MarkdownEditor, text: str) -> None:
    """Type like a person (QTest cannot type "\\n", so line breaks are Return presses)."""
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    for index, piece in enumerate(text.split("\n")):
        if index:
            qtbot.keyClick(editor.text_edit, Qt.Key.Key_Return)
        if piece:
            qtbot.keyClicks(editor.text_edit, piece)


def formats_of_block(document: QTextDocument, number: int) -> list[tuple[int, int, object]]:
    block = document.findBlockByNumber(number)
    return [(r.start, r.length, QTextCharFormat(r.format)) for r in block.layout().formats()]


def highlighted(text: str) -> tuple[QTextDocument, MarkdownHighlighter]:
    document = QTextDocument()
    document.setDocumentLayout(QPlainTextDocumentLayout(document))
    document.setPlainText(text)
    highlighter = MarkdownHighlighter(document)
    highlighter.rehighlight()
    return document, highlighter


# ---- highlighting -------------------------------------------------------------------------------
def test_highlighter_formats_heading_and_history_timestamp(qapp):
    document, highlighter = highlighted("# Long-term memory\n[2026-03-04 09:15] User moved to Lyon.\nplain words")
    heading = formats_of_block(document, 0)
    assert heading, "the heading got no format"
    start, length, fmt = heading[0]
    assert (start, length) == (0, len("# Long-term memory"))
    assert fmt.fontWeight() == QFont.Weight.Bold
    assert fmt.foreground().color() == highlighter.format_for("heading").foreground().color()

    stamp_ranges = formats_of_block(document, 1)
    assert any(s == 0 and n == len("[2026-03-04 09:15]")
               and f.foreground().color() == highlighter.format_for("timestamp").foreground().color()
               for s, n, f in stamp_ranges)
    assert formats_of_block(document, 2) == []


def test_highlighter_tracks_multiline_frontmatter_fences_and_comments(qapp):
    text = "---\nname: demo\n---\n```python\n# not a heading\n```\n# heading\n<!-- open\nstill comment\n-->\nafter"
    document, highlighter = highlighted(text)
    states = [document.findBlockByNumber(i).userState() for i in range(document.blockCount())]
    assert states[0] == STATE_FRONTMATTER and states[1] == STATE_FRONTMATTER
    assert states[2] not in (STATE_FRONTMATTER,)
    assert states[3] == STATE_FENCE_BACKTICK and states[4] == STATE_FENCE_BACKTICK
    assert states[5] != STATE_FENCE_BACKTICK
    assert states[7] == STATE_COMMENT and states[8] == STATE_COMMENT and states[9] != STATE_COMMENT
    inside_fence = formats_of_block(document, 4)
    assert inside_fence[0][2].foreground().color() == highlighter.format_for("fence").foreground().color()
    key = formats_of_block(document, 1)
    assert any(f.foreground().color() == highlighter.format_for("frontmatter_key").foreground().color()
               for _, _, f in key)
    assert formats_of_block(document, 10) == []


def test_dark_palette_uses_other_colours(qapp):
    _, highlighter = highlighted("# x")
    light = highlighter.format_for("heading").foreground().color()
    highlighter.set_dark(True)
    dark = highlighter.format_for("heading").foreground().color()
    assert light != dark and QColor(dark).lightness() > QColor(light).lightness()


# ---- open / edit / save -------------------------------------------------------------------------
def test_open_edit_save_writes_exact_bytes_through_atomic_writer(qtbot, make_editor, tmp_path, monkeypatch):
    calls: list[tuple[Path, str]] = []

    def spy(path: Path, text: str) -> None:
        calls.append((path, text))
        atomic_write_text(path, text)

    monkeypatch.setattr(editor_module, "atomic_write_text", spy)
    target = tmp_path / "USER.md"
    target.write_bytes(b"# User\n\nName: Ana\n")
    inode_before = os.stat(target).st_ino
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    assert editor.text() == "# User\n\nName: Ana\n"
    assert not editor.is_dirty

    with qtbot.waitSignal(editor.dirty_changed) as dirty:
        type_at_end(qtbot, editor, "Likes: tea\n")
    assert dirty.args == [True]
    with qtbot.waitSignal(editor.saved, timeout=5000) as saved:
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert saved.args == [target]
    assert target.read_bytes() == b"# User\n\nName: Ana\nLikes: tea\n"
    assert calls == [(target, "# User\n\nName: Ana\nLikes: tea\n")]
    assert os.stat(target).st_ino != inode_before, "an atomic save replaces the file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["USER.md"], "no temp file left"
    assert not editor.is_dirty


def test_save_handler_receives_path_and_text(qtbot, make_editor, tmp_path):
    written: list[tuple[Path, str]] = []
    target = tmp_path / "MEMORY.md"
    target.write_text("old\n", encoding="utf-8")
    editor = make_editor(save_handler=lambda path, text: written.append((path, text)))
    open_and_wait(qtbot, editor, target)
    type_at_end(qtbot, editor, "new")
    with qtbot.waitSignal(editor.saved):
        assert editor.save()
    assert written == [(target, "old\nnew\n")], "the file ended with a line break: the save keeps one"


@pytest.mark.parametrize(("original", "typed", "expected"), [
    (b"first\n", "second", b"first\nsecond\n"),  # typed on the empty line after the final break
    (b"first\n", "\nthird\n", b"first\n\nthird\n"),
    (b"first", " line", b"first line"),  # a file without a final break stays without
    (b"one\r\ntwo\r\n", "three", b"one\r\ntwo\r\nthree\r\n"),
])
def test_save_keeps_the_files_final_newline_or_its_absence(qtbot, make_editor, tmp_path, original, typed, expected):
    target = tmp_path / "NOTES.md"
    target.write_bytes(original)
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    type_at_end(qtbot, editor, typed)
    with qtbot.waitSignal(editor.saved, timeout=5000):
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert target.read_bytes() == expected


def test_crlf_file_keeps_crlf_and_bom_after_save(qtbot, make_editor, tmp_path):
    target = tmp_path / "SOUL.md"
    target.write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\n")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    assert editor.text() == "line one\nline two\n"
    type_at_end(qtbot, editor, "line three\n")
    with qtbot.waitSignal(editor.saved):
        editor.save()
    assert target.read_bytes() == b"\xef\xbb\xbfline one\r\nline two\r\nline three\r\n"


def test_missing_file_opens_empty_and_save_creates_it(qtbot, make_editor, tmp_path):
    target = tmp_path / "skills" / "demo" / "SKILL.md"
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    assert editor.text() == ""
    assert "does not exist yet; saving will create it" in editor.notice_bar.text
    type_at_end(qtbot, editor, "# Demo")
    with qtbot.waitSignal(editor.saved):
        editor.save()
    assert target.read_bytes() == b"# Demo"
    assert not editor.notice_bar.isVisible()


def test_non_utf8_file_is_read_only_and_never_written(qtbot, make_editor, tmp_path):
    target = tmp_path / "HISTORY.md"
    original = b"[2026-01-02 10:00] caf\xe9 au lait\n"
    target.write_bytes(original)
    mtime = os.stat(target).st_mtime_ns
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    assert editor.is_read_only and editor.text_edit.isReadOnly()
    assert "\ufffd" in editor.text()
    assert "not UTF-8: shown with replacement characters, saving disabled" in editor.notice_bar.text
    assert not editor.save_button.isEnabled()
    editor.replace_all_text("overwritten")  # even a programmatic change must not reach the disk
    assert editor.save() is False
    settle(editor)
    assert "Saving is disabled" in editor.error_bar.text
    assert target.read_bytes() == original and os.stat(target).st_mtime_ns == mtime


def test_validator_error_blocks_save_and_points_at_line(qtbot, make_editor, tmp_path):
    target = tmp_path / "SKILL.md"
    target.write_text("---\nname: demo\n---\nbody\n", encoding="utf-8")
    problems = ["frontmatter: 'description' is missing (line 2)"]
    editor = make_editor(validator=lambda text: problems[0] if problems else None)
    open_and_wait(qtbot, editor, target)
    type_at_end(qtbot, editor, "more\n")
    with qtbot.waitSignal(editor.save_failed) as failed:
        assert editor.save() is False
    assert failed.args == [problems[0]]
    assert editor.error_bar.isVisible() and problems[0] in editor.error_bar.text
    assert editor.text_edit.marked_line == 2
    qtbot.mouseClick(editor.error_bar.button("Go to line 2"), Qt.MouseButton.LeftButton)
    assert editor.text_edit.textCursor().blockNumber() == 1
    settle(editor)
    assert target.read_text(encoding="utf-8") == "---\nname: demo\n---\nbody\n"

    problems.clear()
    with qtbot.waitSignal(editor.saved):
        assert editor.save()
    assert target.read_text(encoding="utf-8").endswith("more\n")
    assert not editor.error_bar.isVisible() and editor.text_edit.marked_line is None


# ---- changes on disk ----------------------------------------------------------------------------
def long_text(label: str, lines: int = 300) -> str:
    return "".join(f"{label} line {n}\n" for n in range(lines))


def test_external_write_to_clean_editor_reloads_and_keeps_cursor_and_scroll(qtbot, make_editor, tmp_path):
    target = tmp_path / "AGENTS.md"
    target.write_text(long_text("old"), encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    cursor = editor.text_edit.textCursor()
    cursor.setPosition(1234)
    editor.text_edit.setTextCursor(cursor)
    editor.text_edit.verticalScrollBar().setValue(120)
    scroll = editor.text_edit.verticalScrollBar().value()
    assert scroll > 0

    atomic_write_text(target, long_text("new"))
    with qtbot.waitSignal(editor.loaded):
        editor.on_file_changed_on_disk()
    assert editor.text() == long_text("new")
    assert editor.text_edit.textCursor().position() == 1234
    assert editor.text_edit.verticalScrollBar().value() == scroll
    assert not editor.is_dirty and not editor.has_conflict


def test_own_save_reported_by_watcher_is_ignored(qtbot, make_editor, tmp_path):
    target = tmp_path / "TOOLS.md"
    target.write_text("tools\n", encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    type_at_end(qtbot, editor, "more")
    with qtbot.waitSignal(editor.saved):
        editor.save()
    reloads: list[object] = []
    editor.loaded.connect(reloads.append)
    editor.on_file_changed_on_disk()
    settle(editor)
    assert reloads == [] and not editor.has_conflict and editor.text() == "tools\nmore"


def make_conflict(qtbot, make_editor, tmp_path) -> tuple[MarkdownEditor, Path]:
    target = tmp_path / "MEMORY.md"
    target.write_text("shared line\nbase line\n", encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    type_at_end(qtbot, editor, "my line\n")
    atomic_write_text(target, "shared line\ndisk line\n")
    with qtbot.waitSignal(editor.conflict_changed) as changed:
        editor.on_file_changed_on_disk()
    assert changed.args == [True]
    assert editor.conflict_bar.isVisible()
    assert "This file changed on disk." in editor.conflict_bar.text
    assert editor.conflict_bar.button_labels() == ["Reload", "Keep mine", "Compare"]
    assert editor.text() == "shared line\nbase line\nmy line\n", "unsaved edits must never be overwritten"
    return editor, target


def test_conflict_reload_discards_my_edits(qtbot, make_editor, tmp_path):
    editor, _target = make_conflict(qtbot, make_editor, tmp_path)
    with qtbot.waitSignal(editor.loaded):
        qtbot.mouseClick(editor.conflict_bar.button("Reload"), Qt.MouseButton.LeftButton)
    assert editor.text() == "shared line\ndisk line\n"
    assert not editor.is_dirty and not editor.conflict_bar.isVisible()


def test_conflict_keep_mine_then_save_overwrites(qtbot, make_editor, tmp_path):
    editor, target = make_conflict(qtbot, make_editor, tmp_path)
    qtbot.mouseClick(editor.conflict_bar.button("Keep mine"), Qt.MouseButton.LeftButton)
    assert not editor.conflict_bar.isVisible() and editor.is_dirty
    assert target.read_text(encoding="utf-8") == "shared line\ndisk line\n", "keeping is not saving"
    with qtbot.waitSignal(editor.saved):
        editor.save()
    assert target.read_text(encoding="utf-8") == "shared line\nbase line\nmy line\n"
    assert not editor.is_dirty


def test_conflict_compare_shows_diff_from_disk_to_mine(qtbot, make_editor, tmp_path):
    editor, _ = make_conflict(qtbot, make_editor, tmp_path)
    qtbot.mouseClick(editor.conflict_bar.button("Compare"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(editor.diff_view.isVisible)
    diff = editor.diff_view.diff_text()
    assert "-disk line" in diff and "+base line" in diff and "+my line" in diff and " shared line" in diff
    assert editor.conflict_bar.isVisible(), "comparing does not resolve the conflict"
    document = editor.diff_view.text_view.document()
    lines = diff.splitlines()
    added = document.findBlockByNumber(lines.index("+my line")).blockFormat().background().color()
    removed = document.findBlockByNumber(lines.index("-disk line")).blockFormat().background().color()
    context = document.findBlockByNumber(lines.index(" shared line")).blockFormat().background()
    palette = editor.diff_view.palette()
    assert added == diff_tint("+", palette) and removed == diff_tint("-", palette) and added != removed
    assert context.style() == Qt.BrushStyle.NoBrush


def test_save_refuses_when_disk_changed_unnoticed(qtbot, make_editor, tmp_path):
    target = tmp_path / "HEARTBEAT.md"
    target.write_text("tasks\n", encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    type_at_end(qtbot, editor, "- mine\n")
    target.write_text("tasks\n- theirs\n", encoding="utf-8")  # no watcher told the editor
    with qtbot.waitSignal(editor.save_failed):
        editor.save()
    assert target.read_text(encoding="utf-8") == "tasks\n- theirs\n"
    assert editor.has_conflict and "Not saved" in editor.conflict_bar.text


def test_dirty_editor_equal_to_disk_becomes_clean_without_conflict(qtbot, make_editor, tmp_path):
    target = tmp_path / "USER.md"
    target.write_text("a\n", encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    type_at_end(qtbot, editor, "b\n")
    target.write_text("a\nb\n", encoding="utf-8")
    with qtbot.waitSignal(editor.dirty_changed) as dirty:
        editor.on_file_changed_on_disk()
    assert dirty.args == [False] and not editor.has_conflict


def test_file_deleted_on_disk_shows_bar_and_save_recreates(qtbot, make_editor, tmp_path):
    target = tmp_path / "SOUL.md"
    target.write_text("soul\n", encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    target.unlink()
    with qtbot.waitSignal(editor.dirty_changed):
        editor.on_file_changed_on_disk()
    assert "was deleted on disk" in editor.notice_bar.text and editor.is_dirty
    assert editor.text() == "soul\n"
    with qtbot.waitSignal(editor.saved):
        editor.save()
    assert target.read_text(encoding="utf-8") == "soul\n"
    assert not editor.notice_bar.isVisible()


def test_deleted_then_recreated_file_reloads_when_untouched(qtbot, make_editor, tmp_path):
    target = tmp_path / "SOUL.md"
    target.write_text("soul\n", encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    target.unlink()
    editor.on_file_changed_on_disk()
    settle(editor)
    target.write_text("reborn\n", encoding="utf-8")
    with qtbot.waitSignal(editor.loaded):
        editor.on_file_changed_on_disk()
    assert editor.text() == "reborn\n" and not editor.is_dirty and not editor.has_conflict


# ---- big files, find, preview -------------------------------------------------------------------
def test_twenty_megabyte_file_loads_while_event_loop_keeps_running(qtbot, make_editor, tmp_path):
    line = "[2026-01-01 00:00] a long history entry with **bold** and `code` in it, padded out....\n"
    content = line * (20 * 1024 * 1024 // len(line) + 1)
    target = tmp_path / "HISTORY.md"
    target.write_text(content, encoding="utf-8")
    editor = make_editor()
    ticks: list[int] = []
    ticker = QTimer()
    ticker.setInterval(5)
    ticker.timeout.connect(lambda: ticks.append(1))
    ticker.start()
    pages_seen: set[str] = set()
    editor.pages.currentChanged.connect(lambda i: pages_seen.add(type(editor.pages.widget(i)).__name__))
    with qtbot.waitSignal(editor.loaded, timeout=60000):
        editor.open_file(target)
        assert editor.is_loading
    ticker.stop()
    assert len(ticks) >= 3, "the event loop must keep running while a big file loads"
    assert "QLabel" in pages_seen, "a loading page is shown"
    assert editor.text_edit.document().characterCount() == len(content) + 1
    assert editor.text() == content
    assert not editor.is_dirty and "syntax highlighting is off" in editor.notice_bar.text


def test_find_bar_counts_and_moves_between_matches(qtbot, make_editor, tmp_path):
    target = tmp_path / "HISTORY.md"
    target.write_text("alpha Needle\nbeta\nneedle gamma\nneedle\n", encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    editor.activateWindow()
    editor.text_edit.setFocus()
    editor.show_find()
    assert editor.find_bar.isVisible()
    qtbot.keyClicks(editor.find_bar.field, "needle")
    assert editor.find_bar.match_count == 3
    assert editor.text_edit.textCursor().selectionStart() == 6
    qtbot.keyClick(editor.find_bar.field, Qt.Key.Key_Return)
    assert editor.text_edit.textCursor().selectionStart() == len("alpha Needle\nbeta\n")
    qtbot.waitUntil(lambda: editor.find_bar.count_label.text() == "2 of 3")
    qtbot.keyClick(editor.find_bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert editor.text_edit.textCursor().selectionStart() == 6
    qtbot.keyClick(editor.find_bar.field, Qt.Key.Key_Escape)
    assert not editor.find_bar.isVisible()


def test_preview_toggle_renders_markdown(qtbot, make_editor, tmp_path):
    target = tmp_path / "AGENTS.md"
    target.write_text("# Agent rules\n\n- be **kind**\n", encoding="utf-8")
    editor = make_editor()
    open_and_wait(qtbot, editor, target)
    editor.set_preview_visible(True)
    assert editor.pages.currentWidget() is editor.preview and editor.preview_button.isChecked()
    rendered = editor.preview.toPlainText()
    assert "Agent rules" in rendered and "#" not in rendered and "**" not in rendered
    editor.preview_button.click()
    assert editor.pages.currentWidget() is editor.text_edit and not editor.preview_visible


def test_read_snapshot_notes_mixed_line_endings(tmp_path):
    target = tmp_path / "x.md"
    target.write_bytes(b"a\r\nb\nc\r\n")
    snap = read_snapshot(target)
    assert snap.newline == "\n" and snap.mixed_newlines
    target.write_bytes(b"a\r\nb\r\n")
    snap = read_snapshot(target)
    assert snap.newline == "\r\n" and not snap.mixed_newlines and snap.text == "a\nb\n"


def test_editor_follows_a_dark_application_palette(qtbot, make_editor, qapp):
    from nanobot_desktop.gui.common.theme import dark_palette

    editor = make_editor()
    assert not editor.highlighter.dark
    original = qapp.palette()
    try:
        qapp.setPalette(dark_palette())
        qtbot.waitUntil(lambda: editor.highlighter.dark)
    finally:
        qapp.setPalette(original)
    qtbot.waitUntil(lambda: not editor.highlighter.dark)
