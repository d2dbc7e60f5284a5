"""The Debian package, for real: built with dpkg-deb, checked by lintian and appstreamcli, installed
with apt-get, run, upgraded, removed and purged.

Heavy (a PyInstaller build, then installs into this machine's /usr): skipped unless
`python3 dev.py test --heavy`, which installs dpkg-dev, lintian, appstream and desktop-file-utils.
It must run as root on Debian. Versions N and N+1 are two packages of the same bundle that differ in
their package version only (a second PyInstaller build would cost minutes and test nothing more).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nanobot_desktop import __version__
from nanobot_desktop.gui.shell.autostart import autostart_file, desktop_entry, set_start_at_login
from nanobot_desktop.identity import APP_ID
from tests.conftest import write_test_config

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("dpkg-deb", "lintian", "appstreamcli", "apt-get", "desktop-file-validate")

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.timeout(3600),  # a PyInstaller build: 1 minute on idle cores, 13 on busy ones
    pytest.mark.skipif(sys.platform != "linux" or shutil.which("dpkg") is None, reason="needs Debian"),
    pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() != 0, reason="installs a package: needs root"),
    pytest.mark.skipif(any(shutil.which(tool) is None for tool in TOOLS),
                       reason=f"needs {', '.join(TOOLS)} (python3 dev.py test --heavy installs them)"),
    pytest.mark.skipif(importlib.util.find_spec("PyInstaller") is None, reason="PyInstaller is not installed"),
]

NEXT_VERSION = f"{__version__}+1"


def _run(*command: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), capture_output=True, text=True, timeout=timeout, **kwargs)


@pytest.fixture(scope="module")
def packages(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(.deb of version N, .deb of N+1), both from the session's one bundle."""
    scratch = tmp_path_factory.mktemp("deb")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    debs = []
    for version in (__version__, NEXT_VERSION):
        made = _run(sys.executable, str(ROOT / "packaging" / "linux" / "make_deb.py"), "--dist", str(bundle.parent),
                    "--out", str(scratch / "out"), "--version", version, "--compression", "gzip", cwd=ROOT, env=env)
        assert made.returncode == 0, f"make_deb failed:\n{made.stdout[-3000:]}\n{made.stderr[-3000:]}"
        (deb,) = (scratch / "out").glob(f"nanobot-desktop_{version}_*.deb")
        debs.append(deb)
    return debs[0], debs[1]


def _contents(deb: Path) -> list[str]:
    listing = _run("dpkg-deb", "--contents", str(deb))
    assert listing.returncode == 0, listing.stderr
    return [line.split()[5].removeprefix(".") for line in listing.stdout.splitlines()]


def test_lintian_finds_no_error_and_the_metadata_validates(packages: tuple[Path, Path], tmp_path: Path) -> None:
    deb, _ = packages
    checked = _run("lintian", "--fail-on", "error", "--tag-display-limit", "0", str(deb), timeout=1200)
    assert checked.returncode == 0, f"lintian:\n{checked.stdout[-5000:]}\n{checked.stderr[-2000:]}"
    assert not [line for line in checked.stdout.splitlines() if line.startswith("E:")]

    files = _contents(deb)
    for path in ("/usr/bin/nanobot-desktop", f"/usr/share/applications/{APP_ID}.desktop",
                 f"/usr/share/metainfo/{APP_ID}.metainfo.xml", "/usr/share/man/man1/nanobot-desktop.1.gz",
                 "/usr/share/doc/nanobot-desktop/copyright", "/usr/lib/nanobot-desktop/nanobot-desktop",
                 "/usr/share/icons/hicolor/scalable/apps/nanobot-desktop.svg"):
        assert path in files
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        assert f"/usr/share/icons/hicolor/{size}x{size}/apps/nanobot-desktop.png" in files
    assert not [path for path in files if path.startswith("/opt")]

    unpacked = tmp_path / "unpacked"
    assert _run("dpkg-deb", "-x", str(deb), str(unpacked)).returncode == 0
    metainfo = unpacked / "usr" / "share" / "metainfo" / f"{APP_ID}.metainfo.xml"
    validated = _run("appstreamcli", "validate", "--no-net", str(metainfo))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert f'version="{__version__}"' in metainfo.read_text(encoding="utf-8")
    desktop = unpacked / "usr" / "share" / "applications" / f"{APP_ID}.desktop"
    assert _run("desktop-file-validate", str(desktop)).stdout == ""
    assert "Actions=toggle;" in desktop.read_text(encoding="utf-8")
    man = gzip.decompress((unpacked / "usr" / "share" / "man" / "man1" / "nanobot-desktop.1.gz").read_bytes()).decode()
    for command in ("onboard", "agent", "heartbeat", "--toggle"):
        assert command.replace("-", "\\-") in man

    control = _run("dpkg-deb", "--field", str(deb), "Depends").stdout
    # The bundle carries Python, Qt, libX11 and fontconfig, but not the C library, xcb, GL or Wayland.
    for package in ("libc6 (>=", "libxcb1 (>=", "libgl1 (>=", "libegl1 (>="):
        assert package in control, control


