"""The tool steps of a finished turn folded into one "▸ 3 steps" row, as the peers show them.

A turn reads: your message, then what the agent did (tool calls, its "Let me look…" lines between
them, answered approvals), then its answer. Once the answer has come, those steps fold behind one
row that says how many tool calls there were; a click (or Enter) unfolds them. A turn still running
keeps its steps open (you watch it work), and a pending approval is never folded away.

The view (chat/view.py) owns the widgets; this module only decides, from the widgets in order, which
runs fold, and keeps one header button per run (keyed by the run's first item, so a fold survives
the widgets being made again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton, QVBoxLayout, QWidget

from nanobot_desktop.gui.common.i18n import translate


class StepsHeader(QToolButton):
    """"▸ 3 steps": shows or hides the steps of one turn."""

    def __init__(self, key: int, on_toggled: Callable[[int, bool], None]) -> None:
        super().__init__()
        self.key = key
        self.setObjectName("stepsHeader")
        self.setCheckable(True)
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self._on_toggled = on_toggled
        self.run: list[QWidget] = []
        """The widgets this row shows and hides."""
        self.toggled.connect(self._toggle)
        self.show_arrow(False)

    def _toggle(self, shown: bool) -> None:
        self.show_arrow(shown)
        self._on_toggled(self.key, shown)

    def set_count(self, count: int) -> None:
        text = translate("Chat", "1 step") if count == 1 else translate("Chat", "{count} steps").format(count=count)
        self.setText(text)
        self.setToolTip(translate("Chat", "Show or hide the tool calls of this turn"))
        self.setAccessibleName(text)

    def show_arrow(self, shown: bool) -> None:
        self.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)


class StepGroups:
    """The fold headers of a view's items layout; `arrange` is called whenever widgets change."""

    def __init__(self, layout: QVBoxLayout) -> None:
        self._layout = layout
        self._headers: dict[int, StepsHeader] = {}
        self._open: set[int] = set()
        """Keys of the runs a person unfolded."""

    def detach(self) -> None:
        """Take the headers out of the layout (before the view inserts widgets by position)."""
        for header in self._headers.values():
            self._layout.removeWidget(header)

    def arrange(self, widgets: Sequence[QWidget], is_step: Callable[[QWidget], bool], keeps_open: Callable[[QWidget], bool],
                count_of: Callable[[QWidget], int], key_of: Callable[[QWidget], int], following_done: Callable[[int], bool]) -> None:
        """Fold each run of step widgets that a finished turn left (see the module docstring).

        `is_step(w)`: the widget is a step of a turn; `keeps_open(w)`: it must stay in sight (a pending
        approval); `count_of(w)`: how many tool calls it is (1 for a tool card); `key_of(w)`: a stable
        key; `following_done(i)`: the widget at index i (after a run) means the turn is over.
        """
        self.detach()
        used: set[int] = set()
        index = 0
        while index < len(widgets):
            if not is_step(widgets[index]):
                index += 1
                continue
            start = index
            while index < len(widgets) and is_step(widgets[index]):
                index += 1
            run = widgets[start:index]
            calls = sum(count_of(widget) for widget in run)
            foldable = calls > 0 and index < len(widgets) and following_done(index) \
                and not any(keeps_open(widget) for widget in run)
            if not foldable:
                for widget in run:
                    widget.setVisible(True)
                continue
            key = key_of(run[0])
            used.add(key)
            header = self._headers.get(key)
            if header is None:
                header = StepsHeader(key, self._toggled)
                self._headers[key] = header
            header.set_count(calls)
            header.blockSignals(True)
            header.setChecked(key in self._open)
            header.blockSignals(False)
            header.show_arrow(key in self._open)
            header.run = list(run)
            self._layout.insertWidget(self._layout.indexOf(run[0]), header, 0, Qt.AlignmentFlag.AlignLeft)
            header.show()
            for widget in run:
                widget.setVisible(key in self._open)
        for key in [key for key in self._headers if key not in used]:
            header = self._headers.pop(key)
            header.hide()
            header.deleteLater()

    def _toggled(self, key: int, shown: bool) -> None:
        if shown:
            self._open.add(key)
        else:
            self._open.discard(key)
        header = self._headers.get(key)
        for widget in header.run if header is not None else []:
            widget.setVisible(shown)

    def headers(self) -> list[StepsHeader]:
        """The fold rows shown now, top to bottom."""
        return sorted(self._headers.values(), key=self._layout.indexOf)
