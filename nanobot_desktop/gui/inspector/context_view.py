"""The context view: exactly what one LLM call sent — system prompt sections, history, tools — with sizes.

`build_outline` turns an `LLMCall` into a tree of `ContextNode`s (no Qt, easy to test); `ContextView`
shows that tree (collapsible, with character counts) and the full text of the selected part below it.

The system prompt is cut back into its sections with the sizes the engine reported
(`LLMCall.system_sections`) rather than by splitting on the separator, because a section (the active
skills) may itself contain the separator. If the sizes do not fit the text (a file changed between the
two reads), it falls back to splitting on the separator and says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QSplitter, QToolButton, QTreeWidget, QTreeWidgetItem,
    QVBoxLayout, QWidget,
)

from nanobot_desktop.engine import SECTION_SEPARATOR, strip_runtime_for_save
from nanobot_desktop.gui.common.i18n import format_number, translate
from nanobot_desktop.gui.common.widgets import monospace_font
from nanobot_desktop.gui.inspector.records import LLMCall

PREVIEW_LIMIT = 200_000  # characters put in the preview at once; a single part is always shown in full
_BOOTSTRAP_HEADING = re.compile(r"^## ([A-Za-z0-9_.-]+\.md)$", re.MULTILINE)
_SKILL_HEADING = re.compile(r"^### Skill: (.+)$", re.MULTILINE)


@dataclass
class ContextNode:
    """One part of what was sent: a label, its size in characters, and its full text."""

    label: str
    chars: int
    text: str
    children: list["ContextNode"] = field(default_factory=list)
    expanded: bool = False


@dataclass
class ContextOutline:
    nodes: list[ContextNode]
    total_chars: int
    summary: str
    note: str = ""  # set when the system prompt could not be cut by the reported sizes


# --- system prompt ---------------------------------------------------------------------------------


def split_system_prompt(content: str, sections: tuple[tuple[str, int], ...]) -> tuple[list[tuple[str, str]], bool]:
    """[(section name, text)] and whether the reported sizes matched the text exactly."""
    if sections:
        parts: list[tuple[str, str]] = []
        position = 0
        for number, (name, chars) in enumerate(sections):
            parts.append((name, content[position:position + chars]))
            position += chars
            if number < len(sections) - 1:
                if content[position:position + len(SECTION_SEPARATOR)] != SECTION_SEPARATOR:
                    break
                position += len(SECTION_SEPARATOR)
        else:
            if position == len(content):
                return parts, True
    pieces = content.split(SECTION_SEPARATOR) if content else []
    names = [name for name, _ in sections] if len(sections) == len(pieces) else []
    part = translate("Inspector", "part {number}")
    return [(names[i] if names else part.format(number=i + 1), piece) for i, piece in enumerate(pieces)], not sections


def _sub_parts(name: str, text: str) -> list[ContextNode]:
    """Bootstrap files and active skills inside their section, so one can see which file costs what."""
    pattern = _BOOTSTRAP_HEADING if name == "bootstrap" else _SKILL_HEADING if name == "active_skills" else None
    if pattern is None:
        return []
    matches = list(pattern.finditer(text))
    nodes = []
    for number, match in enumerate(matches):
        end = matches[number + 1].start() if number + 1 < len(matches) else len(text)
        body = text[match.start():end]
        if body.endswith(SECTION_SEPARATOR):
            body = body[: -len(SECTION_SEPARATOR)]
        body = body.rstrip("\n")
        nodes.append(ContextNode(match.group(1), len(body), body))
    return nodes if len(nodes) > 1 else []


# --- messages --------------------------------------------------------------------------------------


def _part_text(part: Any) -> tuple[str, int]:
    """(shown text, characters sent) of one content part; images are described, not dumped."""
    if isinstance(part, dict) and part.get("type") == "text":
        text = str(part.get("text", ""))
        return text, len(text)
    if isinstance(part, dict) and part.get("type") == "image_url":
        image = part.get("image_url")
        url = str(image.get("url", "") if isinstance(image, dict) else image or "")
        if url.startswith("data:"):
            mime = url[5:].split(";", 1)[0] or "image"
            size = format_number(len(url) * 3 // 4 // 1024)
            return translate("Inspector", "[image: {mime}, {size} KB inline]").format(mime=mime, size=size), len(url)
        return translate("Inspector", "[image: {url}]").format(url=url), len(url)
    text = json.dumps(part, ensure_ascii=False, default=str)
    return text, len(text)


def content_text(content: Any) -> tuple[str, int]:
    """(readable text, characters sent) of a message's content: a string, parts, or None."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, len(content)
    if isinstance(content, list):
        shown, size = zip(*(_part_text(part) for part in content), strict=True) if content else ((), ())
        return "\n\n".join(shown), sum(size)
    text = json.dumps(content, ensure_ascii=False, default=str)
    return text, len(text)


