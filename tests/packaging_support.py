"""One PyInstaller build per test session, shared by the bundle tests and the Debian package tests
(a build takes one to thirteen minutes on two cores; building it twice would test nothing more)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXECUTABLE = "nanobot-desktop" + (".exe" if sys.platform == "win32" else "")


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built bundle folder, in a temporary folder (the repository's dist/ is left alone)."""
    scratch = tmp_path_factory.mktemp("bundle")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYINSTALLER_CONFIG_DIR=str(scratch / "pyinstaller-cache"))
    result = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build.py"), "--distpath", str(scratch / "dist"),
         "--workpath", str(scratch / "work")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert result.returncode == 0, f"the build failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    folder = scratch / "dist" / "nanobot-desktop"
    assert (folder / EXECUTABLE).is_file()
    return folder
