"""The OS sandbox `exec` runs in: Landlock for files (and TCP), namespaces for processes and network.

Why a kernel mechanism and not patterns: a shell can build any path at run time (`${PWD%/*}`,
base64, `python3 -c`), so only the kernel can tell where a command really reaches.

On Linux the command is started through this very file run as a script (`python -I -S sandbox.py
SPEC`, standard library only, so it starts fast and imports none of the app). The launcher
1. enters a new user + PID + mount namespace (and a network namespace when the network is off), so
   every process the command starts dies with the namespace's first process when the call ends;
   without user namespaces it becomes a child subreaper and kills what was left behind;
2. mounts a fresh /proc (only the sandbox's own processes are visible) and makes every mount but the
   workspace and the temp folder read-only (chmod, chown and timestamps are not Landlock's);
3. restricts itself with Landlock: reads of the system, but not of the hidden folders (the user's
   home, the config folder, the app's own files, /tmp); writes only in the workspace and a private
   temp folder; signals and abstract sockets only inside the sandbox;
4. runs `/bin/sh -c COMMAND` with the environment the engine built from an allow-list.
The module is long-ish (~440 lines) because launcher and policy must stay in one stdlib-only file.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ---- Landlock ABI (linux/landlock.h) -----------------------------------------------------------------
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # same on x86-64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
_FILE_ONLY = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
# ---- other kernel constants ----------------------------------------------------------------------------
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER, _PR_SET_NO_NEW_PRIVS = 1, 36, 38
_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 8, 32, 4096
_MS_NOATIME, _MS_NODIRATIME, _MS_REC, _MS_PRIVATE, _MS_RELATIME = 1024, 2048, 1 << 14, 1 << 18, 1 << 21
# Per-mount flags a user namespace may not drop: a read-only remount must repeat them.
_LOCKED_FLAGS = {"nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC, "noatime": _MS_NOATIME,
                 "nodiratime": _MS_NODIRATIME, "relatime": _MS_RELATIME}
# Devices every shell script writes to or reads from.
# The narrow view (nanobot 0.3.5's tools.exec.sandbox, engine/tools/exec_binds.py): what its bubblewrap
# view shows of the system, read-only, and /proc and /dev; the rest of / is not readable.
SYSTEM_VIEW = ("/usr", "/bin", "/lib", "/lib64", "/etc/alternatives", "/etc/ssl/certs", "/etc/pki/tls/certs",
               "/etc/pki/ca-trust", "/etc/crypto-policies", "/etc/resolv.conf", "/etc/ld.so.cache", "/proc", "/dev")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
# Variables a command may see; everything else (API keys, tokens, NANOBOT_*) stays behind.
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "COLUMNS", "LINES")
ENV_ALLOW_PREFIXES = ("LC_",)

# ctypes (libc and the Landlock structs) is loaded on first use: a turn that runs no command, and the
# engine's start, never pay for it (~3 ms).
@functools.cache
def _libc() -> Any:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


@functools.cache
def _structs() -> tuple[Any, Any, Any]:
    """(ruleset attr, path-beneath attr, net-port attr): the Landlock syscalls' argument structs."""
    import ctypes

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    class PathBeneathAttr(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    class NetPortAttr(ctypes.Structure):
        _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]

    return RulesetAttr, PathBeneathAttr, NetPortAttr


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none). Asking changes nothing in the calling process."""
    import ctypes

    if not sys.platform.startswith("linux"):
        return 0
    version = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def user_namespaces_possible() -> bool:
    """Whether an unprivileged process may create a user namespace (as the kernel's knobs say)."""
    if _read_int("/proc/sys/user/max_user_namespaces") == 0:
        return False
    if _read_int("/proc/sys/kernel/unprivileged_userns_clone") == 0:
        return False
    return _read_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") != 1


@dataclass(frozen=True)
class SandboxSupport:
    """What this system can do; `summary` is the line Settings and approval cards show."""

    available: bool
    summary: str
    landlock_abi: int = 0
    namespaces: bool = False

    def network_off_enforced(self) -> bool:
        return self.namespaces or self.landlock_abi >= 4


_SUPPORT: SandboxSupport | None = None


def sandbox_support() -> SandboxSupport:
    """Probe once per process (a syscall and a few /proc reads: cheap, safe on the GUI thread)."""
    global _SUPPORT
    if _SUPPORT is None:
        _SUPPORT = _probe()
    return _SUPPORT


def _probe() -> SandboxSupport:
    if not sys.platform.startswith("linux"):
        return SandboxSupport(False, f"not sandboxed: no sandbox is wired up on {sys.platform}")
    if getattr(sys, "frozen", False):
        return SandboxSupport(False, "not sandboxed: the packaged app cannot start the sandbox launcher")
    abi = landlock_abi()
    if abi < 1:
        return SandboxSupport(False, "not sandboxed: this kernel has no Landlock (Linux 5.13 or newer needed)")
    namespaces = user_namespaces_possible()
    parts = f"Landlock ABI {abi}" + (", PID/network namespaces" if namespaces else ", subreaper")
    return SandboxSupport(True, f"sandboxed ({parts})", abi, namespaces)


@dataclass
class SandboxPolicy:
    """What one exec call may touch. Paths are absolute; `hidden` folders are unreadable."""

    workspace: Path
    temp_dir: Path
    hidden: list[Path] = field(default_factory=list)
    network: bool = True
    namespaces: bool = True  # False: Landlock and a subreaper only (where user namespaces are off)
    limits: ResourceLimits = field(default_factory=lambda: ResourceLimits())
    # nanobot 0.3.5's tools.exec.sandbox (engine/tools/exec_binds.py): only system folders, the workspace
    # and these extra folders are readable; `read_write` ones are also writable.
    system_only: bool = False
    read_only: list[Path] = field(default_factory=list)
    read_write: list[Path] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps({"workspace": str(self.workspace), "temp_dir": str(self.temp_dir),
                           "hidden": [str(p) for p in self.hidden], "network": self.network,
                           "namespaces": self.namespaces, "limits": self.limits.as_dict(),
                           "system_only": self.system_only, "read_only": [str(p) for p in self.read_only],
                           "read_write": [str(p) for p in self.read_write]})


@dataclass(frozen=True)
class ResourceLimits:
    """Per-call bounds (rlimits, set by the launcher for the command and all it starts; 0: no bound).

    memory: private writable memory (RLIMIT_DATA) per process; processes: RLIMIT_NPROC (counted per
    user namespace, so a call's own); open files per process; CPU seconds per process; the largest
    file a command may write (which also bounds what it can pour into the disk per file).
    """

    memory_mb: int = 2048
    processes: int = 256
    open_files: int = 1024
    cpu_s: int = 300
    file_size_mb: int = 1024

    def as_dict(self) -> dict[str, int]:
        return {"memory_mb": self.memory_mb, "processes": self.processes, "open_files": self.open_files,
                "cpu_s": self.cpu_s, "file_size_mb": self.file_size_mb}


def app_paths() -> list[Path]:
    """The app's own files: its package folder (its checkout, when run from source) and its virtualenv."""
    package = Path(__file__).resolve().parents[2]  # nanobot_desktop/
    paths = [package]
    if (package.parent / "pyproject.toml").is_file():  # a source checkout: templates, tests, dev.py too
        paths.append(package.parent)
    if sys.prefix != sys.base_prefix:
        paths.append(Path(sys.prefix).resolve())
    return paths


def default_hidden(config_path: Path | None) -> list[Path]:
    """Folders exec must never read: home, config folder, app files, shared temp and runtime folders."""
    candidates = [Path.home(), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), *app_paths()]
    if config_path is not None:
        candidates.append(Path(config_path).expanduser().parent)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        candidates.append(Path(runtime))
    if hasattr(os, "getuid"):  # the session's sockets live there even when the variable is not set
        candidates.append(Path(f"/run/user/{os.getuid()}"))
    seen: list[Path] = []
    for candidate in candidates:
        try:
            resolved = candidate.resolve()
        except OSError:
            continue
        if resolved != Path("/") and resolved not in seen:
            seen.append(resolved)
    return seen


