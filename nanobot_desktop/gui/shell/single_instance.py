"""One running app per user and config file, reachable by later launches.

The first launch listens on a local socket; a later launch connects, sends one command line
("show" or "toggle") and exits. The name is derived from the user and the config path, so two
configs (two agents) can run side by side.

The socket always lives in a folder only this user can use: `XDG_RUNTIME_DIR` when it is ours and
private, else `~/.cache/nanobot-desktop/run` (made 0700), else — when that path is too long for a
socket — `<tmp>/nanobot-desktop-<uid>` (0700, and checked to be ours). A name in a shared folder
could be taken by another user, who would then receive our "show" and make a launch exit with no
window; so before talking to a socket we check that it belongs to us (`endpoint_problem`), and a
foreign one is reported in a sentence instead of being trusted.

A crashed instance leaves its socket file behind, which makes `listen()` fail. The file is only
removed after checking that nobody answers on it, so a live instance is never cut off.

On POSIX the socket is a plain AF_UNIX one (unix_socket.py, without QtNetwork's ~3 MB); elsewhere it
is QtNetwork's QLocalServer/QLocalSocket.

Start-up cost (issue 14): on POSIX the first launch makes no socket before its window has painted
(the `socket` module alone costs ~5 ms there, QtNetwork more). It takes an exclusive lock on
`<socket>.lock` at once instead (`claim_first_launch`: one open and one flock, held until the process
exits, released by the kernel even after a crash), and listens right after the paint. A later launch
that finds the lock held knows an instance runs or is starting, and `hand_over` retries its command
until that instance listens (`STARTING_INSTANCE_WAIT_S`). Where there is no flock, the first launch
listens before the paint, as before.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from nanobot_desktop.identity import APP_ID, FOLDER_NAME

if TYPE_CHECKING:
    from PySide6.QtNetwork import QLocalSocket
    from PySide6.QtWidgets import QWidget

    from nanobot_desktop.gui.shell import unix_socket

# The sockets' modules (unix_socket.py and its `socket`, or QtNetwork) are imported where a socket is
# made: a first launch needs none before its window paints.

# The name's digest: CPython's own SHA-256 module, the same digest as hashlib's, without loading
# OpenSSL (~3 ms, `import hashlib`) before the first paint; hashlib where that module is missing.
try:
    from _sha2 import sha256  # type: ignore[import-not-found, unused-ignore]  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found, no-redef, unused-ignore]  # Python 3.11
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment, unused-ignore]

# POSIX: the standard library's AF_UNIX sockets (unix_socket.py: QtNetwork would cost ~3 MB resident);
# elsewhere QtNetwork's QLocalServer/QLocalSocket (named pipes on Windows), imported there only.
_POSIX = os.name == "posix"

log = logging.getLogger(__name__)

COMMANDS = ("show", "toggle")
STARTING_INSTANCE_WAIT_S = 10.0
"""How long a launch waits for an instance that holds the lock to listen (it does within a second)."""
_RETRY_S = 0.05
_held_locks: dict[str, int] = {}


def apply_instance_command(window: QWidget, command: str) -> None:
    """"show" brings the window to the front; "toggle" hides a visible window and shows a hidden one."""
    from nanobot_desktop.gui.window.raising import bring_forward, toggle_shown

    if command == "toggle":
        toggle_shown(window)
    elif command in COMMANDS:
        bring_forward(window)
    else:
        log.warning("ignoring unknown instance command %r", command)


def default_config_path() -> Path:
    return Path.home() / ".nanobot" / "config.json"


def _user_name() -> str:
    try:
        name = getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry (containers): fall back to the uid
        name = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:32] or "user"


_SOCKET_PATH_LIMIT = 103  # sun_path holds 104 (macOS, BSD) to 108 (Linux) bytes with the final NUL


class InstanceEndpointError(Exception):
    """The single-instance socket or its folder is not safely ours; the text says what to do."""


def server_name(config_path: str | os.PathLike[str] | None) -> str:
    """The local-socket name for this user and config file (stable across launches): the application
    id and a digest of the user and the config's path.

    On POSIX a full path in a private folder (see the module docstring); raises InstanceEndpointError
    when no private folder can be had. On Windows a plain pipe name.
    """
    _user, digest = _user_and_digest(config_path)
    name = f"{APP_ID}-{digest[:12]}"  # 53 characters: a socket path must stay under 104 bytes
    if os.name != "posix":
        return name
    return str(private_folder(len(name)) / name)


def legacy_server_name(config_path: str | os.PathLike[str] | None) -> str:
    """The name versions before the application id listened on (`nanobot-desktop-<user>-<digest>`): a
    launch after an update still finds an instance of the older version that is running."""
    user, digest = _user_and_digest(config_path)
    name = f"{FOLDER_NAME}-{user}-{digest}"
    if os.name != "posix":
        return name
    return str(private_folder(len(name)) / name)


def _user_and_digest(config_path: str | os.PathLike[str] | None) -> tuple[str, str]:
    path = Path(config_path).expanduser() if config_path else default_config_path()
    path = path.absolute().resolve(strict=False)
    user = _user_name()
    return user, sha256(f"{user}\0{path}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


def any_instance_running() -> bool:
    """Whether any instance of this user runs, whatever its config (an update must not replace the
    files under it): a lock in the private folder that another process holds."""
    if os.name != "posix":
        return False
    try:
        folder = private_folder(len(APP_ID) + 13)
    except InstanceEndpointError:
        return False
    for lock in (*folder.glob(f"{APP_ID}-*.lock"), *folder.glob(f"{FOLDER_NAME}-*.lock")):
        if _claimed_by_another(str(lock)[: -len(".lock")]):
            return True
    return False


def private_folder(name_length: int = 40) -> Path:
    """A folder only this user can use, short enough to hold a socket name of `name_length`."""
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if (runtime_dir and len(runtime_dir) + 1 + name_length <= _SOCKET_PATH_LIMIT and os.path.isdir(runtime_dir)
            and _folder_problem(Path(runtime_dir)) is None):
        return Path(runtime_dir)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    candidates = [cache / "nanobot-desktop" / "run", Path(tempfile.gettempdir()) / f"nanobot-desktop-{os.geteuid()}"]
    for folder in candidates:
        if len(str(folder)) + 1 + name_length > _SOCKET_PATH_LIMIT:
            continue
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            raise InstanceEndpointError(f"Cannot create the private folder {folder} for the single-instance "
                                        f"socket ({error.strerror}).") from error
        problem = _folder_problem(folder, fix=True)
        if problem:
            raise InstanceEndpointError(problem)
        return folder
    raise InstanceEndpointError("No private folder with a path short enough for the single-instance socket: "
                                "set XDG_RUNTIME_DIR to a private folder (mode 0700) with a short path.")


def _folder_problem(folder: Path, fix: bool = False) -> str | None:
    """Why `folder` is not private to this user (None when it is); `fix` tightens our own folder's mode."""
    try:
        info = os.lstat(folder)
    except OSError as error:
        return f"Cannot check the folder {folder} ({error.strerror})."
    if not stat.S_ISDIR(info.st_mode):
        return (f"{folder} should be a private folder for the single-instance socket but is not a folder "
                "(a symlink or a file): remove it and start again.")
    if info.st_uid != os.geteuid():
        return (f"The folder {folder} for the single-instance socket belongs to another user (uid "
                f"{info.st_uid}): someone may be trying to intercept nanobot Desktop. Remove it (as an "
                "administrator) or set XDG_RUNTIME_DIR to a private folder.")
    if info.st_mode & 0o077:
        if not fix:
            return f"The folder {folder} can be used by other users (mode {stat.S_IMODE(info.st_mode):o})."
        os.chmod(folder, 0o700)
    return None


