"""Who this app is to the operating system: one application id, one folder name, one display name.

The nanobot project ships its own desktop app ("Nanobot Desktop", macOS and Windows), which the
nanobot 0.3.5 CLI finds through `instance-v1.json` in `~/Library/Application Support/Nanobot/terminal/`
or `%LOCALAPPDATA%\\Nanobot\\terminal\\`. This app is a different program: every name the system sees
comes from here, none of them is `Nanobot`, and nothing in this package opens those folders (macOS and
Windows compare folder names without case, so even a `nanobot/` folder there would be upstream's).

Qt-free and import-free, so the engine, the CLI, the packaging scripts and the GUI can all read it.
"""

from __future__ import annotations

__all__ = ["APP_ID", "APP_NAME", "FOLDER_NAME", "ORGANIZATION", "UPSTREAM_FOLDER_NAMES"]

APP_ID = "io.github.nanobot_desktop.NanobotDesktop"
"""Reverse-DNS id: the .desktop file's name, the AppStream id, the D-Bus name, the macOS bundle id,
the Windows AppUserModelID, the LaunchAgent label and the single-instance socket's prefix."""

APP_NAME = "nanobot Desktop"
"""What people read (window titles, notifications, menus)."""

FOLDER_NAME = "nanobot-desktop"
"""The app's own folders: `~/.cache/nanobot-desktop`, `/opt/nanobot-desktop`, the command's name."""

ORGANIZATION = "nanobot-desktop"
"""Qt's organization name, which names QSettings' folder (`~/.config/nanobot-desktop/`): never
`nanobot`, which macOS and Windows would file beside upstream's `Nanobot` folder."""

MACOS_SUPPORT = ("Library", "Application Support")
"""Where macOS keeps applications' data, under the home folder (named here only, with what is not ours)."""
UPSTREAM_FOLDER_NAMES = ("Nanobot", "nanobot")
"""Folder names under Application Support / %LOCALAPPDATA% that belong to the upstream app."""