def test_install_run_upgrade_and_purge_leave_the_system_and_the_persons_data_as_they_were(
        packages: tuple[Path, Path], fake_openai, tmp_path: Path) -> None:
    deb, newer = packages
    if _run("dpkg-query", "-W", "nanobot-desktop").returncode == 0:
        pytest.skip("nanobot-desktop is already installed on this machine; not touching it")
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "-y", "-q"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    home = tmp_path / "home"
    config = write_test_config(home / ".nanobot" / "config.json", fake_openai.base_url, tmp_path / "ws")
    run_env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    run_env.update(HOME=str(home), QT_QPA_PLATFORM="offscreen")
    try:
        installed = _run(*apt, "install", str(deb), env=env, timeout=1200)
        assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
        owned = [line for line in _run("dpkg-query", "-L", "nanobot-desktop").stdout.splitlines()
                 if line.startswith(("/usr/lib/nanobot-desktop", "/usr/bin/", "/usr/share/applications/",
                                     "/usr/share/metainfo/", "/usr/share/man/", "/usr/share/icons/"))]
        assert shutil.which("nanobot-desktop") == "/usr/bin/nanobot-desktop"

        helped = _run("nanobot-desktop", "--help", env=run_env, cwd=tmp_path, timeout=120)
        assert helped.returncode == 0 and "agent" in helped.stdout, helped.stderr
        fake_openai.add_text("Hello from the package.")
        turn = _run("nanobot-desktop", "agent", "-m", "Say hello", "--config", str(config), env=run_env,
                    cwd=tmp_path, timeout=180, stdin=subprocess.DEVNULL)
        assert turn.returncode == 0, turn.stderr
        assert turn.stdout == "Hello from the package.\n"

        # Start at login from the package: the entry the app writes starts the installed launcher.
        set_start_at_login(True)  # the test's XDG_CONFIG_HOME (tests/conftest.py)
        entry = autostart_file()
        assert entry is not None and entry.read_text(encoding="utf-8") == desktop_entry(["nanobot-desktop"])
        started = _run("sh", "-c", "exec nanobot-desktop --version", env=run_env, timeout=60)  # the Exec= line
        assert started.returncode == 0 and started.stdout.startswith("nanobot-desktop ")

        upgraded = _run(*apt, "install", str(newer), env=env, timeout=1200)
        assert upgraded.returncode == 0, upgraded.stdout[-3000:] + upgraded.stderr[-3000:]
        assert _run("dpkg-query", "-W", "-f=${Version}", "nanobot-desktop").stdout == NEXT_VERSION
        fake_openai.add_text("Hello again.")
        again = _run("nanobot-desktop", "agent", "-m", "Again", "--config", str(config), env=run_env,
                     cwd=tmp_path, timeout=180, stdin=subprocess.DEVNULL)
        assert again.returncode == 0 and again.stdout == "Hello again.\n", again.stderr

        workspace_before = _fingerprint(tmp_path / "ws")
        config_before = _fingerprint(home / ".nanobot")
        removed = _run(*apt, "purge", "nanobot-desktop", env=env, timeout=600)
        assert removed.returncode == 0, removed.stdout[-3000:] + removed.stderr[-3000:]
        left = [path for path in owned if os.path.lexists(path) and not os.path.isdir(path)]
        assert left == []
        assert not os.path.lexists("/usr/lib/nanobot-desktop") and not os.path.lexists("/usr/bin/nanobot-desktop")
        assert not list(Path("/opt").glob("nanobot*"))
        assert _fingerprint(tmp_path / "ws") == workspace_before  # the person's workspace and config stay
        assert _fingerprint(home / ".nanobot") == config_before
        assert json.loads((home / ".nanobot" / "config.json").read_text(encoding="utf-8"))
        assert entry.is_file()  # their own autostart choice is theirs: a package does not reach into homes
    finally:
        if _run("dpkg-query", "-W", "nanobot-desktop").returncode == 0:
            _run(*apt, "purge", "nanobot-desktop", env=env)


def _fingerprint(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}
