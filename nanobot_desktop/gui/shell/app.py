"""Start the desktop app: one QApplication, one qasync loop, one instance per user and config.

`run_gui` is the only entry point. The main window is not built here: a
`window_factory(lifecycle)` returns it (or an awaitable of it, so first-run setup can come first;
None means "quit"), registers its tasks and cleanups on the lifecycle (see lifecycle.py) and reads
the command line's paths from `lifecycle.options`.

The default (no factory given) paints first: the main window's frame (menus, docks in their saved
places, status bar) is shown and painted before asyncio, qasync, the engine and its pydantic config
models are even imported; `startup.create_main_window` then opens the engine into it.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Sequence

from PySide6.QtWidgets import QApplication

from nanobot_desktop import start_up_collector
from nanobot_desktop.identity import APP_ID, APP_NAME, ORGANIZATION
from nanobot_desktop.gui.common.i18n import install_saved_language
from nanobot_desktop.gui.shell.application import DesktopApplication
from nanobot_desktop.gui.shell.single_instance import (
    STARTING_INSTANCE_WAIT_S, InstanceEndpointError, InstanceServer, apply_instance_command, claim_first_launch,
    endpoint_problem, hand_over, legacy_server_name, release_launch_claim, send_command, server_name,
)
from nanobot_desktop.gui.common.theme import FUSION, STYLE_CHOSEN_AT_START, apply_theme, current_theme_mode

if TYPE_CHECKING:
    from nanobot_desktop.gui.shell.lifecycle import Lifecycle, WindowFactory
    from nanobot_desktop.gui.window.main_window import MainWindow

# asyncio, qasync and the lifecycle are imported in run_gui, after the frame has painted.

__all__ = ["APP_NAME", "apply_instance_command", "apply_saved_theme", "create_application", "run_gui"]

log = logging.getLogger(__name__)

LEGACY_ORGANIZATION = "nanobot"  # QSettings' organization before 0.2: carried over once (_carry_over_settings)
DESKTOP_FILE = APP_ID  # the menu entry is <APP_ID>.desktop (Wayland matches windows to it by this name)
_EXTRA_SPIN_TIMEOUT_S = 30.0



def create_application(argv: Sequence[str] | None = None) -> DesktopApplication:
    """The process's QApplication with the names that settings paths and the desktop entry use."""
    app = QApplication.instance()
    if app is None:
        # Fusion from the start (Qt's own `-style` option): choosing it later (apply_theme) would first
        # ask for the current style, whose Python type costs ~5 ms before the first paint.
        app = DesktopApplication([*(argv if argv is not None else sys.argv[:1]), "-style", FUSION])
        app.setProperty(STYLE_CHOSEN_AT_START, FUSION)
    if not isinstance(app, DesktopApplication):  # the lifecycle's quit routing needs the app's own class
        raise TypeError(f"a {type(app).__name__} was made before the app's DesktopApplication")
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setOrganizationName(ORGANIZATION)
    app.setDesktopFileName(DESKTOP_FILE)
    _set_windows_app_id()
    _carry_over_settings()
    return app


def _carry_over_settings() -> None:
    """The window layout and one-time notices, saved by earlier versions under the organization name
    "nanobot" (a name macOS and Windows would share with upstream's folder), move under ours once."""
    from PySide6.QtCore import QSettings

    ours = QSettings()
    if ours.allKeys():
        return
    earlier = QSettings(LEGACY_ORGANIZATION, APP_NAME)
    keys = earlier.allKeys()
    for key in keys:
        ours.setValue(key, earlier.value(key))
    if keys:
        ours.sync()
        log.info("carried %d window settings over from the organization name %r", len(keys), LEGACY_ORGANIZATION)


def _set_windows_app_id() -> None:
    """Windows groups taskbar buttons and toasts by AppUserModelID: ours, never python.exe's."""
    if sys.platform == "win32":
        import ctypes

        ctypes.windll.shell32.SetCurrentProcessExplicitAppUserModelID(APP_ID)