def endpoint_problem(name: str) -> str | None:
    """Why the socket at `name` must not be trusted (another user's, not a socket), or None."""
    if os.name != "posix" or not os.path.isabs(name):
        return None
    folder_problem = _folder_problem(Path(name).parent)
    if folder_problem:
        return folder_problem
    try:
        info = os.lstat(name)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"Cannot check the single-instance socket {name} ({error.strerror})."
    if info.st_uid != os.geteuid():
        return (f"The single-instance socket {name} belongs to another user (uid {info.st_uid}); nanobot "
                "Desktop will not talk to it. Remove it, then start nanobot Desktop again.")
    if not stat.S_ISSOCK(info.st_mode):
        return f"{name} is in the place of the single-instance socket but is not a socket: remove it."
    return None


def send_command(name: str, command: str, timeout_ms: int = 1000) -> bool:
    """Deliver `command` to a running instance. False when none answers (then we are the first)."""
    if command not in COMMANDS:
        raise ValueError(f"unknown instance command {command!r}; expected one of {', '.join(COMMANDS)}")
    if endpoint_problem(name):
        return False  # never hand a command to someone else's socket
    if _POSIX:
        from nanobot_desktop.gui.shell import unix_socket

        return unix_socket.send_line(name, command.encode("ascii") + b"\n", timeout_ms)
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write(command.encode("ascii") + b"\n")
    delivered = socket.waitForBytesWritten(timeout_ms) or socket.bytesToWrite() == 0
    socket.disconnectFromServer()
    if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
        socket.waitForDisconnected(timeout_ms)
    if not delivered:
        log.warning("a running instance accepted the connection but not the %r command", command)
    return delivered


