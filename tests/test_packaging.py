"""The desktop bundle: PyInstaller builds it, and the built folder runs on its own.

Heavy (a full PyInstaller build, one to several minutes): `python3 dev.py test --heavy` runs it, with the
package extra installed; it is skipped when PyInstaller is not installed (`pip install -e '.[package]'`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_test_config

ROOT = Path(__file__).resolve().parent.parent
EXECUTABLE = "nanobot-desktop" + (".exe" if sys.platform == "win32" else "")

pytestmark = [
    pytest.mark.slow,
    # The PyInstaller build (133 s on two busy cores) is the heavy run's, shared with the .deb tests there;
    # `dev.py test --heavy` installs PyInstaller, the default run's venv has none.
    pytest.mark.heavy,
    pytest.mark.skipif(importlib.util.find_spec("PyInstaller") is None,
                       reason="PyInstaller is not installed (pip install -e '.[package]' or python3 dev.py package)"),
]


def _run(bundle: Path, *arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NANOBOT_")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    # Run from elsewhere, so nothing can come from the source checkout instead of the bundle.
    return subprocess.run([str(bundle / EXECUTABLE), *arguments], cwd=bundle.parent, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.timeout(900)
def test_the_bundle_carries_the_templates_and_answers_help(bundle: Path) -> None:
    shipped = bundle / "_internal" / "nanobot_desktop" / "templates" / "AGENTS.md"
    assert shipped.read_bytes() == (ROOT / "templates" / "AGENTS.md").read_bytes()
    assert (bundle / "_internal" / "nanobot_desktop" / "resources" / "icons" / "app.svg").is_file()
    # The translations: our compiled catalogs as committed, and Qt's own strings in those languages.
    catalogs = sorted((ROOT / "resources" / "i18n").glob("nanobot_desktop_*.qm"))
    assert catalogs
    for catalog in catalogs:
        assert (bundle / "_internal" / "nanobot_desktop" / "resources" / "i18n" / catalog.name).read_bytes() \
            == catalog.read_bytes()
        language = catalog.stem.rpartition("_desktop_")[2]
        assert (bundle / "_internal" / "PySide6" / "Qt" / "translations" / f"qtbase_{language}.qm").is_file()

    result = _run(bundle, "--help")

    assert result.returncode == 0, result.stderr
    for command in ("onboard", "agent", "heartbeat"):
        assert command in result.stdout
    version = _run(bundle, "--version")
    assert version.returncode == 0 and version.stdout.startswith("nanobot-desktop ")


@pytest.mark.timeout(900)
def test_one_agent_turn_from_the_bundle_writes_the_session(bundle: Path, fake_openai, tmp_path: Path) -> None:
    fake_openai.add_text("Hello from the bundle.")
    workspace = tmp_path / "ws"
    config = write_test_config(tmp_path / "home" / ".nanobot" / "config.json", fake_openai.base_url, workspace)

    result = _run(bundle, "agent", "-m", "Say hello", "--config", str(config))

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from the bundle.\n"
    assert fake_openai.requests[0]["messages"][-1]["content"].endswith("Say hello")
    # The workspace was created from the templates shipped inside the bundle.
    assert (workspace / "AGENTS.md").read_bytes() == (ROOT / "templates" / "AGENTS.md").read_bytes()
    lines = (workspace / "sessions" / "cli_direct.jsonl").read_text(encoding="utf-8").splitlines()
    header, *messages = (json.loads(line) for line in lines)
    assert header["_type"] == "metadata" and header["key"] == "cli:direct"
    assert [(m["role"], m["content"]) for m in messages] == [("user", "Say hello"),
                                                             ("assistant", "Hello from the bundle.")]
