"""Race-free file access for the file tools under the workspace restriction.

Checking a resolved path and then opening it by name leaves a window: a folder swapped for a symlink
in between makes the open land outside. So, with the restriction on, every open starts from a
descriptor of the workspace folder and walks down without following symlinks: `openat2` with
RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS where the kernel has it (Linux 5.6+), else one `openat`
per component with O_NOFOLLOW. Writes create their temp file and rename it inside the parent's
descriptor. A file with more than one hard link is refused, since its other name may be outside.
Sizes are checked on the open descriptor before a byte is read. Without the restriction (or on
Windows, which has no `dir_fd`) plain path operations are used.
"""

from __future__ import annotations

import errno
import functools
import os
import secrets
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from nanobot_desktop.data import builtin_skills_dir
from nanobot_desktop.engine.tools.paths import PathOutsideWorkspace, absolute_tool_path, is_inside, workspace_root

_SYS_OPENAT2 = 437  # x86-64 and arm64
_RESOLVE_NO_MAGICLINKS, _RESOLVE_BENEATH = 0x02, 0x08
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_HAS_DIR_FD = os.open in os.supports_dir_fd and os.name == "posix"


class FileToolError(Exception):
    """A refusal or failure; `str(exc)` is the exact text the tool returns to the model."""


_openat2_missing = not sys.platform.startswith("linux")


@functools.cache
def _openat2_call() -> tuple[Any, Any]:
    """(libc, the open_how struct), made on the first openat2: ctypes stays out of the engine's start."""
    import ctypes

    class OpenHow(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

    return ctypes.CDLL(None, use_errno=True), OpenHow


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int | None:
    """openat2 beneath `dir_fd`; None when this kernel (or a seccomp filter) does not offer it."""
    global _openat2_missing
    if _openat2_missing:
        return None
    import ctypes

    libc, open_how = _openat2_call()
    how = open_how(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    fd = libc.syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dir_fd), rel.encode(), ctypes.byref(how),
                      ctypes.c_size_t(ctypes.sizeof(how)))
    if fd >= 0:
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM):
        _openat2_missing = True
        return None
    raise OSError(err, os.strerror(err), rel)


def _walk(dir_fd: int, parts: tuple[str, ...], create_dirs: bool = False) -> int:
    """A new descriptor of the folder `parts` below `dir_fd`, never following a symlink on the way."""
    current = os.dup(dir_fd)
    try:
        for part in parts:
            if create_dirs:
                try:
                    os.mkdir(part, 0o777, dir_fd=current)
                except FileExistsError:
                    pass
            following = os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=current)
            os.close(current)
            current = following
        return current
    except BaseException:
        os.close(current)
        raise


@dataclass(frozen=True)
class Place:
    """Where a tool argument points: `root` (a trusted folder) and `rel` below it, or just `path`."""

    path: Path
    root: Path | None = None  # None: unrestricted, plain path operations
    rel: PurePosixPath = field(default_factory=lambda: PurePosixPath("."))
    read_only: bool = False  # the bundled skills: readable, never written

    @property
    def guarded(self) -> bool:
        return self.root is not None and _HAS_DIR_FD

    def open(self, flags: int, mode: int = 0o644) -> int:
        """Open the target itself (file or folder), race-free when guarded."""
        if not self.guarded:
            return os.open(self.path, flags | getattr(os, "O_BINARY", 0), mode)
        assert self.root is not None
        root_fd = os.open(self.root, _DIR_FLAGS)
        try:
            rel = str(self.rel)
            fd = _openat2(root_fd, rel, flags, mode)
            if fd is not None:
                return fd
            parent = _walk(root_fd, self.rel.parent.parts) if self.rel.parts else os.dup(root_fd)
            try:
                return os.open(self.rel.name or ".", flags | _NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)
            finally:
                os.close(parent)
        finally:
            os.close(root_fd)

    def open_parent(self, create: bool) -> int:
        """A descriptor of the target's folder (created if asked), race-free when guarded."""
        if not self.guarded:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path.parent, _DIR_FLAGS)
        assert self.root is not None
        root_fd = os.open(self.root, _DIR_FLAGS)
        try:
            return _walk(root_fd, self.rel.parent.parts, create_dirs=create)
        finally:
            os.close(root_fd)


