"""The app shell: Lifecycle (the one owner of shutdown), single instance, and run_gui end to end."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QMainWindow

from nanobot_desktop.identity import APP_ID
from nanobot_desktop.gui.shell.app import APP_NAME, apply_instance_command, create_application
from nanobot_desktop.gui.shell.lifecycle import Lifecycle
from nanobot_desktop.gui.shell.single_instance import (
    InstanceServer, claim_first_launch, hand_over, release_launch_claim, legacy_server_name, send_command, server_name, any_instance_running,
)

# --- Lifecycle -------------------------------------------------------------------------------------


def test_request_quit_cancels_tasks_then_runs_cleanups_newest_first(qtbot, qloop):
    lifecycle = Lifecycle()
    order: list[str] = []

    async def runs_forever(label: str) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            order.append(f"{label} cancelled")
            raise

    first = lifecycle.add_task(runs_forever("agent"), name="agent")
    second = lifecycle.add_task(runs_forever("heartbeat"), name="heartbeat")

    async def close_client() -> None:
        await asyncio.sleep(0)
        order.append("client closed")

    lifecycle.add_cleanup(lambda: order.append("writers flushed"), name="flush")
    lifecycle.add_cleanup(close_client, name="client")

    with qtbot.waitSignal(lifecycle.finished, timeout=5000):
        shutdown = lifecycle.request_quit()
    assert sorted(order[:2]) == ["agent cancelled", "heartbeat cancelled"]
    assert order[2:] == ["client closed", "writers flushed"]
    assert first.cancelled() and second.cancelled()
    assert lifecycle.is_finished and lifecycle.tasks() == set()
    assert lifecycle.request_quit() is shutdown  # a second request is the same shutdown
    assert order.count("writers flushed") == 1


def test_a_failing_or_hanging_cleanup_is_logged_and_the_others_still_run(qtbot, qloop, caplog):
    lifecycle = Lifecycle()
    ran: list[str] = []

    def broken() -> None:
        raise OSError("disk full")

    async def hangs() -> None:
        await asyncio.Event().wait()

    lifecycle.add_cleanup(lambda: ran.append("oldest"), name="oldest")
    lifecycle.add_cleanup(broken, name="broken")
    lifecycle.add_cleanup(hangs, name="hangs", timeout_s=0.05)
    with caplog.at_level(logging.ERROR, logger="nanobot_desktop.gui.shell.lifecycle"):
        with qtbot.waitSignal(lifecycle.finished, timeout=5000):
            lifecycle.request_quit()
    assert ran == ["oldest"]
    messages = "\n".join(record.getMessage() for record in caplog.records)
    assert "cleanup broken failed" in messages
    assert "cleanup hangs did not finish within 0.1 s" in messages


def test_a_task_that_fails_by_itself_is_logged_and_forgotten(qtbot, qloop, caplog):
    lifecycle = Lifecycle()

    async def crashes() -> None:
        raise ValueError("bad tick")

    with caplog.at_level(logging.ERROR, logger="nanobot_desktop.gui.shell.lifecycle"):
        task = lifecycle.add_task(crashes(), name="heartbeat")
        qtbot.waitUntil(task.done, timeout=5000)
    assert lifecycle.tasks() == set()
    assert any("task heartbeat failed" in record.getMessage() for record in caplog.records)


def test_a_task_added_during_shutdown_is_cancelled(qtbot, qloop):
    lifecycle = Lifecycle()
    lifecycle.request_quit()

    async def late() -> None:
        await asyncio.Event().wait()

    task = lifecycle.add_task(late(), name="late")
    qtbot.waitUntil(lambda: lifecycle.is_finished and task.done(), timeout=5000)
    assert task.cancelled()


def test_qt_quit_event_is_turned_into_an_orderly_shutdown(qtbot, qloop, qapp):
    lifecycle = Lifecycle()
    cleaned: list[str] = []
    lifecycle.add_cleanup(lambda: cleaned.append("done"))
    lifecycle.attach_to_app(qapp)
    try:
        swallowed = QCoreApplication.sendEvent(qapp, QEvent(QEvent.Type.Quit))
        assert swallowed, "the Quit event must not reach Qt while the lifecycle is running"
        qtbot.waitUntil(lambda: lifecycle.is_finished, timeout=5000)
        assert cleaned == ["done"]
    finally:
        lifecycle.detach_from_app()


def test_about_to_quit_twice_is_noted_once_and_starts_nothing(qtbot, qloop, caplog):
    # aboutToQuit comes as exec() returns, when asyncio no longer runs: the lifecycle only notes
    # it (run_gui then runs the shutdown in a fresh spin of the loop; see the "exit" launch test).
    lifecycle = Lifecycle()
    with caplog.at_level(logging.WARNING, logger="nanobot_desktop.gui.shell.lifecycle"):
        lifecycle._on_about_to_quit()
        lifecycle._on_about_to_quit()
    assert lifecycle.loop_ended_early and not lifecycle.is_quitting
    assert sum("without a quit request" in record.getMessage() for record in caplog.records) == 1


def test_keep_running_without_windows_is_the_tray_switch(qapp):
    before = qapp.quitOnLastWindowClosed()
    try:
        Lifecycle().keep_running_without_windows()
        assert qapp.quitOnLastWindowClosed() is False
    finally:
        qapp.setQuitOnLastWindowClosed(before)


def test_application_names(qapp):
    app = create_application()
    assert app is qapp
    assert app.applicationName() == APP_NAME == "nanobot Desktop"
    assert app.organizationName() == "nanobot-desktop"  # never "nanobot": see nanobot_desktop/identity.py
    assert app.desktopFileName() == "io.github.nanobot_desktop.NanobotDesktop"


# --- single instance -------------------------------------------------------------------------------


@pytest.fixture
def runtime_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private XDG_RUNTIME_DIR as short as pytest allows (a real one is /run/user/<uid>): the socket's
    name (the application id and a digest, 53 characters) must fit in a socket path (< 104 bytes)."""
    folder = tmp_path_factory.mktemp("run")
    folder.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


