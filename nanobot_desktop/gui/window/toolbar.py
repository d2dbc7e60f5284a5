"""The window's toolbar: icon buttons for what a person reaches for while chatting — the session
list, a new chat, the Agent area and the drawer — each with its tooltip and shortcut.

The buttons are the registry's actions (one enabled and checked state with the menus). Icons come
from gui/common/icons.py once the engine is attached (the frame paints before any icon is made) and
are drawn again when the palette changes (light/dark).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QSizePolicy, QToolBar, QWidget

from nanobot_desktop.gui.common.design import SPACING
from nanobot_desktop.gui.common.i18n import translate


class WindowToolBar(QToolBar):
    """Sessions and New chat on the left; Agent and Drawer on the right."""

    def __init__(self, left: list[tuple[QAction, str]], right: list[tuple[QAction, str]], parent: QWidget | None = None) -> None:
        super().__init__(translate("Window", "Toolbar"), parent)
        self.setObjectName("mainToolBar")
        self.setMovable(False)
        self.setFloatable(False)
        self.toggleViewAction().setEnabled(False)  # no context menu item that hides it for good
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.PreventContextMenu)
        self.setIconSize(QSize(20, 20))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.setContentsMargins(SPACING.s, SPACING.xs, SPACING.s, SPACING.xs)
        self._icons: list[tuple[QAction, str]] = [*left, *right]
        self._icons_loaded = False
        for action, _name in left:
            self.addAction(action)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.addWidget(spacer)
        for action, _name in right:
            self.addAction(action)

    def load_icons(self) -> None:
        """Draw the buttons' icons (again, after a palette change)."""
        from nanobot_desktop.gui.common.icons import icon

        if not self._icons_loaded:
            # The buttons' spacing comes with their icons (they lay out anew then): asked for before the
            # first paint, the toolbar's private layout made PySide resolve every layout class it might be
            # (~4 M instructions of the first paint, bench/startup.py), and the frame shows no icons yet.
            layout = self.layout()
            if layout is not None:
                layout.setSpacing(SPACING.s)
        self._icons_loaded = True
        for action, name in self._icons:
            action.setIcon(icon(name, self.palette()))
            action.setIconVisibleInMenu(False)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._icons_loaded:
            self.load_icons()