def run_gui(workspace: str | None, config: str | None, toggle: bool = False, *,
            window_factory: "WindowFactory | None" = None, argv: Sequence[str] | None = None) -> int:
    """Run the desktop app until it quits; returns the process exit code.

    If an instance with the same config already runs, it is told to "show" (or "toggle") its
    window and this call returns 0 at once. `--toggle` with no instance running starts normally.
    """
    from nanobot_desktop.gui.common.process_setup import prepare_gui_process

    prepare_gui_process()  # before Qt makes its threads (one malloc arena, painting on this thread)
    app = create_application(argv)
    install_saved_language(app, config)  # before any widget exists: every string is looked up once
    try:
        name = server_name(config)
        problem = endpoint_problem(name)
    except InstanceEndpointError as error:
        name, problem = "", str(error)
    claimed: bool | None = None
    if problem:  # a foreign or unsafe endpoint: say so, and run without single-instance support
        log.error("%s", problem)
        print(f"nanobot-desktop: {problem} Continuing without single-instance support.", file=sys.stderr,
              flush=True)
    else:
        claimed = claim_first_launch(name)
        command = "toggle" if toggle else "show"
        # The lock held by another process: an instance runs, or starts and listens after its paint.
        if claimed is not True and hand_over(name, command, wait_s=STARTING_INSTANCE_WAIT_S if claimed is False else 0):
            log.info("nanobot Desktop already runs for this config; asked it to %s", command)
            return 0
        if claimed is False:
            claimed = claim_first_launch(name)  # True when the launch that held it has gone meanwhile
            if claimed is False:
                log.warning("the instance holding %s.lock did not answer; starting another one", name)
        if _older_version_answers(config, command):
            log.info("an older nanobot Desktop (socket named before the application id) runs; asked it to %s", command)
            if claimed:
                release_launch_claim(name)
            return 0
    try:
        # Without the lock, later launches can find us by the socket alone: listen before anything else.
        server = None if claimed else _listen(name, problem)
        apply_saved_theme(app, config)
        if window_factory is None:
            window_factory = _paint_frame_first(app)
        if server is None:
            server = _listen(name, problem)  # after the paint: later launches wait for it (see the lock)

        from nanobot_desktop.gui.shell.event_loop import run_event_loop  # asyncio, qasync: after the paint

        return run_event_loop(app, server, window_factory, workspace=workspace, config=config)
    finally:
        if claimed:
            release_launch_claim(name)


def _older_version_answers(config: str | None, command: str) -> bool:
    """An instance of a version before the application id listens on its old socket name and took the
    command. Costs one stat when there is no such socket file (the usual case)."""
    try:
        legacy = legacy_server_name(config)
    except InstanceEndpointError:
        return False
    if not os.path.exists(legacy) or endpoint_problem(legacy):
        return False
    return send_command(legacy, command)


def _listen(name: str, problem: str | None) -> InstanceServer:
    """The server later launches send their commands to (not listening when the endpoint is unsafe)."""
    server = InstanceServer(name)
    if problem or not server.listen():
        log.warning("continuing without single-instance support")
    return server


def apply_saved_theme(app: QApplication, config: str | None) -> None:
    """The theme saved in desktop.json, applied before anything paints (read without pydantic)."""
    from nanobot_desktop.engine import saved_theme

    apply_theme(app, saved_theme(config))


def _paint_frame_first(app: QApplication) -> "WindowFactory":
    """Show the main window's frame and let it paint now; the factory then opens the engine into it."""
    from nanobot_desktop.gui.window.main_window import MainWindow

    frame = MainWindow()
    frame.show()
    app.processEvents()  # the expose and the first paint, before the slow imports
    start_up_collector.release()  # the first result is on screen (see start_up_collector.py)

    async def open_into_frame(lifecycle: Lifecycle) -> MainWindow | None:
        from nanobot_desktop.gui.shell.startup import create_main_window  # after the first paint: it imports asyncio

        window = await create_main_window(lifecycle, frame)
        start_up_collector.settle()  # the window, the engine and their imports: made for the process's life
        if window is None:
            frame.close()
            frame.deleteLater()
        elif window.engine is not None and window.engine.app_settings.theme != current_theme_mode(app):
            # the full read can differ from the quick one: keys an older app version kept in config.json
            # have just moved into desktop.json (open_settings_files)
            apply_theme(app, window.engine.app_settings.theme)
        return window

    return open_into_frame
