"""One widget per chat item: user bubble, tool card row, notice line, and what they share.

Assistant messages live in message.py, approval cards in cards.py. Every colour comes from the
palette (common/palette.py), and widgets recompute them on `PaletteChange`, so light and dark
themes both read well.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QKeyEvent, QMouseEvent, QPainter, QPen, QResizeEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from nanobot_desktop.gui.chat.images import ImageViewer, ThumbnailLabel

from nanobot_desktop.gui.common.accessibility import name
from nanobot_desktop.gui.chat.message_actions import UserActions
from nanobot_desktop.gui.chat.model import ChatItem, Notice, ToolCard, UserMessage
from nanobot_desktop.gui.chat.reveal import HoverReveal
from nanobot_desktop.gui.common.formatting import format_duration
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.palette import PaletteColors, palette_colors, set_text_color
from nanobot_desktop.gui.common.widgets import plain_label
from nanobot_desktop.gui.common.design import RADII, SPACING


class CardFrame(QFrame):
    """A rounded panel painted from palette-derived colours (stylesheets would pin the colours)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fill = QColor()
        self.border = QColor()
        self.radius = float(RADII.card)

    def set_colors(self, fill: QColor, border: QColor) -> None:
        self.fill, self.border = fill, border
        self.update()

    def paintEvent(self, event: QEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(self.border, 1) if self.border.isValid() else Qt.PenStyle.NoPen)
        painter.setBrush(self.fill if self.fill.isValid() else Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), self.radius, self.radius)


