"""A real MainWindow in a process of its own, for what the test process cannot give it: a screen of
another size or scale (QT_SCALE_FACTOR, an offscreen screen file read at start), a heap of its own,
an app whose Qt objects outlive no earlier test. Used by the tests that start such a process and by
docs/screenshots.py.

In the child (a script run with `python -c`): `run_and_print(main)` makes the QApplication and the
qasync loop, runs `main(Path(sys.argv[1]))` to its end and prints its result as one JSON line;
`open_window` and `close_window` build the window on an engine as the app does and quit it through
its lifecycle; `until` waits on the running loop. In the test: `run_window_script` starts the child
and returns what it printed.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.window.main_window import MainWindow

REPO = Path(__file__).resolve().parents[2]
POLL_S = 0.05


async def until(check: Callable[[], object], seconds: float = 20.0, what: str = "the window did not get there") -> None:
    """Wait on the running loop until `check()` is true; TimeoutError(`what`) after `seconds`."""
    for _ in range(int(seconds / POLL_S)):
        if check():
            return
        await asyncio.sleep(POLL_S)
    raise TimeoutError(what)


def open_window(engine: Engine, home: Path, settings: QSettings | None = None) -> tuple[MainWindow, Lifecycle]:
    """The main window on `engine`, its layout kept in home/window.ini, without the tray and the
    background services (heartbeat, cron): what these processes look at is the window."""
    from PySide6.QtCore import QSettings

    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.window.main_window import MainWindow

    lifecycle = Lifecycle()
    if settings is None:
        settings = QSettings(str(home / "window.ini"), QSettings.Format.IniFormat)
    window = MainWindow(engine, lifecycle, settings=settings, start_services=False, use_tray=False)
    return window, lifecycle


async def close_window(window: MainWindow, lifecycle: Lifecycle) -> None:
    """Quit as the app does (the lifecycle's cleanups, the engine shut down), then close the window."""
    lifecycle.request_quit()
    await until(lambda: lifecycle.is_finished, what="the window did not finish quitting")
    window.close()


def run_in_loop(main: Awaitable[Any], theme: str | None = None) -> Any:
    """A QApplication (in `theme` when given) and a qasync loop; `main` run on it to its end."""
    from PySide6.QtWidgets import QApplication

    from nanobot_desktop.gui.common.qt_asyncio import QtAsyncioLoop

    app = QApplication([])
    if theme is not None:
        from nanobot_desktop.gui.common.theme import apply_theme

        apply_theme(app, theme)
    loop = QtAsyncioLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        return loop.run_until_complete(main)


def run_and_print(main: Callable[[Path], Awaitable[Any]]) -> None:
    """The child's whole run: `main(Path(sys.argv[1]))` in a fresh app, its result printed as JSON."""
    print(json.dumps(run_in_loop(main(Path(sys.argv[1])))), flush=True)


def run_window_script(script: str, argument: Path, env: dict[str, str], timeout: float = 120.0) -> Any:
    """Run `script` in a fresh Python with `argument` as its one argument (the repository importable,
    offscreen unless `env` says otherwise); the JSON of its last line of output. A failed run fails
    the test with the end of its error output."""
    env = {"QT_QPA_PLATFORM": "offscreen", **env, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script, str(argument)], env={**os.environ, **env}, cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
