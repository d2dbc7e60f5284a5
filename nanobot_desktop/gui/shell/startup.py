"""Before the main window: logging, first-run setup when there is no config, then the Engine.

The Engine needs a config, so on the very first run the onboarding dialog comes first. Everything
here is awaited, never `exec()`-ed: dialogs are `open()`ed and their signals resolve a future, so
the qasync loop (and the onboarding's own local-server scan) keeps running.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from nanobot_desktop.engine import ConfigError, default_config_path
from nanobot_desktop.gui.common.i18n import translate

if TYPE_CHECKING:
    from nanobot_desktop.gui.shell.lifecycle import Lifecycle
    from nanobot_desktop.gui.window.main_window import MainWindow

log = logging.getLogger(__name__)


async def open_engine_for_gui(config: str | None, workspace: str | None) -> tuple[Any, Path | None] | None:
    """(engine, log folder), or None when the person cancelled setup or the config is unusable."""
    config_path = Path(config).expanduser() if config else default_config_path()  # noqa: ASYNC240 - reads $HOME, no disk
    log_folder = _setup_logging(config_path)
    if needs_onboarding(config_path):
        result = await run_onboarding(config_path, workspace)
        if result is None:
            log.info("first-run setup was cancelled; quitting")
            return None
        config_path, chosen_workspace = result
        log.info("first-run setup wrote %s (workspace %s)", config_path, chosen_workspace)
    from nanobot_desktop.engine import Engine

    from nanobot_desktop.engine import StorageError, WorkspaceError, storage_error
    from nanobot_desktop.gui.common.engine_words import storage_problem

    try:
        engine = Engine.open(config_path, workspace)
    except (WorkspaceError, StorageError) as error:
        log.error("cannot start: %s", error)
        await show_error(translate("Startup", "nanobot cannot start"),
                         translate("Startup", "The workspace could not be opened:\n\n{error}").format(
                             error=storage_problem(error) if isinstance(error, StorageError) else error))
        return None
    except (ConfigError, OSError) as error:
        if isinstance(error, OSError) and error.filename:
            error = storage_error(Path(error.filename), error)
        log.error("cannot start: %s", error)
        await show_error(translate("Startup", "nanobot cannot start"),
                         translate("Startup", "The configuration could not be loaded:\n\n{error}\n\nThe file was left untouched. "
                                              "Fix it (or move it away to start the first-run setup again), then start nanobot "
                                              "Desktop again.").format(
                             error=storage_problem(error) if isinstance(error, OSError) else error))
        return None
    return engine, log_folder


def _setup_logging(config_path: Path) -> Path | None:
    try:
        from nanobot_desktop.gui.shell.logging_setup import setup_logging
    except ImportError:
        return None
    try:
        return setup_logging(config_path)
    except OSError as error:
        log.warning("no log file: %s", error)
        return None


def needs_onboarding(config_path: Path | None = None) -> bool:
    """True when there is no config file yet (the first run). Here, not beside the dialog: the
    dialog's module (with the provider form, ~5 MB resident) loads only when it is shown."""
    return not Path(config_path or default_config_path()).expanduser().exists()


def _not_the_last_window(dialog: QWidget) -> None:
    """A dialog shown before the main window exists must not count as the app's last window:
    when it closes, Qt would quit the app (quitOnLastWindowClosed) instead of opening the window."""
    dialog.setAttribute(Qt.WidgetAttribute.WA_QuitOnClose, False)


async def run_onboarding(config_path: Path, workspace: str | None) -> tuple[Path, Path] | None:
    """Show the first-run dialog; (config path, workspace) when it finished, None when cancelled."""
    from nanobot_desktop.gui.settings.onboarding import OnboardingDialog

    dialog = OnboardingDialog(config_path, workspace)
    _not_the_last_window(dialog)
    future: asyncio.Future[tuple[Path, Path] | None] = asyncio.get_running_loop().create_future()

    def on_setup(path: object, chosen: object) -> None:
        if not future.done():
            future.set_result((Path(str(path)), Path(str(chosen))))

    def on_finished(_result: int) -> None:
        if not future.done():
            future.set_result(None)

    dialog.finished_setup.connect(on_setup)
    dialog.finished.connect(on_finished)
    dialog.open()
    try:
        return await future
    finally:
        dialog.deleteLater()


async def show_error(title: str, text: str) -> None:
    """A message box the person must read, shown without a nested event loop."""
    box = QMessageBox(QMessageBox.Icon.Critical, title, text)
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    _not_the_last_window(box)
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    box.finished.connect(lambda _result: None if future.done() else future.set_result(None))
    box.open()
    try:
        await future
    finally:
        box.deleteLater()


async def create_main_window(lifecycle: Lifecycle, frame: MainWindow | None = None) -> MainWindow | None:
    """`run_gui`'s default window factory: first-run setup if needed, then the Engine, into `frame`
    (the window already painted without one) or a new window.

    Returns None (and the app quits) when the person cancels the first-run setup or the config
    cannot be loaded (they are told why first).
    """
    from nanobot_desktop.gui.shell.logging_setup import update_secrets
    from nanobot_desktop.gui.window.main_window import MainWindow

    opened = await open_engine_for_gui(lifecycle.options.config, lifecycle.options.workspace)
    if opened is None:
        return None
    engine, log_folder = opened
    window = frame if frame is not None else MainWindow()
    window.settings_applied.connect(update_secrets)  # a key typed in Settings is redacted from the log too
    window.attach_engine(engine, lifecycle, log_folder=log_folder)
    return window
