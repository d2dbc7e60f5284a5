"""One app per config, for real: separate processes on Xvfb, driven the way a desktop drives them.

`test_app_shell.py` checks the single-instance protocol inside one process. Here every launch is its
own `python -m nanobot_desktop` process, exactly as a desktop shortcut or a second click in the
launcher starts it: a second launch and `--toggle` must reach the running instance and exit at once,
and the window is closed the way a window manager's close button does it (WM_DELETE_WINDOW). With
a tray host (trayer), closing hides the window and the app keeps running; without one the first close\nasks whether to keep running in the background (and the Quit answer is tested in test_tray_less.py).
What the tests look at is what a person would see: whether the X window is mapped, whether the
process is alive, and its exit code. Each test starts its own Xvfb, and every process it starts
is stopped by its PID in a `finally`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from nanobot_desktop.identity import APP_ID

from tests.fake_openai import write_fake_config
from tests.gui.xvfb_support import (
    X_TOOLS, map_state, missing_binaries, request_close, screenshot, start_tray_host, start_xvfb, stop_process,
    visible_windows, wait_for_map_state, wait_for_visible_window, wait_until,
)

pytestmark = [
    pytest.mark.xvfb,
    pytest.mark.skipif(bool(missing_binaries(*X_TOOLS)),
                       reason=f"needs {', '.join(missing_binaries(*X_TOOLS))} "
                              "(apt-get install xvfb xdotool x11-utils) to run the app in a real X server"),
]

REPO = Path(__file__).resolve().parents[3]
MAIN_WINDOW = "^nanobot — "
"""The main window's title is "nanobot — <session> — nanobot Desktop"; nothing else starts with it."""
STARTUP_TIMEOUT_S = 20.0
COMMAND_TIMEOUT_S = 15.0
"""A second launch must hand over and exit well within this (it takes about a second here)."""
"""Screenshots for a person to look at are saved here only when the folder already exists."""


