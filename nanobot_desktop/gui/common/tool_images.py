"""Thumbnails of the images a tool returned (MCP image results), with the file path as the tooltip."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from nanobot_desktop.gui.common.i18n import translate

THUMBNAIL_PX = 160
MAX_IMAGE_BYTES = 8 * 1024 * 1024  # larger files are named, not decoded on the GUI thread


class ToolImages(QWidget):
    """A row of thumbnails; hidden while there is nothing to show."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolImages")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 4, 0, 0)
        self._layout.setSpacing(6)
        self._paths: tuple[str, ...] = ()
        self.labels: list[QLabel] = []
        self.hide()

    def set_paths(self, paths: Iterable[str]) -> None:
        paths = tuple(paths)
        if paths == self._paths:
            return
        self._paths = paths
        for label in self.labels:
            self._layout.removeWidget(label)
            label.deleteLater()
        self.labels = []
        while self._layout.count():  # the trailing stretch
            self._layout.takeAt(0)
        for path in paths:
            label = QLabel()
            label.setToolTip(path)
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            pixmap = QPixmap()
            try:
                small_enough = Path(path).stat().st_size <= MAX_IMAGE_BYTES
            except OSError:
                small_enough = False
            if small_enough and pixmap.load(path):
                if pixmap.width() > THUMBNAIL_PX or pixmap.height() > THUMBNAIL_PX:
                    pixmap = pixmap.scaled(THUMBNAIL_PX, THUMBNAIL_PX, Qt.AspectRatioMode.KeepAspectRatio,
                                           Qt.TransformationMode.SmoothTransformation)
                elif pixmap.width() < 48:  # tiny icons are drawn bigger so they can be seen
                    pixmap = pixmap.scaled(48, 48, Qt.AspectRatioMode.KeepAspectRatio,
                                           Qt.TransformationMode.FastTransformation)
                label.setPixmap(pixmap)
            else:
                label.setText(translate("ToolImages", "[image: {name}]").format(name=Path(path).name))
            self._layout.addWidget(label)
            self.labels.append(label)
        self._layout.addStretch(1)
        self.setVisible(bool(paths))
