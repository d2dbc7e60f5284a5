"""How a turn's steps are saved, and what happens when the disk refuses one.

Each step is appended to the session as it happens (the user's message before the request goes out,
then each assistant and tool message), in the reference's shapes with the runtime block stripped. A
write the disk refuses leaves the file as it was (the store's append is all or nothing); the messages
wait in memory for `retry_save`, or go first in the session's next write. A stopped turn keeps what it
produced; a reply the endpoint cut off is kept, marked `"cut_off": <kind>`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from nanobot_desktop.engine.agent.context import strip_runtime_for_save
from nanobot_desktop.engine.events import EventBus, TurnFailed
from nanobot_desktop.engine.llm.types import LLMResponse, ProviderError
from nanobot_desktop.engine.agent.turn import TurnResult, TurnState, strip_think
from nanobot_desktop.engine.sessions.store import SessionStore
from nanobot_desktop.engine.agent.tool_runner import CANCELLED_RESULT
from nanobot_desktop.engine.workspace import StorageError

log = logging.getLogger(__name__)

TOOL_RESULT_SAVE_LIMIT = 16_000  # post4 kept 500 chars; later releases 16,000. Any length reads back fine.


class TurnSaver:
    """Saving a turn's messages, and the messages a failed write left unsaved (kept here, per session).

    `session_lock` is the loop's lock of a session's turns: `retry_save` waits for a running turn."""

    def __init__(self, sessions: SessionStore, bus: EventBus, session_lock: Callable[[str], asyncio.Lock]) -> None:
        self.sessions = sessions
        self.bus = bus
        self._session_lock = session_lock
        # Messages a failed write could not save, per session; written before anything else next time.
        self._unsaved: dict[str, list[dict[str, Any]]] = {}

    @staticmethod
    def assistant_message(content: str | None, tool_calls: list[dict[str, Any]] | None,
                           response: LLMResponse) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        if response.reasoning_content:
            message["reasoning_content"] = response.reasoning_content
        return message

    def fail_with_partial(self, state: TurnState, error: ProviderError) -> TurnResult:
        """An endpoint fault: keep what was streamed (marked cut off) and say precisely what happened."""
        key, turn_id = state.session.key, state.turn_id
        partial = strip_think("".join(state.streamed))
        message = error.message
        unsaved = False
        if partial:
            try:
                self.save(state, [{"role": "assistant", "content": partial, "cut_off": error.kind}])
                message = f"{message} The partial reply was kept, marked as cut off."
            except StorageError as storage:
                unsaved = True
                message = f"{message} {storage.sentence('the partial reply was not saved')}"
        facts = tuple(sorted(error.facts.items())) if message == error.message else ()
        self.bus.publish(TurnFailed(key, turn_id=turn_id, error=message, kind=error.kind, partial_text=partial,
                                    unsaved=unsaved, facts=facts))
        return TurnResult(turn_id, "failed", partial or None, message, kind=error.kind)

    def has_unsaved(self, session_key: str) -> bool:
        """Whether messages of this session wait to be written (a write failed; see `retry_save`)."""
        return bool(self._unsaved.get(session_key))

    async def retry_save(self, session_key: str) -> int:
        """Write the messages a failed write left unsaved; returns how many. Raises StorageError again
        (with the same kind of sentence) when the disk still refuses; nothing is lost either way."""
        lock = self._session_lock(session_key)
        async with lock:
            pending = self._unsaved.pop(session_key, [])
            if not pending:
                return 0
            session = self.sessions.get_or_create(session_key)
            try:
                self.sessions.append(session, pending)  # publishes SessionChanged
            except StorageError:
                self._unsaved[session_key] = pending
                raise
            return len(pending)

    def save(self, state: TurnState, messages: list[dict[str, Any]], *, keep_on_failure: bool = True,
             typed: str | None = None) -> None:
        """Append messages to the session file in the reference's shapes (runtime block stripped).

        Messages an earlier failed write left unsaved go first. When this write fails, the file is as it
        was (the store's append is all or nothing) and the messages wait in `_unsaved` for
        `retry_save` — unless `keep_on_failure` is False (the user's message: it stays in the composer).
        `typed`: the text the person sent. A user message whose stripped content equals it keeps that
        very string, which the chat holds already, instead of a second copy cut from the prompt.
        """
        to_write: list[dict[str, Any]] = []
        for message in messages:
            entry = dict(message)
            role = entry.get("role")
            if role == "assistant" and not entry.get("content") and not entry.get("tool_calls"):
                continue
            if role == "user":
                content = strip_runtime_for_save(entry.get("content"))
                if content is None:
                    continue
                entry["content"] = typed if typed is not None and content == typed else content
            if role == "tool" and isinstance(entry.get("content"), str) \
                    and len(entry["content"]) > TOOL_RESULT_SAVE_LIMIT:
                entry["content"] = entry["content"][:TOOL_RESULT_SAVE_LIMIT] + "\n... (truncated)"
            to_write.append(entry)
        key = state.session.key
        pending = self._unsaved.pop(key, [])
        if not to_write and not pending:
            return
        try:  # publishes SessionChanged
            self.sessions.append(state.session, pending + to_write, turn_id=state.turn_id)
        except StorageError:
            self._unsaved[key] = pending + (to_write if keep_on_failure else [])
            raise

    def save_stopped(self, state: TurnState) -> None:
        """Keep what the stopped turn produced: unanswered tool calls get a 'cancelled' result."""
        messages: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": CANCELLED_RESULT}
            for call_id, name in state.pending_tool_ids
        ]
        partial = "".join(state.streamed).strip()
        if partial or not messages:
            messages.append({"role": "assistant", "content": strip_think(partial) or "(stopped)", "stopped": True})
        else:
            messages[-1]["stopped"] = True
        state.pending_tool_ids = []
        try:
            self.save(state, messages)
        except OSError:
            log.exception("could not save the stopped turn of %s", state.session.key)
