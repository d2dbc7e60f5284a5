"""The chat's Markdown, checked by the structure Qt builds from it (lists and their levels, tables,
quote cells with their bar, code boxes, inline formats), not by "it did not crash".

Each case is Markdown → the expected outline of the message's QTextDocument in the real
AssistantWidget, once rendered in one go (a message loaded from history) and once streamed in
small deltas through a ChatView (the live, incremental document), which must read the same.

Outline lines: `h1 …` heading; `p …` paragraph; `ul2 …` / `ol1 …` / `task1 …` list item with its
nesting level; `code …` a monospace code line; `row a | b` a table row; a `>` per enclosing quote.
Inline: **bold**, *italic*, `code`, [text](href).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QTextBlock, QTextCursor, QTextDocument, QTextFrame, QTextListFormat, QTextTable

from nanobot_desktop.gui.chat.message import AssistantWidget
from nanobot_desktop.gui.chat.model import AssistantMessage, ChatModel
from nanobot_desktop.gui.chat.markdown_render import IncrementalMessage, MarkdownRenderer
from nanobot_desktop.gui.chat.view import ChatView

CASES: list[tuple[str, str, list[str]]] = [
    ("nested list, 2 spaces", "- a\n  - b\n    - c\n- d",
     ["ul1 a", "ul2 b", "ul3 c", "ul1 d"]),
    ("nested list, 3 spaces under a number", "1. one\n   - sub\n   - sub2\n2. two",
     ["ol1 one", "ul2 sub", "ul2 sub2", "ol1 two"]),
    ("nested list, 3 spaces, three levels", "1. a\n   - b\n      - c\n2. d",
     ["ol1 a", "ul2 b", "ul3 c", "ol1 d"]),
    ("nested list, 4 spaces", "- a\n    - b\n        - c\n- d",
     ["ul1 a", "ul2 b", "ul3 c", "ul1 d"]),
    ("nested ordered list, 4 spaces", "1. a\n    1. b\n    2. c\n2. d",
     ["ol1 a", "ol2 b", "ol2 c", "ol1 d"]),
    ("loose list with a second paragraph", "- a\n\n- b\n\n  more about b",
     ["ul1 a", "ul1 b", "p more about b"]),
    ("task list", "- [ ] todo\n- [x] done",
     ["task1 ☐ todo", "task1 ☑ done"]),
    ("task list mixed with plain items", "- plain\n- [x] done\n- also plain",
     ["task1 • plain", "task1 ☑ done", "task1 • also plain"]),
    ("nested task list", "- [x] parent\n  - [ ] child",
     ["task1 ☑ parent", "task2 ☐ child"]),
    ("blockquote", "> quoted *text*",
     ["> p quoted *text*"]),
    ("nested blockquote", "> outer\n>\n> > inner\n\nafter",
     ["> p outer", ">> p inner", "p after"]),
    ("list inside a quote", "> - a\n> - b",
     ["> ul1 a", "> ul1 b"]),
    ("table", "| Name | Size |\n|---|---:|\n| a.txt | 10 |\n| b.txt | 2 |",
     ["row **Name** | **Size**", "row a.txt | 10", "row b.txt | 2"]),
    ("table with inline code", "| key | value |\n|---|---|\n| `x` | **1** |",
     ["row **key** | **value**", "row `x` | **1**"]),
    ("code with a language", "```python\ndef f(x):\n    return x\n```",
     ["p python [Copy](copy:0)", "code def f(x):", "code     return x"]),
    ("code without a language", "```\nplain text\n```",
     ["p [Copy](copy:0)", "code plain text"]),
    ("two code blocks numbered", "```bash\nls\n```\n\n```json\n{}\n```",
     ["p bash [Copy](copy:0)", "code ls", "p json [Copy](copy:1)", "code {}"]),
    ("tilde fence", "~~~rust\nfn main() {}\n~~~",
     ["p rust [Copy](copy:0)", "code fn main() {}"]),
    ("inline code", "use `pip install x` first",
     ["p use `pip install x` first"]),
    ("script tag stays text", "<script>alert(1)</script>",
     ["p <script>alert(1)</script>"]),
    ("bold tag stays literal", "a <b>not bold</b> b",
     ["p a <b>not bold</b> b"]),
    ("html-looking block stays text", "<div>\n<img src=x onerror=y>\n</div>",
     ["p <div> <img src=x onerror=y> </div>"]),
    ("links", "see [the docs](https://example.org/a?b=1) or <https://x.org>",
     ["p see [the docs](https://example.org/a?b=1) or [https://x.org](https://x.org)"]),
    ("CJK text", "## 配置\n\n你好，**世界**。日本語のテキスト。",
     ["h2 配置", "p 你好，**世界**。日本語のテキスト。"]),
    ("emphasis", "*it* **bold** ***both***",
     ["p *it* **bold** ***both***"]),
    ("headings", "# One\n\n### Three\n\ntext",
     ["h1 One", "h3 Three", "p text"]),
    ("long line", "word " * 300,
     ["p " + ("word " * 300).strip()]),
    ("paragraph then list after a blank line", "Steps:\n\n1. first\n2. second",
     ["p Steps:", "ol1 first", "ol1 second"]),
    ("list right under a line of text", "Steps:\n- first\n- second\n\nDone.",
     ["p Steps:", "ul1 first", "ul1 second", "p Done."]),
    ("numbered list right under a line of text", "Do this:\n1. one\n2. two",
     ["p Do this:", "ol1 one", "ol1 two"]),
    ("diff in a fence keeps its minus lines", "Change:\n```diff\n context\n- old\n+ new\n```",
     ["p Change:", "p diff [Copy](copy:0)", "code  context", "code - old", "code + new"]),
    ("horizontal rule between paragraphs", "above\n\n---\n\nbelow",
     ["p above", "p below"]),
]


def outline(document: QTextDocument) -> list[str]:
    lines: list[str] = []
    _walk(document.rootFrame(), "", lines)
    return lines


def _walk(frame: QTextFrame, quote: str, lines: list[str]) -> None:
    iterator = frame.begin()
    while not iterator.atEnd():
        child, block = iterator.currentFrame(), iterator.currentBlock()
        if isinstance(child, QTextTable):
            _table(child, quote, lines)
        elif child is not None:
            _walk(child, quote, lines)
        elif block.isValid() and block.text().strip():
            lines.append(quote + _block_line(block))
        iterator += 1


def _table(table: QTextTable, quote: str, lines: list[str]) -> None:
    bar = table.cellAt(0, 0).format().toTableCellFormat().leftBorder()
    if table.rows() == 1 and table.columns() == 1 and bar > 0:  # a blockquote: one cell with a left bar
        cell = table.cellAt(0, 0)
        inner = cell.begin()
        while not inner.atEnd():
            child, block = inner.currentFrame(), inner.currentBlock()
            if isinstance(child, QTextTable):
                _table(child, quote + ">", lines)
            elif block.isValid() and block.text().strip():
                lines.append(f"{quote}> {_block_line(block)}")
            inner += 1
        return
    for row in range(table.rows()):
        cells = []
        for column in range(table.columns()):
            cell = table.cellAt(row, column)
            cells.append(" ".join(_inline(block) for block in _cell_blocks(cell.firstCursorPosition().block(),
                                                                           cell.lastCursorPosition().block())))
        lines.append(quote + "row " + " | ".join(cells))


def _cell_blocks(first: QTextBlock, last: QTextBlock) -> list[QTextBlock]:
    blocks = [first]
    while blocks[-1] != last:
        blocks.append(blocks[-1].next())
    return blocks


def _block_line(block: QTextBlock) -> str:
    heading = block.blockFormat().headingLevel()
    text_list = block.textList()
    if heading:
        kind = f"h{heading}"
    elif text_list is not None:
        style = text_list.format().style()
        level = text_list.format().indent()
        if style == QTextListFormat.Style.ListDecimal:
            kind = f"ol{level}"
        elif style in (QTextListFormat.Style.ListDisc, QTextListFormat.Style.ListCircle,
                       QTextListFormat.Style.ListSquare):
            kind = f"ul{level}"
        else:
            kind = f"task{level}"
    elif _all_monospace(block):
        return "code " + block.text().replace("\u00a0", " ")
    else:
        kind = "p"
    return f"{kind} {_inline(block, heading=bool(heading))}"


def _all_monospace(block: QTextBlock) -> bool:
    fragments = _fragments(block)
    return bool(fragments) and all(_is_monospace(fragment.charFormat().font()) for fragment in fragments)


def _is_monospace(font: QFont) -> bool:
    return "monospace" in (font.families() or [font.family()]) or font.fixedPitch()


def _fragments(block: QTextBlock) -> list:
    fragments = []
    iterator = block.begin()
    while not iterator.atEnd():
        fragments.append(iterator.fragment())
        iterator += 1
    return fragments


def _inline(block: QTextBlock, heading: bool = False) -> str:
    """The block's text with Markdown-like marks for bold, italic, code and links (a heading is
    bold as a whole: no marks for that)."""
    parts: list[str] = []
    for fragment in _fragments(block):
        text, char_format = fragment.text(), fragment.charFormat()
        core = text.strip()
        if not core:
            parts.append(text)
            continue
        if char_format.anchorHref():
            core = f"[{core}]({char_format.anchorHref()})"
        elif _is_monospace(char_format.font()):
            core = f"`{core}`"
        else:
            if char_format.fontItalic():
                core = f"*{core}*"
            if char_format.fontWeight() >= QFont.Weight.Bold and not heading:
                core = f"**{core}**"
        parts.append(text[:len(text) - len(text.lstrip())] + core + text[len(text.rstrip()):])
    return " ".join("".join(parts).replace("\u00a0", " ").split())


@pytest.mark.parametrize(("markdown", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_a_message_renders_to_the_expected_structure(qtbot, markdown, expected):
    widget = AssistantWidget(AssistantMessage(text=markdown), MarkdownRenderer())
    qtbot.addWidget(widget)
    assert outline(widget.browser.document()) == expected


@pytest.mark.parametrize(("markdown", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_same_message_streamed_in_small_deltas_has_the_same_structure(qtbot, markdown, expected):
    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    model.begin_assistant()
    for start in range(0, len(markdown), 3):
        model.append_text_delta(markdown[start:start + 3])
        view.flush_now()
    live = outline(view.widget_for_row(0).browser.document())
    model.finish_assistant()
    view.flush_now()
    assert live == outline(view.widget_for_row(0).browser.document()) == expected


def test_there_are_enough_cases_and_every_kind_of_construct_is_covered():
    kinds = {line.lstrip(">").split(" ", 1)[0].rstrip("0123456789") for _, _, expected in CASES for line in expected}
    assert len(CASES) >= 25
    assert {"h", "p", "ul", "ol", "task", "code", "row"} <= kinds
    assert any(line.startswith(">>") for _, _, expected in CASES for line in expected)


def block_formats(document: QTextDocument) -> list[tuple]:
    """Every block, empty ones too, with what sets its look: text, table, list, background, margins."""
    shapes = []
    block = document.begin()
    while block.isValid():
        block_format = block.blockFormat()
        background = block_format.background()
        shapes.append((block.text(), QTextCursor(block).currentTable() is not None, block.textList() is not None,
                       background.color().name() if background.style() != Qt.BrushStyle.NoBrush else "",
                       block_format.topMargin(), block_format.bottomMargin()))
        block = block.next()
    return shapes


ALL_CONSTRUCTS = "\n\n".join(markdown for _, markdown, _ in CASES)


@pytest.mark.parametrize("markdown", [ALL_CONSTRUCTS, *(case[1] for case in CASES)], ids=["all", *(c[0] for c in CASES)])
def test_a_streamed_document_has_the_blocks_and_formats_of_one_rendered_whole(qtbot, markdown):
    """No empty blocks between lists, no format left behind by a replaced tail, paragraph margins kept."""
    whole = AssistantWidget(AssistantMessage(text=markdown), MarkdownRenderer())
    qtbot.addWidget(whole)
    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    model.begin_assistant()
    for start in range(0, len(markdown), 5):
        model.append_text_delta(markdown[start:start + 5])
        view.flush_now()
    model.finish_assistant()
    view.flush_now()
    assert block_formats(view.widget_for_row(0).browser.document()) == block_formats(whole.browser.document())


def test_a_budgeted_update_renders_block_by_block_and_ends_as_one_pass_would():
    one_pass = IncrementalMessage(MarkdownRenderer()).update(ALL_CONSTRUCTS, final=False)
    stepwise = IncrementalMessage(MarkdownRenderer())
    steps = 1
    while (update := stepwise.update(ALL_CONSTRUCTS, final=False, budget_s=0.0)) is None:
        steps += 1
    assert one_pass is not None
    assert steps >= len(CASES)  # a zero budget renders one block per step
    assert [block.html for block in update.blocks] == [block.html for block in one_pass.blocks]
    assert update.tail == one_pass.tail and not update.reset


@pytest.mark.parametrize("ends", [False, True], ids=["mid-stream", "the stream's end"])
def test_a_flush_with_a_budget_finishes_in_later_loop_steps(qtbot, ends):
    """A flush that completes many blocks renders one now and the rest in following event-loop steps,
    also the flush that ends the stream (it had rendered them all at once: 8-12 ms after a 64k reply);
    the document ends as one pass would, and an ended reply is read for screen readers as finished."""
    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    model.begin_assistant()
    model.append_text_delta(ALL_CONSTRUCTS[: len(ALL_CONSTRUCTS) // 2])
    view.flush_now()
    model.append_text_delta(ALL_CONSTRUCTS[len(ALL_CONSTRUCTS) // 2:])
    if ends:
        model.finish_assistant()
    widget = view.widget_for_row(0)
    document = widget.browser.document()
    view.flush_now(step_budget_s=0.0)  # one block now, the rest in following event-loop steps
    whole = AssistantWidget(AssistantMessage(text=ALL_CONSTRUCTS), MarkdownRenderer())
    qtbot.addWidget(whole)
    expected = outline(whole.browser.document())
    assert outline(document) != expected
    qtbot.waitUntil(lambda: outline(document) == expected, timeout=5000)
    assert widget.browser.document() is document  # the streamed document stayed; nothing rendered whole again
    if ends:
        qtbot.waitUntil(lambda: widget.browser.accessibleName() == "Reply from nanobot", timeout=5000)
        qtbot.waitUntil(lambda: whole.browser.accessibleDescription() != "", timeout=5000)
        assert widget.browser.accessibleDescription() == whole.browser.accessibleDescription()


def test_a_fenced_diff_keeps_its_lines_together() -> None:
    """A "- removed" line inside a fence is code: no blank line is added before it (the outline
    above skips empty lines, so this looks at the converter's output itself)."""
    from nanobot_desktop.gui.chat.markdown_extensions import build_converter

    html = build_converter("default", "#888888").convert("Change:\n```diff\n context\n- old\n+ new\n```")
    code = html[html.index("<pre"):]
    assert "context\n" in code and "\n\n" not in code.split("</pre>")[0]


def test_the_first_block_format_of_a_tag_does_not_depend_on_the_fragment_it_came_with(qapp, monkeypatch):
    """An empty heading (dropped by Qt) must not leave the next paragraph's format cached as the
    heading's: that made the streamed "## 配置" a plain paragraph after another test ran first."""
    from nanobot_desktop.gui.chat import live_document

    monkeypatch.setattr(live_document, "_first_formats", {})
    live_document._first_block_format("<h2>", "<h2></h2><p>after</p>")
    heading = live_document._first_block_format("<h2>", "<h2>配置</h2>")
    assert heading is not None and heading.headingLevel() == 2 and heading.topMargin() > 0


def test_a_flush_that_finished_several_tables_applies_them_a_loop_step_each(qtbot):
    """Laying out a table takes 1-2 ms of the edit that inserts it (3.6-7 ms in a stream): a flush that
    finished several had been one 6-13 ms loop step. Each finished block is now its own edit once the step's
    budget is spent (here none), and what the document showed before stays in it at every step."""
    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    model.begin_assistant()
    model.append_text_delta("A short introduction.\n\n")
    view.flush_now()
    widget = view.widget_for_row(0)
    document = widget.browser.document()
    tables_seen: list[int] = []
    texts: list[str] = []

    def changed() -> None:
        tables_seen.append(len(document.rootFrame().childFrames()))
        texts.append(document.toPlainText())

    document.contentsChanged.connect(changed)
    model.append_text_delta("".join(f"| key {n} | value |\n|---|---|\n| k | v |\n\n" for n in range(4)) + "The end")
    view.flush_now(step_budget_s=0.0)
    qtbot.waitUntil(lambda: bool(texts) and texts[-1].endswith("The end"), timeout=5000)
    steps = [count for count, previous in zip(tables_seen, [0, *tables_seen], strict=False) if count != previous]
    assert steps == [1, 2, 3, 4]  # one table a step, never two in one edit
    assert all("A short introduction." in text for text in texts)
