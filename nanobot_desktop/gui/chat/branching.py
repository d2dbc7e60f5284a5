"""Edit and resend, Regenerate and the "‹ 2/3 ›" switcher: chat items mapped to session files and back.

A branch is a new session file that starts with a copy of the first `at` messages of its origin (the
engine's `Engine.branch_session`; the origin is never rewritten). This module finds `at` for the
message a person acted on, asks the engine for the branch in an executor (it reads and writes files),
opens it, and sends the edited text — or, for Regenerate, re-sends the copied user message without a
second line. After a session loads it marks the messages where the conversation forks, so the
message's widget shows the switcher.

Chat items do not carry file positions (a live turn's bubble exists before its line does), so an item
is found in the file by its place among the person's messages, checked against its text. Lines that
never reach the file (`/new`, `/help`, `/stop`) and system messages are left out on both sides.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from nanobot_desktop.engine import BranchPoint, user_text
from nanobot_desktop.gui.chat.history import is_system_origin
from nanobot_desktop.gui.chat.message_actions import UNSAVED_COMMANDS
from nanobot_desktop.gui.chat.model import AssistantMessage, ChatItem, UserMessage
from nanobot_desktop.gui.common.owned import OwnedWork
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.i18n import translate

if TYPE_CHECKING:
    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.chat.controller import ChatController
    from nanobot_desktop.gui.chat.view import ChatView

_NOT_SAVED = QT_TRANSLATE_NOOP("Chat", "This message is not in the session file (it was not saved), so the conversation cannot "
                                       "branch here.")


def _counts(text: str) -> bool:
    """Whether a message the person typed is one of the user lines of the session file."""
    return bool(text.strip()) and text.strip().lower() not in UNSAVED_COMMANDS and not is_system_origin(text)


def user_line_indexes(messages: list[dict[str, Any]]) -> list[int]:
    """Positions of the person's messages in a session's messages, in the order the chat shows them."""
    return [index for index, message in enumerate(messages)
            if message.get("role") == "user" and not message.get("_command")
            and _counts(user_text(message))]


def user_rows(items: list[ChatItem]) -> list[int]:
    """Rows of the person's messages in the chat, matching `user_line_indexes` one to one."""
    return [row for row, item in enumerate(items) if isinstance(item, UserMessage) and _counts(item.text)]


def user_line_of(messages: list[dict[str, Any]], ordinal: int, text: str) -> int | None:
    """The position of the person's `ordinal`-th message (whose text is `text`) in `messages`."""
    indexes = user_line_indexes(messages)

    def same(index: int) -> bool:
        return user_text(messages[index]).strip() == text.strip()

    if 0 <= ordinal < len(indexes) and same(indexes[ordinal]):
        return indexes[ordinal]
    matches = [index for index in indexes if same(index)]  # the chat and the file disagree: trust the text
    return matches[-1] if matches else None


def fork_rows(items: list[ChatItem], messages: list[dict[str, Any]], points: list[BranchPoint]) -> dict[int, BranchPoint]:
    """The chat row that shows each fork: the person's message at `at`, or the first reply of the turn
    whose answer starts at `at` (a regenerated reply)."""
    indexes = user_line_indexes(messages)
    rows = user_rows(items)
    # The chat may show only the newest pages of a long session: its person's messages are the file's
    # last ones, so they are matched from the end.
    skipped = max(0, len(indexes) - len(rows))
    found: dict[int, BranchPoint] = {}
    for point in points:
        if point.at >= len(messages):
            continue
        line = sum(1 for index in indexes if index <= point.at) - 1
        turn = line - skipped
        if not 0 <= turn < len(rows):
            continue
        if indexes[line] == point.at:
            found[rows[turn]] = point
            continue
        end = rows[turn + 1] if turn + 1 < len(rows) else len(items)
        reply = next((row for row in range(rows[turn] + 1, end) if isinstance(items[row], AssistantMessage)), None)
        if reply is not None:
            found[reply] = point
    return found


