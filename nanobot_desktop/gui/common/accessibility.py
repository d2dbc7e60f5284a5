"""What a screen reader and a keyboard need that Qt does not do by itself.

- `name()` gives a widget its accessible name (and description) where it is created: a text field,
  a list or a scroll area has no text of its own for a screen reader to read out.
- `next_shown_focus()` is the Tab order the window uses: Qt's focus chain also holds widgets that
  are "visible" but not on screen (the panel behind a dock tab sits at about (-600, -570)), so Tab
  would land in a tree nobody can see. The window skips every widget whose on-screen region is empty.
- `contrast_ratio()` is WCAG 2's formula, used by the contrast test and the high-contrast palettes.
- `describe_reply()` words a reply's shape ("3 paragraphs, 1 code block") for its description.

Announcements (spoken activity) are in announcements.py; region cycling (F6) in regions.py.
"""

from __future__ import annotations

import re
from functools import lru_cache

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFormLayout, QLabel, QLayoutItem, QTableWidget, QTableWidgetItem, QWidget

from nanobot_desktop.gui.common.i18n import translate


def name(widget: QWidget, accessible_name: str, description: str | None = None) -> None:
    """Name `widget` for assistive technology; `description` when the name alone is not enough."""
    widget.setAccessibleName(accessible_name)
    if description is not None:
        widget.setAccessibleDescription(description)


def help_text(label: QLabel) -> QLabel:
    """Grey help text that still reads: the palette's placeholder colour (≥ 4.5:1 on the window and the
    base in both themes, tests/gui/common/test_contrast.py), not a disabled label (#bebebe on #efefef, 1.6:1)."""
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def name_form_fields(root: QWidget) -> None:
    """Name each unnamed control of every form under `root` after its row's label ("Base URL:" names
    the field beside it). Qt does so only for a label's buddy, and a field that sits in a row widget
    with its error line or a button is not one."""
    for form in root.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label_item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field_item = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            label = label_item.widget() if label_item is not None else None
            if not isinstance(label, QLabel) or not label.text().strip() or field_item is None:
                continue
            text = label.text().replace("&", "").strip().rstrip(":：").strip()
            for control in _controls(field_item):
                if not control.accessibleName():
                    control.setAccessibleName(text)
                break  # the row's first control; the others (Show, Refresh) have their own text


def _controls(item: QLayoutItem) -> list[QWidget]:
    """The focusable widgets of a layout item, in order (a widget's own children too)."""
    widget = item.widget()
    if widget is not None:
        found = [widget] if widget.focusPolicy() != Qt.FocusPolicy.NoFocus else []
        return found + [child for child in widget.findChildren(QWidget)
                        if child.focusPolicy() != Qt.FocusPolicy.NoFocus and not isinstance(child, QLabel)]
    layout = item.layout()
    if layout is None:
        return []
    controls: list[QWidget] = []
    for index in range(layout.count()):
        child = layout.itemAt(index)
        if child is not None:
            controls += _controls(child)
    return controls


def name_cell_widgets(table: QTableWidget) -> None:
    """A control put in a table cell (a combo box per tool) is called "<row>: <column>" ("exec: When
    the agent calls it"), and its cell says the same, so the cell is not a nameless stop either."""
    for row in range(table.rowCount()):
        first = table.item(row, 0)
        for column in range(table.columnCount()):
            widget = table.cellWidget(row, column)
            header = table.horizontalHeaderItem(column)
            if widget is None or first is None:
                continue
            label = f"{first.text()}: {header.text() if header is not None else ''}".rstrip(": ")
            if not widget.accessibleName():
                widget.setAccessibleName(label)
            item = table.item(row, column)
            if item is None:
                item = QTableWidgetItem()
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                table.setItem(row, column, item)
            if not item.text():
                item.setData(Qt.ItemDataRole.AccessibleTextRole, label)


def takes_tab_focus(widget: QWidget) -> bool:
    """True when Tab may stop on `widget` now: it takes Tab focus, is enabled and is really on screen."""
    if not (widget.focusPolicy() & Qt.FocusPolicy.TabFocus) or not widget.isEnabled() or not widget.isVisible():
        return False
    if widget.focusProxy() is not None:
        return False  # its proxy is in the chain itself
    return not widget.visibleRegion().isEmpty()


def next_shown_focus(window: QWidget, forward: bool) -> QWidget | None:
    """The widget Tab (or Shift+Tab) should focus in `window`: the next in Qt's focus chain that is on
    screen; None when there is none (then the caller lets Qt decide)."""
    start = window.focusWidget() or window
    candidate: QWidget | None = start
    for _ in range(5000):  # the chain is a ring; the bound only guards against a broken one
        assert candidate is not None
        candidate = candidate.nextInFocusChain() if forward else candidate.previousInFocusChain()
        if candidate is None or candidate is start:
            return None
        if candidate.window() is window and takes_tab_focus(candidate):
            return candidate
    return None


def focus_next_shown(window: QWidget, forward: bool) -> bool:
    """Move focus as Tab would, skipping off-screen widgets; False when nothing took it."""
    target = next_shown_focus(window, forward)
    if target is None:
        return False
    reason = Qt.FocusReason.TabFocusReason if forward else Qt.FocusReason.BacktabFocusReason
    target.setFocus(reason)
    return True


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(color: QColor) -> float:
    return 0.2126 * _linear(color.red()) + 0.7152 * _linear(color.green()) + 0.0722 * _linear(color.blue())


def blend(color: QColor, background: QColor) -> QColor:
    """`color` as it shows over an opaque `background` (a translucent placeholder colour, say)."""
    alpha = color.alphaF()
    return QColor(round(color.red() * alpha + background.red() * (1 - alpha)),
                  round(color.green() * alpha + background.green() * (1 - alpha)),
                  round(color.blue() * alpha + background.blue() * (1 - alpha)))


def contrast_ratio(foreground: QColor, background: QColor) -> float:
    """WCAG 2 contrast ratio (1 to 21) of `foreground` drawn over `background`."""
    lighter, darker = sorted((relative_luminance(blend(foreground, background)), relative_luminance(background)),
                             reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


_FENCE = re.compile(r"^\s*(```|~~~)")


def describe_reply(text: str) -> str:
    """"3 paragraphs, 1 code block": the shape of a Markdown reply, for a screen reader's description."""
    paragraphs, code_blocks = reply_shape(text)
    parts = [translate("Accessibility", "%n paragraph(s)", None, paragraphs)]
    if code_blocks:
        parts.append(translate("Accessibility", "%n code block(s)", None, code_blocks))
    return ", ".join(parts)


@lru_cache(maxsize=4)
def reply_shape(text: str) -> tuple[int, int]:
    """(paragraphs, code blocks) of a Markdown reply. Kept for the last few replies: when a reply ends, the
    chat names it and, a loop pass later, the announcer says it; ~1 ms each for a 64k reply."""
    paragraphs = code_blocks = 0
    in_code = in_paragraph = False
    for line in text.splitlines():
        if _FENCE.match(line):
            if not in_code:
                code_blocks += 1
            in_code = not in_code
            in_paragraph = False
            continue
        if in_code:
            continue
        if line.strip():
            if not in_paragraph:
                paragraphs += 1
            in_paragraph = True
        else:
            in_paragraph = False
    return paragraphs, code_blocks
