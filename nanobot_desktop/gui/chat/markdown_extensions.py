"""The Markdown dialect of the chat: what GitHub and the peer chat apps render, in what Qt can show.

Parsing is done by Python-Markdown and maintained extensions; this module only configures them
and adapts their output to Qt's rich-text subset (Qt-free itself: plain strings and ElementTree):

- Nested lists at 2, 3 or 4 spaces: `mdx_truly_sane_lists` makes list processors nest at 2 spaces
  (so the common "1. step\\n   - detail" nests instead of running inline). Its indented-item rule
  accepts only 2–3 spaces; `_WideIndentMixin` widens it to any indentation of 2 or more, so 4-space
  nesting (Python-Markdown's own default) keeps working too; the level follows the relative
  indentation, as on GitHub.
- Lists right under a line of text ("Steps:\n- a"), as models write them and GitHub renders
  them: `mdx_breakless_lists` adds the blank line Python-Markdown wants. It is registered after
  `fenced_code` has set code blocks aside, so a diff's "- removed" line inside a fence stays code.
- Task lists: `pymdownx.tasklist` marks `- [ ]` / `- [x]` items with `<input>` tags, which Qt
  does not draw; `qt_html` turns them into checkbox glyphs and removes the bullet of such lists.
  Only the extension can produce those tags: raw HTML from the model is escaped before this.
- Blockquotes: Qt draws `<blockquote>` as an indent only. `QuoteBarTreeprocessor` makes each one a
  single-cell table whose left border is the bar (Qt's rich text supports per-side cell borders).
"""

from __future__ import annotations

import re
from xml.etree import ElementTree
from typing import Any

from markdown import Extension, Markdown
from markdown.blockprocessors import BlockProcessor
from markdown.treeprocessors import Treeprocessor
from mdx_truly_sane_lists.mdx_truly_sane_lists import (
    TrulySaneListExtension, TrulySaneOListProcessor, TrulySaneUListProcessor,
)
from mdx_breakless_lists.mdx_breakless_lists import BreaklessLists
from pymdownx.tasklist import TasklistExtension

from nanobot_desktop.gui.common.design import LIGHT

NESTED_INDENT = 2
CHECKED_GLYPH = "\u2611"  # ☑
UNCHECKED_GLYPH = "\u2610"  # ☐
BULLET_GLYPH = "\u2022"  # •
QUOTE_BAR_WIDTH = 3
BREAKLESS_PRIORITY = 24


class QuoteBarTreeprocessor(Treeprocessor):
    """<blockquote>…</blockquote> → <table><tr><td style="border-left…">…</td></tr></table>."""

    def __init__(self, md: Markdown, bar_color: str) -> None:
        super().__init__(md)
        self.bar_color = bar_color

    def run(self, root: ElementTree.Element) -> None:
        for quote in list(root.iter("blockquote")):
            children = list(quote)
            text = quote.text
            quote.clear()
            quote.tag = "table"
            quote.set("cellspacing", "0")
            quote.set("cellpadding", "0")
            quote.set("style", "margin-top:4px; margin-bottom:4px;")
            cell = ElementTree.SubElement(ElementTree.SubElement(quote, "tr"), "td")
            cell.set("style", f"border-left: {QUOTE_BAR_WIDTH}px solid {self.bar_color}; padding-left: 8px;")
            cell.text = text
            cell.extend(children)


class PlainItemBulletTreeprocessor(Treeprocessor):
    """A list that mixes task items with plain ones loses its bullets (`qt_html` hides them for the
    checkbox glyphs), so each plain item of such a list gets a bullet glyph of its own."""

    def run(self, root: ElementTree.Element) -> None:
        for task_list in root.iter("ul"):
            if "task-list" not in (task_list.get("class") or "").split():
                continue
            for item in task_list.findall("li"):
                if "task-list-item" not in (item.get("class") or "").split():
                    item.text = f"{BULLET_GLYPH}\u00a0{item.text or ''}"