class BranchActions(QObject):
    """Turns the chat's Edit / Regenerate / switcher signals into branches and session switches."""

    open_requested = Signal(str)
    """(key): show this session (a new branch, or a sibling chosen with the switcher)."""
    failed = Signal(str)
    """(sentence): a branch could not be made; what happened and why."""

    def __init__(self, engine: Engine, chat: ChatController, view: ChatView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.chat = chat
        self._forks: dict[str, dict[int, BranchPoint]] = {}  # session key -> item uid -> its fork
        self._work = OwnedWork(self)
        view.edit_submitted.connect(self.edit_and_resend)
        view.regenerate_requested.connect(self.regenerate)
        view.fork_step_requested.connect(self.step)
        chat.session_loaded.connect(self.refresh_forks)
        chat.reply_finished.connect(self._on_reply_finished)  # a regenerated reply's fork shows once it is saved

    # --- acting on a message ---------------------------------------------------------------------------

    def edit_and_resend(self, uid: int, text: str) -> "asyncio.Task[None]":
        """A new branch that forks at the edited message, and the edited text sent in it."""
        return self._run(self._branch(uid, text))

    def regenerate(self, uid: int) -> "asyncio.Task[None]":
        """A new branch holding everything up to the message this reply answers, and a new reply in it."""
        return self._run(self._branch(uid, None))

    def step(self, uid: int, step: int) -> None:
        """Show the previous (-1) or next (+1) version of the conversation at that message's fork."""
        point = self._forks.get(self.chat.current_key, {}).get(uid)
        if point is not None and 0 <= point.index + step < len(point.keys):
            self.open_requested.emit(point.keys[point.index + step])

    def fork_of(self, uid: int) -> BranchPoint | None:
        return self._forks.get(self.chat.current_key, {}).get(uid)

    def _run(self, coroutine: Coroutine[Any, Any, None]) -> "asyncio.Task[None]":
        task = asyncio.ensure_future(coroutine)
        self._work.track(task)
        return task

    async def _branch(self, uid: int, edited: str | None) -> None:
        key = self.chat.current_key
        items = self.chat.model.items()
        row = next((row for row, item in enumerate(items) if item.uid == uid), -1)
        asked = user_rows(items[: row + 1]) if row >= 0 else []
        if edited is None and not asked:
            self.failed.emit(translate("Chat", "This reply does not answer a message of yours, so it cannot be regenerated."))
            return
        if edited is not None and (not asked or asked[-1] != row):
            self.failed.emit(translate("Chat", _NOT_SAVED))
            return
        # Counted from the newest: the chat may hold only the newest pages of a long session.
        from_end, text = len(user_rows(items)) - len(asked), items[asked[-1]].text  # type: ignore[union-attr]
        after = 0 if edited is not None else 1  # Regenerate keeps the message it answers

        def make() -> str:
            session = self.engine.sessions.load(key)
            ordinal = len(user_line_indexes(session.messages)) - 1 - from_end if session is not None else -1
            position = user_line_of(session.messages, ordinal, text) if session is not None else None
            if position is None:
                raise LookupError(translate("Chat", _NOT_SAVED))
            return self.engine.branch_session(key, position + after)

        try:
            new_key = await asyncio.get_running_loop().run_in_executor(None, make)
        except (LookupError, ValueError, OSError) as error:
            self.failed.emit(str(error) if isinstance(error, LookupError)
                             else translate("Chat", "No branch was made: {error}").format(error=error))
            return
        self.open_requested.emit(new_key)
        if self.chat.current_key != new_key:
            return
        if edited is not None:
            self.chat.send(edited)
        else:
            self.chat.resend(new_key)

    # --- the switcher ----------------------------------------------------------------------------------

    def _on_reply_finished(self, key: str) -> None:
        if key == self.chat.current_key:
            self.refresh_forks(key)

    def refresh_forks(self, key: str) -> "asyncio.Task[None]":
        """Mark the messages of session `key` where the conversation forks (after it loaded)."""
        return self._run(self._refresh(key))

    async def _refresh(self, key: str) -> None:
        def read() -> tuple[list[dict[str, Any]], list[BranchPoint]]:
            points = self.engine.branch_points(key)
            if not points:  # most sessions never fork: their (possibly very long) file is not parsed
                return [], points
            session = self.engine.sessions.load(key)
            return (session.messages if session is not None else []), points

        try:
            messages, points = await asyncio.get_running_loop().run_in_executor(None, read)
        except (OSError, ValueError):
            return  # the chat already says when a session cannot be read
        model = self.chat.model_for(key)
        if model is None:
            return
        items = model.items()
        rows = fork_rows(items, messages, points)
        forks: dict[int, BranchPoint] = {}
        for row, item in enumerate(items):
            point = rows.get(row)
            if point is not None:
                forks[item.uid] = point
            if isinstance(item, (UserMessage, AssistantMessage)):
                fork = (point.index + 1, len(point.keys)) if point is not None else None
                if item.fork != fork:
                    item.fork = fork
                    model.refresh_row(row)
        self._forks[key] = forks

