"""The assistant's Markdown message: an auto-sized QTextBrowser rendered incrementally while streaming.

Completed blocks are appended to the document once; each flush replaces only the unfinished tail.
A code fence that is still open is not re-rendered at all: its lines are appended as they complete
(`StreamingCode`), because re-highlighting a growing block on every flush is O(n²) in practice
(measured: 300 ms per flush at 67 KB of code). When the fence closes, the block is rendered whole,
once, with exact highlighting.
"""

from __future__ import annotations

import math
from typing import Callable

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor, QDesktopServices, QFont, QGuiApplication, QResizeEvent, QTextBlockFormat, QTextCharFormat,
    QTextCursor, QTextDocument, QTextOption, QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QSizePolicy, QTextBrowser, QToolButton, QVBoxLayout, QWidget

from nanobot_desktop.gui.chat.message_actions import ReplyActions
from nanobot_desktop.gui.chat.model import AssistantMessage
from nanobot_desktop.gui.chat.widgets import ItemWidget
from nanobot_desktop.gui.common.palette import PaletteColors, palette_colors, set_text_color
from nanobot_desktop.gui.common.widgets import plain_label
from nanobot_desktop.gui.chat.markdown_render import (
    COPY_SCHEME, IncrementalMessage, MarkdownRenderer, OpenCode, RenderedBlock, RenderStyle, highlight_lines,
)

OPENABLE_SCHEMES = ("http", "https", "mailto")


