"""Test-wide settings: Qt offscreen, and no test ever touches the real ~/.nanobot."""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fake_openai import write_fake_config as write_test_config  # tests import it from here

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest_plugins = ["tests.packaging_support",  # the `bundle` fixture: one PyInstaller build per session
                  "tests.update_support",  # `update_server`: a signed update repository on 127.0.0.1
                  "pytester"]  # tests/test_slow_marker.py runs a small suite of its own


# --- test order ------------------------------------------------------------------------------------
# `--test-order reverse` or `--test-order random` (with `--test-seed N` to repeat one) shows whether a
# test depends on what ran before it; `python3 dev.py test --reverse` / `--random[=SEED]` pass them.
# The default (and CI's) order stays the files' order.


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("test order")
    group.addoption("--test-order", choices=("file", "reverse", "random"), default="file",
                    help="run the collected tests in file order (default), reversed, or shuffled")
    group.addoption("--test-seed", type=int, default=None, help="the shuffle's seed for --test-order random")
    parser.addoption("--heavy", action="store_true", default=False,
                     help="also run the tests marked heavy (packages, a real model server, sync engines): "
                          "minutes each, so the default run skips them")


def _test_seed(config: pytest.Config) -> int:
    seed = config.getoption("--test-seed")
    if seed is None:
        seed = getattr(config, "_test_seed", None) or random.randrange(1, 1_000_000)
    config._test_seed = seed  # type: ignore[attr-defined]  # one seed per run, shown in the header
    return int(seed)


def pytest_report_header(config: pytest.Config) -> str | None:
    order = config.getoption("--test-order")
    if order == "random":
        return f"test order: random (--test-seed {_test_seed(config)} repeats it)"
    return f"test order: {order}" if order != "file" else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--heavy"):
        skip_heavy = pytest.mark.skip(reason="heavy: run with `python3 dev.py test --heavy`")
        for item in items:
            if "heavy" in item.keywords:
                item.add_marker(skip_heavy)
    order = config.getoption("--test-order")
    if order == "reverse":
        items.reverse()
    elif order == "random":
        seed = _test_seed(config)
        random.Random(seed).shuffle(items)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:  # also with -q, which hides the header
            reporter.write_line(f"test order: random (--test-seed {seed} repeats it)")


# --- the `slow` marker is honest --------------------------------------------------------------------
# `python3 dev.py test --quick` (pytest -m "not slow") is the inner loop, so it must stay quick: a test
# that starts the app as a process, a reference nanobot CLI or an installed MCP server fails at its
# teardown unless it is marked `slow` (or `heavy`). Real-sandbox tests are marked by hand: the exec tool
# runs every command in the sandbox, and most of those runs take milliseconds.
SLOW_PROCESS_ROOTS = {"NANOBOT_DESKTOP_REFERENCE_CLIS": "a reference nanobot CLI",
                      "NANOBOT_DESKTOP_MCP_SERVERS": "an installed MCP server"}


def slow_process(args: object) -> str | None:
    """What a process started with `args` is when only a slow test may start it, else None."""
    if isinstance(args, str | bytes | os.PathLike):
        argv = [os.fsdecode(args)]
    elif isinstance(args, list | tuple):
        argv = [os.fsdecode(arg) if isinstance(arg, str | bytes | os.PathLike) else str(arg) for arg in args]
    else:
        return None
    if any(flag == "-m" and module.split(".")[0] == "nanobot_desktop" for flag, module in itertools.pairwise(argv)):
        return "the app as a process"
    for variable, what in SLOW_PROCESS_ROOTS.items():
        root = os.environ.get(variable)
        if root and any(arg.startswith(root) for arg in argv):
            return what
    return None


