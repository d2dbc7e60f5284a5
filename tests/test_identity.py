"""One application id everywhere the system sees the app, and never the upstream app's folders.

nanobot 0.3.5's CLI looks for the nanobot project's own desktop app through `instance-v1.json` in
`~/Library/Application Support/Nanobot/terminal/` (macOS) and `%LOCALAPPDATA%\\Nanobot\\terminal\\`
(Windows). This app must be told apart from it: its own id, its own folders.
"""

from __future__ import annotations

import configparser
import os
import plistlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nanobot_desktop import identity
from nanobot_desktop.gui.shell import autostart
from tests.conftest import write_test_config

ROOT = Path(__file__).resolve().parent.parent
APP_ID = identity.APP_ID


def test_the_id_is_a_valid_reverse_dns_and_dbus_name_that_is_not_upstreams() -> None:
    # D-Bus well-known names: at least two dot-separated elements of [A-Za-z0-9_-], none starting with a digit.
    assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+", APP_ID)
    assert len(APP_ID) <= 255
    assert "-" not in APP_ID  # AppStream and Flatpak advise against dashes in ids
    assert not APP_ID.lower().startswith(("ai.nanobot", "com.nanobot"))  # no claim on the nanobot project's names
    assert identity.ORGANIZATION.lower() not in ("nanobot",) and identity.FOLDER_NAME.lower() != "nanobot"


def test_every_platform_file_names_the_same_id() -> None:
    desktop = ROOT / "packaging" / "linux" / f"{APP_ID}.desktop"
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment, method-assign]
    entry.read(desktop, encoding="utf-8")
    assert entry["Desktop Entry"]["Exec"] == "nanobot-desktop"
    assert entry["Desktop Action toggle"]["Exec"] == "nanobot-desktop --toggle"

    plist = plistlib.loads((ROOT / "packaging" / "macos" / "Info.plist").read_bytes())
    assert plist["CFBundleIdentifier"] == APP_ID

    inno = (ROOT / "packaging" / "windows" / "installer.iss").read_text(encoding="utf-8")
    assert f'#define AppUserModelId "{APP_ID}"' in inno
    assert inno.count('AppUserModelID: "{#AppUserModelId}"') == 3  # start menu, desktop, start-up shortcuts

    tarball_script = (ROOT / "packaging" / "linux" / "make_tarball.py").read_text(encoding="utf-8")
    assert f'APP_ID = "{APP_ID}"' in tarball_script
    assert autostart.MAC_LABEL == APP_ID
    assert "ai.nanobot" not in (ROOT / "packaging" / "README.md").read_text(encoding="utf-8")


def test_no_module_knows_the_upstream_apps_folders() -> None:
    """Nothing in the package can open Nanobot/terminal or instance-v1.json: not even by accident."""
    offenders = []
    for path in sorted((ROOT / "nanobot_desktop").rglob("*.py")):
        if path.name == "identity.py":  # it names them in order to say they are not ours
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("instance-v1", "Nanobot/terminal", "Nanobot\\\\terminal", '"Nanobot"', "'Nanobot'",
                       "Application Support"):
            if needle in text:
                offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert offenders == []


@pytest.mark.slow
def test_a_turn_and_onboarding_leave_the_upstream_apps_folders_alone(fake_openai, tmp_path: Path) -> None:
    """Run the real command with a home that has the macOS and Windows data folders: none of
    upstream's appears, and the app's own data goes under its own names."""
    home = tmp_path / "home"
    local_app_data = home / "AppData" / "Local"
    support = home / "Library" / "Application Support"
    for folder in (local_app_data, home / "AppData" / "Roaming", support):
        folder.mkdir(parents=True)
    fake_openai.add_text("Hello.")
    config = write_test_config(home / ".nanobot" / "config.json", fake_openai.base_url, tmp_path / "ws")
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(HOME=str(home), LOCALAPPDATA=str(local_app_data), APPDATA=str(home / "AppData" / "Roaming"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), QT_QPA_PLATFORM="offscreen")

    for arguments in (["agent", "-m", "hi", "--config", str(config)], ["onboard", "--config", str(config)]):
        done = subprocess.run([sys.executable, "-m", "nanobot_desktop", *arguments], env=env, capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
        assert done.returncode == 0, done.stderr

    assert list(local_app_data.iterdir()) == [] and list(support.iterdir()) == []
    assert list((home / "AppData" / "Roaming").iterdir()) == []
    made = {path.name for path in (home / ".cache").iterdir()} if (home / ".cache").exists() else set()
    assert made <= {identity.FOLDER_NAME}
    assert not any(path.name in identity.UPSTREAM_FOLDER_NAMES for path in home.rglob("*") if path.is_dir()
                   and path.parent != home)  # ~/.nanobot is the CLI's own config folder, shared on purpose
