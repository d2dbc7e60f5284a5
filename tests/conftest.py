"""Test-wide settings: Qt offscreen, and no test ever touches the real ~/.nanobot."""

from __future__ import annotations

import asyncio
import gc
import os

import pytest

from tests.fake_openai import write_fake_config as write_test_config  # tests import it from here

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point HOME at a fresh folder so ~/.nanobot of the machine is never read or written."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for name in list(os.environ):
        if name.startswith("NANOBOT_") and not name.startswith("NANOBOT_DESKTOP_"):  # the app's own (test tools) stay
            monkeypatch.delenv(name)
    # No test reaches the developer's desktop session (notifications, tray): the D-Bus tests start their own.
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)


@pytest.fixture
def fake_openai():
    """A started FakeOpenAIServer (tests/fake_openai.py) on 127.0.0.1, stopped after the test."""
    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def make_engine(fake_openai, tmp_path):
    """Build Engines on a tmp workspace wired to the fake endpoint; retries never sleep."""
    from nanobot_desktop.engine.runtime import Engine

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