class ChatDialectExtension(Extension):
    """The quote bar, and the wide list indent (listed after mdx_truly_sane_lists, so its list
    processors exist when this runs)."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = {"quote_bar_color": [LIGHT.quote_bar, "colour of a blockquote's left bar"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        md.treeprocessors.register(QuoteBarTreeprocessor(md, self.getConfig("quote_bar_color")), "quote-bar", 5)
        md.treeprocessors.register(PlainItemBulletTreeprocessor(md), "plain-item-bullet", 4)  # after task-list (25)
        _widen_list_indent(md)


class _WideIndentMixin(BlockProcessor):
    """An item indented by 2 or more spaces is nested, and is shifted left so that its first line
    is indented by exactly 2: Python-Markdown then nests it one level, whatever the author's step."""

    tab_length: int
    INDENT_RE: re.Pattern[str]

    def __init__(self, parser: Any) -> None:
        super().__init__(parser)
        self.INDENT_RE = re.compile(rf"^[ ]{{{self.tab_length},}}((\d+\.)|[*+-])[ ]+.*")

    def get_items(self, block: str) -> list[str]:
        items: list[str] = super().get_items(block)
        return [_shift_left(item, self.tab_length) for item in items]


def _shift_left(item: str, indent: int) -> str:
    extra = len(item) - len(item.lstrip(" ")) - indent
    if extra <= 0:
        return item
    return "\n".join(line[min(extra, len(line) - len(line.lstrip(" "))):] for line in item.split("\n"))


class _OList(_WideIndentMixin, TrulySaneOListProcessor):
    pass


class _UList(_WideIndentMixin, TrulySaneUListProcessor):
    pass


def _widen_list_indent(md: Markdown) -> None:
    """Replace the 2-space list processors by the wide-indent ones, at the same places."""
    md.parser.blockprocessors.register(_OList(md.parser), "olist", 50)
    md.parser.blockprocessors.register(_UList(md.parser), "ulist", 40)


def build_converter(pygments_style: str, quote_bar_color: str) -> Markdown:
    """The chat's configured converter, with raw HTML switched off (the model's text is untrusted)."""
    # The companions are passed as instances (not by name) so that packagers see the imports.
    converter = Markdown(
        extensions=["fenced_code", "tables", "codehilite",
                    TrulySaneListExtension(nested_indent=NESTED_INDENT, truly_sane=False),
                    TasklistExtension(custom_checkbox=False, clickable_checkbox=False),
                    ChatDialectExtension(quote_bar_color=quote_bar_color), BreaklessLists()],
        extension_configs={
            "codehilite": {"noclasses": True, "guess_lang": False, "pygments_style": pygments_style,
                           "pygments_formatter": _html_formatter()},
        },
        output_format="html",
    )
    converter.preprocessors.deregister("html_block")
    # After fenced_code (25) has stashed code blocks, not before it (the extension's own 27).
    converter.preprocessors.register(converter.preprocessors["breakless_lists"], "breakless_lists", BREAKLESS_PRIORITY)
    converter.inlinePatterns.deregister("html")
    return converter


def _html_formatter() -> type[Any]:
    """Pygments' HTML formatter, building its token → inline-style table once per style instead of
    once per code block (codehilite makes a formatter for each block; the table cost ~2 ms of every
    code block a reply streams in, see bench/stream_stall.py). The output is the stock formatter's."""
    from pygments.formatters.html import HtmlFormatter

    tables: dict[tuple[object, str], tuple[dict[Any, str], dict[str, Any]]] = {}

    class StyleOnceHtmlFormatter(HtmlFormatter):
        def _create_stylesheet(self) -> None:
            key = (self.style, self.classprefix)
            if key not in tables:
                super()._create_stylesheet()
                tables[key] = (self.__dict__["ttype2class"], self.__dict__["class2style"])
            # Shared read-only: the formatter only reads the two tables once it has built them.
            self.__dict__.update(zip(("ttype2class", "class2style"), tables[key], strict=True))

    return StyleOnceHtmlFormatter


_CHECKBOX = re.compile(r'<input type="checkbox" disabled( checked)?/>\s?')


def qt_html(body: str) -> str:
    """Adapt the converter's HTML to Qt: task-list checkboxes become glyphs, their bullets go."""
    body = _CHECKBOX.sub(lambda m: f"{CHECKED_GLYPH if m.group(1) else UNCHECKED_GLYPH}\u00a0", body)
    return body.replace('<ul class="task-list">', '<ul class="task-list" style="list-style-type:none;">')
