"""Keyboard only: the paths a person without a mouse takes, driven with key events alone.

The walk: from launch, send a message, open the inspector, answer an approval, open Memory, save it,
open Settings and change the theme. Then the pieces on their own: Tab never stops off screen, F6
cycles the regions, the shortcuts list is the action registry's, text size steps, and every
focusable widget of the window has an accessible name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QKeySequence
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QApplication, QWidget

from nanobot_desktop.gui.chat.model import ApprovalCard
from nanobot_desktop.gui.common.text_size import TEXT_SIZES
from tests.gui.window_fixtures import WAIT_MS, open_window, wait_idle

__all__ = ["open_window"]


def key(qtbot, sequence: str) -> None:
    """Press `sequence` ("Ctrl+Shift+A", "F6", "Tab") on whatever has the focus now, as a keyboard does."""
    combo = QKeySequence(sequence)[0]
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None, "nothing has the keyboard"
    qtbot.keyClick(target, combo.key(), combo.keyboardModifiers())


def type_text(qtbot, text: str) -> None:
    qtbot.keyClicks(QApplication.focusWidget(), text)


def focused() -> QWidget | None:
    return QApplication.focusWidget()


@pytest.fixture
def look_restored(qapp):
    """The walk changes the theme of the one application every test shares: put it back."""
    from nanobot_desktop.gui.common.theme import apply_theme, current_theme_mode

    style, palette, font, mode = qapp.style().name(), qapp.palette(), qapp.font(), current_theme_mode(qapp)
    yield
    qapp.setFont(font)
    apply_theme(qapp, mode, "off")
    qapp.setStyle(style)
    qapp.setPalette(palette)


def test_keyboard_only_walk(qtbot, open_window, fake_openai, tmp_path, look_restored):
    window = open_window()
    window.activateWindow()
    qtbot.waitUntil(lambda: focused() is window.composer.edit, timeout=WAIT_MS)

    # Send a message.
    fake_openai.add_text("Hello from nanobot.")
    type_text(qtbot, "Hi")
    key(qtbot, "Return")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: "Hello from nanobot." in [getattr(i, "text", "") for i in window.chat.model.items()],
                    timeout=WAIT_MS)

    # Open the inspector (its shortcut), and F6 reaches it.
    inspector_dock = window.docks["inspectorDock"]
    if not inspector_dock.isVisible() or inspector_dock.visibleRegion().isEmpty():
        key(qtbot, window.actions.get("toggle_inspectorDock").shortcut().toString())
    qtbot.waitUntil(lambda: not inspector_dock.visibleRegion().isEmpty(), timeout=WAIT_MS)
    for _ in range(len(window.access.regions())):
        if inspector_dock.isAncestorOf(focused()):
            break
        key(qtbot, "F6")
    assert inspector_dock.isAncestorOf(focused()), f"F6 never reached the inspector (focus: {focused()})"

    # Answer an approval: Ctrl+Shift+A, then D with a reason typed after R.
    fake_openai.add_tool_calls([("exec", {"command": "echo hi"})])
    fake_openai.add_text("Understood, I did not run it.")
    key(qtbot, "F6")  # back towards the chat
    while not window.pages.isAncestorOf(focused()):
        key(qtbot, "F6")
    assert focused() is window.composer.edit
    type_text(qtbot, "Run echo hi")
    key(qtbot, "Return")
    qtbot.waitUntil(lambda: bool(window.chat.pending_approvals(window.current_key)), timeout=WAIT_MS)
    call_id = window.chat.pending_approvals(window.current_key)[0]
    row = window.chat.model.row_of_call(call_id, "approval")
    card_widget = window.chat_view.widget_for_row(row)
    key(qtbot, "Ctrl+Shift+A")
    qtbot.waitUntil(lambda: focused() is card_widget.allow_once_button, timeout=WAIT_MS)
    key(qtbot, "R")
    assert focused() is card_widget.reason_edit
    type_text(qtbot, "not now")
    key(qtbot, "Return")
    wait_idle(qtbot, window)
    card = window.chat.model.item(row)
    assert isinstance(card, ApprovalCard) and (card.state, card.answer, card.reason) == ("denied", "deny", "not now")

    # Open Memory (its page shortcut), type at the end, save with Ctrl+S.
    key(qtbot, window.actions.get("toggle_memoryPage").shortcut().toString())
    qtbot.waitUntil(lambda: window.pages.page_name() == "memory_view", timeout=WAIT_MS)
    editor = window.panel("memory_view").memory_editor.text_edit
    qtbot.waitUntil(lambda: editor.isVisible() and not editor.isReadOnly(), timeout=WAIT_MS)
    for _ in range(40):
        if focused() is editor:
            break
        key(qtbot, "Tab")
    assert focused() is editor, f"Tab never reached the memory editor (focus: {focused()})"
    key(qtbot, "Ctrl+End")
    type_text(qtbot, "Keyboard users exist.")
    key(qtbot, "Ctrl+S")
    memory_file = Path(window.engine.workspace.root) / "memory" / "MEMORY.md"
    qtbot.waitUntil(lambda: memory_file.exists() and "Keyboard users exist." in memory_file.read_text(encoding="utf-8"),
                    timeout=WAIT_MS)

    # Open Settings (Ctrl+,), go to Appearance, choose Dark, save.
    key(qtbot, "Ctrl+,")
    qtbot.waitUntil(lambda: window.commands.settings_dialog is not None and window.commands.settings_dialog.isVisible(), timeout=WAIT_MS)
    dialog = window.commands.settings_dialog
    qtbot.waitUntil(lambda: dialog.isAncestorOf(focused()), timeout=WAIT_MS)
    for _ in range(dialog.tabs.count()):
        if dialog.tabs.currentWidget().isAncestorOf(dialog.theme_combo):
            break
        key(qtbot, "Ctrl+Tab")
    while focused() is not dialog.theme_combo:
        key(qtbot, "Tab")
    while dialog.theme_combo.currentData() != "dark":
        key(qtbot, "Down")
    key(qtbot, "Return")  # Save is the dialog's default button
    qtbot.waitUntil(lambda: window.engine.app_settings.theme == "dark", timeout=WAIT_MS)
    assert QApplication.palette().color(QApplication.palette().ColorRole.Window).lightness() < 128


def test_tab_never_visits_an_off_screen_widget(qtbot, open_window):
    window = open_window()
    window.resize(1200, 780)
    qtbot.waitUntil(lambda: focused() is window.composer.edit, timeout=WAIT_MS)
    window.panel("inspector")  # built now: the workspace panel sits behind its tab, off screen
    window.panel("files_view")
    seen = []
    for _ in range(60):
        key(qtbot, "Tab")
        widget = focused()
        assert widget is not None
        assert not widget.visibleRegion().isEmpty(), f"Tab stopped on {widget!r} at {widget.mapToGlobal(widget.rect().topLeft())}"
        seen.append(widget)
    assert window.sessions_panel.view in seen and window.composer.edit in seen


def test_every_focusable_widget_has_an_accessible_name(qtbot, open_window):
    window = open_window()
    assert not window.panel_errors
    missing = []
    for widget in window.findChildren(QWidget):
        if widget.isVisible() and widget.focusPolicy() & Qt.FocusPolicy.TabFocus and not widget.visibleRegion().isEmpty():
            interface = QAccessible.queryAccessibleInterface(widget)
            if interface is not None and not interface.text(QAccessible.Text.Name).strip():
                missing.append(f"{type(widget).__name__} {widget.objectName()!r}")
    assert not missing, missing
    # Buttons shown only now and then (a notice's dismiss, the find bar, a branch switcher) as well:
    # a glyph ("✕", "‹", "▲") is not a name a screen reader can say.
    glyph_named = [f"{type(b).__name__} {QAccessible.queryAccessibleInterface(b).text(QAccessible.Text.Name)!r}"
                   for b in window.findChildren(QAbstractButton)
                   if b.focusPolicy() != Qt.FocusPolicy.NoFocus and QAccessible.queryAccessibleInterface(b) is not None
                   and not any(c.isalnum() for c in QAccessible.queryAccessibleInterface(b).text(QAccessible.Text.Name))]
    assert not glyph_named, glyph_named
    # Tables and trees say what each column is, also a column that shows only marks or check boxes.
    unnamed_headers = []
    for view in window.findChildren(QAbstractItemView):
        interface = QAccessible.queryAccessibleInterface(view)
        if view.model() is None or interface is None:
            continue
        for index in range(interface.childCount()):
            child = interface.child(index)
            if child is not None and child.role() == QAccessible.Role.ColumnHeader \
                    and not child.text(QAccessible.Text.Name).strip():
                unnamed_headers.append(f"{type(view).__name__} {view.objectName()!r} column {index}")
    assert not unnamed_headers, unnamed_headers


def test_help_lists_every_shortcut_of_the_registry_and_filters(qtbot, open_window):
    window = open_window()
    window.activateWindow()
    qtbot.waitUntil(lambda: focused() is window.composer.edit, timeout=WAIT_MS)
    key(qtbot, "Ctrl+/")
    qtbot.waitUntil(lambda: window.access.shortcuts_dialog is not None and window.access.shortcuts_dialog.isVisible(), timeout=WAIT_MS)
    dialog = window.access.shortcuts_dialog
    with_keys = [a.text().replace("&", "") for a in window.actions.all().values() if a.shortcuts()]
    assert dialog.visible_rows() == with_keys
    assert "Go to waiting approval" in with_keys and "Next region" in with_keys
    qtbot.keyClicks(dialog.search, "waiting approval")
    assert dialog.visible_rows() == ["Go to waiting approval"]


def test_text_size_steps_scale_the_whole_ui_and_are_saved(qtbot, open_window, request):
    window = open_window()
    window.activateWindow()
    qtbot.waitUntil(lambda: focused() is window.composer.edit, timeout=WAIT_MS)
    app = QApplication.instance()
    base = app.font().pointSizeF()
    font_at_start = app.font()
    request.addfinalizer(lambda: app.setFont(font_at_start))  # the app is shared by every test
    key(qtbot, "Ctrl+=")
    assert window.engine.app_settings.text_size == 110
    assert abs(app.font().pointSizeF() - base * 1.1) < 0.01
    qtbot.waitUntil(lambda: abs(window.composer.edit.font().pointSizeF() - base * 1.1) < 0.01, timeout=WAIT_MS)
    for _ in range(len(TEXT_SIZES)):
        key(qtbot, "Ctrl+=")
    assert window.engine.app_settings.text_size == TEXT_SIZES[-1]
    key(qtbot, "Ctrl+0")
    assert window.engine.app_settings.text_size == 100 and abs(app.font().pointSizeF() - base) < 0.01


def test_a_focused_reply_leads_to_its_actions(qtbot, open_window, fake_openai):
    window = open_window()
    window.activateWindow()
    qtbot.waitUntil(lambda: focused() is window.composer.edit, timeout=WAIT_MS)
    fake_openai.add_text("A short reply.")
    type_text(qtbot, "Hi")
    key(qtbot, "Return")
    wait_idle(qtbot, window)
    reply = window.chat_view.widget_for_row(1)
    qtbot.waitUntil(lambda: reply.copy_button.isVisible(), timeout=WAIT_MS)
    for _ in range(30):  # Shift+Tab back from the composer, as a person would, until the reply
        if focused() is reply.browser:
            break
        key(qtbot, "Shift+Tab")
    assert focused() is reply.browser
    assert reply.browser.accessibleName() == "Reply from nanobot" and reply.browser.accessibleDescription() == "1 paragraph"
    reached = []
    for _ in range(3):
        key(qtbot, "Tab")
        reached.append(focused())
    assert reply.copy_button in reached and reply.message_actions.regenerate_button in reached, reached
