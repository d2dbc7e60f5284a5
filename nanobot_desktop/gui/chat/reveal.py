"""Message actions that appear when they are wanted: while the pointer is over the message, while the
keyboard focus is inside it, or always for the newest reply (issue 26: peers show Copy / Regenerate /
Edit on hover, not as a row of text under every message).

Hidden actions keep their room (an opacity of 0, not `hide()`), so a message does not jump when the
pointer crosses it, and they stay in the Tab order: reaching one with the keyboard shows them.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QGraphicsOpacityEffect, QWidget


class HoverReveal(QObject):
    """Shows `targets` while `owner` is hovered, holds the focus, or is pinned."""

    def __init__(self, owner: QWidget, targets: list[QWidget]) -> None:
        super().__init__(owner)  # the owner is the parent, not an attribute: a reference back to it would make
        # each message widget a reference cycle, freed only by a full garbage collection, not when deleted
        self._hovered = False
        self._pinned = False
        self._effects: list[QGraphicsOpacityEffect] = []
        for target in targets:
            effect = QGraphicsOpacityEffect(target)
            target.setGraphicsEffect(effect)
            self._effects.append(effect)
        owner.installEventFilter(self)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)
        self._apply()

    @property
    def _owner(self) -> QWidget:
        owner = self.parent()
        assert isinstance(owner, QWidget)
        return owner

    @property
    def revealed(self) -> bool:
        """Whether the actions show now."""
        return self._hovered or self._pinned or self._focus_inside()

    def set_pinned(self, pinned: bool) -> None:
        """Show the actions whatever the pointer does (the newest reply's)."""
        self._pinned = pinned
        self._apply()

    def _focus_inside(self) -> bool:
        focus = QApplication.focusWidget()
        return focus is not None and (focus is self._owner or self._owner.isAncestorOf(focus))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self._owner and event.type() in (QEvent.Type.Enter, QEvent.Type.Leave):
            self._hovered = event.type() == QEvent.Type.Enter
            self._apply()
        return False

    def _on_focus_changed(self, _old: QWidget | None, _new: QWidget | None) -> None:
        self._apply()

    def _apply(self) -> None:
        opacity = 1.0 if self.revealed else 0.0
        for effect in self._effects:
            if effect.opacity() != opacity:
                effect.setOpacity(opacity)
