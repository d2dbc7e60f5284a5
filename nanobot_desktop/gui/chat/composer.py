"""The message input: Enter sends, Shift+Enter breaks the line, ↑ recalls, "/" completes commands,
and files or images dropped or pasted become attachments.

Attachments follow what the agent can use: images go to the model as `media` (file paths; pasted
image data is first saved under `<workspace>/media/desktop/`), other files are copied into
`<workspace>/uploads/` and named in the message text, so the agent can open them with its file tools.
Copies run in an executor (a large file must not freeze the window) and never overwrite a file.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMimeData, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent, QPixmap, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QCompleter, QFileDialog, QHBoxLayout, QPlainTextEdit, QSizePolicy, QToolButton, QVBoxLayout,
                               QWidget)

from nanobot_desktop.engine import atomic_write_bytes
from PySide6.QtCore import QT_TRANSLATE_NOOP
from nanobot_desktop.gui.common.accessibility import name
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.notice_bar import reason_of
from nanobot_desktop.gui.chat.attachments import (PICKER_FILTERS, PICKER_PATTERNS, Attachment, AttachmentChip,
                                                  AttachmentRefused, PaperclipButton, prepare_attachment, unique_path)
from nanobot_desktop.gui.chat.model_switcher import ModelSwitcher
from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.common.design import SPACING

if TYPE_CHECKING:
    from nanobot_desktop.engine import Engine

log = logging.getLogger(__name__)

SLASH_COMMANDS = (("/new", QT_TRANSLATE_NOOP("Chat", "start a new conversation (memory is updated first)")),
                  ("/stop", QT_TRANSLATE_NOOP("Chat", "stop the running reply and its tasks")),
                  ("/help", QT_TRANSLATE_NOOP("Chat", "list the commands")))  # descriptions translated where shown
MAX_LINES = 8


class ComposerEdit(QPlainTextEdit):
    """The text box; key handling and paste/drop routing live here, the rest in `Composer`."""

    submit = Signal()
    """Enter was pressed (without Shift)."""
    recall = Signal()
    """↑ in an empty box (or on a recalled message): show the previous sent message."""
    mime_dropped = Signal(QMimeData)
    """Files or image data were pasted or dropped."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.completer: QCompleter | None = None
        self.recalled = False

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        popup = self.completer.popup() if self.completer is not None else None
        key = event.key()
        if popup is not None and popup.isVisible() and key in (
                Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab, Qt.Key.Key_Backtab, Qt.Key.Key_Escape):
            event.ignore()  # the completer's popup takes these
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (event.modifiers() & Qt.KeyboardModifier.ShiftModifier):
            self.submit.emit()
            return
        if key == Qt.Key.Key_Up and (not self.toPlainText() or self.recalled) \
                and not (event.modifiers() & Qt.KeyboardModifier.ShiftModifier):
            self.recall.emit()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):  # Shift+Enter: a plain new line
            self.textCursor().insertText("\n")
            return
        super().keyPressEvent(event)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802
        return source.hasUrls() or source.hasImage() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802
        if (source.hasUrls() and any(url.isLocalFile() for url in source.urls())) or source.hasImage():
            self.mime_dropped.emit(source)
        elif source.hasText():
            self.insertPlainText(source.text())  # never rich text from a web page


