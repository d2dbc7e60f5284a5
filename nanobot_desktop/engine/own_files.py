"""The app's own reads of workspace files, opened beneath the workspace like the file tools' reads.

Why: exec may only make links, but the app itself runs outside the sandbox. If it followed
`memory/MEMORY.md -> ~/.nanobot/config.json` when it builds the system prompt, the API key would go
to the endpoint on every turn. So every file the app reads on the agent's behalf (bootstrap files,
MEMORY.md, history, HEARTBEAT.md, skills, attachments in the workspace) is opened with the file tools'
opener (`safe_files.Place`: openat2 RESOLVE_BENEATH, else O_NOFOLLOW per component): a link that
stays inside the workspace works, a link out is not followed, and a file with a second hard link
(whose other name may be outside) is not read. Each refusal is told once, to the listeners
(the engine turns it into a `Notice` event: the notice bar, the CLI's stderr).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

log = logging.getLogger(__name__)

Listener = Callable[[Path, str], None]
"""Called with (the file, what it points to) when a read is refused."""


class LinkedOut(OSError):
    """A workspace file the app will not read: it leads out of the workspace (or has another name)."""

    def __init__(self, path: Path, target: str) -> None:
        super().__init__(errno.EXDEV, f"{path} leads out of the workspace ({target}); not read", str(path))
        self.path = path
        self.target = target


def _target_of(path: Path) -> str:
    """What a refused file points to, for the notice (best effort: the link may change under us)."""
    try:
        return str(Path(os.path.realpath(path)))
    except OSError:
        return "a place outside the workspace"


class OwnFiles:
    """Reads beneath one workspace root; remembers which refusals were told so each is told once."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._given = Path(os.path.abspath(root))  # paths may be spelled from the unresolved root
        self._listeners: list[Listener] = []
        self._told: set[tuple[Path, str]] = set()
        self._lock = threading.Lock()

    def listen(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _relative(self, path: Path) -> PurePosixPath | None:
        """`path` below the workspace, written without resolving links (None: not a workspace file)."""
        absolute = Path(os.path.abspath(path))
        for base in (self.root, self._given):
            if absolute.is_relative_to(base):
                return PurePosixPath(absolute.relative_to(base).as_posix())
        return None

    def open(self, path: Path) -> int:
        """A read-only descriptor of the regular file `path`.

        Raises FileNotFoundError, IsADirectoryError, or `LinkedOut` (after telling the listeners) for a
        link out of the workspace or a hard-linked file. A path outside the workspace (the app's
        bundled skills, an attachment the person picked) is opened as it is.
        """
        from nanobot_desktop.engine.tools.safe_files import Place

        rel = self._relative(path)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        if rel is None:
            return os.open(path, flags)
        try:
            fd = Place(Path(path), self.root, rel).open(flags)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.ELOOP):
                raise self._refused(Path(path), _target_of(Path(path))) from None
            raise
        try:
            status = os.fstat(fd)
            if stat.S_ISDIR(status.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
            if not stat.S_ISREG(status.st_mode):
                raise FileNotFoundError(errno.ENOENT, "not a regular file", str(path))
            if status.st_nlink > 1:
                raise self._refused(Path(path), f"a file with {status.st_nlink} hard links, another name of it "
                                                "may be outside the workspace")
        except BaseException:
            os.close(fd)
            raise
        self._forget(Path(path))
        return fd

    def read(self, path: Path, limit: int | None = None) -> bytes:
        """The file's bytes (at most `limit` + 1 of them when a limit is given); raises like `open`."""
        fd = self.open(path)
        with os.fdopen(fd, "rb") as handle:
            return handle.read() if limit is None else handle.read(limit + 1)

    def read_or_none(self, path: Path) -> bytes | None:
        """The file's bytes, or None when it is missing, a folder or refused (the refusal is told)."""
        try:
            return self.read(path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, LinkedOut):
            return None

    def _refused(self, path: Path, target: str) -> LinkedOut:
        key = (path, target)
        with self._lock:
            new = key not in self._told
            self._told.add(key)
        if new:
            log.warning("not reading %s: it leads out of the workspace (%s)", path, target)
            for listener in list(self._listeners):
                try:
                    listener(path, target)
                except Exception:  # a broken listener must never break a read
                    log.exception("own-files listener failed")
        return LinkedOut(path, target)

    def _forget(self, path: Path) -> None:
        """A file read fine again: a later link out of it is told again."""
        if self._told:
            with self._lock:
                self._told = {key for key in self._told if key[0] != path}
