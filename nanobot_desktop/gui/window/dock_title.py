"""A dock's title bar in the app's own look: the title and one close button, growing with the text size.

Qt's own title bar draws the style's float and close buttons (a float button no peer shows, and an
easy way to lose a panel in a separate window) at a fixed pixel size, so at 200 % text the title no
longer fits it. This one is a label and an icon button sized from the font: it follows the text
size, and dragging it still moves the dock (the label leaves the mouse to the dock). The close mark
is the font's own "×", so it costs nothing before the first paint (the SVG icons load after it) and is
as crisp as the text at any scale.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from nanobot_desktop.gui.common.design import SPACING
from nanobot_desktop.gui.common.i18n import translate


class DockTitleBar(QWidget):
    """Title on the left, a close button on the right; both follow the dock's title and font."""

    def __init__(self, dock: QDockWidget) -> None:
        super().__init__(dock)
        self.setObjectName("dockTitleBar")
        self._dock = dock
        self.label = QLabel(dock.windowTitle(), self)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._bold_title()
        self.close_button = QToolButton(self)
        self.close_button.setObjectName("dockClose")
        self.close_button.setAutoRaise(True)
        self.close_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the View menu and its shortcut close it too
        self.close_button.clicked.connect(dock.close)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACING.s, SPACING.xs, SPACING.xs, SPACING.xs)
        layout.setSpacing(SPACING.xs)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button)
        self.close_button.setText("\u00d7")
        dock.windowTitleChanged.connect(self._retitle)
        self._retitle(dock.windowTitle())

    def _retitle(self, title: str) -> None:
        self.label.setText(title)
        self.close_button.setToolTip(translate("Panels", "Close the {title} panel").format(title=title))
        self.close_button.setAccessibleName(self.close_button.toolTip())

    def _bold_title(self) -> None:
        """The title in the bar's font, bold (set again when the text size changes: a font set on a
        widget no longer follows the application's)."""
        font = self.font()
        font.setBold(True)
        self.label.setFont(font)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._bold_title()