class Composer(QWidget):
    """Input box + attachment chips + Send / Stop, and (given the engine) the chat's model switcher."""

    send_requested = Signal(str, list)
    """(text, media paths): the person sent a message (attachment lines already in the text)."""
    stop_requested = Signal()
    """Stop was clicked (or "/stop" sent) while a reply runs."""
    attachment_failed = Signal(str)
    """A dropped or pasted file could not be attached (the message says why)."""
    attachments_changed = Signal()

    def __init__(self, workspace: Path | None = None, parent: QWidget | None = None, *,
                 engine: "Engine | None" = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.workspace = Path(workspace) if workspace is not None else None
        self.history: list[str] = []
        self._recall_index = 0
        self._busy = False
        self.attachments: list[Attachment] = []
        self._chips: list[AttachmentChip] = []
        self._work = OwnedWork(self)

        self.edit = ComposerEdit()
        self.edit.setObjectName("composer_edit")
        name(self.edit, translate("Chat", "Message to nanobot"))
        self.edit.setPlaceholderText(translate("Chat", "Message nanobot…   (/ for commands)"))
        self.edit.setToolTip(translate("Chat", "Enter sends, Shift+Enter starts a new line, ↑ recalls the last message, "
                                               "/ lists the commands; drop or paste files and images to attach them"))
        self.edit.setTabChangesFocus(True)
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.submit.connect(self.submit)
        self.edit.recall.connect(self._recall)
        self.edit.mime_dropped.connect(self.add_mime_data)
        self.edit.textChanged.connect(self._on_text_changed)
        self.edit.document().documentLayout().documentSizeChanged.connect(self._fit_height)

        self.completer = self._make_completer()
        self.edit.completer = self.completer

        self.send_button = QToolButton()
        self.send_button.setObjectName("send_button")
        self.send_button.setText(translate("Chat", "Send"))
        self.send_button.setToolTip(translate("Chat", "Send (Enter)"))
        self.send_button.clicked.connect(self.submit)
        self.stop_button = QToolButton()
        self.stop_button.setObjectName("stop_button")
        self.stop_button.setText(translate("Chat", "Stop"))
        self.stop_button.setToolTip(translate("Chat", "Stop the reply (Esc)"))
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.hide()
        self.attach_button = PaperclipButton()
        self.attach_button.setObjectName("attach_button")
        self.attach_button.setToolTip(translate("Chat", "Attach images or text files…"))
        self.attach_button.setAccessibleName(translate("Chat", "Attach files"))
        self.attach_button.clicked.connect(self.choose_files)
        self.file_dialog: QFileDialog | None = None
        for button in (self.send_button, self.stop_button):
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setMinimumWidth(64)
            button.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

        self.chips_row = QWidget()
        self._chips_layout = QHBoxLayout(self.chips_row)
        self._chips_layout.setContentsMargins(0, 0, 0, 0)
        self._chips_layout.setSpacing(SPACING.m - SPACING.xs)
        self._chips_layout.addStretch(1)
        self.chips_row.hide()

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(SPACING.m - SPACING.xs)
        row.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.edit, 1)
        buttons = QVBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addStretch(1)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.m + SPACING.xs, SPACING.m - SPACING.xs, SPACING.m + SPACING.xs, SPACING.m)
        layout.setSpacing(SPACING.s)
        layout.addWidget(self.chips_row)
        layout.addLayout(row)
        self.model_switcher = ModelSwitcher(engine, self) if engine is not None else None
        if self.model_switcher is not None:
            layout.addWidget(self.model_switcher)
        self.setAcceptDrops(True)
        self._fit_height()

    # --- state -------------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._busy

    def set_busy(self, busy: bool) -> None:
        """While a reply runs, Stop replaces Send; typing the next message stays possible."""
        self._busy = busy
        shown, hidden = (self.stop_button, self.send_button) if busy else (self.send_button, self.stop_button)
        # Hidden first: showing a widget lays its parent out at once, and with both buttons in the
        # column the composer grew by a row and shrank back, so the chat above was laid out twice.
        hidden.hide()
        shown.show()

    def text(self) -> str:
        return self.edit.toPlainText()

    def set_text(self, text: str) -> None:
        self.edit.setPlainText(text)
        self.edit.moveCursor(self.edit.textCursor().MoveOperation.End)

    def set_session(self, key: str) -> None:
        """The chat shown now: the model switcher shows (and changes) its model."""
        if self.model_switcher is not None:
            self.model_switcher.set_session(key)

    def focus_input(self) -> None:
        self.edit.setFocus(Qt.FocusReason.OtherFocusReason)

    # --- sending -----------------------------------------------------------------------------------

    def submit(self) -> None:
        """Send what is typed (and attached); while busy only "/stop" goes through."""
        text = self.edit.toPlainText()
        if self._busy:
            if text.strip().lower() == "/stop":
                self.edit.clear()
                self.stop_requested.emit()
            return
        files = [a for a in self.attachments if a.kind == "file"]
        media = [str(a.path) for a in self.attachments if a.kind == "image"]
        if not text.strip() and not self.attachments:
            return
        message = text.rstrip()
        if files:
            lines = "\n".join(f"Attached file: {a.relative}" for a in files)
            message = f"{message}\n\n{lines}" if message else lines
        if text.strip():
            self.history.append(text.rstrip())
        self._recall_index = len(self.history)
        self.edit.clear()
        self.edit.recalled = False
        self.clear_attachments()
        self.send_requested.emit(message, media)

    def _recall(self) -> None:
        if not self.history:
            return
        self._recall_index = max(0, (self._recall_index if self.edit.recalled else len(self.history)) - 1)
        self.edit.setPlainText(self.history[self._recall_index])
        self.edit.moveCursor(self.edit.textCursor().MoveOperation.End)
        self.edit.recalled = True

    def _on_text_changed(self) -> None:
        text = self.edit.toPlainText()
        if self.edit.recalled and (not self.history or text != self.history[self._recall_index]):
            self.edit.recalled = False
        self._update_completion(text)

    # --- slash commands ----------------------------------------------------------------------------

    def _make_completer(self) -> QCompleter:
        model = QStandardItemModel(self)
        for command, description in SLASH_COMMANDS:
            item = QStandardItem(f"{command}    {translate('Chat', str(description))}")
            item.setData(command, Qt.ItemDataRole.UserRole)
            model.appendRow(item)
        completer = QCompleter(model, self)
        completer.setCompletionRole(Qt.ItemDataRole.UserRole)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        completer.setWidget(self.edit)
        completer.activated.connect(self._insert_completion)
        return completer

    def _update_completion(self, text: str) -> None:
        popup = self.completer.popup()
        if popup is None:  # QCompleter always makes one; the stubs allow None
            return
        if not text.startswith("/") or any(c.isspace() for c in text) or self._is_command(text):
            popup.hide()
            return
        self.completer.setCompletionPrefix(text)
        if self.completer.completionCount() == 0:
            popup.hide()
            return
        rect = self.edit.cursorRect()
        rect.setWidth(max(260, popup.sizeHintForColumn(0) + 24))
        self.completer.complete(rect)
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))

    @staticmethod
    def _is_command(text: str) -> bool:
        return text.lower() in {command for command, _ in SLASH_COMMANDS}

    def _insert_completion(self, command: str) -> None:
        self.edit.setPlainText(command)
        self.edit.moveCursor(self.edit.textCursor().MoveOperation.End)
        popup = self.completer.popup()
        if popup is not None:
            popup.hide()

    # --- growing with the text ---------------------------------------------------------------------

    def _fit_height(self, *_: object) -> None:
        lines = int(self.edit.document().documentLayout().documentSize().height()) or 1
        lines = max(1, min(MAX_LINES, lines))
        metrics = self.edit.fontMetrics()
        margins = self.edit.contentsMargins()
        frame = 2 * self.edit.frameWidth() + 2 * int(self.edit.document().documentMargin())
        height = lines * metrics.lineSpacing() + frame + margins.top() + margins.bottom() + 2
        if self.edit.height() != height:
            self.edit.setFixedHeight(height)

    # --- attachments -------------------------------------------------------------------------------

    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802
        if event.mimeData().hasUrls() or event.mimeData().hasImage():
            event.acceptProposedAction()

    def dropEvent(self, event: Any) -> None:  # noqa: N802
        self.add_mime_data(event.mimeData())
        event.acceptProposedAction()

    def add_mime_data(self, mime: QMimeData) -> bool:
        """Attach the files or image in a drop or paste; returns whether there was any."""
        paths = [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()] if mime.hasUrls() else []
        if paths:
            for path in paths:
                self.add_file(path)
            return True
        if mime.hasImage():
            image = mime.imageData()
            if isinstance(image, QPixmap):
                image = image.toImage()
            if isinstance(image, QImage) and not image.isNull():
                self.add_image_data(image)
                return True
        return False

    def choose_files(self) -> QFileDialog:
        """The paperclip: a file picker for images and text files. Opened with open(), never exec(),
        so no nested event loop runs inside a coroutine; the chosen files arrive through a signal."""
        if self.file_dialog is not None:
            self.file_dialog.raise_()
            return self.file_dialog
        dialog = QFileDialog(self, translate("Chat", "Attach images or text files"), str(Path.home()))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilters([translate("Chat", PICKER_FILTERS[0]).format(patterns=PICKER_PATTERNS),
                               translate("Chat", PICKER_FILTERS[1])])
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.filesSelected.connect(lambda paths: [self.add_file(Path(path)) for path in paths])
        dialog.destroyed.connect(self._picker_closed)
        self.file_dialog = dialog
        dialog.open()
        return dialog

    def _picker_closed(self, *_: object) -> None:
        self.file_dialog = None

    def add_file(self, path: Path) -> "asyncio.Future[Any]":
        """Check the file and, for a text file, copy it into uploads/ (in an executor); it is attached
        only when all of that worked, else `attachment_failed` says why."""
        return self._work.spawn(self._attach_file(path))

    async def _attach_file(self, path: Path) -> None:
        loop = asyncio.get_running_loop()
        try:
            attachment = await loop.run_in_executor(None, prepare_attachment, path, self.workspace)
        except AttachmentRefused as refused:
            self.attachment_failed.emit(refused.sentence())
            return
        except OSError as error:
            text = translate("Chat", "Could not attach {name} ({reason}). Check that the file exists and can be read, then "
                                     "attach it again.")
            self.attachment_failed.emit(text.format(name=path.name, reason=reason_of(error)))
            return
        self._add_attachment(attachment)

    def add_image_data(self, image: QImage) -> Attachment | None:
        """Save pasted image data as `<workspace>/media/desktop/<timestamp>.png` and attach it."""
        if self.workspace is None:
            self.attachment_failed.emit(translate("Chat", "The pasted image was not attached because no workspace is open. "
                                                          "Choose a workspace in Settings, then paste again."))
            return None
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # QIODevice overload missing from the stubs
            self.attachment_failed.emit(translate("Chat", "The pasted image could not be converted to PNG. "
                                                          "Save it as a file and attach that instead."))
            return None
        buffer.close()
        folder = self.workspace / "media" / "desktop"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            target = unique_path(folder, datetime.now().strftime("%Y%m%d-%H%M%S-%f") + ".png")
            atomic_write_bytes(target, bytes(data.data()))
        except OSError as error:
            self.attachment_failed.emit(translate("Chat", "Could not save the pasted image ({reason}). Free some disk space, "
                                                          "then paste again.").format(reason=reason_of(error)))
            return None
        attachment = Attachment(target, "image")
        self._add_attachment(attachment)
        return attachment

    def _add_attachment(self, attachment: Attachment) -> None:
        if attachment in self.attachments:
            return
        self.attachments.append(attachment)
        chip = AttachmentChip(attachment)
        chip.removed.connect(self.remove_attachment)
        self._chips.append(chip)
        self._chips_layout.insertWidget(self._chips_layout.count() - 1, chip)
        self.chips_row.show()
        self.attachments_changed.emit()

    def remove_attachment(self, attachment: Attachment) -> None:
        """Take an attachment off the message (a copy already in uploads/ stays: files are never deleted)."""
        if attachment not in self.attachments:
            return
        index = self.attachments.index(attachment)
        self.attachments.pop(index)
        chip = self._chips.pop(index)
        self._chips_layout.removeWidget(chip)
        chip.deleteLater()
        self.chips_row.setVisible(bool(self.attachments))
        self.attachments_changed.emit()

    def clear_attachments(self) -> None:
        for attachment in list(self.attachments):
            self.remove_attachment(attachment)

    async def shutdown(self) -> None:
        if self.model_switcher is not None:
            await self.model_switcher.shutdown()
        await self._work.shutdown()
