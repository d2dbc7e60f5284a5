"""The real app on Xvfb with a session bus and the AT-SPI bus, read from outside as a screen reader does.

`AtspiDesktop` starts Xvfb, a private D-Bus session bus (`dbus-launch`), the accessibility bus
(`at-spi-bus-launcher`) and the app (`python -m nanobot_desktop`) with Qt's AT-SPI bridge switched on.
The tree is read by tests/gui/atspi_reader.py under Debian's `/usr/bin/python3` (python3-pyatspi), a
separate process like Orca; keys are typed with xdotool into the X server, as a keyboard would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.fake_openai import write_fake_config
from tests.gui.xvfb_support import start_xvfb, stop_process, wait_for_visible_window, wait_until

REPO = Path(__file__).resolve().parents[2]
READER = Path(__file__).with_name("atspi_reader.py")
SYSTEM_PYTHON = "/usr/bin/python3"
BUS_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
APP_NAME = "nanobot Desktop"
MAIN_WINDOW = "^nanobot — "


def atspi_missing() -> str | None:
    """Why the AT-SPI tests cannot run here (None when they can)."""
    needed = [tool for tool in ("Xvfb", "xdotool", "dbus-launch") if shutil.which(tool) is None]
    if not Path(BUS_LAUNCHER).exists():
        needed.append("at-spi2-core")
    if subprocess.run([SYSTEM_PYTHON, "-c", "import pyatspi"], capture_output=True).returncode != 0 \
            if Path(SYSTEM_PYTHON).exists() else True:
        needed.append("python3-pyatspi")
    return f"needs {', '.join(needed)} (python3 dev.py test installs them)" if needed else None


@dataclass
class AtspiDesktop:
    """An Xvfb display with a session bus and the accessibility bus, and the app once launched."""

    display: str
    env: dict[str, str]
    folder: Path
    processes: list[subprocess.Popen] = field(default_factory=list)
    app: subprocess.Popen | None = None
    window: int = 0
    config_path: Path | None = None

    def launch(self, base_url: str, settings: dict[str, str] | None = None) -> int:
        """Start the app on a config talking to `base_url`; the X id of its main window once mapped."""
        self.config_path = write_fake_config(self.folder / "home" / ".nanobot" / "config.json", base_url,
                                             self.folder / "workspace")
        if settings:
            ini = self.folder / "home" / ".config" / "nanobot" / "nanobot Desktop.conf"
            ini.parent.mkdir(parents=True, exist_ok=True)
            ini.write_text("[General]\n" + "".join(f"{key}={value}\n" for key, value in settings.items()))
        log = (self.folder / "app.log").open("wb")
        self.app = subprocess.Popen([sys.executable, "-m", "nanobot_desktop", "--config", str(self.config_path)],
                                    env=self.env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(self.app)
        try:
            self.window = wait_for_visible_window(self.display, MAIN_WINDOW, 30,
                                                  alive=lambda: self.app is not None and self.app.poll() is None)
        except pytest.fail.Exception as failure:
            raise AssertionError(f"{failure}\n{self.app_log()}") from None
        self.xdotool("windowfocus", "--sync", str(self.window))
        return self.window

    def app_log(self) -> str:
        path = self.folder / "app.log"
        return path.read_text(encoding="utf-8", errors="replace")[-4000:] if path.exists() else ""

    def xdotool(self, *args: str) -> str:
        run = subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=20)
        assert run.returncode == 0, f"xdotool {' '.join(args)}: {run.stderr}"
        return run.stdout

    def keys(self, *keys: str) -> None:
        """Press keys as a keyboard does (xdotool key names: "ctrl+shift+a", "Tab", "Return")."""
        for key in keys:
            self.xdotool("key", "--clearmodifiers", key)
            time.sleep(0.05)  # xdotool returns at once; X delivers in order, Qt needs a turn per key

    def type(self, text: str) -> None:
        self.xdotool("type", "--delay", "15", text)

    def tree(self) -> list[dict[str, Any]]:
        """Every object of the app, as the AT-SPI registry gives it to a screen reader."""
        run = subprocess.run([SYSTEM_PYTHON, str(READER), "dump", APP_NAME], env=self.env, capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 0, f"the AT-SPI reader failed: {run.stderr[-2000:]}"
        data = json.loads(run.stdout)
        assert APP_NAME in data["apps"], f"the app is not on the AT-SPI bus (apps: {data['apps']})\n{self.app_log()}"
        return list(data["objects"])

    def wait_tree(self, condition: Callable[[list[dict[str, Any]]], bool], what: str,
                  timeout: float = 30) -> list[dict[str, Any]]:
        found: list[list[dict[str, Any]]] = []

        def check() -> bool:
            found[:] = [self.tree()]
            return condition(found[0])

        wait_until(check, timeout, what, interval=0.2)
        return found[0]

    def listen(self, seconds: float) -> "Listener":
        return Listener(self, seconds)


class Listener:
    """A separate AT-SPI client hearing `object:announcement` events for `seconds`."""

    def __init__(self, desktop: AtspiDesktop, seconds: float) -> None:
        self.process = subprocess.Popen([SYSTEM_PYTHON, str(READER), "listen", str(seconds)], env=desktop.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        desktop.processes.append(self.process)
        assert self.process.stdout is not None
        ready = self.process.stdout.readline().strip()
        assert ready == "READY", f"the listener did not start: {ready!r} {self.process.stderr.read() if self.process.stderr else ''}"

    def heard(self) -> list[str]:
        """Every announcement's text heard so far (the listener is stopped: it prints each at once)."""
        if self.process.poll() is None:
            self.process.terminate()
        out, _err = self.process.communicate(timeout=60)
        return [json.loads(line)["text"] for line in out.splitlines() if line.startswith("{")]


