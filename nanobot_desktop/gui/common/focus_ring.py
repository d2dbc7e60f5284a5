"""A clear focus ring around whatever has the keyboard, in both themes.

Fusion marks focus with a faint tint (a light-blue fill on a light button, a thin frame on a text
field) that many people cannot find. Restyling every widget (a proxy style or a style sheet) would
put Python in every paint of the app; instead one small transparent widget follows the focus and
draws a 2 px ring in the palette's highlight colour around the focused widget's visible part. It
costs a geometry update on focus changes, moves (of the widget or any widget around it) and scrolls,
nothing per paint elsewhere.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtGui import QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QScrollBar, QTabBar, QWidget
from shiboken6 import isValid

RING_WIDTH = 2
_OBJECT_NAME = "focusRing"
_CONTROLLER_NAME = "focusRings"


class FocusRing(QWidget):
    """The ring of one window: a transparent child of it, placed over the focused widget."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName(_OBJECT_NAME)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hide()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), RING_WIDTH))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        half = RING_WIDTH / 2
        painter.drawRoundedRect(self.rect().toRectF().adjusted(half, half, -half, -half), 3, 3)
        painter.end()


class FocusRings(QObject):
    """Follows the application's focus and places the focused window's ring (one per application)."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.setObjectName(_CONTROLLER_NAME)
        self.target: QWidget | None = None
        self._watched: list[QObject] = []
        self._bars: list[QScrollBar] = []
        self._tabs: QTabBar | None = None  # a focused tab bar: its current tab is what has the keyboard
        self._ring: FocusRing | None = None
        self._pending = False
        app.focusChanged.connect(self._on_focus_changed)

    @staticmethod
    def install(app: QApplication) -> FocusRings:
        rings = app.findChild(FocusRings, _CONTROLLER_NAME)
        return rings if rings is not None else FocusRings(app)

    def ring(self) -> FocusRing | None:
        """The ring shown now (None when nothing has the focus)."""
        return self._ring if self._ring is not None and isValid(self._ring) and self._ring.isVisible() else None

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        for watched in self._watched:
            if isValid(watched):
                watched.removeEventFilter(self)
        for bar in self._bars:
            if isValid(bar):
                bar.valueChanged.disconnect(self._schedule)
        self._watched, self._bars = [], []
        if isinstance(self._tabs, QTabBar) and isValid(self._tabs):
            self._tabs.currentChanged.disconnect(self._schedule)
        self._tabs = new if isinstance(new, QTabBar) else None
        if self._tabs is not None:  # the ring marks the current tab, and moves with it
            self._tabs.currentChanged.connect(self._schedule)
        if self._ring is not None and isValid(self._ring):
            self._ring.hide()
        self.target = new if new is not None and not isinstance(new, FocusRing) else None
        if self.target is None:
            return
        # the target and its ancestors: a panel opening beside the chat moves the composer, not its line edit
        self._watched = [self.target]
        parent = self.target.parentWidget()
        while parent is not None and not parent.isWindow():
            self._watched.append(parent)
            parent = parent.parentWidget()
        for watched in self._watched:
            watched.installEventFilter(self)
        self._bars = self._scroll_bars()
        for bar in self._bars:
            bar.valueChanged.connect(self._schedule)
        self._place()

    def _scroll_bars(self) -> list[QScrollBar]:
        """The scroll bars of the scroll areas around the target: scrolling moves it without a Move."""
        bars: list[QScrollBar] = []
        parent = self.target.parentWidget() if self.target is not None else None
        while parent is not None:
            if isinstance(parent, QAbstractScrollArea):
                bars += [parent.verticalScrollBar(), parent.horizontalScrollBar()]
            parent = parent.parentWidget()
        return bars

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide):
            self._schedule()
        return False

    def _schedule(self, *_: object) -> None:
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, self._place)

    def _place(self) -> None:
        self._pending = False
        target = self.target
        if target is not None and not isValid(target):
            target = self.target = None
        ring = self._ring if self._ring is not None and isValid(self._ring) else None
        if target is None or not target.isVisible() or target.window() is target:
            if ring is not None:
                ring.hide()
            return
        window = target.window()
        if ring is None or ring.parentWidget() is not window:
            if ring is not None:
                ring.hide()
            ring = window.findChild(FocusRing, _OBJECT_NAME, Qt.FindChildOption.FindDirectChildrenOnly) or FocusRing(window)
            self._ring = ring
        visible = target.visibleRegion().boundingRect()
        if isinstance(target, QTabBar) and target.currentIndex() >= 0:  # the bar spans the pane; its tab is focused
            visible = visible.intersected(target.tabRect(target.currentIndex()))
        if visible.isEmpty():
            ring.hide()
            return
        top_left = target.mapTo(window, visible.topLeft())
        area = QRect(top_left, visible.size()).adjusted(-RING_WIDTH, -RING_WIDTH, RING_WIDTH, RING_WIDTH)
        ring.setGeometry(area.intersected(window.rect()))
        ring.raise_()
        ring.show()
