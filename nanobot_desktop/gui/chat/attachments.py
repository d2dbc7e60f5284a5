"""Attachments of the composer: which files can be attached, what they become, and their chip.

Two kinds, the ones the agent can use: images (PNG, JPEG, GIF, WebP — the ones the engine sends to the
model, checked by their first bytes, up to the engine's MAX_IMAGE_BYTES) go to the model as `media`
file paths; text files (UTF-8 without NUL bytes, up to MAX_TEXT_BYTES) are copied into
`<workspace>/uploads/` (never overwriting: `notes.txt`, `notes-2.txt`, ...) and named in the message
text, so the agent can open them with its file tools. A file already inside the workspace is used where
it is. Anything else is refused with a sentence saying why, and nothing of it is attached: the checks
run before the chip exists, and a copy is written under a temporary name and linked into place whole.

The checks read the file (in an executor: a slow disk must not freeze the window) only when it is a
regular file: a FIFO, a device or a socket someone drops is refused without being opened.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtGui import QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from nanobot_desktop.engine import MAX_IMAGE_BYTES, sniff_image_mime
from nanobot_desktop.gui.chat.images import ThumbnailLabel
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.palette import palette_colors, set_text_color

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
MAX_TEXT_BYTES = 5 * 1024 * 1024  # a text file the agent can still read in a few read_file calls
_SNIFF_BYTES = 64 * 1024
PICKER_FILTERS = (QT_TRANSLATE_NOOP("Chat", "Images and text files ({patterns})"),
                  QT_TRANSLATE_NOOP("Chat", "All files (*)"))
PICKER_PATTERNS = ("*.png *.jpg *.jpeg *.gif *.webp *.txt *.md *.markdown *.csv *.tsv *.json *.jsonl *.yaml *.yml "
                   "*.toml *.ini *.cfg *.conf *.log *.xml *.html *.css *.js *.ts *.py *.sh *.c *.h *.cpp *.rs "
                   "*.go *.java *.rb *.sql")

_REFUSALS = {
    "folder": QT_TRANSLATE_NOOP("Chat", "{name} is a folder; attach files one by one."),
    "special": QT_TRANSLATE_NOOP("Chat", "{name} is not a regular file (a device, pipe or socket), so it was not "
                                         "attached."),
    "image_too_large": QT_TRANSLATE_NOOP("Chat", "{name} was not attached: it has {size} and an image can have at "
                                                 "most {limit}. Make it smaller, then attach it again."),
    "not_an_image": QT_TRANSLATE_NOOP("Chat", "{name} was not attached: it is named like an image but is not a PNG, "
                                              "JPEG, GIF or WebP image."),
    "text_too_large": QT_TRANSLATE_NOOP("Chat", "{name} was not attached: it has {size} and a text file can have at "
                                                "most {limit}."),
    "no_workspace": QT_TRANSLATE_NOOP("Chat", "{name} was not attached: there is no workspace to copy it into. "
                                              "Choose a workspace in Settings, then attach it again."),
    "unsupported": QT_TRANSLATE_NOOP("Chat", "{name} was not attached: only images (PNG, JPEG, GIF, WebP) and text "
                                             "files can be attached."),
}


@dataclass(frozen=True)
class Attachment:
    """`path` is absolute; `relative` is the workspace-relative name a text file is sent as."""

    path: Path
    kind: str  # "image" | "file"
    relative: str = ""


@dataclass
class AttachmentRefused(Exception):
    """A file that cannot be attached: `reason` is a key of _REFUSALS (worded on the GUI thread)."""

    reason: str
    name: str
    values: dict[str, str] = field(default_factory=dict)

    def sentence(self) -> str:
        return translate("Chat", _REFUSALS[self.reason]).format(name=self.name, **self.values)


def _size_text(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{max(1, size // 1024)} KB"


def _looks_like_text(head: bytes) -> bool:
    """UTF-8 without NUL bytes (a cut multi-byte character at the end of the sample is fine)."""
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start >= len(head) - 3 and error.reason == "unexpected end of data"
    return True


def check_file(path: Path) -> str:
    """"image" or "file" for a file that can be attached; raises AttachmentRefused otherwise (reads
    at most the first 64 KB, and only of a regular file)."""
    name = path.name or str(path)
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise AttachmentRefused("folder", name)
    if not stat.S_ISREG(info.st_mode):
        raise AttachmentRefused("special", name)
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if path.suffix.lower() in IMAGE_SUFFIXES or sniff_image_mime(head) is not None:
        if sniff_image_mime(head) is None:
            raise AttachmentRefused("not_an_image", name)
        if info.st_size > MAX_IMAGE_BYTES:
            raise AttachmentRefused("image_too_large", name, {"size": _size_text(info.st_size),
                                                              "limit": _size_text(MAX_IMAGE_BYTES)})
        return "image"
    if not _looks_like_text(head):
        raise AttachmentRefused("unsupported", name)
    if info.st_size > MAX_TEXT_BYTES:
        raise AttachmentRefused("text_too_large", name, {"size": _size_text(info.st_size),
                                                         "limit": _size_text(MAX_TEXT_BYTES)})
    return "file"


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
    """Copy a file into `<workspace>/uploads/` (a file already inside the workspace is used in place).

    The copy is written under a temporary name and linked to its final name, which fails rather than
    replace a file that appeared meanwhile: uploads/ never holds half a file nor loses one."""
    source = source.resolve()
    root = workspace.resolve()
    if not source.is_file():
        raise FileNotFoundError(f"{source} is not a file")
    try:
        relative = source.relative_to(root)
    except ValueError:
        uploads = root / "uploads"
        uploads.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".partial-", dir=uploads)
        os.close(handle)
        try:
            shutil.copyfile(source, temporary)
            while True:
                target = unique_path(uploads, source.name)
                try:
                    os.link(temporary, target)
                    break
                except FileExistsError:
                    continue
        finally:
            os.unlink(temporary)
        relative = target.relative_to(root)
        source = target
    return Attachment(source, "file", relative.as_posix())


def prepare_attachment(path: Path, workspace: Path | None) -> Attachment:
    """(In an executor.) The attachment a chosen, dropped or pasted file becomes, or AttachmentRefused;
    OSError when it cannot be read or copied."""
    kind = check_file(path)
    if kind == "image":
        return Attachment(path.resolve(), "image")
    if workspace is None:
        raise AttachmentRefused("no_workspace", path.name)
    return copy_into_uploads(path, workspace)


class PaperclipButton(QToolButton):
    """The composer's attach button: a paperclip drawn with the palette's text colour (no icon file or
    image plugin to load before the first paint; emoji fonts are not everywhere)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAutoRaise(True)
        self.setFixedSize(30, 30)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        super().paintEvent(event)  # the button's hover / focus frame
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(self.palette().color(QPalette.ColorRole.ButtonText), 1.6)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        painter.translate(self.width() / 2, self.height() / 2)
        painter.rotate(40)
        clip = QPainterPath()  # an outer loop, then the inner one, as one stroke
        clip.moveTo(2.5, 4)
        clip.lineTo(2.5, -6)
        clip.arcTo(-2.5, -8.5, 5, 5, 0, 180)
        clip.lineTo(-2.5, 7)
        clip.arcTo(-5.5, 4, 11, 7, 180, 180)  # the bottom turn
        clip.lineTo(5.5, -8)
        clip.arcTo(-1.5, -14.5, 7, 7, 0, 180)
        painter.drawPath(clip)


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
        self.thumbnail: QLabel
        if attachment.kind == "image":
            self.thumbnail = ThumbnailLabel(attachment.path, self.THUMB)
        else:
            self.thumbnail = QLabel("📄")
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