def test_server_name_depends_on_user_and_config(tmp_path, runtime_dir, monkeypatch):
    config_a, config_b = tmp_path / "a.json", tmp_path / "b.json"
    assert server_name(config_a) == server_name(str(config_a))
    monkeypatch.setattr("getpass.getuser", lambda: "alice")
    digest = hashlib.sha256(f"alice\0{config_a.resolve()}".encode()).hexdigest()[:16]
    assert Path(server_name(config_a)).name == f"{APP_ID}-{digest[:12]}"  # named after the application id
    assert Path(legacy_server_name(config_a)).name == f"nanobot-desktop-alice-{digest}"  # what older versions use
    assert server_name(config_a) != server_name(config_b)
    assert Path(server_name(config_a)).parent == runtime_dir
    assert server_name(None) == server_name(Path.home() / ".nanobot" / "config.json")
    alices = server_name(config_a)
    monkeypatch.setattr("getpass.getuser", lambda: "someone-else")
    assert server_name(config_a) != server_name(config_b) and server_name(config_a) != alices
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    private = Path(server_name(config_a)).parent  # not a guessable name in the shared temp folder
    assert private.stat().st_mode & 0o777 == 0o700 and private.stat().st_uid == os.geteuid()


def test_a_second_launch_reaches_the_running_instance(qtbot, tmp_path, runtime_dir):
    name = server_name(tmp_path / "config.json")
    assert send_command(name, "show") is False  # nobody runs yet
    server = InstanceServer(name)
    assert server.listen()
    try:
        for command in ("show", "toggle"):
            with qtbot.waitSignal(server.command_received, timeout=5000) as received:
                assert send_command(name, command) is True
            assert received.args == [command]
    finally:
        server.close()
    assert not Path(name).exists()  # closing removes the socket, so the next launch is first again
    assert send_command(name, "show") is False


@pytest.mark.skipif(os.name != "posix", reason="the start-up lock is a POSIX flock")
def test_the_start_up_lock_is_held_by_one_launch_until_it_is_released(tmp_path, runtime_dir):
    name = server_name(tmp_path / "config.json")
    assert claim_first_launch(name) is True
    try:
        # Another launch (a separate open of the lock file, as another process makes) is refused.
        other = os.open(f"{name}.lock", os.O_RDWR)
        try:
            import fcntl

            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    finally:
        release_launch_claim(name)
    assert claim_first_launch(name) is True  # released: the next launch is the first again
    release_launch_claim(name)


