"""The real nanobot CLIs (0.1.4.post4 and 0.3.5), installed by `python3 dev.py test` into cached venvs.

Compatibility tests run them as a user would, against the loopback fake endpoint, with a HOME of the
test's own so they never touch the developer's ~/.nanobot.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
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


# `nanobot onboard` of each version, run once per test session into a home of its own (1.5 to 3.6 s a run
# on two busy cores, in about ten tests that only need its files to start from). Its files name no
# absolute path (the workspace is "~/.nanobot/workspace"), so each test gets a copy in its own HOME.
_ONBOARDED: dict[str, tuple[Path, subprocess.CompletedProcess[str]]] = {}


def onboard(version: str, home: Path) -> subprocess.CompletedProcess[str]:
    """What `nanobot onboard` (of that version, no input) leaves in a fresh `home`: the session's one run,
    copied in; returns that run's result. Tests of onboarding itself run the CLI instead."""
    if version not in _ONBOARDED:
        made = Path(tempfile.mkdtemp(prefix=f"nanobot-onboard-{version}-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        _ONBOARDED[version] = (made, run_reference_cli(version, ["onboard"], home=made))
    made, result = _ONBOARDED[version]
    if result.returncode == 0:
        shutil.copytree(made, home, symlinks=True, dirs_exist_ok=True)
    return result
