"""Start nanobot Desktop at login (config `desktop.startAtLogin`), the way each OS expects it.

- Linux (and other XDG desktops): `~/.config/autostart/nanobot-desktop.desktop` (XDG Autostart).
- Windows: a value in HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run (a Startup-folder
  shortcut would need COM to create a .lnk; the Run key is the documented equivalent).
- macOS: a LaunchAgent plist in ~/Library/LaunchAgents with RunAtLoad.
Only the Linux path is tested here; the others follow the platforms' documented formats.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import sys
from pathlib import Path

from nanobot_desktop.engine import atomic_write_bytes, atomic_write_text
from nanobot_desktop.identity import APP_ID, APP_NAME, FOLDER_NAME

__all__ = ["AUTOSTART_NAME", "autostart_file", "default_command", "desktop_entry", "is_start_at_login",
           "set_start_at_login"]

AUTOSTART_NAME = FOLDER_NAME
WINDOWS_RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
WINDOWS_VALUE_NAME = APP_NAME
MAC_LABEL = APP_ID


def default_command() -> list[str]:
    """What login should run: the launcher on PATH when it is this bundle (the Debian package's
    /usr/bin/nanobot-desktop, which survives upgrades), else the bundle's executable when frozen,
    else the installed script."""
    if getattr(sys, "frozen", False):
        launcher = shutil.which(FOLDER_NAME)
        if launcher and os.path.realpath(launcher) == os.path.realpath(sys.executable):
            return [launcher]
        return [sys.executable]
    return [FOLDER_NAME]


def _platform(platform: str | None) -> str:
    platform = platform or sys.platform
    if platform.startswith("win"):
        return "windows"
    if platform == "darwin":
        return "mac"
    return "xdg"


def autostart_file(platform: str | None = None) -> Path | None:
    """The file that makes login start the app (None on Windows, which uses the registry)."""
    kind = _platform(platform)
    if kind == "windows":
        return None
    if kind == "mac":
        return Path.home() / "Library" / "LaunchAgents" / f"{MAC_LABEL}.plist"
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "autostart" / f"{AUTOSTART_NAME}.desktop"


def _desktop_exec(command: list[str]) -> str:
    """Quote arguments as the Desktop Entry spec wants (double quotes; \\, ", `, $ escaped)."""
    def quote(arg: str) -> str:
        if arg and not any(c in arg for c in ' \t\n"\'\\><~|&;$*?#()`'):
            return arg.replace("%", "%%")
        escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
        return f'"{escaped}"'.replace("%", "%%")

    return " ".join(quote(arg) for arg in command)


def desktop_entry(command: list[str]) -> str:
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=nanobot Desktop\n"
        "Comment=Your nanobot agent, in the tray\n"
        f"Exec={_desktop_exec(command)}\n"
        "Icon=nanobot-desktop\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def set_start_at_login(enabled: bool, *, command: list[str] | None = None, platform: str | None = None) -> None:
    """Register (or unregister) the app to start at login; OSError says why it could not."""
    command = command or default_command()
    kind = _platform(platform)
    if kind == "windows":
        _set_windows(enabled, command)
        return
    path = autostart_file(platform)
    assert path is not None
    if not enabled:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "mac":
        plist = {"Label": MAC_LABEL, "ProgramArguments": command, "RunAtLoad": True, "ProcessType": "Interactive"}
        atomic_write_bytes(path, plistlib.dumps(plist))
    else:
        atomic_write_text(path, desktop_entry(command))


def is_start_at_login(platform: str | None = None) -> bool:
    """True when login will start the app (an autostart entry that is not hidden or disabled)."""
    kind = _platform(platform)
    if kind == "windows":
        return _windows_value() is not None
    path = autostart_file(platform)
    assert path is not None
    if not path.is_file():
        return False
    if kind == "mac":
        return True
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    lines = {line.strip().lower() for line in text.splitlines()}
    return "hidden=true" not in lines and "x-gnome-autostart-enabled=false" not in lines


# --- Windows ----------------------------------------------------------------------------------------

def _set_windows(enabled: bool, command: list[str]) -> None:
    if sys.platform != "win32":  # winreg exists only there (this also lets mypy check the rest for Windows)
        raise OSError("the Windows registry exists only on Windows")
    import winreg

    with winreg.CreateKey(winreg.HKEY_CURRENT_USER, WINDOWS_RUN_KEY) as key:
        if enabled:
            value = " ".join(f'"{arg}"' if " " in arg else arg for arg in command)
            winreg.SetValueEx(key, WINDOWS_VALUE_NAME, 0, winreg.REG_SZ, value)
        else:
            try:
                winreg.DeleteValue(key, WINDOWS_VALUE_NAME)
            except FileNotFoundError:
                pass


def _windows_value() -> str | None:
    if sys.platform != "win32":
        return None
    import winreg
    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, WINDOWS_RUN_KEY) as key:
            value, _kind = winreg.QueryValueEx(key, WINDOWS_VALUE_NAME)
            return str(value)
    except OSError:
        return None

