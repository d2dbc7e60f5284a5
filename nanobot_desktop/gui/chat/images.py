"""Images in the chat: thumbnails of attached images, and a window that shows one at full size.

An image path comes from the composer or from a session file (which anyone, the agent included, may
have edited), so it is read like untrusted input: only a regular file, only up to the engine's
MAX_IMAGE_BYTES, decoded by QImageReader at the size shown — in a worker thread, so a slow disk or a
large picture never holds up the window; the result comes back through OwnedWork, and is dropped if
the label is gone by then. A file that is missing or not an image shows a plain stand-in.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QImage, QImageReader, QKeyEvent, QMouseEvent, QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QScrollArea, QVBoxLayout, QWidget

from nanobot_desktop.engine import MAX_IMAGE_BYTES, IdleExitingExecutor
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.owned import OwnedWork

_READERS = IdleExitingExecutor(2, name="chat-images")


def read_image(path: Path, box: QSize | None) -> QImage:
    """(Any thread.) The image at `path` scaled to fit `box` (None: full size); a null QImage when the
    file is not a regular file, is too large, or does not decode."""
    try:
        info = os.stat(path)
    except OSError:
        return QImage()
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_IMAGE_BYTES:
        return QImage()
    reader = QImageReader(str(path))
    reader.setAutoTransform(True)
    size = reader.size()
    if box is not None and size.isValid() and (size.width() > box.width() or size.height() > box.height()):
        reader.setScaledSize(size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    return image if not image.isNull() else QImage()


class ThumbnailLabel(QLabel):
    """A small picture of an image file, read in the background; a click (or Enter) asks to see it
    whole when `clickable`."""

    clicked = Signal(str)
    """(path): show this image at full size."""

    def __init__(self, path: Path | str, edge: int, *, clickable: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = str(path)
        self.edge = edge
        self.loaded = False  # the picture (or the stand-in) is shown
        self._work = OwnedWork(self)
        self.setFixedSize(edge, edge)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setToolTip(Path(self.path).name)
        self.setAccessibleName(translate("Chat", "Image {name}").format(name=Path(self.path).name))
        if clickable:
            self.setCursor(Qt.CursorShape.PointingHandCursor)
            self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            self.setToolTip(translate("Chat", "{name} — click to view at full size").format(name=Path(self.path).name))
        self._clickable = clickable
        box = QSize(edge, edge)
        future = _READERS.submit(read_image, Path(self.path), box)
        work = self._work
        future.add_done_callback(lambda done: work.post(lambda: self._show(done.result())))

    def _show(self, image: QImage) -> None:
        if image.isNull():
            self.setText("🖼")
            self.setToolTip(translate("Chat", "{name} could not be read as an image").format(name=Path(self.path).name))
        else:
            self.setPixmap(QPixmap.fromImage(image))
        self.loaded = True

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._clickable and event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self.path)
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if self._clickable and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.clicked.emit(self.path)
            return
        super().keyPressEvent(event)


class ImageViewer(QDialog):
    """One image at full size (scrolled when larger than the screen); non-modal, closed with Esc."""

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("image_viewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle(Path(path).name)
        self.path = path
        self.loaded = False
        self.image_label = QLabel(translate("Chat", "Loading…"))
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image_label.setAccessibleName(translate("Chat", "Image {name}").format(name=Path(path).name))
        scroll = QScrollArea()
        scroll.setWidget(self.image_label)
        scroll.setWidgetResizable(True)
        scroll.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        screen = (parent.screen() if parent is not None else self.screen()).availableGeometry()
        self.resize(min(900, int(screen.width() * 0.8)), min(700, int(screen.height() * 0.8)))
        self._work = OwnedWork(self)
        future = _READERS.submit(read_image, Path(path), None)
        work = self._work
        future.add_done_callback(lambda done: work.post(lambda: self._show(done.result())))

    def _show(self, image: QImage) -> None:
        if image.isNull():
            self.image_label.setText(translate("Chat", "{name} could not be read as an image").format(
                name=Path(self.path).name))
        else:
            self.image_label.setPixmap(QPixmap.fromImage(image))  # replaces the "Loading…" text
        self.loaded = True
