"""How a session row looks: channel groups as small headings, sessions as title + time over a muted
preview line, a dot while a turn runs, bold while unread, a "↳" before a branch's title (a branch
starts with its origin's first message, so the titles alike are told apart by the mark and the
preview). Colours come from the palette."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from nanobot_desktop.gui.common.palette import mix, palette_colors
from nanobot_desktop.gui.sessions.model import (BusyRole, InfoRole, IsGroupRole, PreviewRole, TitleRole, UnreadRole,
                                                UpdatedAtRole, format_when)

_Index = QModelIndex | QPersistentModelIndex


class SessionDelegate(QStyledItemDelegate):
    """Group rows as small headings; session rows as title + time over a muted preview line."""

    PADDING = 6

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        metrics = QFontMetrics(option.font)
        if index.data(IsGroupRole):
            return QSize(120, metrics.height() + 2 * self.PADDING + 4)
        return QSize(160, 2 * metrics.height() + 2 * self.PADDING + 2)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else None
        colors = palette_colors(opt.palette)
        painter.save()
        rect = opt.rect.adjusted(self.PADDING + 2, self.PADDING, -self.PADDING - 2, -self.PADDING)
        if index.data(IsGroupRole):
            font = QFont(opt.font)
            font.setBold(True)
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
            painter.setFont(font)
            painter.setPen(colors.muted)
            painter.drawText(rect.adjusted(0, 4, 0, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             str(index.data(Qt.ItemDataRole.DisplayRole) or "").upper())
            painter.restore()
            return
        opt.text = ""
        if style is not None:
            style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, opt, painter, widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        text_color = opt.palette.highlightedText().color() if selected else colors.text
        muted = mix(text_color, opt.palette.highlight().color() if selected else colors.base, 0.35)
        metrics = QFontMetrics(opt.font)
        line = metrics.height()
        top = QRect(rect.left(), rect.top(), rect.width(), line)
        when = format_when(str(index.data(UpdatedAtRole) or ""))
        when_width = metrics.horizontalAdvance(when) + 6 if when else 0
        title_rect = top.adjusted(0, 0, -when_width, 0)
        if index.data(BusyRole):
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colors.accent if not selected else text_color)
            dot = max(6, line // 3)
            painter.drawEllipse(title_rect.left(), title_rect.center().y() - dot // 2, dot, dot)
            title_rect.setLeft(title_rect.left() + dot + 5)
        info = index.data(InfoRole)
        if getattr(info, "branch_of", ""):
            painter.setPen(muted)
            mark = "↳ "
            painter.drawText(title_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, mark)
            title_rect.setLeft(title_rect.left() + metrics.horizontalAdvance(mark))
        title_font = QFont(opt.font)
        title_font.setBold(bool(index.data(UnreadRole)))
        painter.setFont(title_font)
        painter.setPen(text_color)
        title = QFontMetrics(title_font).elidedText(str(index.data(TitleRole) or ""), Qt.TextElideMode.ElideRight,
                                                    max(0, title_rect.width()))
        painter.drawText(title_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, title)
        painter.setFont(opt.font)
        painter.setPen(muted)
        if when:
            painter.drawText(top, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, when)
        preview_rect = QRect(rect.left(), rect.top() + line + 2, rect.width(), line)
        preview = metrics.elidedText(str(index.data(PreviewRole) or ""), Qt.TextElideMode.ElideRight,
                                     preview_rect.width())
        painter.drawText(preview_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, preview)
        painter.restore()

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem, index: _Index) -> None:  # noqa: N802
        height = editor.sizeHint().height()
        rect = option.rect
        editor.setGeometry(rect.left() + 2, rect.top() + max(0, (rect.height() - height) // 2),
                           rect.width() - 4, height)