class MessageBrowser(QTextBrowser):
    """A QTextBrowser as tall as its document: no inner scrollbars, text selectable, links handled
    by us (Copy links, and only http/https/mailto are opened)."""

    copy_code_requested = Signal(int)
    """The Copy link of code block N was clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.setAutoFillBackground(False)
        self.document().setDocumentMargin(2)
        self.document().documentLayout().documentSizeChanged.connect(self.fit_height)
        self.anchorClicked.connect(self._on_anchor)
        self.setFixedHeight(self._wanted_height())

    def _wanted_height(self) -> int:
        margins = self.contentsMargins()
        return math.ceil(self.document().size().height()) + margins.top() + margins.bottom()

    def fit_height(self, *_: object) -> None:
        height = self._wanted_height()
        if height != self.height():
            self.setFixedHeight(height)
        self.verticalScrollBar().setValue(0)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.fit_height()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        event.ignore()  # let the chat's scroll area scroll

    def _on_anchor(self, url: QUrl) -> None:
        if url.scheme() == COPY_SCHEME:
            try:
                self.copy_code_requested.emit(int(url.path()))
            except ValueError:
                pass
        elif url.scheme() in OPENABLE_SCHEMES:
            QDesktopServices.openUrl(url)


_OWN_BLOCK_TAGS = ("<table", "<ol", "<ul", "<hr")  # Qt starts a new block for these by itself


def _append_html(cursor: QTextCursor, fragment: str) -> None:
    """Append rendered HTML as new paragraphs, laid out as `setHtml` of the whole would lay them out
    (insertHtml alone merges the fragment's first paragraph into the document's last block)."""
    cursor.movePosition(QTextCursor.MoveOperation.End)
    block = cursor.block()
    if fragment.startswith(("<ol", "<ul")):
        needs_block = block.length() > 1 and block.textList() is not None  # or the lists would merge
    elif fragment.startswith(_OWN_BLOCK_TAGS):
        needs_block = False
    elif block.length() > 1:
        needs_block = True
    else:  # an empty last block: after a table, setHtml keeps it as a gap before the next paragraph
        previous = block.previous()
        needs_block = previous.isValid() and QTextCursor(previous).currentTable() is not None
    if needs_block:
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
    start = cursor.position()
    cursor.insertHtml(fragment)
    if not fragment.startswith(("<p>", *_OWN_BLOCK_TAGS)):
        # The fragment's first paragraph was merged into the block it was inserted into and lost
        # its own format (alignment, background, margins of a code box or heading): give it back.
        parsed = QTextDocument()
        parsed.setHtml(fragment)
        if parsed.begin().textList() is None:
            fixer = QTextCursor(cursor.document())
            fixer.setPosition(start)
            fixer.setBlockFormat(parsed.begin().blockFormat())


class StreamingCode:
    """A fenced code block that is still streaming: its box is inserted once at the end of the
    document, then each flush appends only the newly completed lines, highlighted line by line.
    Code blocks are paragraphs with a background (not a table): Qt lays out root-frame paragraphs
    incrementally, but re-lays out a whole table whenever a cell changes."""

    def __init__(self, document: QTextDocument, style: RenderStyle, language: str) -> None:
        self._document = document
        self.language = language
        self._style = style
        self._shown = 0  # characters of the code already in the document
        self._formats: dict[tuple[object, ...], QTextCharFormat] = {}

    @classmethod
    def start(cls, cursor: QTextCursor, renderer: MarkdownRenderer, code: OpenCode) -> "StreamingCode":
        fence = "~~~" if "```" in code.code else "```"
        # A placeholder character keeps the code paragraph (and its monospace format) in the HTML.
        skeleton = renderer.render_block(f"{fence}{code.language}\nx\n{fence}", code.index)
        _append_html(cursor, skeleton.html or "")
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.deletePreviousChar()
        return cls(cursor.document(), renderer.style, code.language)

    def extend(self, code: OpenCode) -> None:
        complete = code.code.rfind("\n") + 1  # whole lines only: the last one may still change
        if complete <= self._shown:
            return
        cursor = QTextCursor(self._document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        base = cursor.charFormat()
        inner_block = QTextBlockFormat(cursor.blockFormat())
        inner_block.setTopMargin(0)
        inner_block.setBottomMargin(0)
        last_block = QTextBlockFormat(cursor.blockFormat())
        last_block.setTopMargin(0)
        new_text = code.code[self._shown:complete - 1]
        if self._shown:
            new_text = "\n" + new_text
        for text, style in highlight_lines(self.language, new_text, self._style):
            lines = text.split("\n")
            for number, line in enumerate(lines):
                if number:  # a new line of the box; only its last line keeps the bottom margin
                    cursor.setBlockFormat(inner_block)
                    cursor.insertBlock(last_block, base)
                if line:
                    cursor.insertText(line, self._format(base, style))
        self._shown = complete

    def _format(self, base: QTextCharFormat, style: dict[str, object]) -> QTextCharFormat:
        key = (style.get("color"), style.get("bold"), style.get("italic"))
        text_format = self._formats.get(key)
        if text_format is None:
            text_format = QTextCharFormat(base)
            if style.get("color"):
                text_format.setForeground(QColor(f"#{style['color']}"))
            text_format.setFontWeight(QFont.Weight.Bold if style.get("bold") else QFont.Weight.Normal)
            text_format.setFontItalic(bool(style.get("italic")))
            self._formats[key] = text_format
        return text_format


class AssistantWidget(ItemWidget):
    """Markdown reply. While streaming, completed blocks are appended to the document once and
    only the growing tail is replaced, so each flush costs the size of the tail, not the message."""

    retry_save_requested = Signal()
    """The person pressed *Retry save* on a reply the disk would not take."""
    regenerate_requested = Signal(int)
    """(uid): *Regenerate* (a new reply in a branch; gui/chat/branching.py)."""
    fork_stepped = Signal(int, int)
    """(uid, -1 or +1): the "‹ 2/3 ›" switcher was used."""

    def __init__(self, item: AssistantMessage, renderer: MarkdownRenderer,
                 on_render: Callable[[int], None] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self._renderer = renderer
        self._on_render = on_render
        self._incremental = IncrementalMessage(renderer)
        self._live = False  # the document holds stable blocks + a replaceable tail
        self._stable_end = 0
        self._code: StreamingCode | None = None
        self._rendered_state: tuple[str, bool] | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.reasoning_button = QToolButton()
        self.reasoning_button.setCheckable(True)
        self.reasoning_button.setAutoRaise(True)
        self.reasoning_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.reasoning_button.setArrowType(Qt.ArrowType.RightArrow)
        self.reasoning_button.setText("Reasoning")
        self.reasoning_button.toggled.connect(self._toggle_reasoning)
        self.reasoning_label = plain_label()
        self.reasoning_label.setVisible(False)
        self.browser = MessageBrowser()
        self.browser.copy_code_requested.connect(self.copy_code)
        footer = QHBoxLayout()
        footer.setContentsMargins(0, 0, 0, 0)
        self.status_label = plain_label(selectable=False)
        self.status_label.setWordWrap(False)  # a few words ("Cut off by the endpoint · Not saved"): one line
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy")
        self.copy_button.setAutoRaise(True)
        self.copy_button.setToolTip("Copy the message's Markdown source")
        self.copy_button.clicked.connect(self.copy_message)
        self.retry_button = QToolButton()
        self.retry_button.setText("Retry save")
        self.retry_button.setToolTip("Write this reply to the session file again (after freeing space)")
        self.retry_button.clicked.connect(lambda: self.retry_save_requested.emit())
        footer.addWidget(self.status_label)
        footer.addWidget(self.retry_button)
        footer.addStretch(1)
        self.message_actions = ReplyActions()
        self.message_actions.regenerate_requested.connect(lambda: self.regenerate_requested.emit(self.uid))
        self.message_actions.switcher.stepped.connect(lambda step: self.fork_stepped.emit(self.uid, step))
        footer.addWidget(self.message_actions)
        footer.addWidget(self.copy_button)
        layout.addWidget(self.reasoning_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.reasoning_label)
        layout.addWidget(self.browser)
        layout.addLayout(footer)
        self.apply_colors(palette_colors(self.palette()))
        self.refresh()

    @property
    def message(self) -> AssistantMessage:
        assert isinstance(self.item, AssistantMessage)
        return self.item

    def codes(self) -> list[str]:
        return self._incremental.codes

    def copy_code(self, index: int) -> None:
        codes = self.codes()
        if 0 <= index < len(codes):
            QGuiApplication.clipboard().setText(codes[index])

    def copy_message(self) -> None:
        QGuiApplication.clipboard().setText(self.message.text)

    def set_renderer(self, renderer: MarkdownRenderer) -> None:
        """New colours (theme change): render everything again with the new renderer."""
        self._renderer = renderer
        self._incremental = IncrementalMessage(renderer)
        self._live = False
        self._rendered_state = None
        self.refresh()

    def refresh(self) -> None:
        message = self.message
        self._refresh_reasoning(message)
        self._refresh_status(message)
        state = (message.text, message.streaming)
        if state == self._rendered_state:
            return
        self._rendered_state = state
        final = not message.streaming
        update = self._incremental.update(message.text, final=final)
        if self._live and not update.reset:
            self._apply_live(update.blocks, update.tail, update.open_code)
        elif not final:  # the first render of a streaming message (or its text was replaced)
            self.browser.document().clear()
            self._stable_end = 0
            self._code = None
            self._live = True
            self._apply_live(list(self._incremental.blocks), update.tail, update.open_code)
        else:  # a message loaded from history, or replaced by the final text: one O(n) pass
            self.browser.setHtml(self._incremental.html())
        if final:
            self._live = False  # the streamed document stays: re-rendering it all would stall
        if self._on_render is not None:
            self._on_render(self.uid)

    def _apply_live(self, blocks: list[RenderedBlock], tail: RenderedBlock | None, open_code: OpenCode | None) -> None:
        """Append completed blocks once, then replace the tail (or extend a streaming code block)."""
        document = self.browser.document()
        cursor = QTextCursor(document)
        cursor.beginEditBlock()  # one layout pass per flush, not one per insertion
        try:
            self._edit_live(cursor, blocks, tail, open_code)
        finally:
            cursor.endEditBlock()

    def _edit_live(self, cursor: QTextCursor, blocks: list[RenderedBlock], tail: RenderedBlock | None,
                   open_code: OpenCode | None) -> None:
        if blocks and blocks[0].html is None and self._code is not None:
            # A big code block just closed: keep the streamed lines (finishing the last ones)
            # instead of rendering it again whole.
            self._code.extend(OpenCode(self._code.language, blocks[0].codes[0] + "\n", blocks[0].code_offset))
            cursor.movePosition(QTextCursor.MoveOperation.End)
            self._stable_end = cursor.position()
            self._code = None
            blocks = blocks[1:]
        if blocks or open_code is None or self._code is None:
            cursor.setPosition(self._stable_end)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            self._code = None
            for block in blocks:
                _append_html(cursor, self._incremental.html_of(block))
            cursor.movePosition(QTextCursor.MoveOperation.End)
            self._stable_end = cursor.position()
        if tail is not None and tail.html is not None:
            _append_html(cursor, tail.html)
        elif open_code is not None:
            if self._code is None:
                self._code = StreamingCode.start(cursor, self._renderer, open_code)
            self._code.extend(open_code)

    def _refresh_reasoning(self, message: AssistantMessage) -> None:
        has_reasoning = bool(message.reasoning.strip())
        self.reasoning_button.setVisible(has_reasoning)
        if has_reasoning and self.reasoning_label.isVisibleTo(self):
            self.reasoning_label.setText(message.reasoning)

    def _toggle_reasoning(self, shown: bool) -> None:
        self.reasoning_button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.reasoning_label.setText(self.message.reasoning)
        self.reasoning_label.setVisible(shown)

    def _refresh_status(self, message: AssistantMessage) -> None:
        if message.streaming:
            status = "Writing…"
        elif message.stopped:
            status = "Stopped"
        elif message.cut:
            status = "Cut off by the endpoint"
        else:
            status = ""
        if message.unsaved and not message.streaming:
            status = f"{status} · Not saved" if status else "Not saved"
        self.status_label.setText(status)
        self.status_label.setVisible(bool(status))
        self.retry_button.setVisible(message.unsaved and not message.streaming)
        self.copy_button.setVisible(not message.streaming and bool(message.text))
        self.message_actions.setVisible(not message.streaming)
        self.message_actions.switcher.set_fork(message.fork)

    def apply_colors(self, colors: PaletteColors) -> None:
        set_text_color(self.reasoning_label, colors.muted)
        set_text_color(self.status_label, colors.muted)

