"""The real main window for the window benchmarks: built as the app builds it, on a qasync loop.

`open_window` makes an Engine from a config, a Lifecycle, and `MainWindow(engine, lifecycle)` with
settings in a temporary INI file (so nothing of the person's own layout is read or changed), no
tray and no background services (heartbeat and cron would only add noise), shows it offscreen at
its default size and lets it settle. Returns None when the main window does not exist yet.

The cyclic collector is managed as the app's process entry manages it (nanobot_desktop/start_up_collector.py):
held while the window is made, then what exists is frozen, and the SDK's import at the first message
is frozen by the engine itself. Without that, a full collection would walk ~1M objects the app never
walks again in the middle of a measured stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qt_support import (application, asyncio_on_qt, close_asyncio_on_qt, main_window_class, process_events_for,
                        run_coroutine, wait_until)


@dataclass
class OpenWindow:
    window: Any
    engine: Any
    lifecycle: Any
    loop: Any

    def close(self) -> None:
        """Run the window's own shutdown (engine, panels, watcher), then close the loop."""
        try:
            run_coroutine(self.window.lifetime.shutdown(), timeout_s=30)
        finally:
            self.window.hide()
            self.window.deleteLater()
            process_events_for(0.05)
            close_asyncio_on_qt(self.loop)


def open_window(config: Path, settings_file: Path) -> OpenWindow | None:
    window_class = main_window_class()
    if window_class is None:
        return None
    application()
    loop = asyncio_on_qt()
    from PySide6.QtCore import QSettings

    from nanobot_desktop import start_up_collector
    from nanobot_desktop.engine.runtime import Engine
    from nanobot_desktop.gui.shell.lifecycle import LaunchOptions, Lifecycle

    start_up_collector.hold()
    engine = Engine.open(config)
    lifecycle = Lifecycle(LaunchOptions(config=str(config)))
    settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
    window = window_class(engine, lifecycle, settings=settings, start_services=False, use_tray=False)
    window.show()
    wait_until(lambda: not window.chat.is_loading(window.current_key), 30)
    process_events_for(0.5)  # the first listing, layouts, deferred timers
    start_up_collector.release()
    return OpenWindow(window, engine, lifecycle, loop)
