"""Attachments as a person uses them: the paperclip's file picker, a thumbnail of the sent image in the
transcript (click: full size), the same after the session is opened again, Regenerate sending the image
again — and files that cannot be attached refused with a clear sentence, nothing half-attached."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from nanobot_desktop.gui.chat.attachments import MAX_TEXT_BYTES
from nanobot_desktop.gui.chat.images import ImageViewer
from nanobot_desktop.gui.chat.model import AssistantMessage, UserMessage
from nanobot_desktop.gui.chat.widgets import UserBubble
from tests.gui.window_fixtures import WAIT_MS, open_window, send, session_lines, wait_idle

__all__ = ["open_window"]


def make_photo(path: Path, width: int = 300, height: int = 200) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    assert image.save(str(path))
    return path


def pick(qtbot, window, path: Path) -> None:
    """Click the paperclip and choose `path` in the picker, as a person does."""
    composer = window.composer
    qtbot.mouseClick(composer.attach_button, Qt.MouseButton.LeftButton)
    dialog = composer.file_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.windowModality() != Qt.WindowModality.ApplicationModal  # open(), not exec()
    dialog.selectFile(str(path))
    dialog.accept()


def bubble_of(window, nth: int = 0) -> UserBubble:
    rows = [row for row, item in enumerate(window.chat.model.items()) if isinstance(item, UserMessage)]
    widget = window.chat_view.widget_for_row(rows[nth])
    assert isinstance(widget, UserBubble)
    return widget


def test_attach_through_the_picker_see_the_thumbnail_and_view_it_whole(qtbot, open_window, fake_openai, tmp_path):
    window = open_window()
    photo = make_photo(tmp_path / "pictures" / "garden.png")
    pick(qtbot, window, photo)
    composer = window.composer
    qtbot.waitUntil(lambda: len(composer.attachments) == 1, timeout=WAIT_MS)
    chip = composer._chips[0]
    qtbot.waitUntil(lambda: chip.thumbnail.loaded, timeout=WAIT_MS)
    assert chip.thumbnail.pixmap() is not None and not chip.thumbnail.pixmap().isNull()
    fake_openai.add_text("A teal garden.")
    send(qtbot, window, "What is this?")
    wait_idle(qtbot, window)
    parts = fake_openai.requests[-1]["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text"] and parts[-1]["text"] == "What is this?"
    # the file keeps the image's path (as nanobot 0.3.5 does): the chat can show it again
    user_line = [m for m in session_lines(window) if m.get("role") == "user"][-1]
    assert user_line["media"] == [str(photo.resolve())]
    assert [b.get("text") for b in user_line["content"]] == ["[image]", "What is this?"]
    bubble = bubble_of(window)
    assert len(bubble.thumbnails) == 1 and bubble.text_label.text() == "What is this?"
    thumbnail = bubble.thumbnails[0]
    qtbot.waitUntil(lambda: thumbnail.loaded, timeout=WAIT_MS)
    assert thumbnail.isVisible()
    shown = thumbnail.pixmap()
    assert (shown.width(), shown.height()) == (96, 64)  # 300×200 fitted into 96×96
    qtbot.mouseClick(thumbnail, Qt.MouseButton.LeftButton)
    viewer = bubble.image_viewer
    assert isinstance(viewer, ImageViewer) and viewer.isVisible() and not viewer.isModal()
    qtbot.waitUntil(lambda: viewer.loaded, timeout=WAIT_MS)
    whole = viewer.image_label.pixmap()
    assert (whole.width(), whole.height()) == (300, 200)
    viewer.close()
    # opened again from the file: the same thumbnail, no "[image]" text
    key = window.current_key
    window.open_session(window.engine.new_session_key())
    window.chat.forget_session(key)
    window.open_session(key)
    qtbot.waitUntil(lambda: any(isinstance(i, AssistantMessage) for i in window.chat.model.items()), timeout=WAIT_MS)
    again = bubble_of(window)
    assert again.item.text == "What is this?" and again.item.attachments == (str(photo.resolve()),)
    qtbot.waitUntil(lambda: again.thumbnails[0].loaded, timeout=WAIT_MS)
    assert not again.thumbnails[0].pixmap().isNull()
    # Regenerate sends the image again
    fake_openai.add_text("Still a teal garden.")
    reply = window.chat_view.widget_for_row(1)
    qtbot.mouseClick(reply.message_actions.regenerate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.current_key != key, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: len(fake_openai.requests) == 2, timeout=WAIT_MS)
    resent = fake_openai.requests[-1]["messages"][-1]["content"]
    assert [p["type"] for p in resent] == ["text", "image_url", "text"] and resent[-1]["text"] == "What is this?"


@pytest.mark.qt_log_ignore("This plugin does not support")
def test_files_that_cannot_be_attached_are_refused_clearly_and_nothing_is_half_attached(qtbot, open_window,
                                                                                        tmp_path):
    window = open_window()
    composer = window.composer
    workspace = Path(window.engine.workspace.root)
    folder = tmp_path / "files"
    folder.mkdir()
    binary = folder / "archive.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    fake_png = folder / "not-a-picture.png"
    fake_png.write_text("just words", encoding="utf-8")
    huge_text = folder / "huge.log"
    huge_text.write_bytes(b"a log line\n" * (MAX_TEXT_BYTES // 11 * 6 // 5))
    huge_image = folder / "huge.png"
    with open(huge_image, "wb") as handle:
        handle.write(b"\x89PNG\r\n\x1a\n")
        handle.truncate(25 * 1024 * 1024)  # sparse: no disk used
    pipe = folder / "pipe.txt"
    os.mkfifo(pipe)  # opening it would block until a writer comes: it must not be opened
    expected = {
        binary: "archive.bin was not attached: only images (PNG, JPEG, GIF, WebP) and text files can be attached.",
        fake_png: "not-a-picture.png was not attached: it is named like an image but is not a PNG, JPEG, GIF or "
                  "WebP image.",
        huge_text: "huge.log was not attached: it has 6.0 MB and a text file can have at most 5.0 MB.",
        huge_image: "huge.png was not attached: it has 25.0 MB and an image can have at most 20.0 MB. Make it "
                    "smaller, then attach it again.",
        pipe: "pipe.txt is not a regular file (a device, pipe or socket), so it was not attached.",
        folder: "files is a folder; attach files one by one.",
    }
    for path, sentence in expected.items():
        with qtbot.waitSignal(composer.attachment_failed, timeout=WAIT_MS) as failed:
            pick(qtbot, window, path) if path is not folder else composer.add_file(path)
        assert failed.args == [sentence]
        assert window.notice_bar.text() == sentence  # said where the person looks, once
    assert composer.attachments == [] and not composer.chips_row.isVisible()
    assert not (workspace / "uploads").exists() or list((workspace / "uploads").iterdir()) == []
    # a text file is copied whole into uploads/ and named in the message
    notes = folder / "notes.md"
    notes.write_text("# Notes\nbuy milk\n", encoding="utf-8")
    pick(qtbot, window, notes)
    qtbot.waitUntil(lambda: len(composer.attachments) == 1, timeout=WAIT_MS)
    assert composer.attachments[0].relative == "uploads/notes.md"
    assert sorted(p.name for p in (workspace / "uploads").iterdir()) == ["notes.md"]  # no partial copy left
    assert (workspace / "uploads" / "notes.md").read_bytes() == notes.read_bytes()
    assert QApplication.activeModalWidget() is None
