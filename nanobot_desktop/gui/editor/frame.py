"""The widgets of the Markdown editor, without its file logic (that lives in editor.py).

Top to bottom: a toolbar (file name, Find, Preview, Save), three message bars (conflict, notice,
error), the text / rendered preview / "Loading…" pages with an optional diff panel under them, and
the find bar.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QSplitter, QStackedWidget, QTextBrowser, QToolButton,
                               QVBoxLayout, QWidget)

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.editor.code_edit import CodeEdit
from nanobot_desktop.gui.editor.conflict_bar import MessageBar
from nanobot_desktop.gui.editor.diff_view import DiffView
from nanobot_desktop.gui.editor.file_io import file_size_label
from nanobot_desktop.gui.editor.find_bar import FindBar
from nanobot_desktop.gui.editor.md_highlighter import MarkdownHighlighter, palette_is_dark

PREVIEW_LIMIT_CHARS = 512 * 1024
"""QTextBrowser.setMarkdown blocks the GUI thread (~0.3 s for 500 KB), so bigger texts are not rendered."""


class EditorFrame(QWidget):
    """Layout, find, preview and theme handling; subclasses provide `save()`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._preview_on = False
        self.title_label = QLabel(self)
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        self.find_button = self._tool_button(translate("Editor", "Find"), translate("Editor", "Find in file (Ctrl+F)"), self.show_find)
        self.preview_button = self._tool_button(translate("Editor", "Preview"),
                                                 translate("Editor", "Rendered preview (Ctrl+Shift+P)"), None)
        self.preview_button.setCheckable(True)
        self.preview_button.toggled.connect(self.set_preview_visible)
        self.save_button = self._tool_button(translate("Editor", "Save"), translate("Editor", "Save (Ctrl+S)"), self.save)
        toolbar = QHBoxLayout()
        toolbar.setContentsMargins(4, 2, 4, 2)
        toolbar.addWidget(self.title_label, 1)
        for button in (self.find_button, self.preview_button, self.save_button):
            toolbar.addWidget(button)

        self.conflict_bar = MessageBar("conflictBar", self)
        self.notice_bar = MessageBar("noticeBar", self)
        self.error_bar = MessageBar("errorBar", self)

        self.text_edit = CodeEdit(self)
        self.text_edit.setAccessibleName(translate("Editor", "File contents"))
        self.text_edit.setReadOnly(True)
        self.highlighter = MarkdownHighlighter(self.text_edit.document(), dark=palette_is_dark(self.palette()))
        self.preview = QTextBrowser(self)
        self.preview.setAccessibleName(translate("Editor", "Preview"))
        self.preview.setOpenExternalLinks(True)
        self.loading_label = QLabel("", self)
        self.loading_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages = QStackedWidget(self)
        for page in (self.text_edit, self.preview, self.loading_label):
            self.pages.addWidget(page)
        self.diff_view = DiffView(self)
        self.diff_view.hide()
        self.diff_view.close_requested.connect(self.diff_view.hide)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.pages)
        splitter.addWidget(self.diff_view)
        splitter.setChildrenCollapsible(False)
        self.find_bar = FindBar(self.text_edit, self)
        self.find_bar.closed.connect(self.text_edit.setFocus)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addLayout(toolbar)
        for bar in (self.conflict_bar, self.notice_bar, self.error_bar):
            layout.addWidget(bar)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.find_bar)

        for keys, slot in ((QKeySequence(QKeySequence.StandardKey.Save), self.save),
                           (QKeySequence(QKeySequence.StandardKey.Find), self.show_find),
                           (QKeySequence("Ctrl+Shift+P"), self.preview_button.toggle)):
            shortcut = QShortcut(keys, self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)

    def _tool_button(self, text: str, tip: str, slot: Callable[[], object] | None) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        if slot is not None:
            button.clicked.connect(lambda _checked=False: slot())
        return button

    def save(self) -> bool:
        raise NotImplementedError

    # ---- find and preview -----------------------------------------------------------------------
    def show_find(self) -> None:
        self.set_preview_visible(False)
        self.find_bar.open_bar()

    def set_preview_visible(self, visible: bool) -> None:
        """Toggle between the text and its rendered Markdown (rendered on demand, not per keystroke)."""
        if self.preview_button.isChecked() != visible:
            self.preview_button.setChecked(visible)  # re-enters through `toggled`
            return
        self._preview_on = visible
        if visible:
            text = self.text_edit.toPlainText()
            if len(text) > PREVIEW_LIMIT_CHARS:
                self.preview.setPlainText(translate("Editor", "Too large to preview ({size}).").format(
                    size=file_size_label(len(text))))
            else:
                self.preview.setMarkdown(text)
        if self.pages.currentWidget() is not self.loading_label:
            self.show_content_page()

    @property
    def preview_visible(self) -> bool:
        return self._preview_on

    # ---- pages and title ------------------------------------------------------------------------
    def show_loading_page(self, text: str) -> None:
        self.loading_label.setText(text)
        self.pages.setCurrentWidget(self.loading_label)

    def show_content_page(self) -> None:
        self.loading_label.clear()
        self.pages.setCurrentWidget(self.preview if self._preview_on else self.text_edit)

    def set_title(self, name: str, *, dirty: bool, tooltip: str) -> None:
        self.title_label.setText(translate("Editor", "{name} — unsaved changes").format(name=name) if dirty else name)
        self.title_label.setToolTip(tooltip)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.highlighter.set_dark(palette_is_dark(self.palette()))
