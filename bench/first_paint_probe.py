"""Start a program and print the wall-clock time of its first painted main window (for startup.py).

    python bench/first_paint_probe.py bare
    python bench/first_paint_probe.py app --config FILE --workspace DIR

`bare` is the yardstick: a QApplication and an empty QMainWindow, nothing else. `app` is nanobot
Desktop started exactly as `python -m nanobot_desktop ARGS` starts it (`nanobot_desktop.cli.run`,
which creates its own QApplication), with one addition in both programs: `QMainWindow.show` puts an
event filter on the window being shown, which sees its first paint event. On that paint the probe
prints `FIRST-PAINT <time.time()>` and exits at once.
"""

from __future__ import annotations

import os
import sys
import time

PREFIX = "FIRST-PAINT "


_HOOKS: list[object] = []  # keeps the filter alive


def _install_first_paint_hook() -> None:
    """Watch the first paint of a QMainWindow through a filter on that window alone.

    An application-wide Python event filter would be called for every event of every widget
    (~1,500 before the app's first paint against ~30 for the bare window) and charge the app tens
    of milliseconds of measuring overhead; a filter on the window sees only its own events. It is
    installed as `QMainWindow.show` runs, which both programs call on their window.
    """
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QMainWindow

    class FirstPaint(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                print(f"{PREFIX}{time.time():.6f}", flush=True)
                os._exit(0)  # the measurement is over; shutting down is not part of it
            return False

    hook = FirstPaint()
    original_show = QMainWindow.show

    def show_watched(window: QMainWindow) -> None:
        window.installEventFilter(hook)
        original_show(window)

    QMainWindow.show = show_watched  # type: ignore[method-assign]
    _HOOKS.append(hook)


def bare() -> int:
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication(sys.argv[:1])
    _install_first_paint_hook()
    window = QMainWindow()
    window.resize(1200, 780)
    window.show()
    return app.exec()


def nanobot_app(argv: list[str]) -> int:
    # As `python -m nanobot_desktop` does: the command line module first, PySide6 after it. (Imported
    # the other way round, PySide's import hook would also inspect `nanobot_desktop.cli` and the
    # package, ~2.5 ms that a real start does not pay.)
    from nanobot_desktop import start_up_collector
    from nanobot_desktop.cli import run

    # `run` holds the garbage collector first thing, and a real start imports PySide6 after that; the
    # hook below needs PySide6 now, so the probe holds it here, as `run` would (a second hold is a no-op).
    start_up_collector.hold()
    _install_first_paint_hook()
    return run(argv)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "bare":
        code = bare()
    elif mode == "app":
        code = nanobot_app(sys.argv[2:])
    else:
        sys.exit("usage: first_paint_probe.py bare | app [nanobot-desktop arguments]")
    print(f"the program ended (exit {code}) without painting a main window", file=sys.stderr)
    sys.exit(code or 1)
