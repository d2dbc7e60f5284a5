"""The single-instance socket on POSIX with the standard library's AF_UNIX sockets, not QtNetwork.

Why not QLocalServer/QLocalSocket there: loading QtNetwork (its library and bindings) costs ~3 MB
resident for the whole life of the app, for one socket that carries a word per launch (issue 17's
empty-window budget, bench/window_rss.py). The server side is watched with QSocketNotifier on the
Qt event loop, so nothing blocks and no thread is needed. Windows keeps QtNetwork's named pipes
(single_instance.py picks). Semantics follow QLocalServer's: the socket file is made for this user
only (mode 0600, in a private folder anyway), `close` removes it, and a file nobody answers on is a
stale one that `listen` may replace.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket

from PySide6.QtCore import QObject, QSocketNotifier, Signal

MAX_LINE = 64  # commands are short words; anything longer is not ours
_GONE = (errno.ECONNREFUSED, errno.ENOENT)  # no socket file, or nobody listening on it


def send_line(path: str, line: bytes, timeout_ms: int) -> bool:
    """Connect to `path` and write `line`; False when nobody accepts it in time."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(timeout_ms / 1000)
        try:
            client.connect(path)
            client.sendall(line)
        except OSError:
            return False
    return True


def someone_listens(path: str, timeout_ms: int) -> bool:
    """A process accepts connections on `path`. Unsure answers count as yes (never cut a live one off)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(timeout_ms / 1000)
        try:
            probe.connect(path)
        except OSError as error:
            return error.errno not in _GONE
    return True


class UnixLineServer(QObject):
    """Listens on a socket file and emits each newline-terminated line a client sends."""

    line_received = Signal(bytes)
    overlong = Signal()
    """A client sent more than MAX_LINE bytes without a newline (it is disconnected)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = ""
        self._listener: socket.socket | None = None
        self._notifier: QSocketNotifier | None = None
        self._clients: dict[int, tuple[socket.socket, QSocketNotifier, bytearray]] = {}
        self.error = ""
        self.address_in_use = False

    def listen(self, path: str, replace_stale: bool) -> bool:
        """Bind and listen; with `replace_stale`, a socket file in the way is removed first."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if replace_stale:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            listener.bind(path)
            os.chmod(path, 0o600)
            listener.listen(8)
            listener.setblocking(False)
        except OSError as error:
            listener.close()
            self.error = error.strerror or str(error)
            self.address_in_use = error.errno == errno.EADDRINUSE
            return False
        self.path, self._listener = path, listener
        self._notifier = QSocketNotifier(listener.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(lambda *_args: self._accept())
        return True

    def is_listening(self) -> bool:
        return self._listener is not None

    def close(self) -> None:
        """Stop listening, drop the clients and remove the socket file."""
        for fd in list(self._clients):
            self._drop(fd)
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                client, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            client.setblocking(False)
            notifier = QSocketNotifier(client.fileno(), QSocketNotifier.Type.Read, self)
            fd = client.fileno()
            self._clients[fd] = (client, notifier, bytearray())
            notifier.activated.connect(lambda *_args, fd=fd: self._read(fd))
            self._read(fd)  # it may have written before we got here

    def _read(self, fd: int) -> None:
        entry = self._clients.get(fd)
        if entry is None:
            return
        client, _notifier, buffer = entry
        while True:
            try:
                data = client.recv(MAX_LINE + 1)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:  # the client is done (or gone)
                self._drop(fd)
                break
            buffer += data
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            if len(line) >= MAX_LINE:
                buffer[:] = b"x" * (MAX_LINE + 1)  # refused below, as a line without its end
                break
            self.line_received.emit(line + b"\n")
        if len(buffer) > MAX_LINE:
            self.overlong.emit()
            self._drop(fd)

    def _drop(self, fd: int) -> None:
        entry = self._clients.pop(fd, None)
        if entry is None:
            return
        client, notifier, _buffer = entry
        notifier.setEnabled(False)
        notifier.deleteLater()
        client.close()