class ItemWidget(QWidget):
    """Base of the per-item widgets: knows its item, re-reads it on `update_item`."""

    def __init__(self, item: ChatItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.uid = item.uid

    def update_item(self, item: ChatItem) -> None:
        self.item = item
        self.refresh()

    def refresh(self) -> None:
        raise NotImplementedError

    def apply_colors(self, colors: PaletteColors) -> None:
        """Recompute palette-derived colours (called at creation and on every palette change)."""

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_colors(palette_colors(self.palette()))


class ElidedLabel(QLabel):
    """One line of plain text that shortens itself with "…" in the middle to the width it gets, so a
    path keeps its file name; the whole text is in the tooltip."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.full_text = ""
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self.full_text = text
        self.setToolTip(text)
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideMiddle, max(0, self.width()))
        if shown != self.text():
            self.setText(shown)


# --- user message ------------------------------------------------------------------------------

class BubbleLabel(QLabel):
    """Word-wrapped text that asks for its natural width (up to `max_text_width`) instead of
    QLabel's narrow guess, so short messages make small bubbles and long ones wrap at the limit."""

    def __init__(self) -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.max_text_width = 480

    def sizeHint(self) -> QSize:  # noqa: N802
        metrics = self.fontMetrics()
        lines = self.text().split("\n") or [""]
        natural = max(metrics.horizontalAdvance(line) for line in lines) + 4
        width = max(16, min(natural, self.max_text_width))
        return QSize(width, self.heightForWidth(width))

    def set_max_text_width(self, width: int) -> None:
        if width != self.max_text_width:
            self.max_text_width = width
            self.updateGeometry()


class UserBubble(ItemWidget):
    THUMBNAIL = 96  # the edge of a sent image's thumbnail
    edit_submitted = Signal(int, str)
    """(uid, edited text): *Edit* → *Send as a new branch* (gui/chat/message_actions.py)."""
    fork_stepped = Signal(int, int)
    """(uid, -1 or +1): the "‹ 2/3 ›" switcher was used."""

    def __init__(self, item: UserMessage, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(SPACING.xs)
        row = QHBoxLayout()
        column.addLayout(row)
        self.message_actions = UserActions()
        self.message_actions.edit_submitted.connect(lambda text: self.edit_submitted.emit(self.uid, text))
        self.message_actions.fork_stepped.connect(lambda step: self.fork_stepped.emit(self.uid, step))
        column.addWidget(self.message_actions)
        edit_button = self.message_actions.edit_button
        edit_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        edit_button.setAccessibleName(edit_button.text())
        self.reveal = HoverReveal(self, [edit_button])
        row.setContentsMargins(2 * SPACING.xxl, 0, 0, 0)
        row.addStretch(1)
        # Edit sits beside the bubble, as the peers show it, not on a line of its own below.
        row.addWidget(edit_button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.bubble = CardFrame()
        self.bubble.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        inner = QVBoxLayout(self.bubble)
        inner.setContentsMargins(SPACING.l + SPACING.xs, SPACING.m, SPACING.l + SPACING.xs, SPACING.m)
        inner.setSpacing(SPACING.s)
        self.bubble.radius = float(RADII.bubble)
        self.text_label = BubbleLabel()
        self.thumbnails_row = QWidget()
        self._thumbnails_layout = QHBoxLayout(self.thumbnails_row)
        self._thumbnails_layout.setContentsMargins(0, 0, 0, 0)
        self._thumbnails_layout.setSpacing(SPACING.s)
        self._thumbnails_layout.addStretch(1)
        self.thumbnails: list[ThumbnailLabel] = []
        self.image_viewer: ImageViewer | None = None
        inner.addWidget(self.thumbnails_row)
        inner.addWidget(self.text_label)
        row.addWidget(self.bubble)
        self.apply_colors(palette_colors(self.palette()))
        self.refresh()

    def refresh(self) -> None:
        item = self.item
        assert isinstance(item, UserMessage)
        self.text_label.setText(item.text)
        self.text_label.setVisible(bool(item.text))
        if [label.path for label in self.thumbnails] != list(item.attachments):
            for label in self.thumbnails:
                self._thumbnails_layout.removeWidget(label)
                label.deleteLater()
            self.thumbnails = [ThumbnailLabel(path, self.THUMBNAIL, clickable=True) for path in item.attachments]
            for label in self.thumbnails:
                label.clicked.connect(self.view_image)
                self._thumbnails_layout.insertWidget(self._thumbnails_layout.count() - 1, label)
        self.thumbnails_row.setVisible(bool(self.thumbnails))
        self.message_actions.set_text(item.text)
        self.message_actions.set_fork(item.fork)

    def view_image(self, path: str) -> ImageViewer:
        """Show an attached image at full size, in a window of its own (non-modal)."""
        self.image_viewer = ImageViewer(path, self.window())
        self.image_viewer.show()
        return self.image_viewer

    def apply_colors(self, colors: PaletteColors) -> None:
        from nanobot_desktop.gui.common.icons import icon

        self.message_actions.edit_button.setIcon(icon("edit", self.palette()))
        self.bubble.set_colors(colors.bubble, QColor())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        bubble_width = max(120, int(event.size().width() * 0.8))
        self.bubble.setMaximumWidth(bubble_width)
        self.text_label.set_max_text_width(bubble_width - 24)


# --- tool card ---------------------------------------------------------------------------------

_STATUS_WORDS = {"waiting": QT_TRANSLATE_NOOP("Chat", "waiting"), "running": QT_TRANSLATE_NOOP("Chat", "running"),
                 "ok": QT_TRANSLATE_NOOP("Chat", "ok"), "error": QT_TRANSLATE_NOOP("Chat", "error"),
                 "denied": QT_TRANSLATE_NOOP("Chat", "denied"), "cancelled": QT_TRANSLATE_NOOP("Chat", "cancelled")}
"""A tool card's status in words (translated where shown)."""
_STATUS_GLYPHS = {"waiting": "?", "running": "⋯", "ok": "✓", "error": "✗", "denied": "⊘", "cancelled": "■"}


class ToolCardWidget(ItemWidget):
    """One compact, clickable line per tool call: status, name, first argument, duration."""

    clicked = Signal(str)
    """The card was clicked (or activated with Enter/Space); carries the tool call id."""

    def __init__(self, item: ToolCard, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.frame = CardFrame()
        self.frame.radius = float(RADII.card)
        row = QHBoxLayout(self.frame)
        row.setContentsMargins(SPACING.m + SPACING.xs, SPACING.s, SPACING.m + SPACING.xs, SPACING.s)
        row.setSpacing(SPACING.m)
        self.status_label = plain_label(selectable=False)
        self.name_label = plain_label(selectable=False)
        self.name_label.setWordWrap(False)
        bold = QFont(self.name_label.font())
        bold.setBold(True)
        self.name_label.setFont(bold)
        self.summary_label = ElidedLabel()
        self.duration_label = plain_label(selectable=False)
        self.duration_label.setWordWrap(False)
        row.addWidget(self.status_label)
        row.addWidget(self.name_label)
        row.addWidget(self.summary_label, 1)
        row.addWidget(self.duration_label)
        outer.addWidget(self.frame)
        self._colors = palette_colors(self.palette())
        self.apply_colors(self._colors)
        self.refresh()

    @property
    def card(self) -> ToolCard:
        assert isinstance(self.item, ToolCard)
        return self.item

    def refresh(self) -> None:
        card = self.card
        self.status_label.setText(_STATUS_GLYPHS.get(card.status, "?"))
        status = translate("Chat", str(_STATUS_WORDS.get(card.status, card.status)))
        self.status_label.setToolTip(status)
        self.name_label.setText(card.name)
        self.summary_label.set_full_text(card.summary)
        if card.status == "waiting":
            self.duration_label.setText(translate("Chat", "waiting for your approval"))
        elif card.status == "running":
            self.duration_label.setText(translate("Chat", "running…"))
        elif card.duration_s is not None:
            self.duration_label.setText(f"{status} · {format_duration(card.duration_s)}")
        else:
            self.duration_label.setText(status)
        self.setToolTip(translate("Chat", "{tool}: {status} — click to open in the inspector").format(tool=card.name, status=status))
        name(self, translate("Chat", "Tool call {tool}: {status}").format(tool=card.name, status=self.duration_label.text()),
             translate("Chat", "{summary}. Enter opens it in the inspector.").format(summary=card.summary))
        self._color_status()

    def apply_colors(self, colors: PaletteColors) -> None:
        self._colors = colors
        self.frame.set_colors(colors.card, colors.card_border)
        set_text_color(self.summary_label, colors.muted)
        set_text_color(self.duration_label, colors.muted)
        self._color_status()

    def _color_status(self) -> None:
        status = self.card.status
        color = {"ok": self._colors.ok, "error": self._colors.error,
                 "waiting": self._colors.accent}.get(status, self._colors.muted)
        set_text_color(self.status_label, color)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(event.position().toPoint()):
            self.clicked.emit(self.card.call_id)
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.clicked.emit(self.card.call_id)
            return
        super().keyPressEvent(event)


# --- notice ------------------------------------------------------------------------------------

class NoticeWidget(ItemWidget):
    """One line in people's words; a notice with technical `detail` gets a "Details" toggle that shows
    it under the line (said once, the rest one click away)."""

    def __init__(self, item: Notice, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(SPACING.s, 0, SPACING.s, 0)
        outer.setSpacing(SPACING.xs)
        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        self.label = plain_label()
        line.addWidget(self.label, 1)
        self.details_button = QToolButton(self)
        self.details_button.setText(translate("Chat", "Details"))
        self.details_button.setCheckable(True)
        self.details_button.setAutoRaise(True)
        self.details_button.setAccessibleName(translate("Chat", "Show the technical details"))
        line.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignTop)
        outer.addLayout(line)
        self.detail_label = plain_label()
        self.detail_label.hide()
        outer.addWidget(self.detail_label)
        self.details_button.toggled.connect(self.detail_label.setVisible)
        self._colors = palette_colors(self.palette())
        self.apply_colors(self._colors)
        self.refresh()

    def refresh(self) -> None:
        notice = self.item
        assert isinstance(notice, Notice)
        prefix = {"error": translate("Chat", "Error: "), "stopped": "■ "}.get(notice.level, "")
        self.label.setText(prefix + notice.text)
        font = QFont(self.font())
        font.setItalic(notice.level != "error")
        self.label.setFont(font)
        self.detail_label.setText(notice.detail)
        self.details_button.setVisible(bool(notice.detail))
        if not notice.detail:
            self.details_button.setChecked(False)
        self.apply_colors(self._colors)

    def apply_colors(self, colors: PaletteColors) -> None:
        self._colors = colors
        notice = self.item
        assert isinstance(notice, Notice)
        set_text_color(self.label, colors.error if notice.level == "error" else colors.muted)
        set_text_color(self.detail_label, colors.muted)
