"""The tool-call inspector dock: the shown turn's timeline of LLM and tool calls, and the details of one.

Rows come from `TimelineModel` (model.py), fed by the bridge. Selecting a tool call shows its
pretty JSON arguments, the diff it was approved with, the result (first lines, with Expand) and the
error; selecting an LLM call shows tokens, latency and the context view (context_view.py) of exactly
what was sent (both panes in details.py). The chat's tool cards call `show_call`; the main window
calls `set_session`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QItemSelectionModel, QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QListView, QSplitter,
    QStackedWidget, QTreeView, QVBoxLayout, QWidget,
)

from nanobot_desktop.gui.common.accessibility import name
from nanobot_desktop.engine import UsageRecorded
from nanobot_desktop.gui.common.formatting import format_duration
from nanobot_desktop.gui.common.i18n import format_number, translate
from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.common.widgets import plain_label
from nanobot_desktop.gui.inspector.details import LLMCallDetail, ToolCallDetail
from nanobot_desktop.gui.inspector.model import NAME_COLUMN, STATUS_COLUMN, SUMMARY_COLUMN, TIME_COLUMN, TimelineModel
from nanobot_desktop.gui.inspector.records import LLMCall, TimelineEntry, ToolCall, TurnTimeline, status_text
from nanobot_desktop.gui.inspector.turn_list import TurnListModel

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.common.bridge import EngineBridge


class _NoHeightForWidthColumn(QVBoxLayout):
    """The panel's column, telling its scroll area (window/docks.py) it has no height-for-width.

    Its word-wrapped labels make the layout height-for-width, and a resizable QScrollArea then takes
    the panel's preferred height for its width (600 px) as the least it may have: at 1024×640 the
    drawer scrolled though the panel fits in its minimum (431 px). Inside, the labels still wrap.
    """

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return False


def _show_line(label: QLabel, text: str) -> None:
    """A line of the panel's head, hidden while empty: two empty lines left a blank band above the calls."""
    label.setText(text)
    label.setVisible(bool(text))


