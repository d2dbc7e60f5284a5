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

    def to_json(self) -> str:
        return json.dumps({"workspace": str(self.workspace), "temp_dir": str(self.temp_dir),
                           "hidden": [str(p) for p in self.hidden], "network": self.network,
                           "namespaces": self.namespaces})


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


def launcher_argv(policy: SandboxPolicy, command: str) -> list[str]:
    """argv that runs `command` under `policy` (the launcher is this file, run as a script)."""
    return [sys.executable, "-I", "-S", str(Path(__file__).resolve()), policy.to_json(), command]


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


def apply_landlock(spec: dict[str, Any], net_namespace: bool) -> None:
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
        folders, files = read_rules([Path(p) for p in spec["hidden"]])
        for folder in folders:
            _add_path_rule(ruleset, str(folder), _READ & all_fs)
        for file in files:
            _add_path_rule(ruleset, str(file), (FS_EXECUTE | FS_READ_FILE) & all_fs)
        for device in _DEVICES:
            _add_path_rule(ruleset, device, (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV) & all_fs)
        for writable in (spec["workspace"], spec["temp_dir"]):
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


def _mount_view(writable: list[str]) -> None:
    """Private mounts; a /proc showing only this namespace; every mount read-only except `writable`.

    Landlock does not cover chmod, chown or timestamps; a read-only mount does (best effort: a mount
    the kernel will not remount stays as it was, and Landlock still guards its contents).
    """
    if _libc().mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return
    _libc().mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
    for folder in writable:
        _libc().mount(folder.encode(), folder.encode(), None, _MS_BIND | _MS_REC, None)
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return
    for line in lines:
        fields = line.split()
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        if any(point == w or point.startswith(w.rstrip("/") + "/") for w in writable):
            continue
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        for option in fields[5].split(","):
            flags |= _LOCKED_FLAGS.get(option, 0)
        _libc().mount(None, point.encode(), None, flags, None)


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


def _launch(spec_json: str, command: str) -> int:
    spec = json.loads(spec_json)
    cwd = os.getcwd()
    if spec.get("namespaces", True) and _enter_namespaces(spec["network"]):
        init = os.fork()
        if init == 0:  # PID 1 of the new namespace: when it exits, the kernel kills everything left
            _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            _mount_view([spec["workspace"], spec["temp_dir"]])
            apply_landlock(spec, net_namespace=not spec["network"])
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
    apply_landlock(spec, net_namespace=False)
    code = _run_shell(command, cwd)
    _kill_leftovers()
    return code


if __name__ == "__main__":
    try:
        sys.exit(_launch(sys.argv[1], sys.argv[2]))
    except OSError as error:
        sys.stderr.write(f"sandbox: could not start: {error}\n")
        sys.exit(126)
