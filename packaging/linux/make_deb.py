"""Build a Debian package from the one-folder bundle: `python packaging/linux/make_deb.py`.

Writes dist/nanobot-desktop_<version>_<arch>.deb with Debian's own tool (`dpkg-deb --root-owner-group
--build`). What goes where:

    /usr/lib/nanobot-desktop/              the PyInstaller bundle (Debian policy keeps packages out of /opt)
    /usr/bin/nanobot-desktop               a symlink to the bundle's executable (the launcher on PATH)
    /usr/share/applications/<APP_ID>.desktop        the menu entry, with its Show or Hide action
    /usr/share/metainfo/<APP_ID>.metainfo.xml       AppStream metadata (software centres)
    /usr/share/icons/hicolor/<size>/apps/nanobot-desktop.png (16 … 512) and scalable/…svg
    /usr/share/man/man1/nanobot-desktop.1.gz        the manual page
    /usr/share/doc/nanobot-desktop/{copyright,changelog.gz}
    /usr/share/lintian/overrides/nanobot-desktop    the lintian tags a PyInstaller bundle cannot avoid

Depends lists the packages of the system libraries the bundle's ELF files name but the bundle does
not carry (readelf -d, then the loader's index `ldconfig -p`), each looked up with `dpkg -S`; the
installed version becomes the lower bound. No maintainer scripts: dpkg's triggers update the icon
cache and the menu; removing the package never touches anyone's workspace, ~/.nanobot or caches.

lintian finds no error and no warning in it beyond the tags of LINTIAN_OVERRIDES, each overridden with
its reason (they come with any self-contained bundle of upstream-built Python and Qt).

`--version` overrides the package version (the tests build N and N+1 from one bundle this way).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
NAME = "nanobot-desktop"
APP_ID = "io.github.nanobot_desktop.NanobotDesktop"  # nanobot_desktop/identity.py (tests/test_identity.py checks)
ICON = ROOT / "resources" / "icons" / "app.svg"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
MAINTAINER = "nanobot Desktop contributors <nanobot-desktop@users.noreply.github.com>"
HOMEPAGE = "https://github.com/nanobot-desktop/nanobot-desktop"
INSTALL_DIR = f"usr/lib/{NAME}"
# What lintian says about any self-contained PyInstaller bundle (its own Python and Qt, built
# upstream), each with the reason it is overridden; shipped as /usr/share/lintian/overrides/<NAME>.
# The list is exactly the tags that fire (lintian -I reports an override that matches nothing).
LINTIAN_OVERRIDES = {
    "embedded-library": "the bundle carries its own Python and Qt with the libraries they were built with",
    "unstripped-binary-or-object": "upstream's builds of Python extensions, kept byte for byte; the launcher "
                                   "carries its archive appended, which strip would cut off",
    "shared-library-lacks-prerequisites": "bundled Python extensions resolve their symbols in the bundled libpython",
    "library-not-linked-against-libc": "bundled data-only libraries (ICU data) as upstream built them",
    "hardening-no-fortify-functions": "upstream's builds of the bundled Python and Qt",
    "hardening-no-pie": "PyInstaller's prebuilt bootloader",
    "executable-in-usr-lib": "the bundle's executable lives in its own folder, /usr/bin holds the link",
    "shared-library-is-executable": "bundled libraries keep the modes their wheels gave them",
    "spelling-error-in-binary": "strings inside bundled third-party libraries",
    "custom-library-search-path": "PyInstaller and Qt point their libraries at the bundle's own folder",
    "package-contains-documentation-outside-usr-share-doc": "license files of bundled packages stay beside them",
    "extra-license-file": "license files of bundled packages stay beside them",
    "repeated-path-segment": "the bundle keeps Python's and Qt's own folder names",
    "exit-in-shared-library": "upstream's builds of bundled libraries",
}


def say(message: str) -> None:
    print(f"[make_deb] {message}", flush=True)


def app_version() -> str:
    sys.path.insert(0, str(ROOT))
    from nanobot_desktop import __version__

    return __version__


def architecture() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()


def render_icons(target: Path) -> None:
    """hicolor PNGs at the standard sizes, drawn from the SVG by Qt (the same renderer as the app)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    renderer = QSvgRenderer(str(ICON))
    if not renderer.isValid():
        raise SystemExit(f"cannot read the app icon {ICON}")
    for size in ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        path = target / f"{size}x{size}" / "apps" / f"{NAME}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(path), "PNG"):
            raise SystemExit(f"Qt could not write {path}")
    scalable = target / "scalable" / "apps" / f"{NAME}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ICON, scalable)
    del app


