"""The single-instance socket lives where only this user can reach it, and a foreign one is refused.

Issue 13 ("Odd input"): with XDG_RUNTIME_DIR unset the socket had a predictable name in /tmp, and
another user who created it first made every launch hand its "show" to them and exit 0, no window.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from nanobot_desktop.gui.shell.single_instance import (
    InstanceEndpointError, InstanceServer, endpoint_problem, private_folder, send_command, server_name,
)
from tests.gui.shell.test_app_shell import launcher, runtime_dir  # noqa: F401  (fixtures)

NOBODY = 65534


@pytest.fixture
def short_tmp():
    """A folder with a short path (pytest's tmp_path is too long to hold a socket name)."""
    folder = Path(tempfile.mkdtemp(prefix="nbsi-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")


def _bind_socket(path: str) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.close()


def test_without_xdg_runtime_dir_the_socket_is_in_a_private_folder_of_home(short_tmp, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("HOME", str(short_tmp / "h"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    name = Path(server_name(short_tmp / "config.json"))
    assert name.parent == short_tmp / "h" / ".cache" / "nanobot-desktop" / "run"
    assert name.parent.stat().st_mode & 0o777 == 0o700
    assert not str(name).startswith(tempfile.gettempdir() + "/nanobot-desktop-root")


def test_a_loose_folder_of_ours_is_made_private(short_tmp, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(short_tmp / "c"))
    folder = short_tmp / "c" / "nanobot-desktop" / "run"
    folder.mkdir(parents=True, mode=0o777)
    folder.chmod(0o777)
    assert private_folder() == folder and folder.stat().st_mode & 0o777 == 0o700


def test_an_xdg_runtime_dir_of_another_user_is_not_used(short_tmp, monkeypatch):
    _needs_root()
    foreign = short_tmp / "foreign-run"
    foreign.mkdir(mode=0o700)
    os.chown(foreign, NOBODY, NOBODY)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(foreign))
    monkeypatch.setenv("XDG_CACHE_HOME", str(short_tmp / "c"))
    assert Path(server_name(short_tmp / "config.json")).parent == short_tmp / "c" / "nanobot-desktop" / "run"


def test_a_squatted_temp_folder_is_detected_with_a_sentence(short_tmp, monkeypatch):
    _needs_root()
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(short_tmp / ("long-" * 30)))  # too long a path for a socket
    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp / "tmp"))
    squatted = short_tmp / "tmp" / f"nanobot-desktop-{os.geteuid()}"
    squatted.mkdir(parents=True, mode=0o777)
    os.chown(squatted, NOBODY, NOBODY)
    with pytest.raises(InstanceEndpointError, match=r"belongs to another user \(uid 65534\)"):
        server_name(short_tmp / "config.json")


def test_a_socket_of_another_user_is_refused(qtbot, tmp_path, runtime_dir):  # noqa: F811
    _needs_root()
    name = server_name(tmp_path / "config.json")
    _bind_socket(name)
    os.chown(name, NOBODY, NOBODY)
    problem = endpoint_problem(name)
    assert problem == (f"The single-instance socket {name} belongs to another user (uid 65534); nanobot Desktop "
                       "will not talk to it. Remove it, then start nanobot Desktop again.")
    assert send_command(name, "show") is False
    server = InstanceServer(name)
    assert server.listen() is False
    assert Path(name).exists() and os.lstat(name).st_uid == NOBODY  # not removed as if it were stale


def test_a_launch_facing_a_foreign_socket_opens_its_window_and_says_why(tmp_path, launcher, runtime_dir):  # noqa: F811
    _needs_root()
    config = tmp_path / "config.json"
    name = server_name(config)
    _bind_socket(name)
    os.chown(name, NOBODY, NOBODY)
    process = launcher(config, "show")
    assert process.next_line() == "ready workspace=/ws"  # a window, not a silent exit 0
    process.close()
    stderr = process.stderr()
    assert f"The single-instance socket {name} belongs to another user (uid 65534)" in stderr
    assert "Continuing without single-instance support." in stderr and "Traceback" not in stderr


def _closed_by_peer(client: socket.socket) -> bool:
    try:
        return client.recv(1, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False


def test_the_socket_is_private_and_an_over_long_message_is_cut_off(qtbot, tmp_path, runtime_dir):  # noqa: F811
    name = server_name(tmp_path / "config.json")
    server = InstanceServer(name)
    assert server.listen()
    try:
        assert os.stat(name).st_mode & 0o777 == 0o600  # only this user may connect
        received: list[str] = []
        server.command_received.connect(received.append)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(name)
            client.sendall(b"show" * 40)  # 160 bytes and no end of line: not a command of ours
            qtbot.waitUntil(lambda: _closed_by_peer(client), timeout=5000)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(name)
            client.sendall(b"toggle" * 20 + b"\n")  # a whole line, but too long to be one
            qtbot.waitUntil(lambda: _closed_by_peer(client), timeout=5000)
        assert received == []
        with qtbot.waitSignal(server.command_received, timeout=5000) as good:
            assert send_command(name, "show")  # the server still listens
        assert good.args == ["show"] and received == ["show"]
    finally:
        server.close()
