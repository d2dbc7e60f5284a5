"""Disk side of the Markdown editor: reading a file into an exact, round-trippable snapshot, and
running blocking work on a worker thread with the result handed back to the GUI thread.

The snapshot keeps what the editor needs to write the file back byte for byte (line-ending style,
UTF-8 BOM) and a digest of the bytes, so "did the file change on disk?" is a cheap comparison and
the editor's own saves are recognised when the watcher reports them.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject

from nanobot_desktop.engine import IdleExitingExecutor
from nanobot_desktop.gui.common.i18n import translate, ui_locale
from nanobot_desktop.gui.common.owned import OwnedWork

_BOM = "\ufeff"
HIGHLIGHT_LIMIT_BYTES = 4 * 1024 * 1024
"""Above this size highlighting is off: Python highlighting costs ~20 µs a line (2 s for 4 MB)."""


def content_digest(data: bytes) -> str:
    """The identity of a file's content (sha256 hex); two equal digests mean equal bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class DiskSnapshot:
    """What one read of a file found: normalised text plus what is needed to write it back exactly."""

    path: Path
    exists: bool
    text: str = ""
    digest: str | None = None
    size: int = 0
    utf8: bool = True
    newline: str = "\n"
    bom: bool = False
    mixed_newlines: bool = False
    error: str | None = None

    @property
    def final_newline(self) -> bool:
        """Whether the file ended with a line break (a save keeps it, as text editors do)."""
        return self.text.endswith("\n")

    def disk_text(self, editor_text: str) -> str:
        """Turn the editor's `\\n` text back into the file's own newline style (and BOM)."""
        return encode_for_disk(editor_text, newline=self.newline, bom=self.bom, final_newline=self.final_newline)


def encode_for_disk(editor_text: str, *, newline: str = "\n", bom: bool = False, final_newline: bool = False) -> str:
    """Editor text (always `\\n`) → the text to write, in the file's line-ending style.

    With `final_newline` (the file ended with one), non-empty text gets its last line ended: typing
    on the empty line after the final line break must not leave the file without one.
    """
    if final_newline and editor_text and not editor_text.endswith("\n"):
        editor_text += "\n"
    text = editor_text.replace("\n", newline) if newline != "\n" else editor_text
    return _BOM + text if bom else text


def read_snapshot(path: Path) -> DiskSnapshot:
    """Read `path` (blocking; call it on a worker thread). Never raises for ordinary I/O trouble."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return DiskSnapshot(path=path, exists=False)
    except IsADirectoryError:
        return DiskSnapshot(path=path, exists=True, error=f"{path} is a folder, not a file")
    except OSError as exc:
        return DiskSnapshot(path=path, exists=True, error=f"cannot read {path}: {exc.strerror or exc}")
    digest = content_digest(data)
    try:
        text = data.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        utf8 = False
    bom = text.startswith(_BOM)
    if bom:
        text = text[1:]
    newline, mixed = _newline_style(text)
    if newline == "\r\n":
        text = text.replace("\r\n", "\n")
    return DiskSnapshot(path=path, exists=True, text=text, digest=digest, size=len(data), utf8=utf8,
                        newline=newline, bom=bom, mixed_newlines=mixed)


def _newline_style(text: str) -> tuple[str, bool]:
    """("\\r\\n" if every line ends in CRLF else "\\n", whether saving would change some line breaks).

    Qt's text document turns a lone CR and U+2028/U+2029 into plain line breaks, so a file that has
    them cannot be written back byte for byte; the editor says so instead of doing it silently.
    """
    crlf = text.count("\r\n")
    lf = text.count("\n")
    cr = text.count("\r")
    odd_separators = "\u2028" in text or "\u2029" in text
    if crlf and crlf == lf == cr:
        return "\r\n", odd_separators
    return "\n", odd_separators or cr > 0


class BackgroundRunner:
    """One worker thread per owner, so an owner's reads and writes happen in the order asked.

    Works with or without an asyncio loop: results come back on the GUI thread through the owner's
    OwnedWork, so a result that arrives after the owner was deleted is dropped.
    """

    def __init__(self, owner: QObject, name: str = "editor-io") -> None:
        self._executor = IdleExitingExecutor(1, name=name)
        self._relay = OwnedWork(owner)
        self._pending: set[Future[Any]] = set()
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, work: Callable[[], Any], on_done: Callable[[Any, BaseException | None], None]) -> None:
        """Run `work()` on the worker; call `on_done(result, error)` later on the GUI thread."""
        if self._closed:
            raise RuntimeError("BackgroundRunner is shut down")
        relay = self._relay

        def job() -> None:
            try:
                result, error = work(), None
            except BaseException as exc:  # noqa: BLE001 - handed to on_done, which reports it
                result, error = None, exc
            relay.post(lambda: on_done(result, error))  # dropped if the owner is gone by then

        future = self._executor.submit(job)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until queued work has run (e.g. a save at shutdown); True if nothing is left."""
        with self._lock:
            pending = list(self._pending)
        _, not_done = wait(pending, timeout=timeout)
        return not not_done

    def shutdown(self) -> None:
        """Finish queued work and stop the thread (callbacks that arrive afterwards are dropped)."""
        self._closed = True
        self._executor.shutdown(wait=True)
        self._relay.close()  # results still queued now are dropped: the owner shut down, nobody to tell


def file_notices(snap: DiskSnapshot, *, deleted: bool = False) -> tuple[str, list[str]]:
    """What the person must know about the file as loaded: (severity, sentences).

    Severity is "info", "warning" or "error"; no sentences means nothing to say.
    """
    name = display_name(snap.path)
    notes: list[str] = []
    severity = "info"
    if snap.error:
        notes.append(translate("Editor", "Cannot open {name}: {error}. Saving is disabled.").format(name=name, error=snap.error))
        severity = "error"
    elif deleted:
        notes.append(translate("Editor", "{name} was deleted on disk. Saving will recreate it.").format(name=name))
        severity = "warning"
    elif not snap.exists:
        notes.append(translate("Editor", "{name} does not exist yet; saving will create it.").format(name=name))
    if not snap.utf8:
        notes.append(translate("Editor", "{name} is not UTF-8: shown with replacement characters, saving disabled.").format(
            name=name))
        severity = "error" if severity == "error" else "warning"
    elif snap.mixed_newlines:
        notes.append(translate("Editor", "This file mixes line-ending styles; saving will write every line break as LF."))
    if snap.size > HIGHLIGHT_LIMIT_BYTES:
        notes.append(translate("Editor", "Large file ({size}): syntax highlighting is off.").format(
            size=file_size_label(snap.size)))
    return severity, notes


def file_size_label(size: int) -> str:
    """Human-readable size for notices ("20.0 MB")."""
    if size >= 1024 * 1024:
        return translate("Editor", "{size} MB").format(size=ui_locale().toString(size / (1024 * 1024), "f", 1))
    if size >= 1024:
        return translate("Editor", "{size} KB").format(size=round(size / 1024))
    return translate("Editor", "%n byte(s)", None, size)


def display_name(path: Path) -> str:
    """Short name for bars and titles: the file name, with its folder for SKILL.md files."""
    if path.name == "SKILL.md" and path.parent.name:
        return f"{path.parent.name}{os.sep}{path.name}"
    return path.name
