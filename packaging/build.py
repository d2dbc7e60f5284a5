"""Build the one-folder desktop bundle: `python packaging/build.py` → dist/nanobot-desktop/.

Run it with the project's virtualenv (`python3 dev.py package` does). It installs PyInstaller into
that environment when it is missing, draws the platform icons from resources/icons/app.svg, runs
PyInstaller on packaging/nanobot-desktop.spec, checks that the bundle answers `--help`, and prints
its size. PyInstaller cannot cross-build: run it on each target system (Linux, Windows, macOS).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "nanobot-desktop.spec"
APP_ICON = ROOT / "resources" / "icons" / "app.svg"
NAME = "nanobot-desktop"


def say(message: str) -> None:
    print(f"[build] {message}", flush=True)


def ensure_pyinstaller() -> None:
    import importlib.util

    if importlib.util.find_spec("PyInstaller") is None:
        say("PyInstaller is not installed in this environment; installing it with pip ...")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "pyinstaller>=6"], check=True)


def draw_icons(target: Path) -> list[Path]:
    """PNG (Linux), ICO (Windows) and ICNS (macOS) renderings of the SVG icon, via Qt's own writers."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])  # Qt's image writers need one
    renderer = QSvgRenderer(str(APP_ICON))
    if not renderer.isValid():
        raise SystemExit(f"cannot read the app icon {APP_ICON}")
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for suffix, size in ((".png", 256), (".ico", 256), (".icns", 512)):
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        path = target / f"{NAME}{suffix}"
        if image.save(str(path)):
            written.append(path)
        else:
            say(f"Qt could not write {path.name} here (no image plugin for it); the bundle goes without it")
    del app
    return written


def folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


def bundle_executable(dist: Path) -> Path:
    suffix = ".exe" if sys.platform == "win32" else ""
    cli = dist / NAME / f"{NAME}-cli{suffix}"  # the console twin on Windows
    return cli if cli.exists() else dist / NAME / f"{NAME}{suffix}"


def build(dist: Path, work: Path, clean: bool) -> Path:
    ensure_pyinstaller()
    icons = draw_icons(ROOT / "build" / "icons")
    say(f"icons: {', '.join(path.name for path in icons) or 'none'}")
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
               "--distpath", str(dist), "--workpath", str(work), str(SPEC)]
    if clean:
        command.insert(3, "--clean")
    say("running PyInstaller (about a minute) ...")
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT)
    say(f"PyInstaller finished in {time.perf_counter() - started:.0f} s")
    return dist / NAME


def ship_update_root(folder: Path, root: Path | None) -> None:
    """Put the release keys' root metadata beside the bundle's channel.json (nanobot_desktop/updates/channel.py)."""
    channel = folder / "_internal" / "nanobot_desktop" / "resources" / "updates"
    if root is None:
        say("no --update-root: this bundle will say it cannot check for updates")
        return
    if not channel.is_dir():
        raise SystemExit(f"the bundle has no {channel}: cannot ship the update root")
    shutil.copyfile(root, channel / "root.json")
    say(f"update channel: {channel / 'channel.json'} with the root metadata {root}")


def smoke_test(dist: Path) -> None:
    """The bundle must at least start Python, import the app and parse its command line."""
    executable = bundle_executable(dist)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([str(executable), "--help"], capture_output=True, text=True, env=env, timeout=120)
    if result.returncode != 0 or "nanobot-desktop" not in result.stdout:
        raise SystemExit(f"the bundle's `--help` failed (exit {result.returncode}):\n{result.stdout}{result.stderr}")
    say(f"smoke test: `{executable.name} --help` works")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the nanobot Desktop one-folder bundle with PyInstaller.")
    parser.add_argument("--distpath", type=Path, default=ROOT / "dist", help="where the bundle folder goes")
    parser.add_argument("--workpath", type=Path, default=ROOT / "build" / "pyinstaller",
                        help="PyInstaller's scratch folder")
    parser.add_argument("--clean", action="store_true", help="ignore PyInstaller's cache from earlier builds")
    parser.add_argument("--deb", action="store_true", help="then build the Debian package from it (linux/make_deb.py)")
    parser.add_argument("--update-root", type=Path, metavar="ROOT_JSON",
                        help="the update repository's signed root metadata (packaging/update_repo.py) to ship in the "
                             "bundle: without it the bundle cannot check for updates")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    folder = build(args.distpath.resolve(), args.workpath.resolve(), args.clean)
    ship_update_root(folder, args.update_root)
    smoke_test(args.distpath.resolve())
    size_mb = folder_size(folder) / 1e6
    say(f"bundle: {folder} ({size_mb:.0f} MB), built in {time.perf_counter() - started:.0f} s")
    if args.deb:
        subprocess.run([sys.executable, str(ROOT / "packaging" / "linux" / "make_deb.py"),
                        "--dist", str(args.distpath.resolve())], check=True)
    elif sys.platform.startswith("linux"):
        say("Debian package: python packaging/linux/make_deb.py (or build.py --deb); "
            "tarball: python packaging/linux/make_tarball.py")
    elif sys.platform == "win32":
        say("installer: iscc packaging\\windows\\installer.iss  (needs Inno Setup 6; see packaging/README.md)")
    elif sys.platform == "darwin":
        say(f"app bundle: {args.distpath / 'nanobot Desktop.app'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
