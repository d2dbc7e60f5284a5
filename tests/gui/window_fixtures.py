"""Shared pieces of the main-window tests: a real MainWindow on a real Engine wired to the fake endpoint.

`open_window(...)` builds a window (tray off unless asked, services not started, a private QSettings
file) and quits its lifecycle at teardown, so the engine, the watcher and every panel are shut down
the way the app does it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from PySide6.QtCore import QSettings, Qt

from nanobot_desktop.gui.shell.lifecycle import Lifecycle
from nanobot_desktop.gui.window.main_window import MainWindow

WAIT_MS = 10_000


@pytest.fixture
def open_window(qtbot: Any, qloop: Any, make_engine: Any, tmp_path: Path) -> Iterator[Callable[..., MainWindow]]:
    built: list[tuple[MainWindow, Lifecycle]] = []

    def build(engine: Any = None, *, settings_file: Path | None = None, **kwargs: Any) -> MainWindow:
        engine = engine if engine is not None else make_engine()
        settings = QSettings(str(settings_file or tmp_path / "window.ini"), QSettings.Format.IniFormat)
        lifecycle = Lifecycle()
        kwargs.setdefault("start_services", False)
        window = MainWindow(engine, lifecycle, settings=settings, **kwargs)
        window.show()
        qtbot.waitExposed(window)
        built.append((window, lifecycle))
        return window

    yield build
    # Not qtbot.addWidget: pytest-qt would close and delete the window before this teardown, so the
    # app's shutdown (which needs the panels) would find them gone.
    for _window, lifecycle in built:
        if not lifecycle.is_quitting:
            lifecycle.request_quit()
    for window, lifecycle in built:
        qtbot.waitUntil(lambda lc=lifecycle: lc.is_finished, timeout=20_000)
        window.close()
        window.deleteLater()


def send(qtbot: Any, window: MainWindow, text: str) -> None:
    """Type into the composer and press Enter, as a person does."""
    window.composer.edit.setFocus()
    qtbot.keyClicks(window.composer.edit, text)
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)


def wait_idle(qtbot: Any, window: MainWindow, key: str | None = None) -> None:
    session = key or window.current_key
    qtbot.waitUntil(lambda: not window.chat.is_busy(session) and not window.chat.is_loading(session)
                    and not (session == window.current_key and window.composer.busy), timeout=WAIT_MS)


def session_lines(window: MainWindow, key: str | None = None) -> list[dict[str, Any]]:
    """The session file's lines as JSON (metadata line first)."""
    path = window.engine.sessions.path_for(key or window.current_key)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def kinds(window: MainWindow) -> list[str]:
    return [item.kind for item in window.chat.model.items()]