@pytest.mark.skipif(os.name != "posix", reason="the start-up lock is a POSIX flock")
def test_a_launch_waits_for_an_instance_that_holds_the_lock_but_listens_only_after_its_paint(tmp_path, runtime_dir):
    """The first launch listens after its window has painted; a second launch in between must wait for
    it and deliver its command, not start a second window."""
    name = server_name(tmp_path / "config.json")
    starting = os.open(f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)  # held as another process holds it
    import fcntl

    fcntl.flock(starting, fcntl.LOCK_EX | fcntl.LOCK_NB)
    received: list[bytes] = []
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def listen_late() -> None:  # the starting instance, after its paint
        listener.bind(name)
        listener.listen(1)
        connection, _ = listener.accept()
        with connection:
            received.append(connection.makefile("rb").readline())

    timer = threading.Timer(0.3, listen_late)
    timer.start()
    try:
        assert claim_first_launch(name) is False
        assert send_command(name, "toggle") is False  # nobody listens yet: a plain attempt fails
        assert hand_over(name, "toggle", wait_s=30.0) is True
        timer.join(10)
        assert received == [b"toggle\n"]
    finally:
        timer.cancel()
        listener.close()
        os.close(starting)
    assert hand_over(name, "show", wait_s=30.0) is False  # the lock is free: nobody is starting, no wait


def test_unknown_commands_are_refused(tmp_path, runtime_dir):
    with pytest.raises(ValueError, match="unknown instance command 'quit'"):
        send_command(server_name(tmp_path / "c.json"), "quit")


def test_a_stale_socket_from_a_crashed_instance_is_replaced(qtbot, tmp_path, runtime_dir):
    name = server_name(tmp_path / "config.json")
    crashed = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    crashed.bind(name)  # bound, never listening, and left behind: what a killed instance leaves
    crashed.close()
    assert Path(name).exists()
    assert send_command(name, "show") is False
    server = InstanceServer(name)
    try:
        assert server.listen()
        with qtbot.waitSignal(server.command_received, timeout=5000) as received:
            assert send_command(name, "toggle")
        assert received.args == ["toggle"]
    finally:
        server.close()


def test_a_live_instance_is_never_cut_off(qtbot, tmp_path, runtime_dir):
    name = server_name(tmp_path / "config.json")
    first, second = InstanceServer(name), InstanceServer(name)
    assert first.listen()
    try:
        assert second.listen() is False
        with qtbot.waitSignal(first.command_received, timeout=5000) as received:
            assert send_command(name, "show")
        assert received.args == ["show"]
    finally:
        second.close()
        first.close()


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # offscreen has no window stacking
def test_show_and_toggle_act_on_the_window(qtbot):
    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    apply_instance_command(window, "toggle")
    assert not window.isVisible()
    apply_instance_command(window, "toggle")
    assert window.isVisible()
    window.hide()
    apply_instance_command(window, "show")
    assert window.isVisible()
    apply_instance_command(window, "show")  # already shown: stays shown
    assert window.isVisible()


# --- run_gui end to end (a real process: run_gui owns the QApplication's exec) ----------------------

_LAUNCHER = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow
    from nanobot_desktop.gui.shell.app import run_gui

    config, mode = sys.argv[1], sys.argv[2]

    def make_window(lifecycle):
        window = QMainWindow()
        lifecycle.instance_command.connect(
            lambda command: print(f"command {command} visible={window.isVisible()}", flush=True))

        async def cleanup():
            print("cleanup ran", flush=True)

        lifecycle.add_cleanup(cleanup)
        QTimer.singleShot(0, lambda: print(f"ready workspace={lifecycle.options.workspace}", flush=True))
        if mode == "close":
            QTimer.singleShot(0, window.close)
        if mode == "exit":  # someone ends the Qt loop directly, bypassing the lifecycle
            QTimer.singleShot(0, lambda: QApplication.instance().exit(3))
        return window

    sys.exit(run_gui("/ws", config, toggle=(mode == "toggle"), window_factory=make_window))
