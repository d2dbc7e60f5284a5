"""Markdown → HTML for chat messages: safe for untrusted text, and cheap while a reply streams in.

Qt-free on purpose (plain strings in, plain strings out), so it can be tested alone and run in an
executor for huge messages.

Safety: the model's text is untrusted. Raw HTML is not passed through: the `html_block` preprocessor
and the inline `html` pattern are removed, so `<script>` arrives as the visible text "<script>".
Links are rendered but never followed by the renderer; the widget decides which schemes to open.

Streaming: a message is split into blocks at blank lines outside code fences. Completed blocks are
rendered once and cached; each update re-renders only the last, growing block, so a reply costs
O(length) overall instead of O(length²). With a time budget, the blocks one update completes are
rendered over several event-loop steps (`IncrementalMessage.update(..., budget_s=...)`).
(Over 400 lines: the renderer and the streaming cache share the block split and the code-fence
rules, which must agree to the character, so they stay in one module.)
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import lru_cache, partial
from importlib import import_module
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.design import DARK, LIGHT

if TYPE_CHECKING:
    from pygments.lexer import Lexer

# markdown and pygments (~35 ms to import, ~30 ms to configure) are loaded by the first render,
# not when the chat view is built, so they stay off the start-up path.

COPY_SCHEME = "copy"  # code block i of a message links to "copy:i"


def copy_label() -> str:
    """The words of a code block's copy anchor on its header line, and of the Copy button that
    MessageBrowser lays over that anchor (it finds the anchor by these words)."""
    return translate("Chat", "Copy")


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})([^`]*)$")
_CODEHILITE_BLOCK = re.compile(r'<div class="codehilite"[^>]*>\s*<pre[^>]*>(.*?)</pre>\s*</div>', re.S)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class RenderStyle:
    """Colours that must follow the light/dark palette (everything else inherits the widget's palette)."""

    dark: bool = False
    border: str = LIGHT.border
    inline_code_background: str = LIGHT.inline_code_background
    quote_bar: str = LIGHT.quote_bar
    muted: str = LIGHT.muted  # a code block's language label

    @property
    def pygments_style(self) -> str:
        return "monokai" if self.dark else "default"


# A streamed code block bigger than this keeps its streamed (line-by-line highlighted) lines when
# its fence closes, instead of being rendered again whole (measured ~0.8 s at 67 KB); its HTML is
# only made if the message is rendered again later (theme change).
KEEP_STREAMED_CODE_OVER = 6000


@dataclass(frozen=True)
class RenderedBlock:
    source: str
    html: str | None  # None: not rendered yet (a big streamed code block, see KEEP_STREAMED_CODE_OVER)
    codes: tuple[str, ...]  # raw source of each code block, for the Copy links
    code_offset: int = 0  # the Copy-link number of its first code block


class MarkdownRenderer:
    """One configured converter (the chat dialect of markdown_extensions, codehilite with inline styles)."""

    def __init__(self, style: RenderStyle | None = None) -> None:
        self.style = style or RenderStyle()
        self.chars_rendered = 0  # total characters ever converted: lets tests check the O(n) promise
        self._md: Any = None  # the markdown converter, made by the first render (see _converter)
        self._code_background = self._code_foreground = ""
        self._qt_html: Callable[[str], str] = str
        self._skeletons: dict[tuple[str, str], str] = {}  # (fence, language) -> an empty code box's HTML

    def warm_up(self) -> None:
        """Import and configure the converter and Pygments' lexers now, not in the middle of the
        first streamed reply (where their ~50 + ~40 ms would stall the event loop)."""
        for step in self.warm_up_steps():
            step()

    def warm_up_steps(self) -> list[Callable[[], object]]:
        """`warm_up` in small steps (each ≤ ~25 ms here: Markdown's modules, the chat's extensions,
        codehilite with Pygments' tables, the converter, then one common lexer each), for a caller
        that runs one per event-loop turn (gui/chat/warm_up.py)."""
        modules = ("markdown", "nanobot_desktop.gui.chat.markdown_extensions", "markdown.extensions.codehilite",
                   "markdown.extensions.fenced_code", "markdown.extensions.tables", f"pygments.styles.{self.style.pygments_style}")
        return [*(partial(import_module, name) for name in modules), _scan_markdown_extensions, self._converter,
                *(partial(_load_lexer, language) for language in _WARM_LANGUAGES)]

    def _converter(self) -> Any:
        if self._md is None:
            from nanobot_desktop.gui.chat.markdown_extensions import build_converter, qt_html

            self._qt_html = qt_html
            converter = build_converter(self.style.pygments_style, self.style.quote_bar)
            self._code_background, self._code_foreground = _code_colors(self.style.pygments_style)
            self._md = converter
        return self._md

    def render_block(self, source: str, code_offset: int = 0) -> RenderedBlock:
        """Render one block; its code blocks get Copy links numbered from `code_offset`."""
        import html  # with the Markdown converter, not at start: html.entities is ~0.6 MB resident

        self.chars_rendered += len(source)
        converter = self._converter()
        converter.reset()
        body = self._qt_html(converter.convert(source))
        fenced = _fenced_code_blocks(source)
        # Labels only when every code box is a fenced block (an indented block has no fence to name it).
        labelled = len(fenced) == len(_CODEHILITE_BLOCK.findall(body))
        rendered_codes: list[str] = []

        def code_box(match: re.Match[str]) -> str:
            inner = match.group(1)
            inner = re.sub(r"^(<span></span>)?<code>", "", inner)
            inner = re.sub(r"</code>$", "", inner)
            rendered_codes.append(html.unescape(_TAG.sub("", inner)).removesuffix("\n"))
            number = len(rendered_codes) - 1
            index = code_offset + number
            language = fenced[number][0] if labelled else ""
            label = (f'<span style="color:{self.style.muted};">{html.escape(language)}</span>'
                     '&nbsp;&nbsp;&nbsp;' if language else "")
            # Paragraphs with a background rather than a table: see chat_message.StreamingCode.
            background = f"background-color:{self._code_background};"
            # The code block's copy anchor: a real button is laid over the header (MessageBrowser), so the
            # anchor's text is drawn in the background's colour; it stays in the document for copy-as-text
            # and for the keyboard (Tab reaches anchors).
            copy_text = html.escape(copy_label())
            hidden = f"color:{self._code_background}; text-decoration:none;"
            return (
                f'<p style="{background} margin-top:6px; margin-bottom:0px;">'
                f'{label}<a href="{COPY_SCHEME}:{index}" style="{hidden}">{copy_text}</a></p>'
                f'<pre style="{background} color:{self._code_foreground}; margin-top:0px; margin-bottom:6px; '
                f'white-space:pre-wrap;">{inner.rstrip()}</pre>'
            )

        body = _CODEHILITE_BLOCK.sub(code_box, body)
        # Fenced blocks are copied from the source (exact: tabs kept); indented blocks only exist in
        # the HTML, so when the counts disagree the HTML text is the safe choice for all of them.
        codes = tuple(code for _, code in fenced) if len(fenced) == len(rendered_codes) else tuple(rendered_codes)
        body = body.replace("<code>", f'<code style="background-color:{self.style.inline_code_background};">')
        body = body.replace(
            "<table>",
            f'<table border="1" cellspacing="0" cellpadding="4" '
            f'style="border-collapse:collapse; border-style:solid; border-color:{self.style.border}; margin-top:4px; margin-bottom:4px;">',
        )
        return RenderedBlock(source=source, html=body, codes=codes, code_offset=code_offset)

    def code_skeleton(self, fence: str, language: str, index: int) -> str:
        """The HTML of a code box holding one placeholder character, its Copy link numbered `index`:
        the box a streaming code block grows in (live_document.StreamingCode). Rendered once per fence
        and language: a full render with highlighting cost up to ~15 ms at the start of each code block."""
        html = self._skeletons.get((fence, language))
        if html is None:
            html = self.render_block(f"{fence}{language}\nx\n{fence}", 0).html or ""
            self._skeletons[(fence, language)] = html
        return html.replace(f'href="{COPY_SCHEME}:0"', f'href="{COPY_SCHEME}:{index}"', 1)

    def render(self, text: str) -> tuple[str, list[str]]:
        """Render a whole message the same way streaming does (block by block); returns (html, codes)."""
        incremental = IncrementalMessage(self)
        incremental.update(text, final=True)
        return incremental.html(), incremental.codes


@lru_cache(maxsize=8)
def _code_colors(style_name: str) -> tuple[str, str]:
    from pygments.styles import get_style_by_name
    from pygments.token import Token

    style = get_style_by_name(style_name)
    background = style.background_color or (DARK if style_name == "monokai" else LIGHT).code_background
    foreground = ""
    for token in (Token.Text, Token):
        spec = style.styles.get(token, "")
        found = re.search(r"#[0-9a-fA-F]{3,6}", spec or "")
        if found:
            foreground = found.group(0)
            break
    if not foreground:
        foreground = (DARK if style_name == "monokai" else LIGHT).code_text
    return background, foreground


def _fence_close(line: str, fence: str) -> bool:
    stripped = line.strip()
    return (len(line) - len(line.lstrip(" ")) <= 3 and stripped.startswith(fence[0] * len(fence))
            and set(stripped) == {fence[0]})


def _fence_language(info: str) -> str:
    """The language of a fence's info string ("python title=x" → "python"; "{.py}" style → "")."""
    words = info.strip().split()
    return words[0] if words and words[0][0].isalnum() else ""


def _fenced_code_blocks(source: str) -> list[tuple[str, str]]:
    """(language, exact text) of each fenced code block of `source` (unclosed fence: up to the end)."""
    codes: list[tuple[str, str]] = []
    fence: str | None = None
    language = ""
    lines: list[str] = []
    for line in source.split("\n"):
        if fence is None:
            opened = _FENCE_OPEN.match(line)
            if opened:
                fence, language, lines = opened.group(1), _fence_language(opened.group(2)), []
        elif _fence_close(line, fence):
            codes.append((language, "\n".join(lines)))
            fence = None
        else:
            lines.append(line)
    if fence is not None:
        codes.append((language, "\n".join(lines)))
    return codes


def split_blocks(text: str, start: int = 0) -> tuple[list[int], str | None]:
    """Find where new blocks begin in `text[start:]`.

    Boundaries: a blank line outside a code fence followed by a line that starts without
    indentation (an indented line continues a list item or an indented code block, so it stays
    in the block); the opening line of a code fence; the line after a closing fence. So every
    fenced code block is a block of its own, complete as soon as its closing fence line is.
    Returns the offsets where blocks start (after `start`) and the fence still open at the end.
    """
    boundaries: list[int] = []
    fence: str | None = None
    previous_blank = False
    seen_content = False
    position = start
    length = len(text)
    while position < length:
        newline = text.find("\n", position)
        end = length if newline < 0 else newline
        line = text[position:end]
        if fence is not None:
            if newline >= 0 and _fence_close(line, fence):
                fence = None
                boundaries.append(end + 1)
                seen_content = previous_blank = False
            position = end + 1
            continue
        if line.strip():
            opened = _FENCE_OPEN.match(line)
            if seen_content and not line[0].isspace() and (previous_blank or opened):
                boundaries.append(position)
            if opened:
                fence = opened.group(1)
            seen_content = True
            previous_blank = False
        else:
            previous_blank = newline >= 0  # an unfinished last line may still get content
        position = end + 1
    if boundaries and boundaries[-1] >= length:
        boundaries[-1] = length
    return boundaries, fence


@dataclass(frozen=True)
class OpenCode:
    """A fenced code block still streaming in. The widget shows it by appending the new lines
    (`highlight_lines`), because rendering the whole growing block on every flush is O(n²)."""

    language: str
    code: str  # everything after the fence line so far; the last line may be unfinished
    index: int  # the number of its Copy link


class RenderUpdate(NamedTuple):
    reset: bool  # the text was replaced, not extended: every block is new, rebuild
    blocks: list[RenderedBlock]  # blocks completed by this update, to append once
    tail: RenderedBlock | None  # the unfinished last block, re-rendered (replace the previous one)
    open_code: OpenCode | None  # or, instead of `tail`, a code fence still open


def highlight_lines(language: str, text: str, style: RenderStyle) -> list[tuple[str, dict[str, object]]]:
    """Pygments tokens of `text` as (text, pygments style dict) pairs, for appending streamed code.
    Lines are lexed on their own, so a construct spanning earlier lines may be coloured approximately
    until the block is complete and rendered whole."""
    from pygments.styles import get_style_by_name

    lexer = _lexer(language)
    pygments_style = get_style_by_name(style.pygments_style)
    return [(value, pygments_style.style_for_token(token)) for token, value in lexer.get_tokens(text)]


@lru_cache(maxsize=32)
def _lexer(language: str) -> Lexer:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False) if language else _plain_lexer()
    except ClassNotFound:
        return _plain_lexer()


