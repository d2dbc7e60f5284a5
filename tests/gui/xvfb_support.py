"""Real X for the `xvfb` tests: start/stop Xvfb and trayer, find windows, close them like a window manager.

Every helper drives the X server from outside the app (xdotool, xwininfo, Xlib through ctypes), so
a test sees exactly what a person's desktop would see: a window mapped or not, a process alive or not.
Xvfb picks a free display itself (`-displayfd`), so parallel runs never collide.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest

X_TOOLS = ("Xvfb", "xdotool", "xwininfo")


def missing_binaries(*names: str) -> list[str]:
    return [name for name in names if shutil.which(name) is None]


def start_xvfb(screen: str = "1024x768x24") -> tuple[subprocess.Popen, str]:
    """(the Xvfb process, its DISPLAY value) once it accepts clients."""
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", screen, "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    number = b""
    with os.fdopen(read_fd, "rb") as reader:  # Xvfb writes the display number once it accepts clients
        while not number.endswith(b"\n"):
            chunk = reader.read(1)
            if not chunk:
                break
            number += chunk
    if not number.strip():
        stop_process(xvfb)
        pytest.fail("Xvfb did not start (no display number reported)")
    return xvfb, ":" + number.decode().strip()


def start_tray_host(env: dict[str, str], display: str, log: Path) -> subprocess.Popen:
    """trayer as the tray host in the top-right corner, once it owns the tray (then
    `QSystemTrayIcon.isSystemTrayAvailable()` is True). Once, in a parallel run, it exited at once (its
    stderr was not kept then): a second start is allowed, and what it said on stderr (`log`) is in the failure."""
    for _attempt in range(2):
        with open(log, "ab") as stderr:
            trayer = subprocess.Popen(["trayer", "--edge", "top", "--align", "right", "--widthtype", "pixel",
                                       "--width", "120", "--height", "28", "--transparent", "false",
                                       "--tint", "0x334455"], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            wait_until(lambda: trayer.poll() is not None or tray_host_running(display),  # noqa: B023 - this attempt's
                       10, "trayer to own the tray")
        except BaseException:
            stop_process(trayer)
            raise
        if trayer.poll() is None:
            return trayer
    raise AssertionError(f"trayer exited at once, twice (exit code {trayer.returncode}):\n"
                         f"{log.read_text(errors='replace')[-2000:]}")


def stop_process(process: subprocess.Popen | None, timeout: float = 5.0) -> None:
    """Terminate (then kill) one process we started; a no-op when it already exited."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until(condition: Callable[[], object], timeout: float, what: str, interval: float = 0.05) -> None:
    """Poll `condition` until it holds; fail the test naming `what` when `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


# --- windows, through xdotool / xwininfo ----------------------------------------------------------

def visible_windows(display: str, name_regex: str) -> list[int]:
    """Ids of the mapped windows whose title matches `name_regex` (xdotool's regex syntax)."""
    run = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", name_regex],
                         env={**os.environ, "DISPLAY": display}, capture_output=True, text=True, timeout=10)
    return [int(line) for line in run.stdout.split()]


def wait_for_visible_window(display: str, name_regex: str, timeout: float, *,
                            alive: Callable[[], bool] = lambda: True, exclude: tuple[int, ...] = ()) -> int:
    """The id of the first mapped window matching `name_regex` that is not in `exclude`.

    `alive` lets the caller stop waiting as soon as the process that should show it has died.
    """
    found: list[int] = []

    def appeared() -> bool:
        if not alive():
            pytest.fail(f"the process exited before a window matching {name_regex!r} appeared")
        found[:] = [window for window in visible_windows(display, name_regex) if window not in exclude]
        return bool(found)

    wait_until(appeared, timeout, f"a visible window matching {name_regex!r}", interval=0.1)
    return found[0]


def map_state(display: str, window: int) -> str:
    """xwininfo's "Map State" ("IsViewable", "IsUnMapped", "IsUnviewable"), or "gone" once destroyed."""
    run = subprocess.run(["xwininfo", "-id", str(window)], env={**os.environ, "DISPLAY": display},
                         capture_output=True, text=True, timeout=10)
    match = re.search(r"Map State:\s*(\w+)", run.stdout)
    return match.group(1) if run.returncode == 0 and match else "gone"


def wait_for_map_state(display: str, window: int, state: str, timeout: float = 10.0) -> None:
    wait_until(lambda: map_state(display, window) == state, timeout, f"window {window} to become {state}")


def screenshot(display: str, path: os.PathLike[str] | str) -> bool:
    """The whole screen as a PNG (ImageMagick's `import`); False when ImageMagick is missing."""
    if shutil.which("import") is None:
        return False
    run = subprocess.run(["import", "-window", "root", str(path)], env={**os.environ, "DISPLAY": display},
                         capture_output=True, timeout=20)
    return run.returncode == 0


# --- what a window manager does, through Xlib -----------------------------------------------------

class _XClientMessageEvent(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("data", ctypes.c_long * 5)]


class _XEvent(ctypes.Union):
    _fields_ = [("xclient", _XClientMessageEvent), ("pad", ctypes.c_long * 24)]


_CLIENT_MESSAGE = 33


def _xlib() -> ctypes.CDLL:
    name = ctypes.util.find_library("X11")
    if name is None:
        pytest.skip("needs libX11 to talk to the X server directly")
    lib = ctypes.CDLL(name)
    lib.XOpenDisplay.restype = ctypes.c_void_p
    lib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    lib.XInternAtom.restype = ctypes.c_ulong
    lib.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.XGetSelectionOwner.restype = ctypes.c_ulong
    lib.XGetSelectionOwner.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    lib.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long,
                               ctypes.POINTER(_XEvent)]
    lib.XFlush.argtypes = [ctypes.c_void_p]
    lib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    return lib


class _Connection:
    def __init__(self, display: str) -> None:
        self.lib = _xlib()
        self.handle = self.lib.XOpenDisplay(display.encode())
        if not self.handle:
            pytest.fail(f"cannot open X display {display}")

    def atom(self, name: str) -> int:
        return self.lib.XInternAtom(self.handle, name.encode(), 0)

    def __enter__(self) -> "_Connection":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.lib.XCloseDisplay(self.handle)


def request_close(display: str, window: int) -> None:
    """Ask `window` to close the way a window manager's close button does (WM_DELETE_WINDOW).

    Xvfb has no window manager, and xdotool's `windowkill`/`windowclose` destroy the client or the
    window instead of asking it, which is not what a person closing the window does.
    """
    with _Connection(display) as x:
        event = _XEvent()
        event.xclient.type = _CLIENT_MESSAGE
        event.xclient.window = window
        event.xclient.message_type = x.atom("WM_PROTOCOLS")
        event.xclient.format = 32
        event.xclient.data[0] = x.atom("WM_DELETE_WINDOW")
        event.xclient.data[1] = 0  # CurrentTime
        if not x.lib.XSendEvent(x.handle, window, 0, 0, ctypes.byref(event)):
            pytest.fail(f"could not send WM_DELETE_WINDOW to window {window}")
        x.lib.XFlush(x.handle)


def tray_host_running(display: str, screen: int = 0) -> bool:
    """True once a tray host owns the system-tray selection (the freedesktop tray spec's test)."""
    with _Connection(display) as x:
        return x.lib.XGetSelectionOwner(x.handle, x.atom(f"_NET_SYSTEM_TRAY_S{screen}")) != 0