def _elf_files(folder: Path) -> list[Path]:
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def system_libraries(bundle: Path) -> set[str]:
    """Paths of the system libraries the bundle's ELF files name (DT_NEEDED) but the bundle does not carry.

    One `readelf -d` over every ELF file and one `ldconfig -p` (the loader's own index), not `ldd` per
    file: the libraries those system libraries need in turn are their packages' dependencies.
    """
    elves = _elf_files(bundle)
    carried = {path.name for path in bundle.rglob("*.so*")}
    dynamic = subprocess.run(["readelf", "-d", "-W", *map(str, elves)], capture_output=True, text=True, check=False)
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic.stdout)) - carried
    index: dict[str, str] = {}
    tag = {"amd64": "x86-64", "arm64": "AArch64"}.get(architecture(), "")
    for line in subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout.splitlines():
        match = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if match and tag in match.group(2):  # this architecture's copy, not a multilib one
            index.setdefault(match.group(1), match.group(3))
    found = set()
    for soname in sorted(needed):
        if soname in index:
            found.add(os.path.realpath(index[soname]))
        elif not soname.startswith("ld-linux"):
            say(f"warning: {soname} is needed but neither bundled nor installed here; it is not in Depends")
    return found


def depends(bundle: Path) -> str:
    """The Depends line: each package that owns a system library the bundle needs, >= its version here."""
    packages: set[str] = set()
    for library in sorted(system_libraries(bundle)):
        owner = _owner(library)
        if owner:
            packages.add(owner)
        else:
            say(f"warning: no Debian package owns {library}; it is not in Depends")
    parts = []
    for package in sorted(packages):
        version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True).stdout
        upstream = re.sub(r"-[^-]*$", "", version.strip()) if version.strip() else ""
        parts.append(f"{package} (>= {upstream})" if upstream else package)
    return ", ".join(parts)


def _owner(library: str) -> str:
    """The package owning `library` (tried under /usr too: Debian 12 merged /lib into /usr/lib)."""
    candidates = [library]
    if library.startswith("/usr/lib/"):
        candidates.append(library.removeprefix("/usr"))
    elif library.startswith("/lib"):
        candidates.append("/usr" + library)
    for candidate in candidates:
        result = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout.split(":")[0].strip().split(",")[0].strip()
    return ""


def metainfo(version: str) -> str:
    template = (HERE / f"{APP_ID}.metainfo.xml").read_text(encoding="utf-8")
    date = time.strftime("%Y-%m-%d", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))))
    return template.replace("@VERSION@", version).replace("@DATE@", date)


