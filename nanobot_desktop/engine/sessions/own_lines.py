"""The lines this app appended to each session file, to notice when another program erases them.

The nanobot CLI (a gateway, an interactive agent) keeps a session in memory and rewrites the whole file
from it when it saves: a line the app appended meanwhile is gone. So the store remembers, per file,
the messages it appended in this run (the newest `KEEP` per file) and, whenever the file changes
outside, checks that each one is still there. A message counts as there when a message with the same
role, content and timestamp is in the file — the CLI re-encodes lines when it rewrites them, so bytes
are not compared. What is missing is reported once (`SessionLinesLost`) and kept, so the person can
put it back into a new session (`SessionStore.put_back_lost`).
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sessions.file import parse_session_bytes

KEEP = 200


def _identity(message: dict[str, Any]) -> tuple[str, str, str]:
    content = json.dumps(message.get("content"), ensure_ascii=False, sort_keys=True)
    return str(message.get("role")), content, str(message.get("timestamp"))


class OwnLines:
    """Messages appended per file in this run, and those found erased, per session key."""

    def __init__(self) -> None:
        self._appended: dict[Path, deque[dict[str, Any]]] = {}
        self.lost: dict[str, list[dict[str, Any]]] = {}

    def appended(self, path: Path, messages: list[dict[str, Any]]) -> None:
        """Remember `messages` as appended to `path`: the session's own dicts, shared, not copied (the
        store never changes a message once it is appended; a copy each was ~250 bytes a message)."""
        self._appended.setdefault(path, deque(maxlen=KEEP)).extend(messages)

    def forget(self, path: Path) -> None:
        """The app itself rewrote or removed the file (clear, delete): nothing of it can be lost now."""
        self._appended.pop(path, None)

    def check(self, path: Path, key: str) -> list[dict[str, Any]]:
        """The app's messages no longer in the file (each reported once; kept in `lost[key]`)."""
        mine = self._appended.get(path)
        if not mine:
            return []
        try:
            present = {_identity(m) for m in parse_session_bytes(path.read_bytes(), str(path)).messages}
        except FileNotFoundError:
            present = set()
        except OSError:
            return []
        missing = [m for m in mine if _identity(m) not in present]
        if missing:
            kept = [m for m in mine if _identity(m) in present]
            self._appended[path] = deque(kept, maxlen=KEEP)
            self.lost.setdefault(key, []).extend(missing)
        return missing


__all__ = ["OwnLines"]
