"""How this copy of the app was installed, which decides what an update may do.

Only a self-contained bundle (the PyInstaller folder from `python3 dev.py package`, installed from the
tarball) updates itself; a Debian package, a pipx/pip install and a git checkout belong to their
package manager, so the app only says that a new version exists and how to get it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from nanobot_desktop.identity import FOLDER_NAME

DEB_INSTALL_DIR = Path("/usr/lib") / FOLDER_NAME
"""Where the Debian package puts the bundle (packaging/linux/make_deb.py)."""


class InstallKind(Enum):
    BUNDLE = "bundle"
    DEB = "deb"
    PIPX = "pipx"
    PIP = "pip"
    GIT = "git"


@dataclass(frozen=True)
class Installation:
    kind: InstallKind
    app_dir: Path
    """The bundle folder (BUNDLE, DEB), the package's folder otherwise."""

    @property
    def updates_itself(self) -> bool:
        return self.kind is InstallKind.BUNDLE


def bundle_dir() -> Path | None:
    """The running bundle's folder (PyInstaller sets `sys.frozen`; its executable sits in that folder)."""
    if not getattr(sys, "frozen", False):
        return None
    return Path(sys.executable).resolve().parent


def detect() -> Installation:
    """The running copy's installation (checked from the paths of the running files, no subprocess)."""
    folder = bundle_dir()
    if folder is not None:
        return Installation(InstallKind.DEB if folder == DEB_INSTALL_DIR else InstallKind.BUNDLE, folder)
    package = Path(__file__).resolve().parent.parent
    if (package.parent / ".git").exists() and (package.parent / "dev.py").is_file():
        return Installation(InstallKind.GIT, package.parent)
    if "pipx" in package.parts and "venvs" in package.parts:
        return Installation(InstallKind.PIPX, package)
    return Installation(InstallKind.PIP, package)


def how_to_get(kind: InstallKind) -> str:
    """The command that brings a package-manager install to the newest version."""
    return {
        InstallKind.DEB: "sudo apt install ./nanobot-desktop_<version>_amd64.deb (from the release page)",
        InstallKind.PIPX: "pipx upgrade nanobot-desktop",
        InstallKind.PIP: "python3 -m pip install --upgrade nanobot-desktop",
        InstallKind.GIT: "git pull in the checkout, then python3 dev.py",
        InstallKind.BUNDLE: "",
    }[kind]
