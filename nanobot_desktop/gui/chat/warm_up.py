"""Markdown and Pygments are loaded when the chat is about to need them, not at start-up.

An empty window renders no Markdown, so markdown, its extensions and Pygments' lexer table (~5 MB
resident, ~40 modules: issue 17's empty-window budget, bench/window_rss.py) stay out of it. They
are loaded, whichever comes first:
- when the composer gets its first text (`start`): one step at a time, STEP_GAP_MS apart (modules,
  the converter, then one common lexer each), so typing never waits for more than one step, and the first reply
  streams in with everything ready (a lexer looked up mid-stream stalled the loop ~40 ms,
  bench/stream_stall.py);
- when a message is sent without that (`finish_now`, e.g. Retry): at once, before the request goes
  out, so the wait is not in the middle of the streamed reply;
- by the first render of chat content itself (an opened session), which builds what it needs.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

from nanobot_desktop.gui.chat.markdown_render import MarkdownRenderer

STEP_GAP_MS = 10
"""Between two steps: a zero timer would let the next step run before the loop's other timers and
the typing's own events get their turn (measured: ~4 steps back to back, ~90 ms)."""


class RenderingWarmUp(QObject):
    """Runs `MarkdownRenderer.warm_up_steps` once: at idle step by step, or the rest at once."""

    def __init__(self, renderer: Callable[[], MarkdownRenderer], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._renderer = renderer  # the view's current one (a theme change replaces it)
        self._steps: list[Callable[[], object]] | None = None  # None: not started

    @property
    def started(self) -> bool:
        return self._steps is not None

    @property
    def done(self) -> bool:
        return self._steps is not None and not self._steps

    def start(self) -> None:
        """Begin at idle, one step per event-loop turn (idempotent: cheap to call per keystroke)."""
        if self._steps is None:
            self._steps = self._renderer().warm_up_steps()
            QTimer.singleShot(STEP_GAP_MS, self, self._next)

    def finish_now(self) -> None:
        """Whatever is left, now."""
        if self._steps is None:
            self._steps = self._renderer().warm_up_steps()
        while self._steps:
            self._steps.pop(0)()

    def _next(self) -> None:
        if self._steps:
            self._steps.pop(0)()
        if self._steps:
            QTimer.singleShot(STEP_GAP_MS, self, self._next)
