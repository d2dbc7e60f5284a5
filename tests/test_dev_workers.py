"""dev.py's default test run uses every core (pytest-xdist, up to 4 workers, a test file whole on one),
and stays in one process where parallel workers would change what the run means or costs."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def dev(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("nanobot_dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})  # this machine: two cores
    return module


def test_the_default_run_puts_one_worker_on_each_core_and_keeps_each_file_on_one(dev: ModuleType) -> None:
    assert dev.worker_arguments([]) == ["-n", "2", "--dist", "loadfile"]
    assert dev.worker_arguments(["tests/engine", "-x"]) == ["-n", "2", "--dist", "loadfile"]
    assert dev.worker_arguments(dev.order_arguments(["--quick"])) == ["-n", "2", "--dist", "loadfile"]


def test_more_cores_give_at_most_four_workers_and_one_core_none(dev: ModuleType,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(16)))
    assert dev.worker_arguments([])[:2] == ["-n", "4"]
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})
    assert dev.worker_arguments([]) == []


@pytest.mark.parametrize("args", [["--reverse"], ["--random=7"], ["--heavy"], ["--pdb"], ["-n", "0"], ["-n3"],
                                  ["--numprocesses=3"], ["-p", "no:xdist"]])
def test_an_ordered_heavy_debugged_or_self_chosen_run_stays_in_one_process(dev: ModuleType, args: list[str]) -> None:
    assert dev.worker_arguments(dev.order_arguments(args)) == []