def sandbox_environment(temp_dir: Path, path_append: str = "", source: dict[str, str] | None = None) -> dict[str, str]:
    """The command's environment: only allow-listed variables; HOME and TMPDIR are the private temp folder."""
    source = dict(os.environ if source is None else source)
    env = {k: v for k, v in source.items() if k in ENV_ALLOW or k.startswith(ENV_ALLOW_PREFIXES)}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if path_append:
        env["PATH"] = env["PATH"] + os.pathsep + path_append
    for key in ("HOME", "TMPDIR", "TMP", "TEMP"):
        env[key] = str(temp_dir)
    return env


def launcher_argv(spec_fd: int, command: str) -> list[str]:
    """argv that runs `command` under the policy the launcher reads from descriptor `spec_fd`.

    The policy (every hidden path) goes through a pipe, not argv: inside the sandbox /proc/1/cmdline
    is the launcher's, and it must not tell a command what is hidden where.
    """
    return [sys.executable, "-I", "-S", str(Path(__file__).resolve()), f"--spec-fd={spec_fd}", command]


# ================================ launcher side (runs in the child process) ================================

def _check(result: int, what: str) -> int:
    import ctypes

    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def read_rules(hidden: list[Path]) -> tuple[list[Path], list[Path]]:
    """Folders and files to grant read access so that all of `/` is readable except `hidden`.

    Landlock only grants, so a folder holding a hidden one is opened up entry by entry instead.
    Symlinks get no rule: access is checked on the real target, which has (or lacks) its own.
    """
    folders: list[Path] = []
    files: list[Path] = []

    def grant(path: Path) -> None:
        if any(_under(path, h) for h in hidden):
            return
        if not any(path in h.parents for h in hidden):
            folders.append(path)
            return
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                grant(Path(entry.path))
            else:
                files.append(Path(entry.path))

    grant(Path("/"))
    return folders, files