def locate(raw: str, ctx: object, *, bundled_ok: bool = False) -> Place:
    """Resolve a tool's path argument; raises PathOutsideWorkspace when restricted and outside.

    With `bundled_ok`, the app's bundled skills are reachable read-only even under the restriction
    (the system prompt points the model at them).
    """
    root = workspace_root(ctx)  # type: ignore[arg-type]
    resolved = absolute_tool_path(raw, root)
    if not getattr(ctx, "restrict_to_workspace", False):
        return Place(resolved)
    if is_inside(resolved, root):
        return Place(resolved, root, PurePosixPath(resolved.relative_to(root).as_posix()))
    if bundled_ok:
        try:
            bundled = builtin_skills_dir().resolve()
        except (FileNotFoundError, OSError):
            bundled = None
        if bundled is not None and is_inside(resolved, bundled):
            return Place(resolved, bundled, PurePosixPath(resolved.relative_to(bundled).as_posix()), read_only=True)
    raise PathOutsideWorkspace(raw, root)


def _refuse_links(st: os.stat_result, place: Place, shown: str) -> None:
    if place.root is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise FileToolError(
            f"Error: {shown} has {st.st_nlink} hard links; with the workspace restriction on, files with more "
            "than one hard link are refused (another name of the file may be outside the workspace).")


def _open_existing(place: Place, shown: str) -> int:
    try:
        return place.open(os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
    except FileNotFoundError:
        raise FileToolError(f"Error: File not found: {shown}") from None
    except PermissionError:
        raise FileToolError(f"Error: Permission denied: {shown}") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EXDEV, errno.ENOTDIR):
            raise FileToolError(f"Error: {shown} changed into a link leading out of the workspace while it was "
                                "being opened; refused.") from None
        raise FileToolError(f"Error: Cannot open {shown}: {exc.strerror}") from None


def file_size(place: Place, shown: str) -> int | None:
    """Size of an existing regular file (None if there is none); raises FileToolError for what is refused."""
    try:
        fd = _open_existing(place, shown)
    except FileToolError as exc:
        if str(exc).startswith("Error: File not found"):
            return None
        raise
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if stat.S_ISDIR(st.st_mode):
        raise FileToolError(f"Error: {shown} is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise FileToolError(f"Error: Not a file: {shown}")
    _refuse_links(st, place, shown)
    return st.st_size


def read_limited(place: Place, shown: str, limit: int, too_large: str) -> bytes:
    """The whole file, if it has at most `limit` bytes (checked on the descriptor before reading).

    `too_large` is formatted with `size` and `limit` for the refusal.
    """
    fd = _open_existing(place, shown)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode) or not stat.S_ISREG(st.st_mode):
            raise FileToolError(f"Error: Not a file: {shown}")
        _refuse_links(st, place, shown)
        if st.st_size > limit:
            raise FileToolError(too_large.format(size=st.st_size, limit=limit))
        chunks: list[bytes] = []
        remaining = limit + 1  # a file that grew since fstat is still cut at the limit
        while remaining > 0 and (chunk := os.read(fd, min(remaining, 1 << 20))):
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise FileToolError(too_large.format(size=len(data), limit=limit))
        return data
    finally:
        os.close(fd)


def write_atomic(place: Place, data: bytes, shown: str) -> None:
    """Replace the file atomically, its temp file and rename inside the parent's descriptor.

    The dir-fd twin of `workspace.atomic_write_bytes` (same steps: temp, fsync, mode, rename, fsync dir).
    """
    if place.read_only:
        raise FileToolError(f"Error: {shown} is a bundled skill of the app and cannot be changed; copy it into "
                            "the workspace's skills folder to change it.")
    try:
        parent = place.open_parent(create=True)
    except OSError as exc:
        raise FileToolError(f"Error: Cannot write {shown}: {exc.strerror}") from None
    name = place.path.name
    temp = f".{name}.{secrets.token_hex(4)}.tmp"
    try:
        try:
            old_mode: int | None = stat.S_IMODE(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            old_mode = None
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=parent)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            if old_mode is not None:
                os.fchmod(fd, old_mode)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        os.fsync(parent)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=parent)
        except OSError:
            pass
        raise
    finally:
        os.close(parent)


def list_entries(place: Place, shown: str) -> list[tuple[str, bool]]:
    """(name, is_folder) of a folder's entries, sorted, listed through its descriptor."""
    try:
        fd = place.open(_DIR_FLAGS)
    except FileNotFoundError:
        raise FileToolError(f"Error: Directory not found: {shown}") from None
    except NotADirectoryError:
        raise FileToolError(f"Error: Not a directory: {shown}") from None
    except PermissionError:
        raise FileToolError(f"Error: Permission denied: {shown}") from None
    except OSError as exc:
        raise FileToolError(f"Error: Cannot list {shown}: {exc.strerror}") from None
    try:
        if not _HAS_DIR_FD:
            return sorted((e.name, e.is_dir()) for e in os.scandir(place.path))
        entries = []
        for name in sorted(os.listdir(fd)):
            try:
                is_dir = stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
            except OSError:
                is_dir = False
            entries.append((name, is_dir))
        return entries
    finally:
        os.close(fd)
