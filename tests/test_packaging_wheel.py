"""The wheel, as a person installs it: `pipx install nanobot_desktop-….whl` into a fresh home.

Heavy (pipx from PyPI into a venv, then PySide6 and the other dependencies into pipx's own venv):
skipped unless `python3 dev.py test --heavy`. The wheel must carry the templates, the resources and
the compiled translations, and the installed command must answer --help, run a headless turn
against the fake endpoint, and open the window (offscreen) until it is told to quit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import pytest

from nanobot_desktop.identity import APP_ID
from tests.conftest import write_test_config

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.heavy, pytest.mark.timeout(3600)]  # PySide6 from PyPI on a busy machine


def _pip_cache() -> dict[str, str]:
    """pip's downloads shared across runs (the test home is fresh each time; PySide6 is 100+ MB)."""
    shared = os.environ.get("NANOBOT_DESKTOP_REFERENCE_CLIS")
    return {"PIP_CACHE_DIR": str(Path(shared).parent / "pip-cache")} if shared else {}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
                            "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, **_pip_cache()))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (found,) = out.glob("nanobot_desktop-*.whl")
    return found


def test_the_wheel_carries_templates_resources_and_translations(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for source in [*(ROOT / "templates").rglob("*"), *(ROOT / "resources").rglob("*")]:
        if source.is_file() and "__pycache__" not in source.parts and source.suffix != ".ts":
            top = "templates" if ROOT / "templates" in source.parents else "resources"
            relative = source.relative_to(ROOT / top).as_posix()
            assert f"nanobot_desktop/{top}/{relative}" in names, relative
    assert any(name.endswith("nanobot_desktop_zh_CN.qm") for name in names)
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert "nanobot-desktop = nanobot_desktop.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_pipx_installs_the_wheel_and_the_command_works(wheel: Path, fake_openai, tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    home.mkdir()
    tools = tmp_path / "pipx-venv"
    venv.EnvBuilder(with_pip=True).create(tools)
    tool_python = tools / "bin" / "python"
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("NANOBOT_", "PIPX_", "VIRTUAL_ENV", "XDG_"))}
    env.update(HOME=str(home), PIPX_HOME=str(home / ".local" / "share" / "pipx"),
               PIPX_BIN_DIR=str(home / ".local" / "bin"), PIPX_MAN_DIR=str(home / ".local" / "share" / "man"),
               PATH=f"{home / '.local' / 'bin'}:{os.environ.get('PATH', '')}", **_pip_cache())
    got_pipx = subprocess.run([str(tool_python), "-m", "pip", "install", "--disable-pip-version-check", "pipx"],
                              env=env, capture_output=True, text=True, timeout=600)
    assert got_pipx.returncode == 0, got_pipx.stderr[-3000:]
    installed = subprocess.run([str(tools / "bin" / "pipx"), "install", "--python", sys.executable, str(wheel)],
                               env=env, capture_output=True, text=True, timeout=1800)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    command = home / ".local" / "bin" / "nanobot-desktop"
    assert command.exists()

    run_env = dict(env, QT_QPA_PLATFORM="offscreen")
    helped = subprocess.run([str(command), "--help"], env=run_env, capture_output=True, text=True, timeout=120,
                            cwd=tmp_path)
    assert helped.returncode == 0 and "agent" in helped.stdout, helped.stderr

    fake_openai.add_text("Hello from pipx.")
    config = write_test_config(home / ".nanobot" / "config.json", fake_openai.base_url, tmp_path / "ws")
    turn = subprocess.run([str(command), "agent", "-m", "Say hello", "--config", str(config)], env=run_env,
                          capture_output=True, text=True, timeout=180, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert turn.returncode == 0, turn.stderr
    assert turn.stdout == "Hello from pipx.\n"
    templates = next((home / ".local" / "share" / "pipx" / "venvs" / "nanobot-desktop").rglob("nanobot_desktop/templates"))
    assert (tmp_path / "ws" / "AGENTS.md").read_bytes() == (templates / "AGENTS.md").read_bytes()
    lines = (tmp_path / "ws" / "sessions" / "cli_direct.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1])["content"] == "Hello from pipx."

    # The window: it starts, listens for later launches (after its first paint), and quits cleanly on SIGTERM.
    runtime = Path("/tmp") / f"nb-pipx-{os.getpid()}"  # short: a socket path has ~100 bytes
    runtime.mkdir(mode=0o700)
    log = tmp_path / "window.log"
    with log.open("wb") as output:
        app = subprocess.Popen([str(command), "--config", str(config)], env=dict(run_env, XDG_RUNTIME_DIR=str(runtime)),
                               stdout=output, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not [p for p in runtime.glob(f"{APP_ID}-*") if p.is_socket()] and app.poll() is None:
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.1)
        assert app.poll() is None, log.read_text(errors="replace")[-3000:]
        # A second launch hands "show" to the running window and exits: its event loop is up.
        again = subprocess.run([str(command), "--config", str(config)], env=dict(run_env, XDG_RUNTIME_DIR=str(runtime)),
                               capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert app.poll() is None
        app.send_signal(signal.SIGTERM)  # the app's orderly shutdown
        assert app.wait(timeout=30) == 0, log.read_text(errors="replace")[-3000:]
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        for leftover in runtime.iterdir():
            leftover.unlink()
        runtime.rmdir()
