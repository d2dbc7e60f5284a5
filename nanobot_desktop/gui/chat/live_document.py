"""The live document of a streaming message: rendered HTML appended block by block so that it lays
out as `setHtml` of the whole message would, and a code fence still open growing line by line.

Qt's `insertHtml` differs from `setHtml` of the whole in small ways (a fragment's first paragraph
merges into the block it lands in, lists after lists get an empty block between them); the
helpers here undo exactly those differences, and tests/gui/chat/test_markdown_structure.py compares
every block's format of a streamed document with the whole render.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument

from nanobot_desktop.gui.chat.markdown_render import MarkdownRenderer, OpenCode, RenderStyle, highlight_lines


_OWN_BLOCK_TAGS = ("<table", "<ol", "<ul")  # Qt starts a new block for these by itself


def append_html(cursor: QTextCursor, fragment: str) -> None:
    """Append rendered HTML as new paragraphs, laid out as `setHtml` of the whole would lay them out
    (insertHtml alone merges the fragment's first paragraph into the document's last block)."""
    cursor.movePosition(QTextCursor.MoveOperation.End)
    block = cursor.block()
    if fragment.startswith(("<ol", "<ul")):
        needs_block = block.length() > 1 and block.textList() is not None  # or the lists would merge
    elif fragment.startswith(_OWN_BLOCK_TAGS):
        needs_block = False
    elif block.length() > 1:
        needs_block = True
    else:  # an empty last block: after a table, setHtml keeps it as a gap before the next paragraph
        previous = block.previous()
        needs_block = previous.isValid() and QTextCursor(previous).currentTable() is not None
    if needs_block:
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
    start = cursor.position()
    cursor.insertHtml(fragment)
    if needs_block and fragment.startswith(("<ol", "<ul")):
        _drop_empty_block_before_list(cursor.document(), start)
    if not fragment.startswith(_OWN_BLOCK_TAGS):
        # The fragment's first paragraph was merged into the block it was inserted into and lost
        # its own format (margins of a paragraph or heading, a code box's background): give it back.
        first_format = _first_block_format(fragment[:fragment.find(">") + 1], fragment)
        if first_format is not None:
            fixer = QTextCursor(cursor.document())
            fixer.setPosition(start)
            fixer.setBlockFormat(first_format)


_first_formats: dict[str, QTextBlockFormat | None] = {}


def _first_block_format(first_tag: str, fragment: str) -> QTextBlockFormat | None:
    """The block format Qt gives the fragment's first paragraph (None for a list item), parsed once
    per opening tag: it depends on the tag and its style only. The tag is parsed with one character
    of text, not the fragment it came with: a fragment whose first element Qt drops (an empty
    heading) would otherwise leave the next block's format cached under this tag."""
    if first_tag not in _first_formats:
        parsed = QTextDocument()
        parsed.setHtml(f"{first_tag}x" if first_tag else fragment)
        first = parsed.begin()
        _first_formats[first_tag] = None if first.textList() is not None else QTextBlockFormat(first.blockFormat())
    return _first_formats[first_tag]


def _drop_empty_block_before_list(document: QTextDocument, start: int) -> None:
    """insertHtml puts a list after the empty block that separates it from the previous list
    (setHtml of the whole has no such gap): merge that empty block into the one before it."""
    empty = document.findBlock(start)
    following = empty.next()
    if empty.length() == 1 and empty.textList() is None and following.isValid() and following.textList() is not None:
        joiner = QTextCursor(document)
        joiner.setPosition(start - 1)
        joiner.setPosition(start, QTextCursor.MoveMode.KeepAnchor)
        joiner.removeSelectedText()


class StreamingCode:
    """A fenced code block that is still streaming: its box is inserted once at the end of the
    document, then each flush appends only the newly completed lines, highlighted line by line.
    Code blocks are paragraphs with a background (not a table): Qt lays out root-frame paragraphs
    incrementally, but re-lays out a whole table whenever a cell changes."""

    def __init__(self, document: QTextDocument, style: RenderStyle, language: str) -> None:
        self._document = document
        self.language = language
        self._style = style
        self._shown = 0  # characters of the code already in the document
        self._formats: dict[tuple[object, ...], QTextCharFormat] = {}

    @classmethod
    def start(cls, cursor: QTextCursor, renderer: MarkdownRenderer, code: OpenCode) -> "StreamingCode":
        fence = "~~~" if "```" in code.code else "```"
        # A placeholder character keeps the code paragraph (and its monospace format) in the HTML.
        append_html(cursor, renderer.code_skeleton(fence, code.language, code.index))
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.deletePreviousChar()
        return cls(cursor.document(), renderer.style, code.language)

    def extend(self, code: OpenCode) -> None:
        complete = code.code.rfind("\n") + 1  # whole lines only: the last one may still change
        if complete <= self._shown:
            return
        cursor = QTextCursor(self._document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        base = cursor.charFormat()
        inner_block = QTextBlockFormat(cursor.blockFormat())
        inner_block.setTopMargin(0)
        inner_block.setBottomMargin(0)
        last_block = QTextBlockFormat(cursor.blockFormat())
        last_block.setTopMargin(0)
        new_text = code.code[self._shown:complete - 1]
        if self._shown:
            new_text = "\n" + new_text
        for text, style in highlight_lines(self.language, new_text, self._style):
            lines = text.split("\n")
            for number, line in enumerate(lines):
                if number:  # a new line of the box; only its last line keeps the bottom margin
                    cursor.setBlockFormat(inner_block)
                    cursor.insertBlock(last_block, base)
                if line:
                    cursor.insertText(line, self._format(base, style))
        self._shown = complete

    def _format(self, base: QTextCharFormat, style: dict[str, object]) -> QTextCharFormat:
        key = (style.get("color"), style.get("bold"), style.get("italic"))
        text_format = self._formats.get(key)
        if text_format is None:
            text_format = QTextCharFormat(base)
            if style.get("color"):
                text_format.setForeground(QColor(f"#{style['color']}"))
            text_format.setFontWeight(QFont.Weight.Bold if style.get("bold") else QFont.Weight.Normal)
            text_format.setFontItalic(bool(style.get("italic")))
            self._formats[key] = text_format
        return text_format