@dataclass
class Desktop:
    """An Xvfb display plus the app processes started on it (all stopped at the end of the test)."""

    display: str
    env: dict[str, str]
    folder: Path
    runtime_dir: Path
    base_url: str
    processes: list[subprocess.Popen] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    _logs: dict[int, Path] = field(default_factory=dict)

    def config(self, name: str = "a") -> Path:
        return write_fake_config(self.folder / name / ".nanobot" / "config.json", self.base_url,
                                 self.folder / name / "workspace")

    def command(self, config: Path, *extra: str) -> list[str]:
        return [sys.executable, "-m", "nanobot_desktop", "--config", str(config), *extra]

    def launch(self, config: Path, *extra: str) -> subprocess.Popen:
        """Start an app process that keeps running (its output goes to a file, never a pipe that fills)."""
        log = self.folder / f"launch-{len(self.processes)}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(self.command(config, *extra), env=self.env, cwd=REPO,
                                       stdout=output, stderr=subprocess.STDOUT)
        self.processes.append(process)
        self._logs[process.pid] = log
        return process

    def run(self, config: Path, *extra: str, label: str) -> subprocess.CompletedProcess:
        """A launch that must hand its command to the running instance and exit 0 at once."""
        started = time.monotonic()
        try:
            run = subprocess.run(self.command(config, *extra), env=self.env, cwd=REPO, capture_output=True,
                                 text=True, timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired as expired:
            pytest.fail(f"{label}: the launch did not exit within {COMMAND_TIMEOUT_S:.0f} s, so it did not reach "
                        f"the running instance (it started its own?)\n{self.output(expired)}")
        self.timings[label] = time.monotonic() - started
        assert run.returncode == 0, f"{label}: exit code {run.returncode}\n{run.stdout}\n{run.stderr[-3000:]}"
        return run

    def main_window(self, process: subprocess.Popen, exclude: tuple[int, ...] = ()) -> int:
        started = time.monotonic()
        try:
            window = wait_for_visible_window(self.display, MAIN_WINDOW, STARTUP_TIMEOUT_S,
                                             alive=lambda: process.poll() is None, exclude=exclude)
        except pytest.fail.Exception as failure:
            raise AssertionError(f"{failure}\n--- app output ---\n{self.log_of(process)}") from None
        self.timings.setdefault("first window mapped", time.monotonic() - started)
        return window

    def sockets(self) -> list[Path]:
        """The single-instance sockets of every instance running now (XDG_RUNTIME_DIR is ours); the
        start-up lock files beside them (`<socket>.lock`, kept empty between runs) are not sockets."""
        return sorted(path for path in self.runtime_dir.glob(f"{APP_ID}-*") if path.is_socket())

    def start_tray(self) -> subprocess.Popen:
        """trayer owning the tray, stopped last (after the apps)."""
        trayer = start_tray_host(self.env, self.display, self.folder / "trayer.log")
        self.processes.insert(0, trayer)
        return trayer

    def log_of(self, process: subprocess.Popen) -> str:
        path = self._logs.get(process.pid)
        text = path.read_text(encoding="utf-8", errors="replace") if path and path.exists() else ""
        app_logs = sorted(self.folder.glob("*/.nanobot/**/*.log"))
        for app_log in app_logs:
            text += f"\n--- {app_log.name} ---\n" + app_log.read_text(encoding="utf-8", errors="replace")[-3000:]
        return text[-6000:]

    @staticmethod
    def output(expired: subprocess.TimeoutExpired) -> str:
        parts = [part.decode(errors="replace") if isinstance(part, bytes) else (part or "")
                 for part in (expired.stdout, expired.stderr)]
        return "\n".join(parts)[-3000:]

    def quit(self, process: subprocess.Popen) -> int:
        """SIGTERM (the app routes it to its orderly shutdown) and the exit code."""
        process.terminate()
        try:
            return process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            pytest.fail(f"the app did not quit within 20 s of SIGTERM\n{self.log_of(process)}")


@pytest.fixture
def desktop(fake_openai, tmp_path):
    # The socket path must stay under the 108-byte limit of a Unix socket address: tmp_path is too deep.
    runtime_dir = Path(tempfile.mkdtemp(prefix="nb-run-"))
    runtime_dir.chmod(0o700)
    xvfb = None
    desk = None
    try:
        xvfb, display = start_xvfb("1280x1024x24")
        env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
        env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(tmp_path / "home"),
                   XDG_RUNTIME_DIR=str(runtime_dir), PYTHONPATH=str(REPO))
        env.pop("XDG_CONFIG_HOME", None)
        desk = Desktop(display=display, env=env, folder=tmp_path, runtime_dir=runtime_dir,
                       base_url=fake_openai.base_url)
        yield desk
    finally:
        if desk is not None:
            for process in reversed(desk.processes):
                stop_process(process, timeout=10)
            if desk.timings:
                print("timings: " + ", ".join(f"{label} {seconds:.2f} s" for label, seconds in desk.timings.items()))
        stop_process(xvfb)
        shutil.rmtree(runtime_dir, ignore_errors=True)


@pytest.mark.slow
def test_toggle_and_a_second_launch_reach_the_running_instance(desktop):
    config = desktop.config()
    app = desktop.launch(config)
    window = desktop.main_window(app)
    assert len(desktop.sockets()) == 1

    desktop.run(config, "--toggle", label="--toggle (hide)")
    wait_for_map_state(desktop.display, window, "IsUnMapped")
    assert app.poll() is None, "hiding the window must not quit the app"

    desktop.run(config, "--toggle", label="--toggle (show)")
    wait_for_map_state(desktop.display, window, "IsViewable")

    desktop.run(config, "--toggle", label="--toggle (hide again)")
    wait_for_map_state(desktop.display, window, "IsUnMapped")
    desktop.run(config, label="second launch (window hidden)")
    wait_for_map_state(desktop.display, window, "IsViewable")

    # A second launch only ever shows: had it toggled, the next --toggle would show, not hide.
    desktop.run(config, label="second launch (window shown)")
    assert visible_windows(desktop.display, MAIN_WINDOW) == [window], "one instance, one main window"
    desktop.run(config, "--toggle", label="--toggle after the second launch")
    wait_for_map_state(desktop.display, window, "IsUnMapped")

    assert app.poll() is None
    assert len(desktop.sockets()) == 1, "the later launches must not have started instances of their own"
    assert desktop.quit(app) == 0


KEEP_RUNNING_QUESTION = "^Keep nanobot running"


def answer_question(display: str, question: int, key: str) -> None:
    """Focus the question box and press `key` there, as a person at the keyboard would."""
    env = {**os.environ, "DISPLAY": display}
    subprocess.run(["xdotool", "windowfocus", "--sync", str(question)], env=env, check=True, timeout=10)
    subprocess.run(["xdotool", "key", key], env=env, check=True, timeout=10)


