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


def _probe(folder: Path, as_user: str | None) -> dict[str, dict[str, object]]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(CHECKOUT), "LANG": "C.UTF-8"}
    argv = [PYTHON, str(PROBE), str(folder)]
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
