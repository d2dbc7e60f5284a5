"""Pack the Linux bundle for people: `python packaging/linux/make_tarball.py` (after packaging/build.py).

Writes dist/nanobot-desktop-<version>-linux-<arch>.tar.gz holding one folder with the one-folder
bundle, the menu entry, the icon and install.sh (per-user install into ~/.local, no root; also
`install.sh --uninstall`). Unpack anywhere, run ./install.sh, find "nanobot Desktop" in the menu.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ICON = ROOT / "resources" / "icons" / "app.svg"
NAME = "nanobot-desktop"
APP_ID = "io.github.nanobot_desktop.NanobotDesktop"  # nanobot_desktop/identity.py (tests/test_identity.py checks)


def version() -> str:
    sys.path.insert(0, str(ROOT))
    from nanobot_desktop import __version__

    return __version__


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Reproducible-ish archives: no owner names, the builder's uid/gid do not leak into them."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def make_tarball(dist: Path) -> Path:
    bundle = dist / NAME
    executable = bundle / NAME
    if not executable.is_file():
        raise SystemExit(f"no bundle at {bundle}: run `python packaging/build.py` first")
    if not ICON.is_file():
        raise SystemExit(f"the app icon {ICON} is missing")
    top = f"{NAME}-{version()}"
    archive = dist / f"{top}-linux-{platform.machine() or 'unknown'}.tar.gz"
    staging = dist / f".{top}-staging"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
        shutil.copy2(HERE / f"{APP_ID}.desktop", staging / f"{APP_ID}.desktop")
        shutil.copy2(ICON, staging / f"{NAME}.svg")
        shutil.copy2(HERE / "install.sh", staging / "install.sh")
        (staging / "install.sh").chmod(0o755)
        with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
            tar.add(bundle, arcname=f"{top}/{NAME}", filter=_anonymous)
            for item in sorted(staging.iterdir()):
                tar.add(item, arcname=f"{top}/{item.name}", filter=_anonymous)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Make the Linux tarball (bundle + menu entry + icon + install.sh).")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="folder holding the nanobot-desktop bundle")
    args = parser.parse_args(argv)
    archive = make_tarball(args.dist.resolve())
    print(f"{archive} ({archive.stat().st_size / 1e6:.0f} MB)")
    print(f"install: tar xzf {archive.name} && ./{archive.name.split('-linux-')[0]}/install.sh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
