"""Where the packaged data folders live.

In a wheel (and the PyInstaller bundle) `templates/` and `resources/` sit inside the package; in a
source checkout (editable install) they sit beside it at the repository root.
"""

from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    candidates = [_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name]
    bundle_root = getattr(sys, "_MEIPASS", None)
    if bundle_root:
        candidates.insert(0, Path(bundle_root) / "nanobot_desktop" / name)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"nanobot Desktop's '{name}' folder is missing (looked in: {', '.join(map(str, candidates))})")


def templates_dir() -> Path:
    """Workspace templates and built-in skills."""
    return _data_dir("templates")


def resources_dir() -> Path:
    """Icons and stylesheets."""
    return _data_dir("resources")


def builtin_skills_dir() -> Path:
    """Skills shipped with the app; workspace skills of the same name shadow them."""
    return templates_dir() / "skills"