def unnamed_focusable(objects: list[dict[str, Any]], *, under: str = "") -> list[dict[str, Any]]:
    """Objects a keyboard can reach (focusable and showing) that a screen reader could only call by role."""
    return [obj for obj in objects
            if obj.get("path", "").startswith(under) and "focusable" in obj.get("states", [])
            and "showing" in obj.get("states", []) and not str(obj.get("name", "")).strip()]


def focused(objects: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The object with the keyboard focus. Qt marks a view's current item "focused" even while the
    view itself is not, so an item counts only when its view has the focus too."""
    by_path = {obj.get("path"): obj for obj in objects}
    for obj in objects:
        if "focused" not in obj.get("states", []):
            continue
        if obj.get("role") in ("table cell", "list item", "tree item", "page tab"):
            view = by_path.get(str(obj["path"]).rsplit("/", 1)[0], {})
            if "focused" not in view.get("states", []):
                continue
        return obj
    return None


def window_path(objects: list[dict[str, Any]], name_regex: str) -> str:
    """The path of the top-level window (a frame or dialog child of the app) whose name matches."""
    for obj in objects:
        if obj.get("path", "").count("/") == 1 and re.search(name_regex, str(obj.get("name", ""))):
            return str(obj["path"])
    names = [obj.get("name") for obj in objects if obj.get("path", "").count("/") == 1]
    raise AssertionError(f"no window matching {name_regex!r} (windows: {names})")


def start_atspi_desktop(tmp_path: Path) -> Iterator[AtspiDesktop]:
    """Yield a ready desktop (Xvfb + session bus + AT-SPI bus); stop every process started, in reverse."""
    runtime_dir = Path(tempfile.mkdtemp(prefix="nb-a11y-"))  # short: the single-instance socket lives here
    runtime_dir.chmod(0o700)
    xvfb, display = start_xvfb("1280x1024x24")
    processes: list[subprocess.Popen] = []
    desk: AtspiDesktop | None = None
    try:
        env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
        env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(tmp_path / "home"),
                   XDG_RUNTIME_DIR=str(runtime_dir), XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
                   PYTHONPATH=str(REPO), QT_ACCESSIBILITY="1", QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
                   NO_AT_BRIDGE="0", GTK_MODULES="")
        bus = subprocess.run(["dbus-launch", "--sh-syntax"], env=env, capture_output=True, text=True, timeout=20)
        assert bus.returncode == 0, bus.stderr
        for name in ("DBUS_SESSION_BUS_ADDRESS", "DBUS_SESSION_BUS_PID"):
            match = re.search(rf"{name}='?([^';\n]*)", bus.stdout)
            assert match, bus.stdout
            env[name] = match.group(1)
        bus_pid = int(env["DBUS_SESSION_BUS_PID"])
        launcher = subprocess.Popen([BUS_LAUNCHER, "--launch-immediately"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(launcher)
        desk = AtspiDesktop(display=display, env=env, folder=tmp_path, processes=processes)
        yield desk
    finally:
        for process in reversed(processes):
            if process.stdout is not None:
                process.stdout.close()
            if process.stderr is not None:
                process.stderr.close()
            stop_process(process, timeout=15)
        if "bus_pid" in locals():
            try:
                os.kill(bus_pid, 15)
            except ProcessLookupError:
                pass
        stop_process(xvfb)
        shutil.rmtree(runtime_dir, ignore_errors=True)
