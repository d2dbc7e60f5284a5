"""dev.py's lock around the shared caches (reference CLIs, MCP test servers, the llama.cpp server):
a second run waits while the first one fills a cache, instead of rebuilding the same venv under it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("nanobot_dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOLDER = """
import importlib.util, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("nanobot_dev_script", sys.argv[1])
dev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dev)
with dev.cache_lock(Path(sys.argv[2])):
    print("held", flush=True)
    sys.stdin.read()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the test holds the lock from a POSIX subprocess")
def test_a_second_run_waits_for_the_one_filling_the_cache(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    dev = _dev()
    cache = tmp_path / "cache" / "reference-clis"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT / "dev.py"), str(cache)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        entered = threading.Event()

        def second_run() -> None:
            with dev.cache_lock(cache):
                entered.set()

        waiter = threading.Thread(target=second_run, daemon=True)
        waiter.start()
        assert not entered.wait(0.5), "the second run went in while the first held the cache"
        assert holder.stdin is not None
        holder.stdin.close()  # the first run is done with the cache
        assert entered.wait(30), "the second run never got the cache"
        waiter.join(10)
    finally:
        holder.kill() if holder.poll() is None else None
        holder.wait(10)
    assert f"waiting for another run that is setting up {cache}" in capfd.readouterr().err
    assert (cache.parent / ".reference-clis.lock").exists()
    assert not cache.exists(), "taking the lock creates nothing but the lock file"
