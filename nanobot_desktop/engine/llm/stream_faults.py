"""Telling a stalled or malformed reply apart from a working one, and saying which fault it was.

`StallWatch` keeps one asyncio timeout scope per call: until the first chunk the deadline is the
first-byte timeout; afterwards it moves forward only when the stream makes real progress (at least
`PROGRESS_CHARS` characters since the last move), so a stream that pauses *or* trickles a character
every few seconds both end after `idle_timeout_s`. One scope rescheduled per chunk costs nothing
measurable, unlike a `wait_for` task per chunk. While nothing arrives, `on_wait` hears about it once
a second (after the first two seconds), which the window shows as "waiting for the model… N s".

A local server (`first_byte_s` None) is never given up on before its first chunk: reading a long
prompt takes a 7B model on a laptop CPU minutes, and the server is working, not stuck. The wait is
then told as phase "prompt" with no limit (0), and Stop is the person's way out.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from nanobot_desktop.engine.llm.types import WaitCallback

PROGRESS_CHARS = 16
_TICK_S = 1.0
_QUIET_BEFORE_TELLING_S = 2.0


class StallWatch:
    """The deadline and the "waiting…" ticks of one streamed call."""

    def __init__(self, first_byte_s: float | None, idle_s: float, on_wait: WaitCallback | None) -> None:
        self.first_byte_s = first_byte_s
        self.idle_s = idle_s
        self.on_wait = on_wait
        self.started = time.monotonic()
        self.last_progress = self.started
        self.progress_chars = 0  # characters counted at the last progress
        self.last_chunk = self.started
        self.first_chunk_seen = False
        self._scope: asyncio.Timeout | None = None
        self._tick: asyncio.TimerHandle | None = None

    def deadline(self) -> float | None:
        limit = self.idle_s if self.first_chunk_seen else self.first_byte_s
        if limit is None:
            return None
        return asyncio.get_running_loop().time() + max(limit - (time.monotonic() - self.last_progress), 0.0)

    def start(self, scope: asyncio.Timeout) -> None:
        self._scope = scope
        if self.on_wait is not None:
            self._tick = asyncio.get_running_loop().call_later(_TICK_S, self._on_tick)

    def progress(self, chars: int) -> None:
        """A chunk arrived; `chars` is the total received so far."""
        self.last_chunk = time.monotonic()
        if chars == 0 and self.first_byte_s is None:
            return  # a local server's empty role chunk: it may still be reading the prompt
        moved = not self.first_chunk_seen or chars - self.progress_chars >= PROGRESS_CHARS
        self.first_chunk_seen = True
        if moved:
            self.last_progress = time.monotonic()
            self.progress_chars = chars
            if self._scope is not None:
                self._scope.reschedule(self.deadline())

    def stop(self) -> None:
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None

    def _on_tick(self) -> None:
        waited = time.monotonic() - self.last_progress
        if self.on_wait is not None and waited >= _QUIET_BEFORE_TELLING_S:
            phase = "idle" if self.first_chunk_seen else "first_byte" if self.first_byte_s is not None else "prompt"
            limit = self.idle_s if self.first_chunk_seen else self.first_byte_s or 0.0
            try:
                self.on_wait(phase, round(waited, 1), limit)
            except Exception:  # noqa: BLE001 - a listener must not break the call
                pass
        self._tick = asyncio.get_running_loop().call_later(_TICK_S, self._on_tick)

    def kind(self) -> str:
        return "stalled" if self.first_chunk_seen else "timeout"

    def message(self, api_base: str, chars: int) -> str:
        """The sentence for the timeout that just fired."""
        if not self.first_chunk_seen:
            return (f"{api_base} accepted the request but sent nothing for {self.first_byte_s or 0:g} s, so the call "
                    "was given up (first-byte timeout). The server may be overloaded or stuck: try again.")
        trickled = chars - self.progress_chars
        silent_s = time.monotonic() - self.last_chunk
        if trickled > 0 and silent_s < self.idle_s / 2:
            return (f"The endpoint's stream slowed to a trickle ({trickled} characters in {self.idle_s:g} s) "
                    f"after {chars} characters, so the call was given up.")
        return (f"The endpoint stopped sending mid-reply (no progress for {self.idle_s:g} s after {chars} "
                "characters), so the call was given up.")


def malformed_chunk_error(exc: Any, chars: int) -> str:
    reason = getattr(exc, "msg", None) or str(exc)
    return (f"The endpoint sent a stream chunk that is not valid JSON ({reason}) after {chars} characters "
            "of the reply, so the reply could not be read to the end.")


def empty_reply_error(api_base: str, content_type: str, chunks: int) -> tuple[str, str]:
    """(message, kind) for a call that ended without a single choice."""
    kind_of_body = content_type.split(";")[0].strip() or "no content type"
    if "html" in kind_of_body:
        return (f"{api_base} answered with a web page ({kind_of_body}), not a chat-completions stream: "
                "check the base URL in Settings (it usually ends in /v1).", "not_an_api")
    if chunks == 0:
        return (f"{api_base} answered without any stream data ({kind_of_body}): check the base URL in Settings "
                "(it usually ends in /v1).", "not_an_api")
    return (f"The endpoint's reply contained no choices ({chunks} chunks, each with an empty choices list): "
            "the model gave no answer. Try again, or pick another model in Settings.", "empty")
