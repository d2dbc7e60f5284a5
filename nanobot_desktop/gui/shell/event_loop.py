"""The app's event loop: qasync on the Qt loop, the lifecycle that ends it, and Ctrl+C/SIGTERM.

Imported by `run_gui` (shell/app.py) only after the main window's frame has painted: asyncio and
qasync are not needed for the first paint.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import signal
import socket
from typing import Callable

from PySide6.QtCore import QSocketNotifier

from nanobot_desktop.gui.common.qt_asyncio import QtAsyncioLoop
from nanobot_desktop.gui.shell.application import DesktopApplication
from nanobot_desktop.gui.shell.lifecycle import LaunchOptions, Lifecycle, WindowFactory
from nanobot_desktop.gui.shell.single_instance import InstanceServer, apply_instance_command

log = logging.getLogger(__name__)

_EXTRA_SPIN_TIMEOUT_S = 30.0


def run_event_loop(app: DesktopApplication, server: InstanceServer, window_factory: WindowFactory, *,
                   workspace: str | None, config: str | None) -> int:
    """Run until the lifecycle has finished; the process exit code."""
    loop = QtAsyncioLoop(app)
    asyncio.set_event_loop(loop)
    lifecycle = Lifecycle(LaunchOptions(workspace=workspace, config=config))
    lifecycle.attach_to_app(app)
    lifecycle.add_cleanup(server.close, name="single-instance server")
    restore_signals = _route_signals_to(lifecycle)
    try:
        with loop:
            main = asyncio.ensure_future(_main(lifecycle, server, window_factory))
            try:
                code: int = loop.run_until_complete(main)
            except RuntimeError:
                if main.done():
                    raise
                # The Qt loop was ended from outside (app.exit()) before any quit request: spin
                # it again until every task is cancelled and every cleanup has run.
                loop.run_until_complete(_finish_shutdown(lifecycle))
                code = main.result() if main.done() and not main.cancelled() else 0
            loop.run_until_complete(_cancel_leftover_tasks())
            loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        restore_signals()
        lifecycle.detach_from_app()
        asyncio.set_event_loop(None)
    return code


async def _main(lifecycle: Lifecycle, server: InstanceServer, window_factory: WindowFactory) -> int:
    try:
        made = window_factory(lifecycle)
        window = await made if inspect.isawaitable(made) else made
    except Exception:
        log.exception("the main window could not be created")
        await lifecycle.request_quit()
        return 1
    if window is None:  # first-run setup cancelled, or a config the person was told about
        await lifecycle.request_quit()
        return 0

    def on_command(command: str) -> None:
        apply_instance_command(window, command)
        lifecycle.instance_command.emit(command)

    server.command_received.connect(on_command)
    if not lifecycle.is_quitting:
        window.show()
    await lifecycle.wait_finished()
    return 0


async def _finish_shutdown(lifecycle: Lifecycle) -> None:
    try:
        await asyncio.wait_for(asyncio.shield(lifecycle.request_quit()), _EXTRA_SPIN_TIMEOUT_S)
    except TimeoutError:
        log.error("the shutdown did not finish within %.0f s; exiting anyway", _EXTRA_SPIN_TIMEOUT_S)


async def _cancel_leftover_tasks() -> None:
    """Tasks nobody registered still must not be destroyed pending when the loop closes."""
    current = asyncio.current_task()
    leftovers = [task for task in asyncio.all_tasks() if task is not current]
    for task in leftovers:
        task.cancel()
    if leftovers:
        await asyncio.wait(leftovers, timeout=2.0)


def _route_signals_to(lifecycle: Lifecycle) -> Callable[[], None]:
    """Ctrl+C and SIGTERM quit through the lifecycle.

    Python runs signal handlers only between bytecodes, and a Qt loop idling in C++ runs none; the
    wakeup fd makes the signal ring a socket that Qt watches, which gives Python its turn.
    """
    if not hasattr(signal, "SIGTERM"):
        return lambda: None
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    try:
        old_wakeup_fd = signal.set_wakeup_fd(writer.fileno())
    except ValueError:  # not the main thread
        reader.close()
        writer.close()
        return lambda: None
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)

    def drain() -> None:
        try:
            while reader.recv(64):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    notifier.activated.connect(drain)

    def on_signal(signum: int, _frame: object) -> None:
        log.info("received signal %s; quitting", signal.Signals(signum).name)
        lifecycle.request_quit()

    old_handlers = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(old_wakeup_fd)
        notifier.setEnabled(False)
        notifier.deleteLater()
        reader.close()
        writer.close()

    return restore
