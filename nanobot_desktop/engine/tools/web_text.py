"""web_fetch's HTML reading: a page's title and readable text, as markdown or plain text.

Its own module so that `html.parser` is imported when a page is first read, not with the tools
(a headless turn that fetches nothing does not pay for it; start-up time is measured).
"""

from __future__ import annotations

import re
import urllib.parse
from html.parser import HTMLParser
from typing import Any

_SKIPPED_TAGS = frozenset({"script", "style", "nav", "noscript", "svg", "template", "iframe", "aside",
                           "footer", "button", "select"})
_BLOCK_TAGS = frozenset({"p", "div", "section", "article", "main", "header", "table", "tr", "blockquote",
                         "figure", "figcaption", "ul", "ol", "dl", "dt", "dd", "address", "details", "summary"})
_VOID_TAGS = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source",
                        "track", "wbr", "param"})
_PRE_OPEN, _PRE_CLOSE = "\x00pre", "\x00/pre"


class _ReadableText(HTMLParser):
    """Collects a page's title and its readable text, preferring <main>/<article> when the page has one."""

    def __init__(self, markdown: bool, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown = markdown
        self.base_url = base_url
        self.out: list[str] = []
        self.title_parts: list[str] = []
        self.in_title = False
        self.in_head = False  # tracked apart from skip_depth: HTML may omit </head>, never <body>'s content
        self.skip_depth = 0
        self.pre_depth = 0
        self.focus_depth = 0
        self.focus_start = 0
        self.focus_ranges: list[tuple[int, int]] = []
        self.links: list[tuple[int, str | None]] = []
        self.lists: list[list[Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
            return
        if tag in ("head", "body"):
            self.in_head = tag == "head"
            return
        if tag in _SKIPPED_TAGS:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag in ("main", "article"):
            if self.focus_depth == 0:
                self.focus_start = len(self.out)
            self.focus_depth += 1
        if tag in _BLOCK_TAGS:
            self.out.append("\n\n")
        if tag in ("ul", "ol"):
            self.lists.append([tag, 0])
        elif tag == "li":
            bullet = "- "
            if self.lists and self.lists[-1][0] == "ol":
                self.lists[-1][1] += 1
                bullet = f"{self.lists[-1][1]}. "
            self.out.append("\n" + bullet)
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n" + ("#" * int(tag[1]) + " " if self.markdown else ""))
        elif tag == "br":
            self.out.append("\n")
        elif tag == "hr":
            self.out.append("\n\n---\n\n" if self.markdown else "\n\n")
        elif tag == "pre":
            self.pre_depth += 1
            self.out.append(f"\n\n{_PRE_OPEN}\n")
        elif tag == "a":
            href = dict(attrs).get("href")
            usable = href and not href.startswith(("#", "javascript:"))
            self.links.append((len(self.out), urllib.parse.urljoin(self.base_url, href) if usable else None))
            self.out.append("")  # placeholder for "[" once we know the link has text

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if tag == "head":
            self.in_head = False
            return
        if tag in _SKIPPED_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag == "a" and self.links:
            start, href = self.links.pop()
            if self.markdown and href and "".join(self.out[start + 1:]).strip():
                self.out[start] = "["
                self.out.append(f"]({href})")
        elif tag in ("ul", "ol") and self.lists:
            self.lists.pop()
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n")
        elif tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
            self.out.append(f"\n{_PRE_CLOSE}\n\n")
        elif tag in ("td", "th"):
            self.out.append(" ")
        if tag in _BLOCK_TAGS:
            self.out.append("\n\n")
        if tag in ("main", "article") and self.focus_depth:
            self.focus_depth -= 1
            if self.focus_depth == 0:
                self.focus_ranges.append((self.focus_start, len(self.out)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID_TAGS:
            self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
        elif not self.skip_depth and not self.in_head:
            self.out.append(data if self.pre_depth else re.sub(r"\s+", " ", data))

    def title(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.title_parts)).strip()

    def text(self) -> str:
        if self.focus_depth:
            self.focus_ranges.append((self.focus_start, len(self.out)))
        focused = "\n\n".join("".join(self.out[a:b]) for a, b in self.focus_ranges)
        raw = focused if focused.strip() else "".join(self.out)
        return _tidy(raw, self.markdown)


def _tidy(raw: str, markdown: bool) -> str:
    """Strip stray blanks and blank-line runs outside preformatted blocks; keep those blocks verbatim."""
    lines: list[str] = []
    in_pre = False
    for line in raw.split("\n"):
        if line.strip() in (_PRE_OPEN, _PRE_CLOSE):
            in_pre = line.strip() == _PRE_OPEN
            if markdown:
                lines.append("```")
            continue
        if in_pre:
            lines.append(line)
            continue
        line = line.strip()
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip()


def html_to_text(html: str, markdown: bool = True, base_url: str = "") -> tuple[str, str]:
    """(title, readable text) of an HTML document; markdown keeps headings, links and lists marked up."""
    parser = _ReadableText(markdown, base_url)
    parser.feed(html)
    parser.close()
    return parser.title(), parser.text()
