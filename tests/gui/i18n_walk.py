"""What a person can read on screen, collected from widgets, models and menus, and the test of "still
English" the translation harness applies to it (tests/gui/test_translations*.py).

- `visible_texts(root)`: labels, buttons, group boxes, placeholders, combo entries, tabs, tooltips,
  window titles, header sections AND the cells of every item view (tables, trees, lists: display
  text and tooltip of each cell, children of tree rows included), for `root` and all its children,
  shown or not (a walk of the hidden pages of a tab widget too);
- `menu_texts(menu)`: every entry of a menu and of its submenus, with their tooltips;
- `still_english(text)`: a text with no Chinese in it that still has an English word (one is enough)
  once the names that stay as they are in every language (ALLOWED) are taken out, or a Chinese text
  with three English words in a row (an English sentence from the engine put into a translated one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QComboBox, QGroupBox, QLabel, QHeaderView, QLineEdit, QMenu,
                               QPlainTextEdit, QTableWidget, QTabWidget, QWidget)

from nanobot_desktop.engine import PROVIDER_PRESETS

# Names that stay as they are in every language: file names, products and brands, model ids, keys,
# shortcuts, config keys, URLs, formats. A word here is allowed alone or among Chinese text.
ALLOWED = re.compile(
    r"https?://\S+|(?<![\w.])(?:~|\.{0,2})/[^\s:]*|\S+\.(?:md|jsonl?|txt|py|toml|ini|log)\b|[\w.-]*\d[\w.-]*|\w+_\w+|agents\.defaults\.\S+"
    r"|providers\.\S+|tools\.\S+|app\.\S+|(?:Ctrl|Shift|Alt|Meta)\+\S+|sk-…"
    r"|MEMORY\.md|HISTORY\.md|HEARTBEAT\.md|SOUL\.md|USER\.md|AGENTS\.md|TOOLS\.md|SKILL\.md"
    r"|\b(?:MCP|nanobot(?: Desktop)?|Dream|OpenAI|OpenRouter|DeepSeek|Ollama|LM Studio|llama\.cpp|vLLM|English"
    r"|Telegram|Slack|Discord|JSON|Markdown|URL|API|PNG|UTF|HTTP|SSE|stdio|streamableHttp|exec|cron|uvx|npx"
    r"|Python|GLM|Qwen|Kimi|Anthropic|Claude|Gemini|Groq|MiniMax|Azure|GitHub|Copilot|Codex|OAuth|AiHubMix"
    r"|token|tokens|LLM|ID|Esc|Enter|Tab|F2|PDF|Linux|macOS|Windows|XDG|bwrap|bubblewrap)\b")
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
ENGLISH_WORD = re.compile(r"\b[A-Za-z]{2,}\b")
ENGLISH_PHRASE = re.compile(r"\b[A-Za-z]{2,}(?:[ ,;]+[A-Za-z]{2,}){2,}\b")  # three English words in a row
TOOL_NAMES = {"read_file", "write_file", "edit_file", "list_dir", "exec", "web_search", "web_fetch", "message", "spawn",
              "cron"}  # the agent's tool names, shown as the model calls them
PROVIDER_NAMES = {preset.label for preset in PROVIDER_PRESETS}  # brand names, the same in every language
MAX_ROWS = 60  # cells read per level of a model (enough to see every kind of row; a list can hold 20,000)


def still_english(text: str, content: Iterable[str] = ()) -> bool:
    """True for visible text still in the English source: no Chinese, an English word not in ALLOWED.

    `content`: texts that come from the person's files rather than the app (a skill's name and
    description, a session's title) and are left out of `text` first."""
    text = text.replace("&", "")  # mnemonics
    for piece in content:
        text = text.replace(piece, " ")
    if text in PROVIDER_NAMES or text.strip() in TOOL_NAMES or _is_json(text):
        return False
    plain = ALLOWED.sub(" ", re.sub(r"<[^>]+>", " ", text))
    if CJK.search(text):  # translated, but an English phrase put into it (an engine's sentence, say)?
        return bool(ENGLISH_PHRASE.search(plain))
    return bool(ENGLISH_WORD.search(plain))