@pytest.mark.slow
def test_without_a_tray_closing_asks_once_keeps_running_and_toggle_shows_the_window(desktop):
    config = desktop.config()
    app = desktop.launch(config)
    window = desktop.main_window(app)

    request_close(desktop.display, window)
    question = wait_for_visible_window(desktop.display, KEEP_RUNNING_QUESTION, COMMAND_TIMEOUT_S,
                                       alive=lambda: app.poll() is None)
    answer_question(desktop.display, question, "Return")  # the default button: Keep running
    wait_for_map_state(desktop.display, window, "IsUnMapped")
    assert app.poll() is None, f"'Keep running' must keep the app running\n{desktop.log_of(app)}"
    assert len(desktop.sockets()) == 1

    desktop.run(config, "--toggle", label="--toggle (show, no tray)")
    wait_for_map_state(desktop.display, window, "IsViewable")

    request_close(desktop.display, window)  # asked once: now it goes to the background at once
    wait_for_map_state(desktop.display, window, "IsUnMapped")
    assert visible_windows(desktop.display, KEEP_RUNNING_QUESTION) == []
    assert app.poll() is None
    desktop.run(config, label="second launch (background, no tray)")
    wait_for_map_state(desktop.display, window, "IsViewable")
    assert desktop.quit(app) == 0


@pytest.mark.heavy
@pytest.mark.slow
def test_another_config_runs_its_own_instance(desktop):
    first_config, second_config = desktop.config("a"), desktop.config("b")
    first = desktop.launch(first_config)
    first_window = desktop.main_window(first)
    second = desktop.launch(second_config)
    second_window = desktop.main_window(second, exclude=(first_window,))
    assert len(desktop.sockets()) == 2

    desktop.run(second_config, "--toggle", label="--toggle (second config)")
    wait_for_map_state(desktop.display, second_window, "IsUnMapped")
    assert map_state(desktop.display, first_window) == "IsViewable", "each config toggles only its own window"
    assert first.poll() is None and second.poll() is None
    assert desktop.quit(second) == 0
    assert desktop.quit(first) == 0


@pytest.mark.heavy
@pytest.mark.slow
def test_a_crashed_instance_does_not_block_the_next_launch(desktop):
    config = desktop.config()
    crashed = desktop.launch(config)
    desktop.main_window(crashed)
    crashed.kill()  # no cleanup runs: the socket file stays behind
    crashed.wait()
    assert len(desktop.sockets()) == 1

    fresh = desktop.launch(config)
    window = desktop.main_window(fresh)
    desktop.run(config, "--toggle", label="--toggle (after a crash)")
    wait_for_map_state(desktop.display, window, "IsUnMapped")
    assert fresh.poll() is None
    assert desktop.quit(fresh) == 0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("trayer") is None, reason="needs trayer (apt-get install trayer) as a tray host")
def test_with_a_tray_closing_hides_the_window_and_toggle_brings_it_back(desktop, tmp_path):
    desktop.start_tray()
    config = desktop.config()
    app = desktop.launch(config)
    window = desktop.main_window(app)
    settings_file = Path(desktop.env["HOME"]) / ".config" / "nanobot-desktop" / "nanobot Desktop.conf"  # identity.py

    request_close(desktop.display, window)
    wait_for_map_state(desktop.display, window, "IsUnMapped")
    # The one-time "still running in the tray" notice is remembered, so it is not shown again.
    wait_until(lambda: settings_file.exists() and "closeNoticeShown=true" in settings_file.read_text(),
               10, "the close-to-tray notice to be recorded")
    screenshot(desktop.display, tmp_path / "closed_to_tray.png")

    # The app kept running: --toggle hands over (exits at once) and the same window comes back.
    desktop.run(config, "--toggle", label="--toggle (back from the tray)")
    wait_for_map_state(desktop.display, window, "IsViewable")
    assert app.poll() is None
    screenshot(desktop.display, tmp_path / "toggle.png")

    request_close(desktop.display, window)  # closing again hides again; the notice is not repeated
    wait_for_map_state(desktop.display, window, "IsUnMapped")
    desktop.run(config, label="second launch (hidden in the tray)")
    wait_for_map_state(desktop.display, window, "IsViewable")
    assert app.poll() is None
    assert len(desktop.sockets()) == 1
    assert desktop.quit(app) == 0
