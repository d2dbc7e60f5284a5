"""Attachments of the composer: what a dropped or pasted file becomes, and its chip.

Images go to the model as `media` file paths; other files are copied into `<workspace>/uploads/`
(never overwriting: `report.pdf`, `report-2.pdf`, ...) and named in the message text, so the agent
can open them with its file tools. A file already inside the workspace is used where it is.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QImageReader, QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from nanobot_desktop.gui.common.palette import palette_colors, set_text_color
from nanobot_desktop.gui.common.i18n import translate

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"})


@dataclass(frozen=True)
class Attachment:
    """`path` is absolute; `relative` is the workspace-relative name a non-image file is sent as."""

    path: Path
    kind: str  # "image" | "file"
    relative: str = ""


def unique_path(folder: Path, name: str) -> Path:
    """`folder/name`, or `folder/stem-2.suffix`, ... — never an existing file."""
    candidate = folder / name
    stem, suffix = Path(name).stem or "file", Path(name).suffix
    counter = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{counter}{suffix}"
        counter += 1
    return candidate


def copy_into_uploads(source: Path, workspace: Path) -> Attachment:
    """Copy a file into `<workspace>/uploads/` (a file already inside the workspace is used in place)."""
    source = source.resolve()
    root = workspace.resolve()
    if not source.is_file():
        raise FileNotFoundError(f"{source} is not a file")
    try:
        relative = source.relative_to(root)
    except ValueError:
        uploads = root / "uploads"
        uploads.mkdir(parents=True, exist_ok=True)
        target = unique_path(uploads, source.name)
        shutil.copy2(source, target)
        relative = target.relative_to(root)
        source = target
    return Attachment(source, "file", relative.as_posix())


class AttachmentChip(QFrame):
    """A thumbnail (or file name) with a remove button."""

    removed = Signal(object)
    """(Attachment): the ✕ was clicked."""

    THUMB = 36

    def __init__(self, attachment: Attachment, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.attachment = attachment
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 2, 2)
        layout.setSpacing(4)
        self.thumbnail = QLabel()
        if attachment.kind == "image":
            reader = QImageReader(str(attachment.path))
            size = reader.size()
            if size.isValid():
                reader.setScaledSize(size.scaled(QSize(self.THUMB, self.THUMB), Qt.AspectRatioMode.KeepAspectRatio))
            image = reader.read()
            if not image.isNull():
                self.thumbnail.setPixmap(QPixmap.fromImage(image))
            else:
                self.thumbnail.setText("🖼")
        else:
            self.thumbnail.setText("📄")
        layout.addWidget(self.thumbnail)
        self.name_label = QLabel(attachment.relative or attachment.path.name)
        self.name_label.setTextFormat(Qt.TextFormat.PlainText)
        self.name_label.setToolTip(str(attachment.path))
        set_text_color(self.name_label, palette_colors(self.palette()).muted)
        layout.addWidget(self.name_label)
        self.remove_button = QToolButton()
        self.remove_button.setText("✕")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip(translate("Chat", "Remove this attachment"))
        self.remove_button.setAccessibleName(self.remove_button.toolTip())  # "✕" is no name for a screen reader
        self.remove_button.clicked.connect(lambda: self.removed.emit(self.attachment))
        layout.addWidget(self.remove_button)
