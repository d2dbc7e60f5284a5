"""An approval that needs the drawer opens it, and closes it again once answered (issue 26).

The approval card in the chat shows a file edit's diff up to CARD_DIFF_LINES lines, then scrolls
inside a small box; a longer diff is read in the inspector, which shows the whole change beside the
call. So when the chat shown now asks about such an edit, the drawer opens on the inspector at that
call; when the person answers, a drawer that was closed before is closed again, leaving the window as
it was. Hooked on the engine's approval events (not on the card), so every way of answering — the
card, the tray, a notification — ends the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject

from nanobot_desktop.engine import ApprovalAnswered, ApprovalRequested, TurnCancelled, TurnFailed, TurnFinished

if TYPE_CHECKING:
    from nanobot_desktop.gui.common.bridge import EngineBridge

CARD_DIFF_LINES = 18
"""Lines of a diff the approval card shows before it scrolls (gui/chat/cards.py's diff view)."""


class Drawer(Protocol):
    """What this needs of the window's docking (gui/window/layout.py's DockLayout)."""

    def drawer_open(self) -> bool: ...

    def toggle_drawer(self) -> None: ...


def needs_drawer(event: ApprovalRequested) -> bool:
    """An edit whose diff is longer than the card shows: the person reads it in the inspector."""
    diff = event.request.diff
    return diff is not None and diff.rstrip("\n").count("\n") + 1 > CARD_DIFF_LINES


class ApprovalDrawer(QObject):
    """Opens the drawer for an approval that needs it, and closes it back when that one is answered."""

    def __init__(self, current_key: Callable[[], str], drawer: Drawer, show_tool_call: Callable[[str], None],
                 bridge: "EngineBridge", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._current_key = current_key
        self._drawer = drawer
        self._show_tool_call = show_tool_call
        self._opened_for: dict[str, str] = {}  # call id -> its session: approvals that opened a closed drawer
        bridge.subscribe({ApprovalRequested: self._on_requested, ApprovalAnswered: self._on_answered,
                          TurnFinished: self._on_turn_over, TurnFailed: self._on_turn_over,
                          TurnCancelled: self._on_turn_over}, self)

    def _on_requested(self, event: ApprovalRequested) -> None:
        if event.session_key == self._current_key() and needs_drawer(event):
            was_closed = not self._drawer.drawer_open()
            self._show_tool_call(event.call_id)
            if was_closed:
                self._opened_for[event.call_id] = event.session_key

    def _on_answered(self, event: ApprovalAnswered) -> None:
        self._close_back(event.call_id)

    def _on_turn_over(self, event: TurnFinished | TurnFailed | TurnCancelled) -> None:
        """A stopped or ended turn's question is gone too."""
        for call_id, key in list(self._opened_for.items()):
            if key == event.session_key:
                self._close_back(call_id)

    def _close_back(self, call_id: str) -> None:
        if self._opened_for.pop(call_id, None) is not None and not self._opened_for and self._drawer.drawer_open():
            self._drawer.toggle_drawer()  # closes whichever of its docks are open
