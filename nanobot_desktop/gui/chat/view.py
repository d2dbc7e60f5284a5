"""The chat pane: a scroll area with one widget per item of a `ChatModel`.

Why it is built this way (measured facts in the Qt reference §3):
- Streaming deltas only mark the message dirty; a ~40 ms single-shot timer flushes, and each flush
  re-renders only the dirty (last) message's growing tail. Earlier messages are never rebuilt.
- Only the newest `PAGE_SIZE` items get widgets; older ones are created one at a time while the user
  is at the top (and newer ones that went, at the bottom), keeping the visible content in place, so
  a long session opens at once. Each is made in event-loop turns of its own (`_build_step`: the
  widget, its Markdown (a long reply's over several), its first show out of sight, the far widgets
  going, placing it), so scrolling never holds the loop for more than about one of them
  (bench/session_open.py's scroll row). After widgets are added (a new message, a step
  up or down), those more than `MARGIN_SCREENS` screenfuls above or below the viewport are deleted
  and made again from their chat items when scrolled back to: how many exist depends on what is on
  screen, not on how long the session is (each costs ~100 kB of Qt objects; a session of 100 turns
  kept them all before). A view that cannot measure (hidden) keeps at most `MAX_WIDGETS`. When the
  model's rows run out but the session file has older history (`ChatModel.older_end`), the view asks
  for it with `older_requested`.
- (Over 400 lines: the widget window, its paging at both ends and the scroll anchoring that keeps
  the screen still while widgets come and go are one mechanism, kept in one class.)
- While the view is scrolled to the bottom it follows new content; scrolling up stops that, and
  scrolling back to the bottom resumes it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from PySide6.QtCore import QCoreApplication, QEvent, QModelIndex, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QLabel, QLayout, QScrollArea, QVBoxLayout, QWidget

from nanobot_desktop.gui.common.accessibility import name
from nanobot_desktop.gui.chat.cards import ApprovalCardWidget
from nanobot_desktop.gui.chat.model import (
    ApprovalCard, AssistantMessage, ChatItem, ChatModel, Notice, ToolCard, UserMessage,
)
from nanobot_desktop.gui.chat.message import STREAM_STEP_BUDGET_S, AssistantWidget
from nanobot_desktop.gui.chat.steps import StepGroups
from nanobot_desktop.gui.chat.widgets import ItemWidget, NoticeWidget, ToolCardWidget, UserBubble
from nanobot_desktop.gui.chat.wide_blocks import ColumnLayout
from nanobot_desktop.gui.common.design import READING_CHARS, READING_MARGIN_CHARS, SPACING, WIDE_CHARS, chars
from nanobot_desktop.gui.common.palette import mix, palette_colors
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.chat.markdown_render import MarkdownRenderer, RenderStyle

_FOLLOW_SLACK_PX = 8  # "at the bottom" tolerates a few pixels of rounding


def _is_pending_approval(widget: QWidget) -> bool:
    return isinstance(widget, ApprovalCardWidget) and isinstance(widget.item, ApprovalCard) and widget.item.state == "pending"


def _is_step(widget: QWidget) -> bool:
    """A tool call, an answered approval, or a reply a tool call follows: what a turn did on its way."""
    if isinstance(widget, ToolCardWidget):
        return True
    if isinstance(widget, AssistantWidget):
        return not widget.is_final
    return isinstance(widget, ApprovalCardWidget) and not _is_pending_approval(widget)


def render_style_for(palette: QPalette) -> RenderStyle:
    colors = palette_colors(palette)
    return RenderStyle(
        dark=colors.dark,
        border=mix(colors.base, colors.text, 0.25).name(),
        inline_code_background=mix(colors.base, colors.text, 0.10).name(),
        quote_bar=mix(colors.base, colors.text, 0.35).name(),
        muted=colors.muted.name(),
    )


EMPTY_CHAT_HINT = QT_TRANSLATE_NOOP("Chat", "Start a conversation: type a message below.\n\n"
                   "Enter sends · Shift+Enter adds a line · / for commands · drop or paste files and images to attach")


class ChatView(QWidget):
    """Shows a ChatModel; emits the user's decisions, never touches the engine itself."""

    retry_save_requested = Signal()
    """*Retry save* was pressed on a reply of the session shown."""
    approval_answered = Signal(str, str, str)
    """(call_id, answer, reason): the user answered an approval card ("allow_once", "allow_always", "deny");
    `reason` is what they wrote when denying ("" otherwise)."""
    tool_card_clicked = Signal(str)
    """(call_id): the user opened a tool card (the inspector shows that call)."""
    older_requested = Signal()
    """The user reached the oldest row of the model and the session file has older history."""
    edit_submitted = Signal(int, str)
    """(uid, text): a user message was edited and sent as a new branch."""
    regenerate_requested = Signal(int)
    """(uid): *Regenerate* on an assistant reply."""
    fork_step_requested = Signal(int, int)
    """(uid, -1 or +1): the "‹ 2/3 ›" switcher of that item was used."""

    PAGE_SIZE = 16  # about a screenful: each widget costs milliseconds (Markdown), so open makes few
    MARGIN_SCREENS = 1  # widgets are kept this many viewport heights above and below what is on screen
    MAX_WIDGETS = 64  # the bound of a view that cannot measure its viewport (hidden): a few screenfuls
    FLUSH_INTERVAL_MS = 40
    BUILD_STEP_MS = 1  # between the steps of making the next widget at the end the view is at (_build_step)

    def __init__(self, model: ChatModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.render_counts: Counter[int] = Counter()
        """Markdown renders per item uid (tests check that streaming re-renders only the last message)."""
        self._model: ChatModel | None = None
        self._widgets: list[ItemWidget] = []  # one per row in [first_loaded_row, rowCount)
        self._first_loaded = 0
        self._older_pending = False  # older_requested was emitted and its rows have not come yet
        self._dirty: set[int] = set()  # uids of assistant widgets waiting for the flush
        self._following = True
        self._adjusting = False
        self._anchor: tuple[QWidget, int] | None = None  # (widget, its y minus the scroll value)
        self._renderer = MarkdownRenderer(render_style_for(self.palette()))
        self._palette_refresh_pending = False
        self._trim_pending = False  # _trim_far_widgets waits for the layout to place what was added

        # Following the newest line waits for the paint of what just changed: Qt moves the
        # conversation by copying its pixels only when nothing in it still waits to be painted;
        # scrolled at once, a growing reply repainted the whole viewport at every flush (~5 ms of
        # each 40 ms step, bench/stream_stall.py). A timer, not a posted call: Qt sends its
        # low-priority paint request after posted calls, but before timers.
        self._follow_timer = QTimer(self)
        self._follow_timer.setSingleShot(True)
        self._follow_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._follow_timer.setInterval(1)
        self._follow_timer.timeout.connect(self._follow_to_bottom)

        # Scrolling to the top (or to the bottom, when widgets went while far up) makes the next widget in
        # steps of their own (the widget, its Markdown, ...: _build_step), each an event-loop turn: done in
        # one go, they took 15-25 ms of the loop under load (bench/session_open.py's scroll row). A timer,
        # not posted calls: Qt handles every posted call before it looks at its timers, so posted steps
        # would run back to back.
        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._build_timer.setInterval(self.BUILD_STEP_MS)
        self._build_timer.timeout.connect(self._build_step)
        self._staged: ItemWidget | None = None  # made for the next row at the end the view is at, not placed yet
        self._staged_trimmed = False  # the far widgets went since it was made
        self._staged_prepared = False  # its Markdown's blocks are rendered but the last (AssistantWidget.prepare)

        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(self.FLUSH_INTERVAL_MS)
        self._flush_timer.timeout.connect(lambda: self.flush_now(STREAM_STEP_BUDGET_S))

        self.scroll_area = QScrollArea()
        name(self.scroll_area, translate("Chat", "Conversation"))
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._container = QWidget()
        self._container.setBackgroundRole(QPalette.ColorRole.Base)
        self._container.setAutoFillBackground(True)
        self._container.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        outer = QVBoxLayout(self._container)
        outer.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)  # never shorter than the column (wide_blocks.py)
        self._outer = outer
        outer.setContentsMargins(SPACING.l, SPACING.l, SPACING.l, SPACING.l)
        outer.setSpacing(0)
        self._items_layout = ColumnLayout()  # replies with code or a table may be wider (wide_blocks.py)
        self._items_layout.setSpacing(SPACING.l)
        outer.addLayout(self._items_layout)
        self.step_groups = StepGroups(self._items_layout)
        self.empty_hint = QLabel(translate("Chat", EMPTY_CHAT_HINT))  # what a new chat shows instead of a blank pane
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        outer.addWidget(self.empty_hint, 1)
        outer.addStretch(1)
        self.scroll_area.setWidget(self._container)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll_area)

        self.scroll_area.viewport().installEventFilter(self)
        bar = self.scroll_area.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_value_changed)
        if model is not None:
            self.set_model(model)

    # --- reading width -------------------------------------------------------------------------

    def reading_width(self) -> int:
        """The widest the column of messages gets: READING_CHARS of the body font (issue 26)."""
        return chars(self.fontMetrics(), READING_CHARS)

    def side_margin(self, width: int) -> int:
        """The margin on each side of the column in a pane `width` wide: the column is centred."""
        least = chars(self.fontMetrics(), READING_MARGIN_CHARS)
        return max(least, (width - self.reading_width()) // 2)

    def column_width(self) -> int:
        """The messages' column as laid out now (what a test measures)."""
        return self._items_layout.geometry().width()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.scroll_area.viewport() and event.type() == QEvent.Type.Resize:
            margin = self.side_margin(self.scroll_area.viewport().width())
            self._items_layout.wide_width = chars(self.fontMetrics(), WIDE_CHARS)
            self._items_layout.least_margin = chars(self.fontMetrics(), READING_MARGIN_CHARS)
            if self._outer.contentsMargins().left() != margin:
                self._outer.setContentsMargins(margin, SPACING.l, margin, SPACING.l)
        return super().eventFilter(watched, event)

    # --- model ---------------------------------------------------------------------------------

    def model(self) -> ChatModel | None:
        return self._model

    def set_model(self, model: ChatModel | None) -> None:
        if self._model is not None:
            for signal, slot in self._connections():
                signal.disconnect(slot)
        self._model = model
        if model is not None:
            for signal, slot in self._connections():
                signal.connect(slot)
        self._rebuild()

    def _connections(self) -> list[tuple[Any, Callable[..., Any]]]:
        model = self._model
        assert model is not None
        return [
            (model.rowsInserted, self._on_rows_inserted),
            (model.rowsRemoved, self._rebuild),
            (model.rowsMoved, self._rebuild),
            (model.modelReset, self._rebuild),
            (model.layoutChanged, self._rebuild),
            (model.dataChanged, self._on_data_changed),
        ]

    # --- public state (also what the tests look at) --------------------------------------------

    @property
    def first_loaded_row(self) -> int:
        return self._first_loaded

    def loaded_widgets(self) -> list[ItemWidget]:
        return list(self._widgets)

    @property
    def last_loaded_row(self) -> int:
        """One past the newest row that has a widget."""
        return self._first_loaded + len(self._widgets)

    def widget_for_row(self, row: int) -> ItemWidget | None:
        index = row - self._first_loaded
        return self._widgets[index] if 0 <= index < len(self._widgets) else None

    @property
    def renderer(self) -> MarkdownRenderer:
        """The Markdown renderer shared by the messages (replaced when the palette changes)."""
        return self._renderer

    def is_following(self) -> bool:
        return self._following

    def scroll_to_bottom(self) -> None:
        if self._model is not None and self.last_loaded_row < self._model.rowCount():
            self._rebuild()  # the newest rows lost their widgets while the user was far up
            return
        self._following = True
        self._anchor = None
        bar = self.scroll_area.verticalScrollBar()
        self._set_scroll(bar.maximum())

    # --- streaming flush -----------------------------------------------------------------------

    def flush_now(self, step_budget_s: float | None = None) -> None:
        """Render the pending streaming changes now (tests call this; the timer calls it with a
        budget, so a message completing many blocks at once renders them over several loop steps)."""
        self._flush_timer.stop()
        dirty, self._dirty = self._dirty, set()
        for widget in self._widgets:
            if widget.uid in dirty:
                if isinstance(widget, AssistantWidget):
                    widget.refresh(step_budget_s)
                else:
                    widget.refresh()

    def _count_render(self, uid: int) -> None:
        self.render_counts[uid] += 1

    # --- building widgets ----------------------------------------------------------------------

    def _make_widget(self, item: ChatItem, render: bool = True) -> ItemWidget:
        """The widget of `item`; `render=False`: an assistant reply's Markdown waits for its `refresh()`."""
        widget: ItemWidget
        if isinstance(item, AssistantMessage):
            assistant_widget = AssistantWidget(item, self._renderer, self._count_render, render=render)
            assistant_widget.retry_save_requested.connect(self.retry_save_requested)
            assistant_widget.regenerate_requested.connect(self.regenerate_requested)
            assistant_widget.fork_stepped.connect(self.fork_step_requested)
            widget = assistant_widget
        elif isinstance(item, UserMessage):
            bubble = UserBubble(item)
            bubble.edit_submitted.connect(self.edit_submitted)
            bubble.fork_stepped.connect(self.fork_step_requested)
            widget = bubble
        elif isinstance(item, ToolCard):
            tool_widget = ToolCardWidget(item)
            tool_widget.clicked.connect(self.tool_card_clicked)
            widget = tool_widget
        elif isinstance(item, ApprovalCard):
            approval_widget = ApprovalCardWidget(item)
            approval_widget.answered.connect(self._on_approval_answered)
            approval_widget.expand_requested.connect(self._on_approval_expand)
            widget = approval_widget
        elif isinstance(item, Notice):
            widget = NoticeWidget(item)
        else:
            raise TypeError(f"the chat cannot show a {type(item).__name__}")
        return widget

    def _clear_widgets(self) -> None:
        self._drop_staged()
        self.step_groups.detach()
        for widget in self._widgets:
            self._items_layout.removeWidget(widget)
            widget.hide()
            widget.deleteLater()
        self._widgets = []
        self._dirty.clear()
        self._anchor = None

    def _rebuild(self, *_: object) -> None:
        """Show the newest page of the model (after a reset, removal or move)."""
        self._clear_widgets()
        self._older_pending = False
        model = self._model
        count = model.rowCount() if model is not None else 0
        self._first_loaded = max(0, count - self.PAGE_SIZE)
        if model is not None:
            for row in range(self._first_loaded, count):
                widget = self._make_widget(model.item(row))
                self._widgets.append(widget)
                self._items_layout.addWidget(widget)
        self._following = True
        self._update_empty_hint()
        self._mark_final_replies()
        self.scroll_to_bottom()
        QTimer.singleShot(0, self, self._fill_viewport)

    def _update_empty_hint(self) -> None:
        self.empty_hint.setVisible(self._model is None or self._model.rowCount() == 0)

    def _on_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        model = self._model
        if model is None or parent.isValid():
            return
        self._update_empty_hint()
        if first < self._first_loaded:
            self._drop_staged()  # made for a row that moved (made again for the row it is for now)
        if first == 0 and self._widgets and last + 1 < model.rowCount():  # an older page put in front
            self._first_loaded += last - first + 1
            self._older_pending = False
            QTimer.singleShot(0, self, self._load_older_if_at_top)
            return
        if first < self._first_loaded:
            self._first_loaded += last - first + 1  # older rows nobody scrolled to yet
            return
        if first > self.last_loaded_row:
            return  # after newer rows that have no widgets now (made when scrolled to)
        if last - first + 1 > self.PAGE_SIZE and last == model.rowCount() - 1:
            self._rebuild()
            return
        self.step_groups.detach()  # positions below are the widgets', without the fold rows
        for row in range(first, last + 1):
            widget = self._make_widget(model.item(row))
            position = row - self._first_loaded
            self._widgets.insert(position, widget)
            self._items_layout.insertWidget(position, widget)
        self._schedule_trim()  # a long live session: the oldest widgets go (made again when scrolled to)
        self._mark_final_replies()

    def _mark_final_replies(self) -> None:
        """Each reply knows whether a tool step follows it in its turn (then it is an intermediate step
        and has no actions), the newest final reply shows its actions without a hover, and the steps
        of each finished turn fold behind one "n steps" row (chat/steps.py)."""
        model = self._model
        if model is None:
            return
        count = model.rowCount()
        newest: AssistantWidget | None = None
        for offset, widget in enumerate(self._widgets):
            if not isinstance(widget, AssistantWidget):
                continue
            row = self._first_loaded + offset
            following = model.item(row + 1) if row + 1 < count else None
            widget.set_final(not isinstance(following, (ToolCard, ApprovalCard)))
            widget.reveal.set_pinned(False)
            if widget.is_final:
                newest = widget
        if newest is not None:
            newest.reveal.set_pinned(True)
        widgets = self._widgets
        self.step_groups.arrange(
            widgets, is_step=_is_step, keeps_open=lambda widget: False,
            count_of=lambda widget: 1 if isinstance(widget, ToolCardWidget) else 0,
            key_of=lambda widget: widget.uid if isinstance(widget, ItemWidget) else id(widget),
            following_done=lambda index: not _is_pending_approval(widgets[index]))

    def _on_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int]) -> None:
        model = self._model
        if model is None:
            return
        staged = self._staged
        if staged is not None and any(model.item(row) is staged.item for row in range(top_left.row(), bottom_right.row() + 1)):
            self._drop_staged()  # made from what the item was (made again from what it is when building goes on)
        for row in range(top_left.row(), bottom_right.row() + 1):
            widget = self.widget_for_row(row)
            if widget is None:
                continue
            item = model.item(row)
            if isinstance(widget, AssistantWidget):
                widget.item = item  # rendered at the next flush, coalescing the deltas
                self._dirty.add(widget.uid)
                if not self._flush_timer.isActive():
                    self._flush_timer.start()
            else:
                widget.update_item(item)

    def _on_approval_answered(self, call_id: str, answer: str, reason: str) -> None:
        if self._model is not None and self._model.row_of_call(call_id, "approval") >= 0:
            state = "denied" if answer == "deny" else "allowed"
            self._model.set_approval_state(call_id, state, answer, reason=reason)
        self.approval_answered.emit(call_id, answer, reason)

    def _on_approval_expand(self, call_id: str, expanded: bool) -> None:
        if self._model is not None and self._model.row_of_call(call_id, "approval") >= 0:
            self._model.set_approval_expanded(call_id, expanded)

    # --- paging --------------------------------------------------------------------------------

    def load_older(self, count: int | None = None) -> int:
        """Create widgets for the previous `count` rows (a page), keeping what is on screen in place;
        returns how many. At the model's first row, asks for older history instead."""
        model = self._model
        if model is None:
            return 0
        if self._first_loaded == 0:
            if model.older_end > 0 and not self._older_pending:
                self._older_pending = True
                self.older_requested.emit()
            return 0
        self._drop_staged()
        count = min(count or self.PAGE_SIZE, self._first_loaded)
        new_first = self._first_loaded - count
        self._place_older([self._make_widget(model.item(row)) for row in range(new_first, self._first_loaded)])
        return count

    def _place_older(self, new_widgets: list[ItemWidget], trim: bool = True) -> None:
        """Put the widgets of the rows just above the widgets in front, keeping what is on screen in place;
        `trim=False`: the far widgets went already (a build step of their own)."""
        # Make room first, by what is placed now: a step costs one layout, not one for the new widgets and
        # one more for the far ones going (bench/session_open.py's scroll row).
        if trim:
            self._trim_far_widgets(arrange=False)
        bar = self.scroll_area.verticalScrollBar()
        anchor = self._first_shown(self._widgets)
        if anchor is not None:
            self._anchor = (anchor, anchor.y() - bar.value())
        self.step_groups.detach()
        for position, widget in enumerate(new_widgets):
            self._items_layout.insertWidget(position, widget)
        self._widgets[:0] = new_widgets
        self._first_loaded -= len(new_widgets)
        self._mark_final_replies()
        if self._first_loaded > 0 and all(self._folded(widget) for widget in new_widgets):
            QTimer.singleShot(0, self, self._load_older_if_at_top)  # nothing came into sight: no scroll follows
        QTimer.singleShot(0, self, self._hold_anchor)  # the range may not change (as much dropped as added)

    def load_newer(self, count: int | None = None) -> int:
        """Create widgets for rows after the newest one that has one (dropped while the user was far
        up); returns how many."""
        model = self._model
        if model is None:
            return 0
        first = self.last_loaded_row
        count = min(count or self.PAGE_SIZE, model.rowCount() - first)
        if count <= 0:
            return 0
        self._drop_staged()
        self._place_newer([self._make_widget(model.item(row)) for row in range(first, first + count)])
        return count

    def _place_newer(self, new_widgets: list[ItemWidget], trim: bool = True) -> None:
        """Put the widgets of the rows just after the widgets at the end (`trim`: see _place_older)."""
        if trim:
            self._trim_far_widgets(arrange=False)  # room first (see _place_older)
        for widget in new_widgets:
            self._widgets.append(widget)
            self._items_layout.addWidget(widget)
        self._mark_final_replies()
        if all(self._folded(widget) for widget in new_widgets):
            QTimer.singleShot(0, self, self._load_newer_if_at_bottom)  # nothing came into sight (see _place_older)
        QTimer.singleShot(0, self, self._hold_anchor)

    def _drop_widgets(self, count: int, *, from_top: bool) -> None:
        """Delete `count` widgets at one end (far from what is on screen), keeping the view in place."""
        if count <= 0:
            return
        if from_top:
            keep = self._first_shown(self._widgets[count:])
            if not self._following and keep is not None:  # (following, the view stays at the bottom by itself)
                self._anchor = (keep, keep.y() - self.scroll_area.verticalScrollBar().value())
            dropped, self._widgets = self._widgets[:count], self._widgets[count:]
            self._first_loaded += count
        else:
            dropped, self._widgets = self._widgets[-count:], self._widgets[:-count]
            self._following = False
        for widget in dropped:
            self._items_layout.removeWidget(widget)
            widget.hide()
            widget.deleteLater()
            self._dirty.discard(widget.uid)

    @staticmethod
    def _folded(widget: QWidget) -> bool:
        """Hidden by its turn's "n steps" row (a widget just made is hidden too until Qt shows it)."""
        return widget.isHidden() and widget.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide)

    @staticmethod
    def _first_shown(widgets: list[ItemWidget]) -> ItemWidget | None:
        """The first widget not folded away: a hidden one keeps the place it had when last shown, so it
        cannot anchor the view."""
        return next((widget for widget in widgets if not widget.isHidden()), None)

    def _schedule_trim(self) -> None:
        """Trim once the layout has placed what was just added: a posted call runs after the layout
        request that adding a widget posted."""
        if not self._trim_pending:
            self._trim_pending = True
            QTimer.singleShot(0, self, self._trim_far_widgets)

    def _trim_far_widgets(self, arrange: bool = True) -> None:
        """Delete the widgets more than MARGIN_SCREENS viewport heights above or below what is on
        screen (a folded turn's steps go or stay with the widget they are folded before); `arrange`:
        fold the steps again now (a caller about to add widgets does it after)."""
        self._trim_pending = False
        viewport = self.scroll_area.viewport()
        widgets = self._widgets
        if not viewport.isVisible() or viewport.height() <= 0:  # nothing placed to measure by
            excess = len(widgets) - self.MAX_WIDGETS
            self._drop_widgets(excess, from_top=self._following)
            if excess > 0 and arrange:
                self._mark_final_replies()
            return
        # The widgets just shown have asked for a layout (posted after this call was): place them now.
        QCoreApplication.sendPostedEvents(self._container, QEvent.Type.LayoutRequest)
        bar = self.scroll_area.verticalScrollBar()
        top = bar.maximum() if self._following else bar.value()  # following: where it scrolls to next
        margin = self.MARGIN_SCREENS * viewport.height()
        shown = [index for index, widget in enumerate(widgets) if not widget.isHidden()]
        if not shown:
            return
        first = next((index for index in shown if widgets[index].geometry().bottom() >= top - margin), shown[-1])
        last = next((index for index in reversed(shown) if widgets[index].y() <= top + viewport.height() + margin),
                    shown[0])
        first, last = min(first, last), max(first, last)
        while first > 0 and widgets[first - 1].isHidden():
            first -= 1
        while last + 1 < len(widgets) and widgets[last + 1].isHidden():
            last += 1
        after = len(widgets) - last - 1
        self._drop_widgets(first, from_top=True)
        self._drop_widgets(after, from_top=False)
        if (first or after) and arrange:
            self._mark_final_replies()
            # Place what stays now, holding the anchor: a scroll the person makes before the posted layout
            # lets go of the anchor, and the widgets in sight then jumped by the height of those that went.
            QCoreApplication.sendPostedEvents(self._container, QEvent.Type.LayoutRequest)

    def _fill_viewport(self) -> None:
        """With no scrollbar the user cannot reach the top; load older pages until there is one."""
        if self._container.sizeHint().height() > self.scroll_area.viewport().height():
            return
        if self._first_loaded > 0:
            self.load_older()
            QTimer.singleShot(0, self, self._fill_viewport)
        else:
            self.load_older()  # asks the file for older history, if there is any

    def _load_older_if_at_top(self) -> None:
        bar = self.scroll_area.verticalScrollBar()
        if bar.value() == bar.minimum():
            if self._first_loaded > 0:
                if not self._build_timer.isActive():
                    self._build_timer.start()  # the next widget above, in steps (_build_step)
            elif self._container.sizeHint().height() <= self.scroll_area.viewport().height():
                self._fill_viewport()
            else:
                self.load_older()  # asks for older history

    def _build_step(self) -> None:
        """One step of making the widget of the next row without one at the end the view is at (the row
        above the widgets at the top; after them at the bottom, where widgets went while the person was
        far up): make it (a reply without its Markdown), render its Markdown, show it out of sight,
        let the far widgets go, then place it (what is in sight held). Each step is one event-loop turn
        of its own, so no turn holds the loop for more than about one of them; the next widget follows
        while the view stays at that end."""
        model = self._model
        side = self._side_to_build()
        if model is None or side == 0:
            return  # the person scrolled away: what was made waits (in `_staged`) for the next time at that end
        row = self._first_loaded - 1 if side < 0 else self.last_loaded_row
        staged = self._staged
        if staged is not None and staged.item is not model.item(row):
            self._drop_staged()
            staged = None
        if staged is None:
            self._staged = self._make_widget(model.item(row), render=False)
            self._staged.setParent(self._container)  # hidden until shown out of sight; goes with the view
            self._staged_trimmed = self._staged_prepared = False
        elif isinstance(staged, AssistantWidget) and not staged.rendered:
            if self._staged_prepared:
                staged.refresh()
            else:
                self._staged_prepared = staged.prepare(STREAM_STEP_BUDGET_S)  # a long reply: over several turns
        elif not staged.isVisible():
            self._show_out_of_sight(staged, side)
        elif not self._staged_trimmed:
            self._staged_trimmed = True
            self._trim_far_widgets()  # the far widgets go in a step of their own too
        else:
            self._staged = None
            self._place_older([staged], trim=False) if side < 0 else self._place_newer([staged], trim=False)
            return  # placing schedules what follows (a folded step: the next one; otherwise the scroll does)
        self._build_timer.start()

    def _side_to_build(self) -> int:
        """-1: at the top with rows above the widgets; +1: at the bottom with rows after them; 0: neither
        (or not shown: a hidden view lays nothing out, so it would stay at that end while widget after
        widget came)."""
        bar = self.scroll_area.verticalScrollBar()
        rows = self._model.rowCount() if self._model is not None else 0
        if not self.scroll_area.viewport().isVisible():
            return 0
        if bar.value() == bar.minimum() and self._first_loaded > 0:
            return -1
        if bar.value() == bar.maximum() and self.last_loaded_row < rows:
            return 1
        return 0

    def _show_out_of_sight(self, widget: ItemWidget, side: int) -> None:
        """Show `widget` in the conversation just outside its top (`side` -1) or bottom edge, where
        nothing paints it, at the width the column will give it: its first show (styles, child widgets,
        laying its text out at that width) is done before it is placed, and placing it only moves it."""
        column = self._items_layout.geometry()
        height = max(1, widget.sizeHint().height())
        top = -height - 1 if side < 0 else self._container.height() + 1
        place = QRect(column.x(), top, column.width(), height)
        widget.setGeometry(self._items_layout.place(widget, place) if hasattr(widget, "set_prose_inset") else place)
        widget.show()

    def _drop_staged(self) -> None:
        staged, self._staged = self._staged, None
        if staged is not None:
            staged.hide()
            staged.deleteLater()

    def _load_newer_if_at_bottom(self) -> None:
        bar = self.scroll_area.verticalScrollBar()
        if bar.value() == bar.maximum() and not self._build_timer.isActive():
            self._build_timer.start()  # the next widget below, in steps (_build_step)

    # --- scrolling -----------------------------------------------------------------------------

    def _set_scroll(self, value: int) -> None:
        self._adjusting = True
        try:
            self.scroll_area.verticalScrollBar().setValue(value)
        finally:
            self._adjusting = False
        if not self._following and self._side_to_build() != 0 and not self._build_timer.isActive():
            self._build_timer.start()  # held at an end with rows beyond it: the person sees more come, as when they scroll there

    def _hold_anchor(self) -> None:
        """Keep the anchored widget where it was on screen once the layout has placed the new widgets."""
        if self._anchor is not None:
            widget, offset = self._anchor
            self._set_scroll(widget.y() - offset)

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._anchor is not None:
            widget, offset = self._anchor
            self._set_scroll(widget.y() - offset)
        elif self._following and not self._follow_timer.isActive():
            self._follow_timer.start()

    def _follow_to_bottom(self) -> None:
        """Scroll to the newest line once Qt has painted what changed (see `_follow_timer`)."""
        if self._following and self._anchor is None:
            self._set_scroll(self.scroll_area.verticalScrollBar().maximum())
            self._schedule_trim()  # a growing reply pushes the oldest widgets further up

    def _on_value_changed(self, value: int) -> None:
        if self._adjusting:
            return
        bar = self.scroll_area.verticalScrollBar()
        self._anchor = None  # the user moved: stop holding the old position
        model_rows = self._model.rowCount() if self._model is not None else 0
        at_newest = self.last_loaded_row >= model_rows
        self._following = at_newest and value >= bar.maximum() - _FOLLOW_SLACK_PX
        if value == bar.minimum() and (self._first_loaded > 0 or self._model is not None):
            QTimer.singleShot(0, self, self._load_older_if_at_top)
        elif value == bar.maximum() and not at_newest:
            QTimer.singleShot(0, self, self._load_newer_if_at_bottom)

    # --- theme ---------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and not self._palette_refresh_pending:
            self._palette_refresh_pending = True
            QTimer.singleShot(0, self, self._apply_palette)

    def _apply_palette(self) -> None:
        self._palette_refresh_pending = False
        style = render_style_for(self.palette())
        if style == self._renderer.style:
            return
        self._renderer = MarkdownRenderer(style)
        self._drop_staged()  # rendered with the old colours
        for widget in self._widgets:
            if isinstance(widget, AssistantWidget):
                widget.set_renderer(self._renderer)
