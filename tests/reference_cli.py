"""The real nanobot CLIs (0.1.4.post4 and 0.3.5), installed by `python3 dev.py test` into cached venvs.

Compatibility tests run them as a user would, against the loopback fake endpoint, with a HOME of the
test's own so they never touch the developer's ~/.nanobot.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

POST4 = "0.1.4.post4"
V035 = "0.3.5"
# Read at import (test collection): tests/conftest.py removes every NANOBOT_* variable before each test.
_ROOT_AT_IMPORT = os.environ.get("NANOBOT_DESKTOP_REFERENCE_CLIS")


def reference_cli(version: str) -> Path:
    """The `nanobot` executable of that version, or skip the test saying how to get it."""
    root = os.environ.get("NANOBOT_DESKTOP_REFERENCE_CLIS") or _ROOT_AT_IMPORT
    if not root:
        pytest.skip("the reference nanobot CLIs are installed by `python3 dev.py test` (run the suite that way)")
    home = Path(root) / f"nanobot-ai-{version}"
    executable = home / ("Scripts/nanobot.exe" if os.name == "nt" else "bin/nanobot")
    if not (home / ".installed").exists() or not executable.exists():
        pytest.skip(f"nanobot-ai=={version} could not be installed into {home} (see the start of the test output)")
    return executable


def run_reference_cli(version: str, args: list[str], *, home: Path, timeout: float = 120,
                      env: dict[str, str] | None = None, stdin_text: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `nanobot ARGS` of that version with HOME=home, no stdin (or `stdin_text`), no network but loopback."""
    full_env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    full_env.update(HOME=str(home), LITELLM_LOCAL_MODEL_COST_MAP="True", NO_COLOR="1", TERM="dumb",
                    PYTHONIOENCODING="utf-8")
    full_env.update(env or {})
    stdin = {"input": stdin_text} if stdin_text is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run([str(reference_cli(version)), *args], env=full_env, capture_output=True, text=True,
                          timeout=timeout, **stdin)