def _plain_lexer() -> Lexer:
    from pygments.lexers import TextLexer

    return TextLexer(stripnl=False, ensurenl=False)


@dataclass
class IncrementalMessage:
    """The rendered state of one (possibly still streaming) message.

    `update(text)` returns the blocks completed since the last call and the unfinished tail. The
    caller appends completed blocks to its document once and replaces only the tail.
    """

    renderer: MarkdownRenderer
    blocks: list[RenderedBlock] = field(default_factory=list)
    tail: RenderedBlock | None = None
    open_code: OpenCode | None = None
    _consumed: int = 0  # characters of the text covered by `blocks`
    _consumed_text: str = ""
    _code_count: int = 0
    _returned: int = 0  # blocks already handed to the caller by `update`
    _reset_pending: bool = False  # the text was replaced; not yet reported (a partial update ran)
    _closing_streamed_code: bool = False  # the first new block is the code block that was streaming

    def update(self, text: str, *, final: bool, budget_s: float | None = None,
               with_tail: bool = True) -> RenderUpdate | None:
        """Render what `text` completed since the last update, and its unfinished tail.

        With `budget_s`, stop after the block that used up the budget and return None: the caller
        comes back (with the same or a longer text) in a later event-loop step, so a flush that
        completes many blocks never holds the loop for all of them at once. Blocks rendered by such
        partial calls are returned together by the call that finishes. `with_tail=False`: the tail is
        left unrendered (a caller that renders the text whole next, with `final`, would render it twice).
        """
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        if not text.startswith(self._consumed_text):
            self.blocks, self._consumed, self._consumed_text, self._code_count = [], 0, "", 0
            self._returned, self._reset_pending, self._closing_streamed_code = 0, True, False
        if self._returned == len(self.blocks) and not self._reset_pending:
            self._closing_streamed_code = self.open_code is not None  # a fresh update: was code streaming?
        boundaries, open_fence = split_blocks(text, self._consumed)
        block_start = self._consumed
        rendered_any = False
        for boundary in boundaries:
            if rendered_any and deadline is not None and time.perf_counter() > deadline:
                self._pause(text, block_start)
                return None
            source = text[block_start:boundary]
            if source.strip():
                keep_streamed = self._closing_streamed_code and len(source) > KEEP_STREAMED_CODE_OVER
                self._add_code_unrendered(source) if keep_streamed else self._render(source)
                self._closing_streamed_code = False
                rendered_any = True
            block_start = boundary
        if rendered_any and deadline is not None and time.perf_counter() > deadline:
            self._pause(text, block_start)
            return None
        remainder = text[block_start:]
        self.tail = self.open_code = None
        if final:
            if remainder.strip():
                self._render(remainder)
            block_start = len(text)
        elif open_fence is not None:
            header, header_done, code = remainder.lstrip("\n").partition("\n")
            if header_done:  # until the fence line is whole, its language (the box's label) may still grow
                info = _FENCE_OPEN.match(header)
                language = _fence_language(info.group(2)) if info else ""
                self.open_code = OpenCode(language=language, code=code, index=self._code_count)
        elif remainder.strip() and with_tail:
            self.tail = self.renderer.render_block(remainder, self._code_count)
        self._consumed = block_start
        self._consumed_text = text[:block_start]
        update = RenderUpdate(self._reset_pending, self.blocks[self._returned:], self.tail, self.open_code)
        self._returned, self._reset_pending, self._closing_streamed_code = len(self.blocks), False, False
        return update

    def _pause(self, text: str, block_start: int) -> None:
        self._consumed = block_start
        self._consumed_text = text[:block_start]

    def _render(self, source: str) -> RenderedBlock:
        block = self.renderer.render_block(source, self._code_count)
        self._code_count += len(block.codes)
        self.blocks.append(block)
        return block

    def _add_code_unrendered(self, source: str) -> RenderedBlock:
        block = RenderedBlock(source=source, html=None, codes=tuple(code for _, code in _fenced_code_blocks(source)),
                              code_offset=self._code_count)
        self._code_count += len(block.codes)
        self.blocks.append(block)
        return block

    def html_of(self, block: RenderedBlock) -> str:
        """The block's HTML, rendering (and caching) it now if it was left unrendered."""
        if block.html is not None:
            return block.html
        rendered = self.renderer.render_block(block.source, block.code_offset)
        self.blocks[self.blocks.index(block)] = rendered
        return rendered.html or ""

    @property
    def codes(self) -> list[str]:
        codes = [code for block in self.blocks for code in block.codes]
        if self.tail is not None:
            codes.extend(self.tail.codes)
        if self.open_code is not None:
            codes.append(self.open_code.code)
        return codes

    def html(self) -> str:
        parts = [self.html_of(block) for block in list(self.blocks)]
        if self.tail is not None and self.tail.html is not None:
            parts.append(self.tail.html)
        return "\n".join(parts)


_WARM_LANGUAGES = ("python", "bash", "json", "javascript", "yaml", "text")


def _scan_markdown_extensions() -> None:
    """Markdown looks its extensions up among the installed packages' entry points once (~20 ms, cached)."""
    scan = getattr(import_module("markdown.util"), "get_installed_extensions", None)
    if scan is not None:
        scan()


def _load_lexer(language: str) -> None:
    """Load one of Pygments' lexers (the first lookup also loads its lexer table, ~40 ms).

    Done lazily, that lands in the middle of the first streamed code block and stalls the event
    loop (measured by bench/stream_stall.py); the warm-up does it before.
    """
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        get_lexer_by_name(language)
    except ClassNotFound:
        pass