@pytest.fixture(autouse=True)
def _slow_marker_is_honest(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if request.node.get_closest_marker("slow") or request.node.get_closest_marker("heavy"):
        yield
        return
    started: list[str] = []
    original = subprocess.Popen.__init__

    def noting(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> None:
        what = slow_process(args)
        if what is not None:
            started.append(f"{what} ({' '.join(map(str, args)) if isinstance(args, list | tuple) else args})")
        original(self, args, *rest, **options)

    monkeypatch.setattr(subprocess.Popen, "__init__", noting)
    yield
    if started:
        pytest.fail(f"this test starts {started[0]}: mark it @pytest.mark.slow so `dev.py test --quick` "
                    "stays quick", pytrace=False)


@pytest.fixture(scope="session")
def qapp_cls() -> type[Any]:
    """pytest-qt's `qapp` is the app's own QApplication class, as the app starts it (the lifecycle
    routes the platform's Quit event through it, gui/shell/application.py)."""
    from nanobot_desktop.gui.shell.application import DesktopApplication

    return DesktopApplication


@pytest.fixture(autouse=True)
def _fresh_window_book() -> None:
    """The app's one book of context windows (engine/llm/context_window.py) lives as long as the process
    and is keyed by server address and model: a later test's fake server on a port the OS gave out
    again must not find an earlier test's window there (a heartbeat once failed on a stale 1,024)."""
    book = sys.modules.get("nanobot_desktop.engine.llm.context_window")
    if book is not None:
        book.BOOK.forget()


# Where the test home keeps what XDG says; XDG_RUNTIME_DIR must be 0700 or Qt warns (and warnings fail).
XDG_FOLDERS = {"XDG_CACHE_HOME": ".cache", "XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share",
               "XDG_STATE_HOME": ".local/state", "XDG_RUNTIME_DIR": ".runtime"}


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point HOME and every XDG folder at a fresh folder, so nothing of the machine's ~/.nanobot, caches
    or settings is read or written (a runner with XDG_CACHE_HOME set once got 114 session indexes)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for name, relative in XDG_FOLDERS.items():
        folder = home / relative
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        monkeypatch.setenv(name, str(folder))
    for name in list(os.environ):
        if name.startswith("NANOBOT_") and not name.startswith("NANOBOT_DESKTOP_"):  # the app's own (test tools) stay
            monkeypatch.delenv(name)
    # No test reaches the developer's desktop session (notifications, tray): the D-Bus tests start their own.
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)


# --- the collector walks what the running module made, not the whole session's heap ---------------------
# The fixtures below and tests/gui/conftest.py collect cycles after each test (so Qt objects die on the
# GUI thread, and an openai client is not closed on a later test's loop). A full collection walks every
# object the session holds: ~150,000 once the engine and GUI tests have imported what they use, 0.1 to
# 0.25 s a walk on two busy cores, a fifth of a GUI module's time. gc.freeze() after a collection moves
# the survivors out of every later walk, so a test's collections walk only its own objects. A new module
# unfreezes them first: whatever the last module kept alive and then let go (its module fixtures, a cache
# entry) is collected there as before, on the main thread; frozen objects are never collected in between,
# by this thread or any other.
_frozen_for_module: list[str] = [""]


def collect_and_freeze(module: str) -> None:
    """Collect the garbage left so far, then freeze the survivors; once per module, unfreeze them first."""
    if _frozen_for_module[0] != module:
        gc.unfreeze()
        _frozen_for_module[0] = module
    gc.collect()
    gc.freeze()


@pytest.fixture
def fake_openai():
    """A started FakeOpenAIServer (tests/fake_openai.py) on 127.0.0.1, stopped after the test."""
    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def make_engine(request, fake_openai, tmp_path):
    """Build Engines on a tmp workspace wired to the fake endpoint; retries never sleep."""
    from nanobot_desktop.engine.runtime import Engine

    collect_and_freeze(request.module.__name__)

    created = []

    def factory(**defaults):
        config_path = write_test_config(tmp_path / "home" / ".nanobot" / "config.json", fake_openai.base_url,
                                        tmp_path / "ws", **defaults)
        engine = Engine.open(config_path)
        provider = engine.provider()

        async def no_sleep(_delay: float) -> None:
            return None

        provider._sleep = no_sleep
        created.append(engine)
        return engine

    yield factory
    # An endpoint client left open by a test would be garbage-collected during a later test, where
    # openai schedules its close on that test's loop (a "Task exception was never retrieved" there).
    # Collected now, outside any running loop, it is dropped quietly.
    created.clear()
    if not _loop_running():
        gc.collect()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
