"""The assistant's Markdown message: an auto-sized QTextBrowser rendered incrementally while streaming.

Completed blocks are appended to the document once; each flush replaces only the unfinished tail.
A code fence that is still open is not re-rendered at all: its lines are appended as they complete
(`StreamingCode`), because re-highlighting a growing block on every flush is O(n²) in practice
(measured: 300 ms per flush at 67 KB of code). When the fence closes, the block is rendered whole,
once, with exact highlighting.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from PySide6.QtCore import QRectF, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices, QGuiApplication, QResizeEvent, QTextBlockFormat, QTextCursor, QTextDocument, QTextOption,
    QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QSizePolicy, QTextBrowser, QToolButton, QVBoxLayout, QWidget

from nanobot_desktop.gui.common.accessibility import describe_reply, name
from nanobot_desktop.gui.chat.message_actions import ReplyActions
from nanobot_desktop.gui.chat.reveal import HoverReveal
from nanobot_desktop.gui.chat.model import AssistantMessage
from nanobot_desktop.gui.common.design import SPACING, TYPE
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.chat.widgets import ItemWidget
from nanobot_desktop.gui.common.palette import PaletteColors, palette_colors, set_text_color
from nanobot_desktop.gui.common.widgets import plain_label
from nanobot_desktop.gui.chat.live_document import StreamingCode, append_html
from nanobot_desktop.gui.chat.wide_blocks import hold_prose
from nanobot_desktop.gui.chat.markdown_render import (
    COPY_SCHEME, IncrementalMessage, MarkdownRenderer, OpenCode, RenderedBlock, RenderUpdate, copy_label,
)

OPENABLE_SCHEMES = ("http", "https", "mailto")
# While streaming, one event-loop step renders blocks for at most about this long, then yields
# (bench/stream_stall.py: a 10 ms timer must never wait more than 16 ms).
STREAM_STEP_BUDGET_S = 0.003
# The steps of one streamed update (render the rest, then edit the document) follow each other by a
# 1 ms timer, not a posted call: Qt handles every posted call before it looks at its timers, so
# posted steps ran back to back and other timers (a waiting asyncio callback) waited for all of them.
NEXT_STEP_MS = 1
COPY_BUTTONS_DELAY_MS = 150  # code blocks' Copy buttons are placed this long after the text or width changed


def copy_button(parent: QWidget | None, index: int) -> QToolButton:
    """The Copy button of code block `index` (0-based), sized to its text; clicking it is the caller's
    to connect. Also made once by the rendering warm-up (gui/chat/warm_up.py)."""
    from nanobot_desktop.gui.common.icons import icon

    button = QToolButton(parent)
    button.setObjectName(f"copyCode{index}")
    button.setText(copy_label())
    button.setIcon(icon("copy", button.palette()))
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    button.setIconSize(QSize(14, 14))
    font = button.font()
    font.setPointSizeF(font.pointSizeF() * TYPE.small)
    button.setFont(font)
    button.setToolTip(translate("Chat", "Copy this code block"))
    button.setAccessibleName(translate("Chat", "Copy code block {number}").format(number=index + 1))
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    button.adjustSize()
    return button


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
        self.copy_buttons: dict[int, QToolButton] = {}
        """Code block number -> its Copy button, laid over the block's header (see place_copy_buttons)."""
        self._placed_for: tuple[int, int] = (-1, -1)
        # The buttons follow the text at most every COPY_BUTTONS_DELAY_MS: a reply streaming in changes
        # its document ~20 times a second, and placing them after each change was most of the stall.
        self._copy_timer = QTimer(self)
        self._copy_timer.setSingleShot(True)
        self._copy_timer.setInterval(COPY_BUTTONS_DELAY_MS)
        self._copy_timer.timeout.connect(self.place_copy_buttons)
        self._copy_lines: dict[int, tuple[int, QRectF]] = {}  # code block number -> (its header block's
        # position, the header line): kept for the blocks before the first change (they have not moved)
        self._changed_from = 0  # the first document position changed since the buttons were placed
        self.document().contentsChange.connect(self._text_changed)

    def _wanted_height(self) -> int:
        margins = self.contentsMargins()
        return math.ceil(self.document().size().height()) + margins.top() + margins.bottom()

    def fit_height(self, *_: object) -> None:
        height = self._wanted_height()
        if height != self.height():
            self.setFixedHeight(height)
        self.verticalScrollBar().setValue(0)
        if not self._copy_timer.isActive():
            self._copy_timer.start()

    def place_copy_buttons(self) -> None:
        """A real Copy button at the right of each code block's header line, where the document has
        its copy anchor (peers show a button there, not a link). Done again when the text or the
        width changes; the anchors are found by their href in the blocks that hold the anchor's text.
        Those blocks are found by QTextDocument.find (in C++), and only from the first block that
        changed (text streams in at the end; with the same width nothing above it moved): a Python walk
        over every block, done at each streamed update, cost a 64,000-character reply ~3 s of the GUI
        thread and stalls of 30 ms (bench/stream_stall.py)."""
        document = self.document()
        width = self.viewport().width()
        key = (document.revision(), width)
        if key == self._placed_for:
            return
        changed = document.findBlock(self._changed_from) if width == self._placed_for[1] else None
        start = changed.position() if changed is not None and changed.isValid() else 0
        self._placed_for = key
        self._changed_from = document.characterCount()
        layout = document.documentLayout()
        found: dict[int, QRectF] = {}  # code block number -> its header line, from `start` on
        self._copy_lines = {index: kept for index, kept in self._copy_lines.items() if kept[0] < start}
        copy_text = copy_label()
        flags = QTextDocument.FindFlag.FindCaseSensitively
        cursor = document.find(copy_text, start, flags)
        while not cursor.isNull():
            block = cursor.block()
            cursor = document.find(copy_text, block.position() + block.length(), flags)  # from the next block
            if block.text().endswith(copy_text):
                fragments = block.begin()
                while not fragments.atEnd():
                    href = fragments.fragment().charFormat().anchorHref()
                    if href.startswith(f"{COPY_SCHEME}:") and href[len(COPY_SCHEME) + 1:].isdigit() \
                            and block.layout().lineCount():
                        line = block.layout().lineAt(0).rect().translated(block.layout().position())
                        line.setRight(layout.blockBoundingRect(block).right())
                        found[int(href[len(COPY_SCHEME) + 1:])] = line
                        self._copy_lines[int(href[len(COPY_SCHEME) + 1:])] = (block.position(), line)
                    fragments += 1
        for index, line in found.items():  # the header line's rectangle: the button is centred on it
            button = self.copy_buttons.get(index) or self._make_copy_button(index)
            button.move(int(line.right()) - button.width() - SPACING.s, round(line.center().y() - button.height() / 2))
            button.show()
        for index, button in self.copy_buttons.items():
            if index not in self._copy_lines:
                button.hide()

    def _text_changed(self, position: int, _removed: int, _added: int) -> None:
        self._changed_from = min(self._changed_from, position)

    def _make_copy_button(self, index: int) -> QToolButton:
        button = copy_button(self.viewport(), index)
        button.clicked.connect(lambda: self.copy_code_requested.emit(index))
        self.copy_buttons[index] = button
        return button

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
                 on_render: Callable[[int], None] | None = None, parent: QWidget | None = None,
                 *, render: bool = True) -> None:
        """`render=False`: the Markdown is rendered by the first `refresh()` (the chat view builds a
        widget above the viewport in loop steps of their own: the widget, then its Markdown)."""
        super().__init__(item, parent)
        self._renderer = renderer
        self._on_render = on_render
        self._incremental = IncrementalMessage(renderer)
        self._live = False  # the document holds stable blocks + a replaceable tail
        self._stable_end = 0
        self._stable_format = QTextBlockFormat()  # the block format at _stable_end when it was set
        self._code: StreamingCode | None = None
        self._rendered_state: tuple[str, bool] | None = None
        self._continue_pending = False
        self._queued: RenderUpdate | None = None  # a streamed update waiting for its own loop step
        self._queued_final = False  # ... and it ends the stream: once applied, the document is no longer live
        self._queued_budget_s = STREAM_STEP_BUDGET_S  # how long one step of applying it may edit the document
        self._shown_tail = 0  # characters of the text the document shows past its finished blocks (a tail)
        self._icon_names: dict[QToolButton, str] = {}
        self._wide = False  # holds code or a table: the column's layout may widen it (wide_blocks.py)
        self._inset = (0, 0)  # the prose inset that widening asks for, in pixels (left, right)
        self._wide_checked = 0  # rendered blocks already looked at for code or a table
        self._held_to = 0  # the document before this position has its prose inset (a live reply's stable part)
        self._wide_seen = False  # one of them had some

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.xs)
        self.reasoning_button = QToolButton()
        self.reasoning_button.setCheckable(True)
        self.reasoning_button.setAutoRaise(True)
        self.reasoning_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.reasoning_button.setArrowType(Qt.ArrowType.RightArrow)
        self.reasoning_button.setText(translate("Chat", "Reasoning"))
        self.reasoning_button.toggled.connect(self._toggle_reasoning)
        self.reasoning_label = plain_label()
        self.reasoning_label.setVisible(False)
        self.browser = MessageBrowser()
        self.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        self.browser.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        self.browser.viewport().setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        self.browser.copy_code_requested.connect(self.copy_code)
        footer = QHBoxLayout()
        footer.setContentsMargins(0, 0, 0, 0)
        self._footer = footer  # inset with the prose when the reply is widened (set_prose_inset)
        self.status_label = plain_label(selectable=False)
        self.status_label.setWordWrap(False)  # a few words ("Cut off by the endpoint · Not saved"): one line
        self.copy_button = QToolButton()
        self.copy_button.setText(translate("Chat", "Copy"))
        self.copy_button.setAutoRaise(True)
        self.copy_button.setToolTip(translate("Chat", "Copy the message's Markdown source"))
        self.copy_button.clicked.connect(self.copy_message)
        self.retry_button = QToolButton()
        self.retry_button.setText(translate("Chat", "Retry save"))
        self.retry_button.setToolTip(translate("Chat", "Write this reply to the session file again (after freeing space)"))
        self.retry_button.clicked.connect(lambda: self.retry_save_requested.emit())
        self.model_label = plain_label(selectable=False)  # which model wrote it: small, at the footer's start
        self.model_label.setObjectName("reply_model")
        self.model_label.setWordWrap(False)
        self.model_label.hide()
        footer.addWidget(self.model_label)
        footer.addWidget(self.status_label)
        footer.addWidget(self.retry_button)
        footer.addStretch(1)
        self.message_actions = ReplyActions()
        self.message_actions.regenerate_requested.connect(lambda: self.regenerate_requested.emit(self.uid))
        self.message_actions.fork_stepped.connect(lambda step: self.fork_stepped.emit(self.uid, step))
        footer.addWidget(self.message_actions)
        footer.addWidget(self.copy_button)
        self._final = True
        """Whether this reply ends its turn (no tool step follows): only then has it actions (set_final)."""
        for button, icon_name in ((self.copy_button, "copy"), (self.message_actions.regenerate_button, "regenerate")):
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
            button.setAccessibleName(button.text())
            self._icon_names[button] = icon_name
        self.reveal = HoverReveal(self, [self.copy_button, self.message_actions.regenerate_button])
        layout.addWidget(self.reasoning_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.reasoning_label)
        layout.addWidget(self.browser)
        layout.addLayout(footer)
        self.apply_colors(palette_colors(self.palette()))
        if render:
            self.refresh()
        else:
            self._refresh_reasoning(item)
            self._refresh_status(item)

    def prepare(self, budget_s: float) -> bool:
        """Render the Markdown's blocks for about `budget_s` at most (at least one), keeping them for the
        first `refresh()`: a long reply made above the viewport is rendered over several loop turns
        before its document is set. True when only the last block is left (the `refresh()` does it)."""
        return self._incremental.update(self.message.text, final=False, budget_s=budget_s, with_tail=False) is not None

    @property
    def rendered(self) -> bool:
        """Whether the document shows the message's text (False until the first `refresh()` of a
        widget made with `render=False`)."""
        return self._rendered_state is not None or self._live

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

    def refresh(self, budget_s: float | None = None) -> None:
        """Show the message's current state. While it streams, `budget_s` bounds one step's
        rendering: past it, the rest is rendered in following event-loop steps (the view's flush
        timer passes STREAM_STEP_BUDGET_S; a direct call renders everything now)."""
        message = self.message
        self._refresh_reasoning(message)
        self._refresh_status(message)
        state = (message.text, message.streaming)
        if state == self._rendered_state:
            return
        if self._rendered_state is None or self._rendered_state[1] != message.streaming:
            self._name_for_screen_readers(message)  # on start and end, never per streamed token
        self._rendered_state = state
        final = not message.streaming
        # A streamed reply's last blocks are rendered step by step too; a message shown whole is one pass.
        stepwise = budget_s is not None and (self._live or not final)
        update = self._incremental.update(message.text, final=final, budget_s=budget_s if stepwise else None)
        if update is None:  # more blocks to render: go on in the next event-loop step
            self._rendered_state = None
            if not self._continue_pending:
                self._continue_pending = True
                QTimer.singleShot(NEXT_STEP_MS, self, self._continue_render)
            return
        if self._live and not update.reset and stepwise:
            # Stepwise: the document edit (and the paint it causes) is a loop step of its own, so
            # a waiting timer runs between rendering and painting.
            self._queue_apply(update, final, STREAM_STEP_BUDGET_S if budget_s is None else budget_s)
            return  # _on_render is told when the document has changed
        elif self._live and not update.reset:
            self._apply_queued(notify=False)
            self._apply_live(update.blocks, update.tail, update.open_code)
        elif not final:  # the first render of a streaming message (or its text was replaced)
            self._queued = None
            self.browser.document().clear()
            self._stable_end = self._held_to = 0
            self._stable_format = self.browser.document().begin().blockFormat()
            self._code = None
            self._shown_tail = 0
            self._live = True
            self._apply_live(list(self._incremental.blocks), update.tail, update.open_code)
        else:  # a message loaded from history, or replaced by the final text: one O(n) pass
            self._queued = None
            self.browser.setHtml(self._incremental.html())
            self._held_to = 0
        if final:
            self._live = False  # the streamed document stays: re-rendering it all would stall
        self._fit_wide()
        if self._on_render is not None:
            self._on_render(self.uid)

    def _queue_apply(self, update: RenderUpdate, final: bool, budget_s: float) -> None:
        """Keep an update for the next loop step; one that comes first is merged into it (blocks
        append, the newer tail replaces the older)."""
        queued = self._queued
        if queued is None:
            QTimer.singleShot(NEXT_STEP_MS, self, self._apply_step)
        else:
            update = update._replace(blocks=queued.blocks + update.blocks)
        self._queued = update
        self._queued_final = final
        self._queued_budget_s = budget_s

    def _apply_queued(self, notify: bool = True) -> None:
        """The queued update, all of it now (a direct refresh, which renders everything at once)."""
        queued, self._queued = self._queued, None
        if queued is not None and self._live:
            self._apply_live(queued.blocks, queued.tail, queued.open_code)
            self._applied(notify)

    def _apply_step(self) -> None:
        """One loop step of the queued update: its blocks one edit each until the step's budget is spent,
        the rest (and then the new tail) in the next steps. Laying out a table or a quote takes 1-2 ms of
        the edit alone and 3.6-7 ms in a stream, and a flush that finished several of them had been one
        6-13 ms step (bench/stream_stall.py). The blocks that replace what the document shows past its
        finished ones (the old tail) go in the first step whatever the budget, so no text a person saw
        disappears for a step."""
        queued, self._queued = self._queued, None
        if queued is None or not self._live:
            return
        deadline = time.perf_counter() + self._queued_budget_s
        blocks, shown = queued.blocks, self._shown_tail
        done = 0
        while done < len(blocks) and (done == 0 or shown > 0 or time.perf_counter() < deadline):
            self._apply_live(blocks[done:done + 1], None, None)
            shown -= len(blocks[done].source)
            done += 1
        rest = blocks[done:]
        tail_waits = queued.tail is not None or queued.open_code is not None
        if rest or (blocks and tail_waits and time.perf_counter() >= deadline):  # the tail in a step of its own
            self._queued = queued._replace(blocks=rest)
            QTimer.singleShot(NEXT_STEP_MS, self, self._apply_step)
            self._fit_wide()
            return
        self._apply_live([], queued.tail, queued.open_code)
        self._applied(notify=True)

    def _applied(self, notify: bool) -> None:
        if self._queued_final:
            self._live = False  # the streamed document stays: re-rendering it all would stall
        self._fit_wide()
        if notify and self._on_render is not None:
            self._on_render(self.uid)

    def _continue_render(self) -> None:
        self._continue_pending = False
        self.refresh(STREAM_STEP_BUDGET_S)

    def _apply_live(self, blocks: list[RenderedBlock], tail: RenderedBlock | None, open_code: OpenCode | None) -> None:
        """Append completed blocks once, then replace the tail (or extend a streaming code block)."""
        document = self.browser.document()
        cursor = QTextCursor(document)
        held_from = self._held_to
        cursor.beginEditBlock()  # one layout pass per flush, not one per insertion
        try:
            self._edit_live(cursor, blocks, tail, open_code)
            if self._inset != (0, 0):  # in the same edit: the new blocks are laid out once, inset
                hold_prose(document, *self._inset, start=held_from)
                self._held_to = self._stable_end
        finally:
            cursor.endEditBlock()
        if self._inset != (0, 0) and any("<table" in (block.html or "") for block in (*blocks, tail) if block):
            # A table inserted in an edit is no frame until the edit ends: inside it, its cells looked
            # like prose and were inset, and the table itself was not. Held again now that it is one.
            hold_prose(document, *self._inset, start=held_from)

    def _edit_live(self, cursor: QTextCursor, blocks: list[RenderedBlock], tail: RenderedBlock | None,
                   open_code: OpenCode | None) -> None:
        if blocks and blocks[0].html is None and self._code is not None:
            # A big code block just closed: keep the streamed lines (finishing the last ones)
            # instead of rendering it again whole.
            self._code.extend(OpenCode(self._code.language, blocks[0].codes[0] + "\n", blocks[0].code_offset))
            cursor.movePosition(QTextCursor.MoveOperation.End)
            self._stable_end = cursor.position()
            self._stable_format = cursor.blockFormat()
            self._code = None
            blocks = blocks[1:]
        if blocks or open_code is None or self._code is None:
            cursor.setPosition(self._stable_end)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            cursor.setBlockFormat(self._stable_format)  # not the removed tail's (it can leave its own)
            self._code = None
            for block in blocks:
                append_html(cursor, self._incremental.html_of(block))
            cursor.movePosition(QTextCursor.MoveOperation.End)
            self._stable_end = cursor.position()
            self._stable_format = cursor.blockFormat()
        self._shown_tail = 0
        if tail is not None and tail.html is not None:
            append_html(cursor, tail.html)
            self._shown_tail = len(tail.source)
        elif open_code is not None:
            if self._code is None:
                self._code = StreamingCode.start(cursor, self._renderer, open_code)
            self._code.extend(open_code)

    def _refresh_reasoning(self, message: AssistantMessage) -> None:
        has_reasoning = bool(message.reasoning.strip())
        self.reasoning_button.setVisible(has_reasoning)
        if has_reasoning and self.reasoning_label.isVisibleTo(self):
            self.reasoning_label.setText(message.reasoning)

    def _name_for_screen_readers(self, message: AssistantMessage) -> None:
        if message.streaming:
            name(self.browser, translate("Chat", "Reply from nanobot, being written"), "")
        else:
            name(self.browser, translate("Chat", "Reply from nanobot"), describe_reply(message.text))

    def _toggle_reasoning(self, shown: bool) -> None:
        self.reasoning_button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.reasoning_label.setText(self.message.reasoning)
        self.reasoning_label.setVisible(shown)

    def _refresh_status(self, message: AssistantMessage) -> None:
        if message.streaming:
            status = translate("Chat", "Writing…")
        elif message.stopped:
            status = translate("Chat", "Stopped")
        elif message.cut:
            status = translate("Chat", "Cut off by the endpoint")
        else:
            status = ""
        if message.unsaved and not message.streaming:
            not_saved = translate("Chat", "Not saved")
            status = f"{status} · {not_saved}" if status else not_saved
        self.status_label.setText(status)
        self.status_label.setVisible(bool(status))
        self.retry_button.setVisible(message.unsaved and not message.streaming)
        self.copy_button.setVisible(self._final and not message.streaming and bool(message.text))
        self.message_actions.regenerate_button.setVisible(self._final)
        self.message_actions.setVisible(not message.streaming and (self._final or message.fork is not None))
        self.message_actions.set_fork(message.fork)
        self.model_label.setText(message.model)
        self.model_label.setToolTip(translate("Chat", "Written by {model}").format(model=message.model)
                                    if message.model else "")
        self.model_label.setVisible(bool(message.model) and not message.streaming)

    @property
    def wants_wide(self) -> bool:
        """Whether the reply holds code or a table, which may use more than the reading width."""
        return self._wide

    def set_prose_inset(self, left: int, right: int) -> None:
        """Keep the prose at the column's width while the widget is wider (ColumnLayout calls it)."""
        if (left, right) != self._inset:
            self._inset = (left, right)
            hold_prose(self.browser.document(), left, right)
            self._held_to = self._stable_end if self._live else 0
            self._footer.setContentsMargins(left, 0, right, 0)  # the reply's actions stay under its prose
            self.reasoning_label.setContentsMargins(left, 0, right, 0)

    def _fit_wide(self) -> None:
        """Note whether the reply now holds code or a table. Only the blocks rendered since the last
        look are looked at (a long streamed reply costs nothing more per flush); a replaced text starts over."""
        incremental = self._incremental
        blocks = incremental.blocks
        if len(blocks) < self._wide_checked:  # the text was replaced
            self._wide_checked, self._wide_seen = 0, False
        self._wide_seen = self._wide_seen or any(block.codes for block in blocks[self._wide_checked:]) \
            or bool(self.browser.document().rootFrame().childFrames())  # tables are a reply's only frames
        self._wide_checked = len(blocks)
        tail = incremental.tail
        wide = self._wide_seen or self._code is not None or incremental.open_code is not None \
            or (tail is not None and bool(tail.codes))
        if wide != self._wide:
            self._wide = wide
            self.updateGeometry()  # the column's layout places it again
        if self._inset != (0, 0):  # new blocks get the inset too; a live reply's finished ones have it
            hold_prose(self.browser.document(), *self._inset, start=self._held_to)
            self._held_to = self._stable_end if self._live else 0

    def set_final(self, final: bool) -> None:
        """Whether a tool step follows this reply in its turn: an intermediate "Let me look…" has no
        Copy or Regenerate (they belong under the answer), only its version switcher if it forks."""
        if final != self._final:
            self._final = final
            self._refresh_status(self.message)

    @property
    def is_final(self) -> bool:
        return self._final

    def apply_colors(self, colors: PaletteColors) -> None:
        from nanobot_desktop.gui.common.icons import icon

        for button, icon_name in self._icon_names.items():
            button.setIcon(icon(icon_name, self.palette()))
        for button in self.browser.copy_buttons.values():
            button.setIcon(icon("copy", self.palette()))
        set_text_color(self.reasoning_label, colors.muted)
        set_text_color(self.status_label, colors.muted)
        set_text_color(self.model_label, colors.muted)