def _add_path_rule(ruleset: int, path: str, access: int) -> None:
    import ctypes

    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        attr = _structs()[1](access, fd)
        _check(_libc().syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                             ctypes.byref(attr), ctypes.c_uint32(0)), f"landlock_add_rule {path}")
    finally:
        os.close(fd)


def apply_landlock(spec: dict[str, Any], net_namespace: bool, own_temp: list[str] | None = None) -> None:
    """Restrict this process (and all it starts) to the policy in `spec`; raises if Landlock fails."""
    import ctypes

    abi = landlock_abi()
    if abi < 1:
        raise OSError("Landlock is not available")
    all_fs = _FS_BY_ABI.get(abi, (1 << 16) - 1)
    ruleset_attr = _structs()[0]
    attr = ruleset_attr(all_fs, 0, 0)
    if abi >= 4 and not spec["network"] and not net_namespace:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP  # handled and never granted: no TCP
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL
    size = ctypes.sizeof(ruleset_attr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = _check(_libc().syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                                   ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        if spec.get("system_only"):  # 0.3.5's view: system folders only, plus what the config binds
            folders, files = [], []
            for path in (*SYSTEM_VIEW, *spec.get("read_only", [])):
                if os.path.isdir(path):
                    folders.append(Path(path))
                elif os.path.exists(path):
                    files.append(Path(path))
        else:
            folders, files = read_rules([Path(p) for p in spec["hidden"]])
            folders += [Path(p) for p in spec.get("read_only", []) if os.path.isdir(p)]
            files += [Path(p) for p in spec.get("read_only", []) if os.path.isfile(p)]
        for folder in folders:
            _add_path_rule(ruleset, str(folder), _READ & all_fs)
        for file in files:
            _add_path_rule(ruleset, str(file), (FS_EXECUTE | FS_READ_FILE) & all_fs)
        for device in _DEVICES:
            _add_path_rule(ruleset, device, (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV) & all_fs)
        for writable in (spec["workspace"], spec["temp_dir"], *spec.get("read_write", []), *(own_temp or [])):
            # own_temp: the private tmpfs folders (/tmp, /var/tmp, /dev/shm)
            _add_path_rule(ruleset, writable, all_fs)
        _check(_libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(_libc().syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enter_namespaces(network: bool) -> bool:
    """New user, PID and mount namespaces (+ network when it is off); False if the kernel says no."""
    uid, gid = os.getuid(), os.getgid()
    flags = _CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWNS | (0 if network else _CLONE_NEWNET)
    if _libc().unshare(flags) != 0:
        return False
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    return True


def _mount(source: bytes | None, target: str, fstype: bytes | None, flags: int, data: bytes | None = None) -> bool:
    return bool(_libc().mount(source, target.encode(), fstype, flags, data) == 0)


def _mount_view(writable: list[str], hidden: list[str], read_only: list[str] | None = None) -> list[str]:
    """Private mounts; a /proc showing only this namespace; every mount read-only except `writable`;
    each hidden folder replaced by an empty tmpfs (so no Unix socket of the session, in /tmp, the
    runtime folder or the home, can even be named), with `writable` folders inside them bound back.

    Returns the mask points that are private temp folders (/tmp, /var/tmp, /dev/shm): the command
    may use them. Landlock does not cover chmod, chown or timestamps, nor connecting to a Unix socket;
    the mounts do (best effort: a mount the kernel will not remount stays as it was, and Landlock still
    guards its contents).
    """
    if not _mount(b"none", "/", None, _MS_REC | _MS_PRIVATE):
        return []
    _mount(b"proc", "/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    keep = {folder: os.open(folder, os.O_PATH | os.O_CLOEXEC) for folder in [*writable, *(read_only or [])]
            if os.path.isdir(folder)}
    for folder in writable:
        _mount(folder.encode(), folder, None, _MS_BIND | _MS_REC)
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        fields = line.split()
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        if any(point == w or point.startswith(w.rstrip("/") + "/") for w in writable):
            continue
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        for option in fields[5].split(","):
            flags |= _LOCKED_FLAGS.get(option, 0)
        _mount(None, point, None, flags)
    masked: list[str] = []
    for folder in sorted(hidden, key=lambda p: p.count("/")):
        if any(_under(Path(folder), Path(m)) for m in masked) or not os.path.isdir(folder):
            continue
        if _mount(b"tmpfs", folder, b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755,size=64m"):
            masked.append(folder)
    for folder, fd in keep.items():  # a workspace or temp folder inside a masked one: bound back
        if any(_under(Path(folder), Path(m)) and Path(folder) != Path(m) for m in masked):
            os.makedirs(folder, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}".encode(), folder, None, _MS_BIND | _MS_REC)
            if folder not in writable:  # a read-only bind (Landlock forbids writes there in any case)
                _mount(None, folder, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        os.close(fd)
    return [m for m in masked if m in _PRIVATE_TEMP]


# Mask points that become the command's own (empty, writable) temp folders.
_PRIVATE_TEMP = ("/tmp", "/var/tmp", "/dev/shm")
# The app's own state in the workspace: read-only to commands (a damaged id file broke every turn).
APP_STATE = (".nanobot", "memory/.cursor", "memory/.dream_cursor")
_SCAN_LIMIT = 200_000  # entries looked at for hard-linked files (a huge tree is only partly covered)


def _hard_linked(workspace: str) -> list[str]:
    """Regular files in the workspace with more than one name (another may be outside it).

    `find -links +1` where the system has it (half the CPU of a Python walk: 50,000 files cost
    ~80 ms of CPU), else a walk of at most 200,000 entries.
    """
    found = _find_hard_linked(workspace)
    return found if found is not None else _walk_hard_linked(workspace)


def _find_hard_linked(workspace: str) -> list[str] | None:
    find = next((p for p in ("/usr/bin/find", "/bin/find") if os.path.exists(p)), None)
    if find is None:
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(write_end, 1)
            devnull = os.open("/dev/null", os.O_WRONLY)
            os.dup2(devnull, 2)
            os.execv(find, [find, workspace, "-type", "f", "-links", "+1", "-print0"])
        finally:
            os._exit(127)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) not in (0, 1):  # 1: some folder unreadable
        return None
    return [os.fsdecode(p) for p in b"".join(chunks).split(b"\0") if p]


def _walk_hard_linked(workspace: str) -> list[str]:
    found: list[str] = []
    seen = 0
    stack = [workspace]
    while stack and seen < _SCAN_LIMIT:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_nlink > 1:
                    found.append(entry.path)
            except OSError:
                continue
    return found


def _protect(workspace: str, temp_dir: str) -> list[str]:
    """Make the app's state read-only and cover hard-linked files with an empty read-only file.

    A hard link made before the call is a second name of a file that may be outside the workspace
    (the config): Landlock checks the name, so only a mount over it keeps its bytes from the command.
    Returns the hard-linked files covered (the launcher tells the command about them).
    """
    for name in APP_STATE:
        path = os.path.join(workspace, name)
        if os.path.lexists(path) and not os.path.islink(path) and _mount(path.encode(), path, None, _MS_BIND):
            _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    linked = _hard_linked(workspace)
    if not linked:
        return []
    cover = os.path.join(temp_dir, ".hard-link-cover")
    os.close(os.open(cover, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0))
    covered = []
    for path in linked:
        if _mount(cover.encode(), path, None, _MS_BIND):
            _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
            covered.append(path)
    os.unlink(cover)  # the mounts keep the (empty) inode
    return covered


_RLIMITS = {"memory_mb": ("RLIMIT_DATA", 1 << 20), "processes": ("RLIMIT_NPROC", 1),
            "open_files": ("RLIMIT_NOFILE", 1), "cpu_s": ("RLIMIT_CPU", 1), "file_size_mb": ("RLIMIT_FSIZE", 1 << 20)}


def cgroup_folders(pid: int) -> list[str]:
    """Where the cgroup of launcher `pid` is made: beside this process's own, in the cgroup v2
    hierarchy and the v1 pids one (the engine computes the same names to remove them afterwards)."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    folders = []
    for line in mounts:
        fields = line.split()
        tail = fields[fields.index("-") + 1:]
        if tail[0] == "cgroup2":
            relative = next((c.split(":", 2)[2] for c in own if c.startswith("0::")), None)
        elif tail[0] == "cgroup" and "pids" in tail[2].split(","):
            relative = next((c.split(":", 2)[2] for c in own if ":pids:" in c), None)
        else:
            continue
        if relative is not None:
            folders.append(os.path.join(fields[4] + relative.rstrip("/"), f"nanobot-exec-{pid}"))
    return folders


def _pids_cgroup(max_pids: int) -> str | None:
    """A cgroup of its own with `pids.max` for this call, joined by this process (so by all it starts).

    RLIMIT_NPROC does not bind root (the kernel exempts it), so where the pids controller is writable
    (cgroup v2 delegated to us, or v1 as root) the count is bounded there too; the engine removes the
    folder after the call (`remove_cgroups`). None where no cgroup can be made: RLIMIT_NPROC alone.
    """
    if max_pids <= 0:
        return None
    for folder in cgroup_folders(os.getpid()):
        try:
            os.mkdir(folder)
        except OSError:
            continue
        try:
            _write(os.path.join(folder, "pids.max"), str(max_pids))
            _write(os.path.join(folder, "cgroup.procs"), str(os.getpid()))
            return folder
        except OSError:
            os.rmdir(folder)
    return None


def process_limit_mechanism() -> str:
    """What bounds a call's processes here: "cgroup v2" (pids controller delegated to us), "cgroup v1"
    (the pids hierarchy writable, as for root), or "rlimit" (RLIMIT_NPROC only, which root escapes).
    A look at permissions only (cheap, nothing is created)."""
    for folder in cgroup_folders(os.getpid()):
        parent = os.path.dirname(folder)
        if not os.access(parent, os.W_OK):
            continue
        try:
            controllers = Path(parent, "cgroup.subtree_control").read_text().split()
            if "pids" in controllers:
                return "cgroup v2"
        except OSError:  # cgroup v1 has no subtree_control: its pids hierarchy is the controller
            if os.path.exists(os.path.join(parent, "cgroup.procs")):
                return "cgroup v1"
    return "rlimit"


def remove_cgroups(pid: int) -> None:
    """Engine side, after launcher `pid` exited: remove its cgroup (its processes are reaped a moment later)."""
    import time

    for folder in cgroup_folders(pid):
        for _ in range(250):  # up to 5 s on a loaded machine
            try:
                os.rmdir(folder)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)


def _set_limits(limits: dict[str, int]) -> None:
    """Lower the rlimits for the command and everything it starts (never raise one above its hard limit)."""
    import resource

    for key, (name, unit) in _RLIMITS.items():
        value = int(limits.get(key) or 0) * unit
        if value <= 0:
            continue
        which = getattr(resource, name)
        _soft, hard = resource.getrlimit(which)
        # CPU: SIGXCPU at the soft limit (so the engine can say which limit), SIGKILL a second later
        ceiling = value + 1 if key == "cpu_s" else value
        if hard != resource.RLIM_INFINITY:
            value, ceiling = min(value, hard), min(ceiling, hard)
        resource.setrlimit(which, (value, ceiling))


def _exit_code(status: int) -> int:
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _run_shell(command: str, cwd: str) -> int:
    """Fork `/bin/sh -c command`, wait for it, return its exit code."""
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            os.execve("/bin/sh", ["/bin/sh", "-c", command], dict(os.environ))
        finally:
            os._exit(127)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return _exit_code(status)
        except ChildProcessError:
            return 127
        except InterruptedError:
            continue


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process in /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
    return parents


def _children() -> list[int]:
    me = os.getpid()
    return [pid for pid, parent in _parents().items() if parent == me]


def _descendants() -> list[int]:
    parents, found, frontier = _parents(), [], [os.getpid()]
    while frontier:
        level = [pid for pid, parent in parents.items() if parent in frontier]
        found += level
        frontier = level
    return found


def _terminate(*_: object) -> None:
    """Subreaper mode, on timeout or Stop: kill the whole tree (setsid'd children included), then leave."""
    for pid in _descendants():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _kill_leftovers()
    os._exit(143)


def _kill_leftovers() -> None:
    """Subreaper mode: kill and reap every orphan that was reparented to us until none are left."""
    while True:
        kids = _children()
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            if not kids:
                return


def _read_spec(argument: str) -> dict[str, Any]:
    """The policy, read whole from the pipe named by `--spec-fd=N` (then closed)."""
    fd = int(argument.removeprefix("--spec-fd="))
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    spec: dict[str, Any] = json.loads(b"".join(chunks))
    return spec


def _tell_covered(covered: list[str], workspace: str) -> None:
    names = [os.path.relpath(p, workspace) for p in covered]
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    sys.stderr.write(f"sandbox: {len(names)} file(s) in the workspace have other hard links (another name may be "
                     f"outside the workspace), so commands can neither read nor write them: {shown}\n")
    sys.stderr.flush()


def _launch(spec: dict[str, Any], command: str) -> int:
    import resource  # noqa: F401 - now: once the home is masked, the interpreter's own modules may be out of view

    cwd = os.getcwd()
    _pids_cgroup(int(spec.get("limits", {}).get("processes") or 0))  # before the user namespace
    if spec.get("namespaces", True) and _enter_namespaces(spec["network"]):
        init = os.fork()
        if init == 0:  # PID 1 of the new namespace: when it exits, the kernel kills everything left
            _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            own_temp = _mount_view([spec["workspace"], spec["temp_dir"], *spec.get("read_write", [])],
                                   spec["hidden"], spec.get("read_only", []))
            covered = _protect(spec["workspace"], spec["temp_dir"])
            if covered:
                _tell_covered(covered, spec["workspace"])
            _set_limits(spec.get("limits", {}))
            apply_landlock(spec, net_namespace=not spec["network"], own_temp=own_temp)
            os._exit(_run_shell(command, cwd))
        signal.signal(signal.SIGTERM, lambda *_: os.kill(init, signal.SIGKILL))
        while True:
            try:
                return _exit_code(os.waitpid(init, 0)[1])
            except InterruptedError:
                continue
            except ChildProcessError:
                return 137
    _check(_libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(CHILD_SUBREAPER)")
    signal.signal(signal.SIGTERM, _terminate)
    _set_limits(spec.get("limits", {}))
    apply_landlock(spec, net_namespace=False)
    code = _run_shell(command, cwd)
    _kill_leftovers()
    return code


if __name__ == "__main__":
    try:
        sys.exit(_launch(_read_spec(sys.argv[1]), sys.argv[2]))
    except OSError as error:
        sys.stderr.write(f"sandbox: could not start: {error}\n")
        sys.exit(126)
