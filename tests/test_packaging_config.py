"""pyproject.toml's package list against the folders on disk: setuptools treats every folder of a
package as a package and prints a screen of warnings for each one it finds unlisted (the quiet first
run of `python3 dev.py` depends on there being none)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _importable_folders(package: str, folder: Path) -> set[str]:
    """`package` and every folder below `folder` whose name Python could import, as dotted names."""
    found = {package}
    for child in folder.rglob("*"):
        if not child.is_dir() or "__pycache__" in child.parts:
            continue
        parts = child.relative_to(folder).parts
        if all(part.isidentifier() for part in parts):
            found.add(".".join((package, *parts)))
    return found


def test_every_data_and_code_folder_is_a_listed_package():
    setuptools = _config()["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = {name: ROOT / path for name, path in setuptools["package-dir"].items()}
    expected: set[str] = set()
    for name, folder in folders.items():
        if name == "nanobot_desktop":
            expected |= {name, *(f"{name}.{'.'.join(p.parent.relative_to(folder).parts)}"
                                 for p in folder.rglob("__init__.py") if p.parent != folder)}
        else:
            expected |= _importable_folders(name, folder)
    missing = sorted(expected - listed)
    assert not missing, f"add these to [tool.setuptools] packages in pyproject.toml: {missing}"
    stale = sorted(listed - expected)
    assert not stale, f"these listed packages have no folder: {stale}"


def test_license_is_an_spdx_expression_with_a_backend_that_reads_it():
    config = _config()
    assert config["project"]["license"] == "MIT", "a TOML table here makes setuptools warn at every install"
    assert any(req.replace(" ", "").startswith("setuptools>=77") for req in config["build-system"]["requires"])