def _gzip(source: bytes, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as out:
        out.write(source)


def copyright_text() -> str:
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8") if (ROOT / "LICENSE").exists() else ""
    return ("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
            f"Upstream-Name: {NAME}\n"
            f"Source: {HOMEPAGE}\n\n"
            "Files: *\n"
            "Copyright: 2025-2026 nanobot Desktop contributors\n"
            "License: Expat\n"
            + "".join(f" {line}\n" if line.strip() else " .\n" for line in (license_text or _EXPAT).splitlines())
            + "\nFiles: usr/lib/nanobot-desktop/_internal/*\n"
            "Copyright: the authors of Python, Qt for Python (PySide6) and the bundled Python packages\n"
            "License: various\n"
            " The bundled components keep their own licenses; each package's license file is inside\n"
            " /usr/lib/nanobot-desktop/_internal/ (Python: PSF-2.0, Qt/PySide6: LGPL-3.0).\n")


_EXPAT = """Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction, including
without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the
following conditions:

The above copyright notice and this permission notice shall be included in all copies or substantial
portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT
LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO
EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER
IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
USE OR OTHER DEALINGS IN THE SOFTWARE."""


def control(version: str, arch: str, installed_kb: int, depends_line: str) -> str:
    return (f"Package: {NAME}\n"
            f"Version: {version}\n"
            f"Architecture: {arch}\n"
            f"Maintainer: {MAINTAINER}\n"
            f"Installed-Size: {installed_kb}\n"
            f"Depends: {depends_line}\n"
            "Recommends: dbus-user-session\n"
            "Section: utils\n"
            "Priority: optional\n"
            f"Homepage: {HOMEPAGE}\n"
            "Description: desktop home for the nanobot personal AI agent\n"
            " nanobot Desktop runs the nanobot agent in-process and shows everything it\n"
            " does: a streaming chat with every tool call visible and approved, MEMORY.md\n"
            " and HISTORY.md side by side, bootstrap files and skills with live reload,\n"
            " and a heartbeat that runs background tasks and notifies you.\n"
            " .\n"
            " It reads and writes the same workspace and config as the nanobot\n"
            " command-line tool (~/.nanobot). This package carries its own Python and Qt.\n")


def build_tree(bundle: Path, staging: Path, version: str) -> Path:
    root = staging / "root"
    shutil.rmtree(staging, ignore_errors=True)
    target = root / INSTALL_DIR
    target.parent.mkdir(parents=True)
    shutil.copytree(bundle, target, symlinks=True)
    for path in [target, *target.rglob("*")]:  # dpkg installs these modes; no group/other writes
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod((mode & ~0o022) | 0o644 | (0o111 if path.is_dir() or mode & 0o100 else 0))
    bin_dir = root / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / NAME).symlink_to(f"../lib/{NAME}/{NAME}")
    share = root / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copyfile(HERE / f"{APP_ID}.desktop", share / "applications" / f"{APP_ID}.desktop")
    (share / "metainfo").mkdir(parents=True)
    (share / "metainfo" / f"{APP_ID}.metainfo.xml").write_text(metainfo(version), encoding="utf-8")
    render_icons(share / "icons" / "hicolor")
    _gzip((HERE / f"{NAME}.1").read_bytes(), share / "man" / "man1" / f"{NAME}.1.gz")
    doc = share / "doc" / NAME
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(copyright_text(), encoding="utf-8")
    stamp = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime())
    changelog = (f"{NAME} ({version}) unstable; urgency=medium\n\n"
                 f"  * Release {version}: see the project's README for what changed.\n\n"
                 f" -- {MAINTAINER}  {stamp}\n")
    _gzip(changelog.encode(), doc / "changelog.gz")
    overrides = share / "lintian" / "overrides" / NAME
    overrides.parent.mkdir(parents=True)
    overrides.write_text("".join(f"# {why}\n{NAME}: {tag} *\n" for tag, why in LINTIAN_OVERRIDES.items()),
                         encoding="utf-8")
    for path in [root, *root.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
        elif not path.is_symlink() and not str(path).startswith(str(target)):
            path.chmod(0o644)
    return root


def md5sums(root: Path) -> str:
    lines = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and "DEBIAN" not in path.relative_to(root).parts:
            lines.append(f"{hashlib.md5(path.read_bytes()).hexdigest()}  {path.relative_to(root).as_posix()}\n")
    return "".join(lines)


def make_deb(bundle: Path, out: Path, version: str, compression: str = "xz") -> Path:
    if not (bundle / NAME).is_file():
        raise SystemExit(f"no bundle at {bundle}: run `python3 dev.py package` first")
    arch = architecture()
    staging = out / f".{NAME}-deb-staging"
    try:
        root = build_tree(bundle, staging, version)
        size_kb = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink()) // 1024
        say("finding the system libraries the bundle needs (readelf, ldconfig, dpkg -S) ...")
        debian = root / "DEBIAN"
        debian.mkdir(mode=0o755)
        (debian / "control").write_text(control(version, arch, size_kb, depends(bundle)), encoding="utf-8")
        (debian / "md5sums").write_text(md5sums(root), encoding="utf-8")
        for path in debian.iterdir():
            path.chmod(0o644)
        package = out / f"{NAME}_{version}_{arch}.deb"
        say(f"dpkg-deb --build → {package.name}")
        subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", "-z6", "--build", str(root), str(package)],
                       check=True, stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return package


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the Debian package from the one-folder bundle.")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="folder holding the nanobot-desktop bundle")
    parser.add_argument("--out", type=Path, default=None, help="where the .deb goes (default: --dist)")
    parser.add_argument("--version", default=None, help="the package version (default: the app's)")
    parser.add_argument("--compression", choices=("xz", "gzip"), default="xz",
                        help="xz (smaller, the default) or gzip (several times faster to build: the tests use it)")
    args = parser.parse_args(argv)
    dist = args.dist.resolve()
    out = (args.out or dist).resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    package = make_deb(dist / NAME, out, args.version or app_version(), args.compression)
    say(f"{package} ({package.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.0f} s")
    say(f"check: lintian {package.name}; install: sudo apt-get install ./{package.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
