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

Its last steps lay out and paint a small sample reply (`SampleReply`) where nobody sees it: the first
use of each heading size, of bold, monospace and a table (Qt's font engines, shaping and glyph caches,
live_document's first formats) cost the first streamed reply's first document edits 5-9 ms each
against ~1.5 ms after it (measured offscreen, edits of three blocks). The very last paints a code
block's Copy button: the first one made in a reply took 2.5-3.4 ms, 0.6-1.6 ms after this step.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QGuiApplication, QImage, QPainter, QTextCursor, QTextDocument

from nanobot_desktop.gui.chat.live_document import append_html
from nanobot_desktop.gui.chat.markdown_render import IncrementalMessage, MarkdownRenderer

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
            self._steps = self._all_steps()
            QTimer.singleShot(STEP_GAP_MS, self, self._next)

    def finish_now(self) -> None:
        """Whatever is left, now."""
        if self._steps is None:
            self._steps = self._all_steps()
        while self._steps:
            self._steps.pop(0)()

    def _all_steps(self) -> list[Callable[[], object]]:
        renderer = self._renderer()
        return [*renderer.warm_up_steps(), *SampleReply(renderer).steps()]

    def _next(self) -> None:
        if self._steps:
            self._steps.pop(0)()
        if self._steps:
            QTimer.singleShot(STEP_GAP_MS, self, self._next)


SAMPLE_REPLY = """## A heading

A paragraph with **bold**, *italic*, `inline code` and a [link](https://example.org).

### A smaller heading

- an item
- another

1. first
2. second

> A quote.

```python
print("hello")
```

| Name | Value |
|------|-------|
| a    | 1     |
"""
"""One of each kind of block a reply has, for `SampleReply`."""

SAMPLE_WIDTH = 700  # about the chat's reading width


class SampleReply:
    """SAMPLE_REPLY rendered, appended to a document as a streamed reply is (live_document.append_html),
    laid out in the application's font and painted into an image, then a code block's Copy button
    painted: four warm-up steps."""

    def __init__(self, renderer: MarkdownRenderer) -> None:
        self._renderer = renderer
        self._html: list[str] = []
        self._document: QTextDocument | None = None

    def steps(self) -> list[Callable[[], object]]:
        return [self._render, self._lay_out, self._paint, self._paint_copy_button]

    def _render(self) -> None:
        incremental = IncrementalMessage(self._renderer)
        incremental.update(SAMPLE_REPLY, final=True)
        self._html = [incremental.html_of(block) for block in incremental.blocks]
        self._renderer.code_skeleton("```", "python", 0)  # the box a streaming code block starts in

    def _lay_out(self) -> None:
        document = QTextDocument()
        document.setDefaultFont(QGuiApplication.font())
        document.setTextWidth(SAMPLE_WIDTH)
        cursor = QTextCursor(document)
        for html in self._html:
            append_html(cursor, html)
        document.size()  # lays it all out
        self._document = document

    def _paint(self) -> None:
        document, self._document = self._document, None
        if document is None:
            return
        screen = QGuiApplication.primaryScreen()
        ratio = screen.devicePixelRatio() if screen is not None else 1.0
        size = document.size().toSize() * ratio
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(ratio)
        image.fill(0)
        painter = QPainter(image)
        document.drawContents(painter)
        painter.end()

    @staticmethod
    def _paint_copy_button() -> None:
        """A code block's Copy button, made and painted into a pixmap, then dropped. The first one a
        streamed reply made took 2.5-3.4 ms to make, show and paint (its small font's first metrics and
        glyphs, its icon's first drawing at 14 px, which the icon keeps), 0.6-1.6 ms after this step
        (fresh processes with the toolbar's icons painted, as in the app)."""
        from nanobot_desktop.gui.chat.message import copy_button

        button = copy_button(None, 0)
        try:
            button.grab()  # paints the hidden button into a pixmap
        finally:
            button.deleteLater()
