"""The chat's notices that need an answer or a look: a turn that failed (with Retry, Open Settings,
Retry save), a turn nanobot 0.3.5 left unfinished, a message that could not be saved, a sync tool's
conflict copy merged, a text file changed on two machines, and the engine's own notices.

A part MainWindow owns (window/base.py says what each part is given); each notice is shown in the
chat's notice bar, one per topic, and only for the session shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMainWindow, QWidget

from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.window.base import ChatParts

if TYPE_CHECKING:
    from nanobot_desktop.engine import events


class ChatNotices:
    """Offers and warnings about the chat shown, in its notice bar."""

    def __init__(self, window: QMainWindow, parts: ChatParts, current_key: Callable[[], str],
                 open_settings: Callable[[], object], new_chat: Callable[[], None]) -> None:
        self._window = window
        self._parts = parts
        self._current_key = current_key
        self._open_settings = open_settings
        self._new_chat = new_chat
        self.text_conflict_dialog: QWidget | None = None
        """The open choice between two machines' versions of a text file."""
        chat = parts.chat
        chat.turn_failed.connect(self.on_turn_failed)
        chat.message_returned.connect(self.on_message_returned)
        chat.save_retried.connect(self.on_save_retried)
        chat.interrupted_found.connect(self.offer_interrupted)

    def on_engine_notice(self, event: events.Notice) -> None:
        """The engine's notices (a workspace file linked out of it, a setting refused on load), one per topic."""
        self._parts.notice_bar.show_notice(event.text, "warning", topic=event.topic)

    def on_sync_copy(self, event: events.SyncCopyMerged) -> None:
        """A sync tool's conflict copy was merged into a session (or set aside): said once, briefly."""
        severity = "info" if event.outcome in ("merged", "orphaned") else "warning"
        self._parts.notice_bar.show_notice(sync_copy_sentence(event), severity,
                                    timeout_ms=10_000 if severity == "info" else 0, topic=f"sync-copy:{event.copy_name}")

    def on_sync_text_conflict(self, event: events.SyncTextConflict) -> None:
        """A text file was changed on two machines: both versions kept, the person chooses."""
        device = event.device or event.tool
        text = translate("Window", "{file} was changed on two machines (the other version is from {device}); "
                         "nothing was overwritten.").format(
            file=event.file_name, device=device)
        compare = translate("Window", "Compare and choose…")
        self._parts.notice_bar.show_notice(text, "warning", [(compare, lambda: self.open_text_conflict(event.copy_name))],
                                    topic=f"sync-text:{event.copy_name}")

    def open_text_conflict(self, copy_name: str) -> None:
        """Show both machines' versions of a text file; not modal, so the agent keeps working meanwhile."""
        from nanobot_desktop.gui.workspace.text_conflict import TextConflictDialog

        try:
            dialog = TextConflictDialog(self._parts.engine, copy_name, self._window)
        except FileNotFoundError:
            return  # already decided (on this machine or, synced, on the other)
        dialog.failed.connect(lambda message: self._parts.notice_bar.show_notice(message, "error"))
        dialog.resolved.connect(lambda _file: self._parts.notice_bar.clear(f"sync-text:{copy_name}"))
        dialog.setModal(False)
        dialog.show()
        self.text_conflict_dialog = dialog

    def offer_interrupted(self, key: str, text: str, can_continue: bool) -> None:
        """Continue / Dismiss for a turn nanobot 0.3.5 left unfinished in the session shown."""
        if key != self._current_key():
            return
        actions: list[tuple[str, Callable[[], object]]] = []
        if can_continue:
            actions.append((translate("Window", "Continue"), lambda: self._parts.chat.resolve_interrupted(key, True)))
        actions.append((translate("Window", "Dismiss"), lambda: self._parts.chat.resolve_interrupted(key, False)))
        self._parts.notice_bar.show_notice(text, "info", actions, topic=f"interrupted:{key}")

    def on_turn_failed(self, key: str, message: str, kind: str) -> None:
        from nanobot_desktop.gui.chat.failures import needs_settings

        if key != self._current_key():
            return  # a background run's failure: its session is marked in the list, the tray tells
        actions: list[tuple[str, Callable[[], object]]] = (
            [(translate("Window", "Open Settings"), self._open_settings)] if needs_settings(kind) else [])
        if kind == "storage" and self._parts.engine.loop.has_unsaved(key):
            actions.append((translate("Window", "Retry save"), lambda: self._parts.chat.retry_save(key)))
        elif kind == "new_blocked":  # /new could not save the conversation to memory: never a dead end
            actions = [(translate("Window", "Start anyway"), self._new_chat),
                       (translate("Window", "Try again"), lambda: self._send_to(key, "/new"))]
        elif kind not in ("storage", "session"):  # the message is saved: send it again, not a copy of it
            actions.append((translate("Window", "Retry"), lambda: self._send_to(key, None)))
        self._parts.notice_bar.show_notice(message, "error", actions, topic=f"turn-failed:{key}")

    def _send_to(self, key: str, text: str | None) -> None:
        """Send `text` into session `key` (None: answer its last saved message again), if it is still shown."""
        if key == self._current_key() and not self._parts.chat.is_busy(key):
            self._parts.chat.send(text) if text is not None else self._parts.chat.resend(key)

    def on_message_returned(self, key: str, text: str) -> None:
        """The message could not be saved, so it was not sent: it goes back where it was typed."""
        if key == self._current_key() and not self._parts.composer.text().strip():
            self._parts.composer.set_text(text)

    def on_save_retried(self, key: str, ok: bool, message: str) -> None:
        if key != self._current_key():
            return
        if ok:
            self._parts.notice_bar.show_notice(message, "info", timeout_ms=6000, topic=f"save:{key}")
        else:
            retry = (translate("Window", "Retry save"), lambda: self._parts.chat.retry_save(key))
            self._parts.notice_bar.show_notice(message, "error", [retry], topic=f"save:{key}")


def sync_copy_sentence(event: events.SyncCopyMerged) -> str:
    """What became of a sync tool's conflict copy (engine `SyncCopyMerged`), in the UI language."""
    where = (translate("Window", "{device} ({tool})").format(device=event.device, tool=event.tool) if event.device
             else translate("Window", "another device ({tool})").format(tool=event.tool))
    if event.outcome == "merged" and event.added:
        return translate("Window", "Added %n message(s) from {device} that were missing here (a sync conflict).",
                         n=event.added).format(device=where)
    if event.outcome == "merged":
        return translate("Window", "A copy of this conversation from {device} had nothing new; it was moved to the trash.").format(
            device=where)
    if event.outcome == "orphaned":
        return translate("Window", "A copy of a deleted conversation came from {device}; it is in the trash ({file}), "
                         "where it can be restored.").format(device=where, file=event.copy_name)
    return event.sentence  # too large or unreadable: the engine's sentence carries the detail