def claim_first_launch(name: str) -> bool | None:
    """Take the lock that says "an instance for `name` runs"; True: we are the first (the lock is held
    until the process exits or `release_launch_claim`), False: another process holds it, None: no
    lock on this system (no flock, or the lock file cannot be opened: the socket alone decides)."""
    if os.name != "posix":
        return None
    import fcntl

    if name in _held_locks:
        return True
    try:
        fd = os.open(f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as error:
        log.warning("no single-instance lock file beside %s (%s); using the socket alone", name, error.strerror)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    except OSError as error:
        os.close(fd)
        log.warning("cannot lock %s.lock (%s); using the socket alone", name, error.strerror)
        return None
    _held_locks[name] = fd
    return True


def release_launch_claim(name: str) -> None:
    """Give the lock of `claim_first_launch` back (at exit the kernel does this anyway)."""
    fd = _held_locks.pop(name, None)
    if fd is not None:
        os.close(fd)


def _claimed_by_another(name: str) -> bool:
    """Whether another process still holds the lock (a launch that died while starting does not)."""
    if name in _held_locks:
        return False
    claimed = claim_first_launch(name)
    if claimed is True:
        release_launch_claim(name)
    return claimed is False


def hand_over(name: str, command: str, *, wait_s: float = 0.0) -> bool:
    """Deliver `command` to the instance for `name`; while an instance holds the lock but does not
    listen yet (it is still painting its window), retry for up to `wait_s` seconds."""
    deadline = time.monotonic() + wait_s
    while True:
        if send_command(name, command):
            return True
        if time.monotonic() >= deadline or not _claimed_by_another(name):
            return False
        time.sleep(_RETRY_S)  # before any window or event loop exists: nothing else waits on this thread


def _someone_listens(name: str, timeout_ms: int = 500) -> bool:
    if _POSIX:
        from nanobot_desktop.gui.shell import unix_socket

        return unix_socket.someone_listens(name, timeout_ms)
    from PySide6.QtNetwork import QLocalSocket

    probe = QLocalSocket()
    probe.connectToServer(name)
    if probe.waitForConnected(timeout_ms):
        probe.abort()
        return True
    return probe.error() not in (
        QLocalSocket.LocalSocketError.ConnectionRefusedError,
        QLocalSocket.LocalSocketError.ServerNotFoundError,
    )


class InstanceServer(QObject):
    """Listens for commands from later launches of the same user and config."""

    command_received = Signal(str)
    """One command ("show" or "toggle") from another launch."""

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server: Any
        if _POSIX:
            from nanobot_desktop.gui.shell import unix_socket

            self._server = unix_socket.UnixLineServer(self)
            self._server.line_received.connect(self.handle_line)
            self._server.overlong.connect(lambda: log.warning("ignoring an over-long message on the instance socket"))
            return
        from PySide6.QtNetwork import QLocalServer

        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Start listening, replacing a crashed instance's leftover socket. False if another instance
        answers on the name (Qt would otherwise silently take the name over from it)."""
        problem = endpoint_problem(self.name)
        if problem:
            log.error("%s", problem)
            return False
        if _someone_listens(self.name):
            log.info("another instance already listens on %s", self.name)
            return False
        if _POSIX:
            return self._listen_unix()
        from PySide6.QtNetwork import QAbstractSocket, QLocalServer

        if self._server.listen(self.name):
            return True
        if self._server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
            log.info("removing the stale socket %s left by an instance that did not exit cleanly", self.name)
            QLocalServer.removeServer(self.name)
            if self._server.listen(self.name):
                return True
        log.error("cannot listen for other launches on %s: %s", self.name, self._server.errorString())
        return False

    def _listen_unix(self) -> bool:
        server: unix_socket.UnixLineServer = self._server
        if server.listen(self.name, replace_stale=False):
            return True
        if server.address_in_use:  # nobody answered on it (checked above): a crashed instance's file
            log.info("removing the stale socket %s left by an instance that did not exit cleanly", self.name)
            if server.listen(self.name, replace_stale=True):
                return True
        log.error("cannot listen for other launches on %s: %s", self.name, server.error)
        return False

    def is_listening(self) -> bool:
        return bool(self._server.is_listening() if _POSIX else self._server.isListening())

    def full_server_name(self) -> str:
        return self.name if _POSIX else str(self._server.fullServerName())

    def close(self) -> None:
        """Stop listening and remove the socket file (so the next launch starts cleanly)."""
        self._server.close()

    def handle_line(self, line: bytes) -> None:
        command = line.strip().decode("ascii", "replace")
        if command in COMMANDS:
            self.command_received.emit(command)
        elif command:
            log.warning("ignoring unknown instance command %r", command)

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(self._read_sender)
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                self._read(socket)

    def _read_sender(self) -> None:
        from PySide6.QtNetwork import QLocalSocket

        socket = self.sender()
        if isinstance(socket, QLocalSocket):
            self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        from nanobot_desktop.gui.shell.unix_socket import MAX_LINE as _MAX_LINE

        while socket.canReadLine():
            line = bytes(socket.readLine(_MAX_LINE + 1).data())
            if not line.endswith(b"\n"):
                log.warning("ignoring an over-long message on the instance socket")
                socket.abort()
                return
            self.handle_line(line)
        if socket.bytesAvailable() > _MAX_LINE:
            log.warning("ignoring an over-long message on the instance socket")
            socket.abort()