def _tool_call_lines(message: dict[str, Any]) -> tuple[list[str], int, list[str]]:
    """Readable lines for an assistant message's tool calls, their size, and the tool names."""
    lines, size, names = [], 0, []
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        name = str(function.get("name", "?"))
        raw = function.get("arguments", "")
        raw = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
        try:
            pretty = json.dumps(json.loads(raw), indent=2, ensure_ascii=False) if raw else "{}"
        except ValueError:
            pretty = raw  # malformed arguments are shown as the model sent them
        names.append(name)
        size += len(raw)
        lines.append(f"→ {name} (id {call.get('id', '?')})\n{pretty}")
    return lines, size, names


def message_node(message: dict[str, Any], is_current: bool) -> ContextNode:
    role = str(message.get("role", "?"))
    text, size = content_text(message.get("content"))
    call_lines, call_size, names = _tool_call_lines(message)
    shown_content = text
    if role == "user":
        stripped = strip_runtime_for_save(message.get("content"))
        shown_content = content_text(stripped)[0] if stripped is not None else text
    first_line = next((line.strip() for line in shown_content.splitlines() if line.strip()), "")
    if role == "assistant" and names:
        label = f"assistant → {', '.join(names)}"
    elif role == "tool":
        label = f"tool {message.get('name', '')}".rstrip()
    else:
        label = translate("Inspector", "{role} (this turn)").format(role=role) if is_current else role
    if first_line:
        label += f": {first_line[:80]}"
    full = "\n\n".join(part for part in [text, *call_lines] if part)
    return ContextNode(label, size + call_size, full)


# --- the outline ---------------------------------------------------------------------------------


def build_outline(call: LLMCall) -> ContextOutline:
    messages = list(call.messages)
    nodes: list[ContextNode] = []
    note = ""
    system_chars = 0
    if messages and messages[0].get("role") == "system":
        system_text, system_chars = content_text(messages.pop(0).get("content"))
        parts, exact = split_system_prompt(system_text, call.system_sections)
        if not exact and call.system_sections:
            note = translate("Inspector", "The section sizes reported for this call do not match the prompt text; shown split "
                             "at separators.")
        children = [ContextNode(name, len(text), text, _sub_parts(name, text)) for name, text in parts]
        sections = len(children)
        nodes.append(ContextNode(translate("Inspector", "System prompt (%n section(s))", None, sections), system_chars,
                                 system_text, children, expanded=True))
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    history = [message_node(message, i == last_user) for i, message in enumerate(messages)]
    history_chars = sum(node.chars for node in history)
    history_text = "\n\n".join(f"── {node.label.split(':', 1)[0]} ──\n{node.text}" for node in history)
    nodes.append(ContextNode(translate("Inspector", "Messages ({count})").format(count=len(history)), history_chars,
                             history_text, history, expanded=True))
    tool_nodes = []
    for tool in call.tools:
        function = tool.get("function", {}) if isinstance(tool, dict) else {}
        pretty = json.dumps(tool, indent=2, ensure_ascii=False, default=str)
        parameters = function.get("parameters", {}).get("properties", {}) if isinstance(function, dict) else {}
        params = [ContextNode(f"{name}: {spec.get('type', '?') if isinstance(spec, dict) else '?'}",
                              len(json.dumps(spec, ensure_ascii=False, default=str)),
                              json.dumps(spec, indent=2, ensure_ascii=False, default=str))
                  for name, spec in parameters.items()] if isinstance(parameters, dict) else []
        compact = len(json.dumps(tool, ensure_ascii=False, default=str))
        tool_nodes.append(ContextNode(str(function.get("name", "?")), compact, pretty, params))
    tools_chars = sum(node.chars for node in tool_nodes)
    tools_text = json.dumps(list(call.tools), indent=2, ensure_ascii=False, default=str)
    nodes.append(ContextNode(translate("Inspector", "Tools ({count})").format(count=len(tool_nodes)), tools_chars,
                             tools_text, tool_nodes, expanded=True))
    total = system_chars + history_chars + tools_chars
    message_count, tool_count = len(history), len(tool_nodes)
    sent = [translate("Inspector", "system prompt")] if system_chars else []
    sent += [translate("Inspector", "%n message(s)", None, message_count),
             translate("Inspector", "%n tool(s)", None, tool_count)]
    summary = translate("Inspector", "Sent: {parts} — {total} characters (system {system} · messages {messages} · "
                        "tools {tools})").format(parts=" + ".join(sent), total=format_number(total),
                                                 system=format_number(system_chars),
                                                 messages=format_number(history_chars), tools=format_number(tools_chars))
    if call.prompt_tokens is not None:
        summary += " · " + translate("Inspector", "{tokens} prompt tokens").format(tokens=format_number(call.prompt_tokens))
    return ContextOutline(nodes, total, summary, note)