class InspectorPanel(QWidget):
    """Dockable inspector for the selected session's turns (this app run)."""

    panel_title = QT_TRANSLATE_NOOP("Inspector", "Inspector")  # the dock's title (the window translates it)

    def __init__(self, engine: Engine, bridge: EngineBridge, parent: QWidget | None = None, *,
                 timeline: TimelineModel | None = None) -> None:
        """`timeline`: the window's, recording since its start (the panel is built when first shown);
        without one the panel records from now on into its own."""
        super().__init__(parent)
        self.setObjectName("inspectorPanel")
        self.engine = engine
        self.model = timeline if timeline is not None else TimelineModel.recording(bridge, self)
        self._call_to_select = ""  # show_call's call, in a turn still being read back

        layout = _NoHeightForWidthColumn(self)
        layout.setContentsMargins(6, 6, 6, 6)
        top = QHBoxLayout()
        turn_label = plain_label(translate("Inspector", "Turn"), selectable=False)
        top.addWidget(turn_label)
        self.turn_selector = QComboBox()
        turn_label.setBuddy(self.turn_selector)
        self.turn_selector.setObjectName("turnSelector")
        self.turn_selector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.turn_selector.setMinimumContentsLength(16)
        self.turn_selector.setToolTip(translate("Inspector", "Turns of this session since the app started; the newest follows new turns"))
        self.turn_list = TurnListModel(self.model, self)
        self.turn_selector.setModel(self.turn_list)
        self.turn_selector.setPlaceholderText(translate("Inspector", "No turns yet"))
        view = self.turn_selector.view()
        if isinstance(view, QListView):  # every label is one line: the popup need not measure each row
            view.setUniformItemSizes(True)
        self.turn_selector.activated.connect(self._on_turn_chosen)
        top.addWidget(self.turn_selector, 1)
        layout.addLayout(top)
        self.summary_label = plain_label()
        self.summary_label.setObjectName("turnSummary")
        name(self.summary_label, translate("Inspector", "Turn summary"))
        layout.addWidget(self.summary_label)
        # What the whole conversation has cost so far, from the usage record (every run, its
        # consolidation and subagents too), read off the GUI thread when the session or the record changes.
        self.conversation_label = plain_label()
        self.conversation_label.setObjectName("conversationUsage")
        layout.addWidget(self.conversation_label)
        self.conversation_label.hide()  # until a total is read (_show_line; the summary's: _show_summary below)
        self._work = OwnedWork(self)
        bridge.subscribe({UsageRecorded: self._on_usage_recorded}, self)

        self.timeline = QTreeView()
        self.timeline.setObjectName("inspectorTimeline")
        name(self.timeline, translate("Inspector", "Calls of the turn"),
             translate("Inspector", "Model and tool calls in order; select one to see its details"))
        self.timeline.setModel(self.model)
        self.timeline.setRootIsDecorated(False)
        self.timeline.setUniformRowHeights(True)
        self.timeline.setAlternatingRowColors(True)
        self.timeline.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.timeline.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.timeline.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(STATUS_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(NAME_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(SUMMARY_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(TIME_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        self.timeline.selectionModel().currentRowChanged.connect(self._on_current_row_changed)

        self.placeholder = plain_label(selectable=False)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.tool_detail = ToolCallDetail()
        self.llm_detail = LLMCallDetail()
        self.details = QStackedWidget()
        self.details.setObjectName("inspectorDetails")
        for page in (self.placeholder, self.tool_detail, self.llm_detail):
            self.details.addWidget(page)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.timeline)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        layout.addWidget(splitter, 1)

        self.model.turns_changed.connect(self._on_turns_changed)
        self.model.shown_turn_changed.connect(self._on_shown_turn_changed)
        self.model.entry_changed.connect(self._on_entry_changed)
        self._on_shown_turn_changed()

    # --- public API --------------------------------------------------------------------------------

    def set_session(self, key: str) -> None:
        """Show that session's latest turn (the main window calls this when the user switches session)."""
        self.model.set_session(key)
        self._sync_turn_selector()
        self.refresh_conversation_usage()

    def refresh_conversation_usage(self) -> None:
        """Read the shown conversation's recorded total again (in an executor) and show it."""
        key = self.model.session_key
        if not key or not self.engine.usage.has_record():  # no usage file yet: nothing to add up
            _show_line(self.conversation_label, "")
            return
        self._work.spawn(self._read_conversation_usage(key))

    async def _read_conversation_usage(self, key: str) -> None:
        from nanobot_desktop.gui.background.usage_model import format_cost  # with the first usage to show

        usage = self.engine.usage
        totals = await asyncio.get_running_loop().run_in_executor(None, usage.reader.session_totals, key, usage.prices())
        if key != self.model.session_key:
            return  # another conversation was chosen meanwhile
        if not totals.calls:
            _show_line(self.conversation_label, "")
            return
        calls = totals.calls  # a plain name: pyside6-lupdate skips a plural whose count is an attribute
        _show_line(self.conversation_label, translate("Inspector", "This conversation: {tokens} tokens, {cost} in %n call(s)",
                                                      None, calls).format(tokens=format_number(totals.tokens),
                                                                          cost=format_cost(totals)))

    def _on_usage_recorded(self, event: UsageRecorded) -> None:
        if event.written:
            self.refresh_conversation_usage()

    def show_call(self, call_id: str) -> bool:
        """Select and reveal a call (the chat's tool card click); False when this run never saw it."""
        found = self.model.find_call(call_id, self.model.session_key)
        if found is None:
            return False
        session_key, turn_id = found
        shown = self.model.shown_turn
        if shown is None or (shown.session_key, shown.turn_id) != found:
            if session_key != self.model.session_key:
                self.model.set_session(session_key)
            self.model.show_turn(session_key, turn_id)
            self._sync_turn_selector()
            shown = self.model.shown_turn
            if shown is None or shown.turn_id != turn_id:  # an older turn, being read back from its file
                self._call_to_select = call_id
                return True
        self._select_call(call_id)
        return True

    def _select_call(self, call_id: str) -> None:
        row = self.model.row_of_call(call_id)
        index = self.model.index(row, NAME_COLUMN)
        self.timeline.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.timeline.scrollTo(index)

    def selected_entry(self) -> TimelineEntry | None:
        index = self.timeline.currentIndex()
        return self.model.entry(index.row()) if index.isValid() else None

    # --- reacting to the model -------------------------------------------------------------------------

    def _sync_turn_selector(self) -> None:
        """The selector's rows follow the timeline's turns, and its current row the shown turn."""
        self.turn_list.refresh()
        shown = self.model.shown_turn
        row = self.turn_list.row_of(shown.turn_id) if shown is not None else -1  # by id: a turn read back is a copy
        if row >= 0:  # none shown: an older turn is being read back, and the row chosen for it stays
            self.turn_selector.setCurrentIndex(row)
        self.turn_selector.setEnabled(self.turn_list.rowCount() > 0)

    def _on_turns_changed(self, session_key: str) -> None:
        if session_key == self.model.session_key:
            self._sync_turn_selector()
            self._show_summary()

    def _on_turn_chosen(self, position: int) -> None:
        turn_id = self.turn_selector.itemData(position)
        if isinstance(turn_id, str):
            self.model.show_turn(self.model.session_key, turn_id)

    def _on_shown_turn_changed(self) -> None:
        self._sync_turn_selector()
        self._show_summary()
        self._show_entry(self.selected_entry())
        call_id, self._call_to_select = self._call_to_select, ""
        if call_id and self.model.row_of_call(call_id) >= 0:
            self._select_call(call_id)  # the tool card clicked in the chat, now that its turn is read back

    def _show_summary(self) -> None:
        turn = self.model.shown_turn
        _show_line(self.summary_label, self._summary(turn))
        if turn is None:
            if self.model.session_key:
                self.placeholder.setText(translate("Inspector", "No turns in this session since the app started.\n"
                                                   "The calls of its next turn will appear here."))
            else:
                self.placeholder.setText(translate("Inspector", "No session selected."))
        else:
            self.placeholder.setText(translate("Inspector", "Select a call above to see its details."))

    @staticmethod
    def _summary(turn: TurnTimeline | None) -> str:
        if turn is None:
            return ""
        llm_calls, tool_calls, tokens_in, tokens_out = turn.totals()
        parts = [status_text(turn.status), translate("Inspector", "%n LLM call(s)", None, llm_calls),
                 translate("Inspector", "{sent} → {received} tokens").format(sent=format_number(tokens_in),
                                                                             received=format_number(tokens_out)),
                 translate("Inspector", "%n tool call(s)", None, tool_calls)]
        if turn.finished_at is not None:
            parts.append(format_duration(max(0.0, turn.finished_at - turn.started_at)))
        text = " · ".join(parts)
        if turn.error:
            text += f"\n{turn.error}"
        return text

    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_entry(self.model.entry(current.row()) if current.isValid() else None)

    def _on_entry_changed(self, row: int) -> None:
        self._show_summary()
        if self.timeline.currentIndex().isValid() and self.timeline.currentIndex().row() == row:
            self._show_entry(self.model.entry(row), keep_expanded=True)

    def _show_entry(self, entry: TimelineEntry | None, *, keep_expanded: bool = False) -> None:
        if isinstance(entry, ToolCall):
            self.tool_detail.set_call(entry, keep_expanded=keep_expanded)
            self.details.setCurrentWidget(self.tool_detail)
        elif isinstance(entry, LLMCall):
            self.llm_detail.set_call(entry)
            self.details.setCurrentWidget(self.llm_detail)
        else:
            self.details.setCurrentWidget(self.placeholder)
