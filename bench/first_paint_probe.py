"""Start a program and print the wall-clock time of its first painted main window (for startup.py).

    python bench/first_paint_probe.py bare
    python bench/first_paint_probe.py app --config FILE --workspace DIR

`bare` is the yardstick: a QApplication and an empty QMainWindow, nothing else. `app` is nanobot
Desktop started exactly as `python -m nanobot_desktop ARGS` starts it (`nanobot_desktop.cli.main`),
with one difference: the QApplication is created a moment earlier, here, so that an application
event filter can see the first paint event of a widget inside a QMainWindow. (`run_gui` adopts an
existing QApplication.) On that paint the probe prints `FIRST-PAINT <time.time()>` and exits at once.
"""

from __future__ import annotations

import os
import sys
import time

PREFIX = "FIRST-PAINT "


def _install_first_paint_hook(app: object) -> None:
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QMainWindow, QWidget

    class FirstPaint(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget) \
                    and isinstance(watched.window(), QMainWindow):
                print(f"{PREFIX}{time.time():.6f}", flush=True)
                os._exit(0)  # the measurement is over; shutting down is not part of it
            return False

    hook = FirstPaint()
    app.installEventFilter(hook)  # type: ignore[attr-defined]
    app._first_paint_hook = hook  # type: ignore[attr-defined]  # keep it alive


def bare() -> int:
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication(sys.argv[:1])
    _install_first_paint_hook(app)
    window = QMainWindow()
    window.resize(1200, 780)
    window.show()
    return app.exec()


def nanobot_app(argv: list[str]) -> int:
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    _install_first_paint_hook(app)
    from nanobot_desktop.cli import main

    return main(argv)


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