""")


class _Process:
    """A launcher process whose stdout lines arrive in a queue (read by a thread, so waits time out).
    stderr goes to a file, so a chatty child can never block on a full pipe."""

    def __init__(self, script: Path, config: Path, mode: str, env: dict[str, str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        with stderr_path.open("w", encoding="utf-8") as stderr:
            self.popen = subprocess.Popen(
                [sys.executable, str(script), str(config), mode], env=env, text=True,
                stdout=subprocess.PIPE, stderr=stderr,
            )
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line.strip())

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8")

    def next_line(self, timeout: float = 30.0) -> str:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            self.popen.kill()
            self.popen.wait()
            pytest.fail(f"no output from the launcher; stderr: {self.stderr()}")

    def finish(self, timeout: float = 30.0) -> int:
        try:
            return self.popen.wait(timeout=timeout)
        finally:
            self.close()

    def close(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait()
        self._reader.join(timeout=10)
        if self.popen.stdout is not None:
            self.popen.stdout.close()


@pytest.fixture
def launcher(tmp_path: Path, runtime_dir: Path):
    script = tmp_path / "launch.py"
    script.write_text(_LAUNCHER, encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": str(runtime_dir)}
    started: list[_Process] = []

    def start(config: Path, mode: str) -> _Process:
        process = _Process(script, config, mode, env, tmp_path / f"stderr-{len(started)}.txt")
        started.append(process)
        return process

    yield start
    for process in started:
        process.close()


def test_run_gui_single_instance_toggle_and_orderly_quit(tmp_path, launcher):
    config = tmp_path / "config.json"
    first = launcher(config, "toggle")  # no instance runs: --toggle starts the app normally
    assert first.next_line() == "ready workspace=/ws"

    second = launcher(config, "show")
    assert second.finish() == 0
    assert second.lines.empty()  # it never built a window
    assert first.next_line() == "command show visible=True"

    third = launcher(config, "toggle")
    assert third.finish() == 0
    assert first.next_line() == "command toggle visible=False"

    other_config = launcher(tmp_path / "other.json", "show")  # another config runs side by side
    assert other_config.next_line() == "ready workspace=/ws"
    other_config.popen.send_signal(signal.SIGTERM)
    assert other_config.next_line() == "cleanup ran"
    assert other_config.finish() == 0

    first.popen.send_signal(signal.SIGINT)  # Ctrl+C quits through the lifecycle too
    assert first.next_line() == "cleanup ran"
    assert first.finish() == 0


def test_closing_the_window_without_a_tray_quits_through_the_lifecycle(tmp_path, launcher):
    process = launcher(tmp_path / "config.json", "close")
    assert process.next_line() == "ready workspace=/ws"
    assert process.next_line() == "cleanup ran"
    assert process.finish() == 0
    assert "Traceback" not in process.stderr()


def test_a_loop_ended_behind_the_lifecycles_back_still_runs_the_cleanups(tmp_path, launcher):
    process = launcher(tmp_path / "config.json", "exit")
    assert process.next_line() == "ready workspace=/ws"
    assert process.next_line() == "cleanup ran"
    assert process.finish() == 0
    stderr = process.stderr()
    assert "Traceback" not in stderr and "never awaited" not in stderr
    assert "ended without a quit request" in stderr


def test_qapp_is_still_usable_after_these_tests(qtbot):
    # Guards the session: nothing above may have called app.exit() on the shared QApplication.
    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert isinstance(QApplication.instance(), QApplication)


def test_a_running_instance_of_a_version_before_the_application_id_is_still_found(qtbot, tmp_path, launcher):
    """Older versions listen on `nanobot-desktop-<user>-<digest>`: a launch of this version raises that
    window instead of starting a second app on the same config."""
    config = tmp_path / "config.json"
    older = InstanceServer(legacy_server_name(config))
    assert older.listen()
    try:
        with qtbot.waitSignal(older.command_received, timeout=30000) as received:
            launch = launcher(config, "show")
        assert received.args == ["show"]
        assert launch.finish() == 0
        assert launch.lines.empty()  # it never built a window
    finally:
        older.close()


@pytest.mark.skipif(os.name != "posix", reason="the start-up lock is a POSIX flock")
def test_an_update_waits_while_any_instance_runs(tmp_path, launcher):
    """A bundle switches versions only when no instance (of any config) runs from its files."""
    assert any_instance_running() is False
    running = launcher(tmp_path / "other-config.json", "show")
    assert running.next_line() == "ready workspace=/ws"
    assert any_instance_running() is True
    running.popen.send_signal(signal.SIGTERM)
    assert running.next_line() == "cleanup ran"
    assert running.finish() == 0
    assert any_instance_running() is False
