"""Who changed a session file: the engine's change tracker (engine/changes.py), read per session.

The tracker keeps each file's signature as the engine last wrote or loaded it; this adds what only
sessions need: the key each file belongs to, which cached sessions are stale (changed outside since
the store read them), and the `SessionChanged` event that says so. A session file that does not
exist and was never seen is no change at all. The store holds its lock around every call here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nanobot_desktop.engine.changes import ChangeTracker, Signature, signature_of
from nanobot_desktop.engine.events import SessionChanged
from nanobot_desktop.engine.sessions.file import parse_header, read_first_line
from nanobot_desktop.engine.sessions.listing import key_from_stem

__all__ = ["SessionChanges", "Signature", "key_of_file", "signature_of"]


def key_of_file(path: Path, key_from_name: Callable[[Path], str | None] | None = None) -> str:
    """A session file's key as it says itself (its metadata line), else as the layout's naming rule
    decodes it (0.3's base64url names), else as its post4 name suggests."""
    try:
        header = parse_header(read_first_line(path))
    except OSError:
        header = None
    candidate = header.get("key") if header else None
    if isinstance(candidate, str) and candidate:
        return candidate
    return (key_from_name(path) if key_from_name is not None else None) or key_from_stem(path.stem)


class SessionChanges:
    """The session files' keys and staleness, over the engine's one record of who wrote what."""

    def __init__(self, key_from_name: Callable[[Path], str | None] | None = None,
                 tracker: ChangeTracker | None = None) -> None:
        self._key_from_name = key_from_name
        self.tracker = tracker if tracker is not None else ChangeTracker()
        self._keys: dict[Path, str] = {}  # the key each file was written, loaded or first seen for
        self._stale: set[str] = set()  # keys whose file changed outside since the store last read it

    def loaded(self, path: Path, key: str, signature: Signature | None) -> None:
        """The cache now holds the file as it was when `signature` was taken (just before reading)."""
        self.tracker.read(path, signature)
        self._keys[path] = key
        self._stale.discard(key)

    def wrote(self, path: Path, key: str, reason: str, turn_id: str = "") -> SessionChanged:
        """Record the file as the store just left it; the event that says the store changed it."""
        signature = self.tracker.wrote(path)
        self._keys[path] = key
        return SessionChanged(key, reason=reason, turn_id=turn_id, size=signature[1] if signature else 0)

    def check(self, path: Path, key: str | None = None) -> SessionChanged | None:
        """The change of `path` the store did not make, if any, as an outside event; recorded now.

        A file the store never wrote or loaded counts as changed when it exists: nothing says anyone has
        seen what is in it. A turn always loads its session first, so a turn's writes never hit this.
        """
        if not self.tracker.knows(path) and signature_of(path) is None:
            return None  # never seen and not there: nothing anyone could have seen changed
        if not self.tracker.changed_outside(path):
            return None
        current = signature_of(path)
        key = key or self._keys.get(path) or key_of_file(path, self._key_from_name)
        self._keys[path] = key  # a file removed later can no longer say its key
        self._stale.add(key)
        return SessionChanged(key, reason="changed" if current is not None else "removed", outside=True,
                              size=current[1] if current is not None else 0)

    def paths(self) -> set[Path]:
        """Every session file the store has a record of."""
        return set(self._keys)

    def is_stale(self, key: str) -> bool:
        return key in self._stale

    def forget(self, key: str) -> None:
        """The cached copy of `key` was dropped: nothing of it can be stale any more."""
        self._stale.discard(key)