# --- the widget ------------------------------------------------------------------------------------


class ContextView(QWidget):
    """Tree of the parts sent (collapsible, sizes) above the full text of the selected part."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextView")
        self.outline: ContextOutline | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.summary_label = QLabel()
        self.summary_label.setObjectName("contextSummary")
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note_label = QLabel()
        self.note_label.setTextFormat(Qt.TextFormat.PlainText)
        self.note_label.setWordWrap(True)
        self.note_label.hide()
        self.tree = QTreeWidget()
        self.tree.setObjectName("contextTree")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels([translate("Inspector", "Sent to the model"), translate("Inspector", "Characters")])
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.currentItemChanged.connect(self._on_current_changed)
        preview_box = QWidget()
        preview_layout = QVBoxLayout(preview_box)
        preview_layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.preview_title = QLabel(translate("Inspector", "Select a part to see its text"))
        self.preview_title.setTextFormat(Qt.TextFormat.PlainText)
        self.copy_button = QToolButton()
        self.copy_button.setText(translate("Inspector", "Copy"))
        self.copy_button.setToolTip(translate("Inspector", "Copy this part's text"))
        self.copy_button.clicked.connect(self.copy_preview)
        bar.addWidget(self.preview_title, 1)
        bar.addWidget(self.copy_button)
        self.preview = QPlainTextEdit()
        self.preview.setObjectName("contextPreview")
        self.preview.setReadOnly(True)
        self.preview.setFont(monospace_font())
        preview_layout.addLayout(bar)
        preview_layout.addWidget(self.preview)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.tree)
        splitter.addWidget(preview_box)
        splitter.setSizes([3, 2])
        layout.addWidget(self.summary_label)
        layout.addWidget(self.note_label)
        layout.addWidget(splitter, 1)

    def set_call(self, call: LLMCall | None) -> None:
        """Show what `call` sent (None clears the view)."""
        self.tree.clear()
        self.preview.clear()
        self.preview_title.setText(translate("Inspector", "Select a part to see its text"))
        self.outline = build_outline(call) if call is not None else None
        if self.outline is None:
            self.summary_label.clear()
            self.note_label.hide()
            return
        self.summary_label.setText(self.outline.summary)
        self.note_label.setText(self.outline.note)
        self.note_label.setVisible(bool(self.outline.note))
        for node in self.outline.nodes:
            item = self._item(node)
            self.tree.addTopLevelItem(item)
            self._expand(item)  # only an item that is in the tree can be expanded
        self.tree.resizeColumnToContents(1)

    def _item(self, node: ContextNode) -> QTreeWidgetItem:
        item = QTreeWidgetItem([node.label, format_number(node.chars)])
        item.setData(0, Qt.ItemDataRole.UserRole, node)
        item.setToolTip(0, node.label)
        item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        for child in node.children:
            item.addChild(self._item(child))
        return item

    def _expand(self, item: QTreeWidgetItem) -> None:
        node = item.data(0, Qt.ItemDataRole.UserRole)
        if isinstance(node, ContextNode) and node.expanded:
            item.setExpanded(True)
        for number in range(item.childCount()):
            child = item.child(number)
            if child is not None:
                self._expand(child)

    def find_items(self, label_start: str) -> list[QTreeWidgetItem]:
        """Items (at any depth) whose label starts with `label_start`."""
        return self.tree.findItems(label_start, Qt.MatchFlag.MatchStartsWith | Qt.MatchFlag.MatchRecursive, 0)

    def _on_current_changed(self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        node = current.data(0, Qt.ItemDataRole.UserRole) if current is not None else None
        if not isinstance(node, ContextNode):
            self.preview.clear()
            return
        self.preview_title.setText(translate("Inspector", "{part} — {count} characters").format(
            part=node.label, count=format_number(node.chars)))
        text = node.text
        if len(text) > PREVIEW_LIMIT and node.children:
            more = format_number(len(node.text) - PREVIEW_LIMIT)
            text = text[:PREVIEW_LIMIT] + "\n… " + translate("Inspector", "{count} more characters: select one part").format(
                count=more)
        self.preview.setPlainText(text)

    def copy_preview(self) -> None:
        item = self.tree.currentItem()
        node = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        if isinstance(node, ContextNode):
            QGuiApplication.clipboard().setText(node.text)