def model_texts(name: str, model: QAbstractItemModel, parent: QModelIndex | None = None,
                depth: int = 0) -> list[tuple[str, str]]:
    """Header sections, and display text and tooltip of the model's cells (children too, to depth 3)."""
    parent = parent if parent is not None else QModelIndex()
    found: list[tuple[str, str]] = []
    flat = isinstance(model, (QAbstractListModel, QAbstractTableModel))  # PySide6 makes their hasChildren private
    columns = 1 if isinstance(model, QAbstractListModel) else model.columnCount(parent)
    if depth == 0:
        for column in range(columns):
            for role, what in ((Qt.ItemDataRole.DisplayRole, "header"), (Qt.ItemDataRole.ToolTipRole, "header tip")):
                value = model.headerData(column, Qt.Orientation.Horizontal, role)
                found.append((f"{name} {what} {column}", str(value or "")))
    for row in range(min(model.rowCount(parent), MAX_ROWS)):
        for column in range(columns):
            index = model.index(row, column, parent)
            for role, what in ((Qt.ItemDataRole.DisplayRole, "cell"), (Qt.ItemDataRole.ToolTipRole, "cell tip")):
                value = index.data(role)
                if isinstance(value, str):
                    found.append((f"{name} {what} ({depth}:{row},{column})", value))
            if column == 0 and depth < 3 and not flat and model.hasChildren(index):
                found += model_texts(name, model, index, depth + 1)
    return found


def visible_texts(root: QWidget) -> list[tuple[str, str]]:
    """(where, text) for everything a person can read in `root` and its children (see the module docstring)."""
    found: list[tuple[str, str]] = [("window title", root.windowTitle())]
    for widget in [root, *root.findChildren(QWidget)]:
        name = f"{type(widget).__name__}({widget.objectName()})"
        if isinstance(widget, (QLabel, QAbstractButton)):
            found.append((name, widget.text()))
        if isinstance(widget, QGroupBox):
            found.append((name, widget.title()))
        if isinstance(widget, QLineEdit):
            found.append((name + " placeholder", widget.placeholderText()))
        if isinstance(widget, QComboBox) and not widget.isEditable():
            found += [(name + " entry", widget.itemText(i)) for i in range(widget.count())]
        if isinstance(widget, QTabWidget):
            found += [(name + " tab", widget.tabText(i)) for i in range(widget.count())]
            found += [(name + " tab tip", widget.tabToolTip(i)) for i in range(widget.count())]
        if isinstance(widget, QTableWidget):
            for column in range(widget.columnCount()):
                item = widget.horizontalHeaderItem(column)
                if item is not None:
                    found += [(name + " header", item.text()), (name + " header tip", item.toolTip())]
        if isinstance(widget, QAbstractItemView) and not isinstance(widget, QHeaderView) \
                and not _in_combo_box(widget) and widget.model() is not None:  # (those show another's model)
            found += model_texts(name, widget.model())
        if isinstance(widget, QPlainTextEdit):
            found.append((name + " placeholder", widget.placeholderText()))
        if isinstance(widget, QMenu):
            found += menu_texts(widget, name)
        found.append((name + " tooltip", widget.toolTip()))
    return [(where, text) for where, text in found if text.strip()]


def menu_texts(menu: QMenu, where: str = "menu") -> list[tuple[str, str]]:
    """The menu's title, its entries and their tooltips, and the same for each submenu."""
    found = [(where, menu.title())]
    for action in menu.actions():
        if action.isSeparator():
            continue
        label = f"{where} → {action.objectName() or action.text()}"
        found.append((label, action.text()))
        if action.toolTip() != action.text().replace("&", "").removesuffix("…").removesuffix("..."):
            found.append((label + " tooltip", action.toolTip()))
        if action.menu() is not None:
            found += menu_texts(action.menu(), label)  # type: ignore[arg-type]
    return [(w, text) for w, text in found if text.strip()]


def _in_combo_box(widget: QWidget) -> bool:
    """A combo box's popup list (its entries are read from the combo box itself)."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QComboBox):
            return True
        parent = parent.parentWidget()
    return False


def _is_json(text: str) -> bool:
    """A configuration sample (its keys are the file format's, the same in every language)."""
    try:
        return isinstance(json.loads(text), (dict, list))
    except ValueError:
        return False
