"""The e2e suite's servers and its report: one llama.cpp server with an 8,192-token window on its
usual port (when free) for the whole run, one with 1,024 for the overflow, and the figures each test
measured, printed at the end of the run (turn times, tokens/s, what the tiny model did)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.fake_openai import write_fake_config
from tests.local_server import LLAMA_CPP_PORT, MODEL_ALIAS, LlamaServer

REPORT: list[str] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if REPORT:
        terminalreporter.section("e2e figures (real llama.cpp server, SmolLM2-135M on this CPU)")
        for line in REPORT:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def report() -> Callable[[str], None]:
    return REPORT.append


def _server(tmp_path_factory: pytest.TempPathFactory, n_ctx: int, port: int | None) -> Iterator[LlamaServer]:
    server = LlamaServer(n_ctx=n_ctx, port=port, log_path=tmp_path_factory.mktemp("llama") / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    yield from _server(tmp_path_factory, 8192, LLAMA_CPP_PORT)


@pytest.fixture(scope="session")
def llama_small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    yield from _server(tmp_path_factory, 1024, None)


@pytest.fixture
def real_engine(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Engines whose provider is a real server (`base_url`), on a tmp workspace."""
    from nanobot_desktop.engine.runtime import Engine

    def factory(base_url: str, **defaults: Any) -> Any:
        defaults.setdefault("model", MODEL_ALIAS)
        defaults.setdefault("maxTokens", 256)
        path = write_fake_config(tmp_path / "home" / ".nanobot" / "config.json", base_url, tmp_path / "ws",
                                 api_key="", **defaults)
        return Engine.open(path)

    yield factory
