"""The sandbox cases as root and as an unprivileged user (issue 28): the same probe, both ways.

The unprivileged run needs root to make the user (`useradd`, a system account without a home) and to
switch to it (`runuser`); where either is missing it is skipped with the reason. The probe runs on
the system python with the checkout on PYTHONPATH (the app's virtualenv may sit in root's home).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from nanobot_desktop.engine.tools.sandbox import sandbox_support

CHECKOUT = Path(__file__).resolve().parents[3]
PROBE = Path(__file__).resolve().parents[1] / "sandbox_probe.py"
PYTHON = "/usr/bin/python3"
USER = "nanobot-probe"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (sandbox_support().available and sandbox_support().namespaces),
                                 reason=sandbox_support().summary),
              pytest.mark.skipif(not Path(PYTHON).exists(), reason=f"no {PYTHON}")]


def _readable_copy(root: Path) -> Path:
    """The probe and the package copied into `root`, readable by every user: the checkout itself may sit
    in a private folder (a clone into `mktemp -d` is 0700), where the test user could not read it."""
    root.chmod(0o755)
    shutil.copytree(CHECKOUT / "nanobot_desktop", root / "nanobot_desktop",
                    ignore=shutil.ignore_patterns("__pycache__"))
    probe = root / "tests" / "engine" / PROBE.name  # the probe puts parents[2] of itself on sys.path
    probe.parent.mkdir(parents=True)
    shutil.copy2(PROBE, probe)
    for folder in (root, *root.rglob("*")):
        folder.chmod(0o755 if folder.is_dir() else 0o644)
    return probe


def _probe(folder: Path, as_user: str | None) -> dict[str, dict[str, object]]:
    code = Path(tempfile.mkdtemp(prefix="nanobot-probe-code-", dir="/tmp"))
    try:
        probe = _readable_copy(code)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(code), "LANG": "C.UTF-8"}
        return _run_probe([PYTHON, str(probe), str(folder)], env, as_user)
    finally:
        shutil.rmtree(code, ignore_errors=True)


def _run_probe(argv: list[str], env: dict[str, str], as_user: str | None) -> dict[str, dict[str, object]]:
    if as_user is not None:
        argv = [str(shutil.which("runuser")), "-u", as_user, "--", *argv]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, cwd="/")
    assert done.returncode == 0, done.stderr
    result: dict[str, dict[str, object]] = json.loads(done.stdout.splitlines()[-1])
    return result


def _ensure_user() -> str:
    if os.geteuid() != 0:
        pytest.skip("making a test user needs root")
    if shutil.which("useradd") is None or shutil.which("runuser") is None:
        pytest.skip("useradd/runuser not installed")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
    return USER


@pytest.mark.parametrize("who", ["root", "unprivileged"])
def test_every_case_holds(who: str) -> None:
    user = None if who == "root" else _ensure_user()
    if who == "root" and os.geteuid() != 0:
        pytest.skip("not running as root")
    folder = Path(tempfile.mkdtemp(prefix="nanobot-probe-", dir="/tmp"))
    try:
        if user is not None:
            entry = pwd.getpwnam(user)
            os.chown(folder, entry.pw_uid, entry.pw_gid)
        results = _probe(folder, user)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    about = results.pop("_about")
    assert (about["uid"] == 0) == (who == "root")
    assert about["processes"] in ("cgroup v1", "cgroup v2", "rlimit")  # the fork case held with whichever applies
    failed = {name: r for name, r in results.items() if not r["held"]}
    assert not failed, json.dumps(failed, indent=1)
    assert len(results) == 11
