"""Ways to make writes fail for real in tests: a file size limit, a read-only folder, a full disk.

- `run_cli_limited` runs the CLI in a subprocess whose RLIMIT_FSIZE stops any file from growing past a
  size (SIGXFSZ ignored, so the write returns EFBIG instead of killing the process). Works without root.
- `read_only(path)` makes a folder unwritable: as root (for whom permission bits do not stop writes) a
  read-only bind mount of the folder onto itself; otherwise permission bits. Skips when neither works.
- `tiny_tmpfs(path, kib)` mounts a small tmpfs (root only; skips with the reason otherwise) and
  `fill_disk(folder, leave)` fills it up, leaving `leave` bytes free.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _limit_file_size(limit: int):  # returns a preexec_fn
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NANOBOT_")}
    env.update(HOME=str(home), USERPROFILE=str(home), PYTHONDONTWRITEBYTECODE="1")
    return env


def run_cli_limited(*args: str, home: Path, file_size_limit: int | None = None,
                    timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m nanobot_desktop ARGS` with every file it writes limited to `file_size_limit` bytes."""
    preexec = _limit_file_size(file_size_limit) if file_size_limit is not None else None
    return subprocess.run([sys.executable, "-m", "nanobot_desktop", *args], capture_output=True, text=True,
                          env=cli_env(home), timeout=timeout, preexec_fn=preexec, stdin=subprocess.DEVNULL)


def snapshot(*paths: Path) -> dict[Path, bytes | None]:
    """The bytes of each file (None when missing), to compare before/after a failing write."""
    return {path: path.read_bytes() if path.exists() else None for path in paths}


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True)


def _umount(path: Path) -> None:
    """Detach the mount now, even while a file in it is open (`--lazy`): the app's threads (the session
    list's reads, a lock file) may hold one at that moment, and a plain umount then fails with "target is
    busy" and leaves the folder read-only for the rest of the test (a fresh-clone run of
    test_write_failures timed out that way). Files already open stay on the old mount until closed."""
    done = subprocess.run(["umount", "--lazy", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"could not unmount {path}: {done.stderr.strip()}")


class ReadOnly:
    """Make `folder` unwritable (`apply`) and writable again (`undo`), from any thread.

    As root, for whom permission bits do not stop writes, a read-only bind mount of the folder onto
    itself; otherwise the write bits are removed. `apply` skips the test when neither can be done.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.how = "bind mount" if os.geteuid() == 0 else "chmod"
        self._modes: list[tuple[Path, int]] = []
        self._mounted = False

    def check(self) -> None:
        """Skip now (on the test's thread) if this machine cannot do it."""
        if self.how == "bind mount" and shutil.which("mount") is None:
            pytest.skip("running as root, where permissions do not stop writes, and there is no `mount`")

    def apply(self) -> None:
        if self.how == "bind mount":
            bound = _mount("--bind", str(self.folder), str(self.folder))
            if bound.returncode != 0:
                pytest.skip(f"running as root and cannot bind-mount a read-only folder: {bound.stderr.strip()}")
            self._mounted = True
            remounted = _mount("-o", "remount,ro,bind", str(self.folder))
            if remounted.returncode != 0:
                self.undo()
                pytest.skip(f"cannot remount read-only: {remounted.stderr.strip()}")
            return
        for path in [self.folder, *self.folder.rglob("*")]:
            mode = path.stat().st_mode
            self._modes.append((path, mode))
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))

    def undo(self) -> None:
        if self._mounted:
            _umount(self.folder)
            self._mounted = False
        for path, mode in reversed(self._modes):
            path.chmod(mode)
        self._modes = []


@contextmanager
def read_only(folder: Path) -> Iterator[str]:
    """Make `folder` unwritable for this process and its children; yields how ("bind mount"/"chmod")."""
    guard = ReadOnly(folder)
    guard.check()
    guard.apply()
    try:
        yield guard.how
    finally:
        guard.undo()


@contextmanager
def tiny_tmpfs(mount_point: Path, kib: int) -> Iterator[Path]:
    """A tmpfs of `kib` KiB at `mount_point` (root only), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; the RLIMIT_FSIZE tests cover the same code without it")
    mount_point.mkdir(parents=True, exist_ok=True)
    done = _mount("-t", "tmpfs", "-o", f"size={kib}k,mode=0755", "tmpfs", str(mount_point))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        _umount(mount_point)


def fill_disk(folder: Path, leave: int) -> Path:
    """Fill the file system holding `folder` completely, then free about `leave` bytes."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        block = b"\0" * 4096
        while True:
            try:
                if os.write(fd, block) <= 0:
                    break
            except OSError:
                break
    finally:
        os.close(fd)
    size = filler.stat().st_size
    os.truncate(filler, max(0, size - leave))
    return filler
