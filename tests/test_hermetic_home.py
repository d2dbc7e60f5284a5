"""The test home is hermetic: a run writes nothing into the runner's own HOME or XDG folders.

Before HOME and every XDG folder moved under each test's temporary folder, a runner with XDG_CACHE_HOME
set got a session-index database per test (114 of them) and lock files in its real cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Tests that write caches, state and locks: the session index, the app's workspace lock, machine ids.
WRITERS = ["tests/engine/sessions/test_session_index.py", "tests/engine/sync/test_sync_machines.py", "tests/engine/background/test_coexistence.py"]


@pytest.mark.slow
def test_a_run_leaves_nothing_in_the_runner_s_home_or_xdg_folders(tmp_path: Path) -> None:
    watched = {name: tmp_path / name.lower() for name in
               ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")}
    for folder in watched.values():
        folder.mkdir()
    env = {**os.environ, **{name: str(folder) for name, folder in watched.items()}, "QT_QPA_PLATFORM": "offscreen"}
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *WRITERS], cwd=root, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout
    left = {name: sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) for name, folder in watched.items()}
    assert left == {name: [] for name in watched}
