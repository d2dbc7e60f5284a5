"""exec: run a shell command for the agent, and make sure nothing it started outlives the call.

With `tools.restrictToWorkspace` on (or `tools.exec.sandboxAlways`), the command runs in the OS
sandbox of `sandbox.py` where the system has one: the kernel, not a pattern, keeps it inside the
workspace, and its PID namespace ends every process with the call. Without a sandbox the command runs
in its own process group (a timeout or a /stop kills the shell and its group), and the guard below is
only a seat belt: it blocks obviously destructive commands and paths that visibly leave the workspace.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from nanobot_desktop.engine.tools.base import Tool, ToolContext, ToolResult, failed
from nanobot_desktop.engine.tools.exec_binds import exec_binds, named_backend, never_bound
from nanobot_desktop.engine.tools.paths import PathOutsideWorkspace, is_inside, resolve_tool_path, workspace_root
from nanobot_desktop.engine.tools.sandbox import (
    ResourceLimits,
    SandboxPolicy,
    default_hidden,
    launcher_argv,
    remove_cgroups,
    sandbox_environment,
    sandbox_support,
)

if TYPE_CHECKING:
    from nanobot_desktop.engine.config import AppSettings, ToolsConfig

MAX_OUTPUT_CHARS = 10_000
MAX_CAPTURE_BYTES = 1_000_000  # per stream; the result shows 10,000 characters of it anyway
KILL_GRACE_S = 2.0

DEFAULT_DENY_PATTERNS: tuple[str, ...] = (
    r"\brm\s+-[rf]{1,2}\b",
    r"\bdel\s+/[fq]\b",
    r"\brmdir\s+/s\b",
    r"(?:^|[;&|]\s*)format\b",
    r"\b(mkfs|diskpart)\b",
    r"\bdd\s+if=",
    r">\s*/dev/sd",
    r"\b(shutdown|reboot|poweroff)\b",
    r":\(\)\s*\{.*\};\s*:",
)

# Never handed to a command: the app's own settings (NANOBOT_*, which can carry API keys) and secrets.
_SECRET_VARIABLE = re.compile(r"^NANOBOT_|KEY|TOKEN|SECRET|PASSW|CREDENTIAL|COOKIE|AUTH", re.IGNORECASE)

BLOCKED_DANGEROUS = "Error: Command blocked by safety guard (dangerous pattern detected)"

# Where a path may start in a command line: after the start, blanks, pipes, redirections, quotes, `=`.
_PATH_START = r"(?:^|(?<=[\s|<>;&\"'=(`]))"
_POSIX_PATH = re.compile(_PATH_START + r"(/[^\s\"'|<>;&)`]*)")
_WINDOWS_PATH = re.compile(r"\b([A-Za-z]:[\\/][^\s\"'|<>;&)`]*)")
_HOME_PATH = re.compile(_PATH_START + r"(~[^\s\"'|<>;&)`]*)")
_PARENT_DIR = re.compile(_PATH_START + r"\.\.(?=$|[\s/\\\"';&|)`])")
_HOME_VARIABLE = re.compile(r"\$\{?home\b|%userprofile%", re.IGNORECASE)
# Stream devices every shell script uses (`2>/dev/null`); they reach no file outside the workspace.
_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"})


def _windows_path_outside(raw: str, root: Path) -> bool:
    if os.name != "nt":
        return True  # a drive path can never be inside a POSIX workspace
    return not is_inside(Path(raw).resolve(), root)


def guard_command(command: str, root: Path, restrict: bool, deny_patterns: Sequence[str]) -> str | None:
    """The refusal text for a command the guard blocks, else None."""
    lowered = command.lower()
    if any(re.search(pattern, lowered) for pattern in deny_patterns):
        return BLOCKED_DANGEROUS
    if not restrict:
        return None
    if "../" in command or "..\\" in command or _PARENT_DIR.search(command):
        return "Error: Command blocked by safety guard (path traversal detected)"
    if _HOME_VARIABLE.search(command):
        return "Error: Command blocked by safety guard (home directory reference outside the workspace)"
    for raw in _WINDOWS_PATH.findall(command):
        if _windows_path_outside(raw, root):
            return f"Error: Command blocked by safety guard (path outside the workspace: {raw})"
    for raw in _POSIX_PATH.findall(command) + _HOME_PATH.findall(command):
        if raw in _HARMLESS_DEVICES:
            continue
        expanded = os.path.expanduser(raw)
        if expanded.startswith("~") or not is_inside(Path(expanded).resolve(), root):
            return f"Error: Command blocked by safety guard (path outside the workspace: {raw})"
    return None


def format_output(stdout: bytes, stderr: bytes, returncode: int | None) -> str:
    """stdout, then STDERR, then the exit code, cut at 10,000 characters (the original's format)."""
    parts: list[str] = []
    if stdout:
        parts.append(stdout.decode("utf-8", errors="replace"))
    stderr_text = stderr.decode("utf-8", errors="replace")
    if stderr_text.strip():
        parts.append(f"STDERR:\n{stderr_text}")
    if returncode:
        parts.append(f"\nExit code: {returncode}")
    result = "\n".join(parts) if parts else "(no output)"
    if len(result) > MAX_OUTPUT_CHARS:
        result = result[:MAX_OUTPUT_CHARS] + f"\n... (truncated, {len(result) - MAX_OUTPUT_CHARS} more chars)"
    return result


def limits_summary(limits: ResourceLimits) -> str:
    """One line naming the per-call bounds (approval cards, Settings)."""
    return (f"limits: {limits.memory_mb} MB memory, {limits.processes} processes, {limits.open_files} open files, "
            f"{limits.cpu_s} s CPU, {limits.file_size_mb} MB per file")


# What a command prints (or how it ends) when one of the sandbox's rlimits stopped it.
_LIMIT_SIGNS = (
    ("memory", re.compile(r"MemoryError|Cannot allocate memory|memory exhausted|out of memory|std::bad_alloc", re.I)),
    ("processes", re.compile(r"fork: (retry: )?Resource temporarily unavailable|Cannot fork|can't fork", re.I)),
    ("open_files", re.compile(r"Too many open files", re.I)),
    ("file_size", re.compile(r"File too large", re.I)),
)


def limit_note(output: bytes, code: int | None, limits: ResourceLimits) -> str:
    """A plain sentence when a sandbox limit stopped the command ("" otherwise), naming the limit and
    where to change it."""
    hit = None
    if code == 128 + signal.SIGXCPU:
        hit = "cpu"
    elif code == 128 + signal.SIGXFSZ:
        hit = "file_size"
    else:
        text = output[-200_000:].decode("utf-8", errors="replace")
        hit = next((name for name, pattern in _LIMIT_SIGNS if pattern.search(text)), None)
    if hit is None:
        return ""
    what = {"memory": f"memory limit ({limits.memory_mb} MB per process)",
            "processes": f"process limit ({limits.processes} processes)",
            "open_files": f"open-file limit ({limits.open_files} per process)",
            "cpu": f"CPU time limit ({limits.cpu_s} s)",
            "file_size": f"file size limit ({limits.file_size_mb} MB)"}[hit]
    return (f"[The sandbox's {what} stopped this command. The person can raise it in Settings → Tools → "
            "Command limits.]")


def _signal_group(process: asyncio.subprocess.Process, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _drain(stream: asyncio.StreamReader, into: bytearray) -> None:
    """Collect a pipe until EOF, keeping what arrived so far if the caller stops waiting."""
    while chunk := await stream.read(65536):
        if len(into) < MAX_CAPTURE_BYTES:  # keep draining (the command must not block) but keep no more
            into.extend(chunk[:MAX_CAPTURE_BYTES - len(into)])


async def wait_exited(process: asyncio.subprocess.Process) -> None:
    """Wait until the process itself has exited.

    Not `process.wait()`: asyncio also waits there for its pipes to close, which a background child
    still holding stdout (`cmd &`, `setsid`) would delay until the timeout.
    """
    if process.returncode is not None:
        return
    try:
        pidfd = os.pidfd_open(process.pid)  # Linux 5.3+: readable once the process has exited
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is None:
        await _poll_exit(process)
        return
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()
    try:
        loop.add_reader(pidfd, _set_once, exited)
    except NotImplementedError:  # an event loop without add_reader
        os.close(pidfd)
        await _poll_exit(process)
        return
    try:
        await exited
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


async def _poll_exit(process: asyncio.subprocess.Process) -> None:
    """Without pidfds: the returncode is set by asyncio's child watcher, which offers no event to wait on."""
    while process.returncode is None:  # noqa: ASYNC110 - nothing to wait on but the attribute
        await asyncio.sleep(0.02)


def _set_once(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _returncode(process: asyncio.subprocess.Process) -> int | None:
    """The exit code, once the child watcher has reaped the exited process (a moment after the exit)."""
    for _ in range(200):
        if process.returncode is not None:
            break
        await asyncio.sleep(0.005)
    return process.returncode


async def _release(process: asyncio.subprocess.Process, readers: Sequence[asyncio.Future[None]]) -> None:
    """Let asyncio finish the exited process's transport (pipes at EOF), or close it if a child that
    escaped the group still holds a pipe, so nothing is left for the garbage collector."""
    if readers:
        await asyncio.wait(readers, timeout=KILL_GRACE_S)
    try:
        await asyncio.wait_for(process.wait(), 0.5)
    except TimeoutError:
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()


async def _wait_quietly(process: asyncio.subprocess.Process, seconds: float) -> bool:
    try:
        await asyncio.wait_for(wait_exited(process), seconds)
        return True
    except TimeoutError:
        return False


async def kill_process_tree(process: asyncio.subprocess.Process, grace_s: float | None = None) -> None:
    """Stop the process and its whole group: SIGTERM, a short grace, SIGKILL; then reap the shell."""
    grace_s = KILL_GRACE_S if grace_s is None else grace_s
    if sys.platform == "win32":
        killer = await asyncio.create_subprocess_exec(
            "taskkill", "/F", "/T", "/PID", str(process.pid),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
        await killer.wait()
        if process.returncode is None:
            process.kill()
        await process.wait()
        return
    _signal_group(process, signal.SIGTERM)
    try:
        exited = await _wait_quietly(process, grace_s)
    finally:
        # Even if we are cancelled again while waiting, nothing of the group may survive.
        _signal_group(process, signal.SIGKILL)
        if process.returncode is None:
            try:
                process.kill()  # the shell itself, should the group signal not have reached it
            except ProcessLookupError:
                pass
    if not exited:
        await wait_exited(process)


async def _started(starting: asyncio.Future[asyncio.subprocess.Process]) -> asyncio.subprocess.Process:
    """The process `starting` creates, even if the caller is cancelled meanwhile.

    The command runs before asyncio has connected its pipes. Cancelled in that moment, asyncio would
    kill only the shell and then wait for pipes that the shell's children (a `sleep 60`) hold open, so a
    Stop took as long as the command; shielded, the start completes and the whole group is killed, as
    at any other moment.
    """
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        process = await starting
        await kill_process_tree(process)
        await _release(process, [])
        raise


class ExecTool(Tool):
    name = "exec"
    description = ("Execute a shell command and return its output. Use with caution: the command runs "
                   "with your user's rights.")
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The shell command to execute"},
            "working_dir": {"type": "string", "description": "Optional working directory for the command"},
        },
        "required": ["command"],
    }

    def __init__(self, timeout_s: float = 60, path_append: str = "",
                 deny_patterns: Sequence[str] = DEFAULT_DENY_PATTERNS, *, sandbox_always: bool = False,
                 network: bool = True, config_path: Path | None = None,
                 limits: ResourceLimits | None = None) -> None:
        self.timeout_s = timeout_s
        self.path_append = path_append
        self.deny_patterns = tuple(deny_patterns)
        self.sandbox_always = sandbox_always  # sandbox even with the workspace restriction off
        self.network = network  # network reachable from inside the sandbox
        self.config_path = config_path  # its folder is hidden from sandboxed commands
        self.limits = limits or ResourceLimits()  # per sandboxed call (desktop.json execLimits)
        self.exec_extra: dict[str, Any] = {}  # config.json tools.exec keys of nanobot 0.3.5 (sandbox, binds)

    def sandboxed(self, restrict: bool) -> bool:
        """Whether a call made now runs in the OS sandbox."""
        return (restrict or self.sandbox_always or bool(named_backend(self.exec_extra))) and sandbox_support().available

    def sandbox_status(self, restrict: bool) -> str:
        """One line for the approval card: how (or whether) the command will be contained."""
        support = sandbox_support()
        if not support.available:
            return support.summary
        if not self.sandboxed(restrict):
            return "not sandboxed: the workspace restriction is off (Settings → Tools)"
        return f"{support.summary}; network {'on' if self.network else 'off'}"

    def configure(self, settings: ToolsConfig, app: AppSettings | None = None) -> None:
        self.timeout_s = settings.exec.timeout
        self.path_append = settings.exec.path_append
        self.exec_extra = dict(settings.exec.model_extra or {})
        if app is not None:  # the sandbox settings are the app's own (desktop.json), not the CLI's
            self.sandbox_always = app.exec_sandbox_always
            self.network = app.exec_network
            given = app.exec_limits
            self.limits = ResourceLimits(given.memory_mb, given.processes, given.open_files, given.cpu_s,
                                         given.file_size_mb)

    def _environment(self) -> dict[str, str]:
        """Unsandboxed commands keep the user's environment, minus the app's keys and anything secret-named."""
        env = {k: v for k, v in os.environ.items() if not _SECRET_VARIABLE.search(k)}
        if self.path_append:
            env["PATH"] = env.get("PATH", "") + os.pathsep + self.path_append
        return env

    async def execute(self, ctx: ToolContext, command: str, working_dir: str | None = None,
                      **_: Any) -> str | ToolResult:
        root = workspace_root(ctx)
        if working_dir:
            try:
                cwd = resolve_tool_path(working_dir, ctx)
            except PathOutsideWorkspace as exc:
                return failed(str(exc))
        else:
            cwd = root
        sandboxed = self.sandboxed(ctx.restrict_to_workspace)
        # In the sandbox the kernel checks paths; the pattern guard then only stops destructive commands.
        refusal = guard_command(command, root, ctx.restrict_to_workspace and not sandboxed, self.deny_patterns)
        if refusal:
            return failed(refusal)
        if not cwd.is_dir():
            return failed(f"Error: Working directory not found: {working_dir or cwd}")
        if sandboxed:
            return await self._run_sandboxed(command, cwd, root)
        return await self._run(command, cwd)

    async def _run_sandboxed(self, command: str, cwd: Path, root: Path) -> str | ToolResult:
        temp_dir = Path(tempfile.mkdtemp(prefix="nanobot-exec-"))
        read_end, write_end = os.pipe()
        try:
            binds = exec_binds(self.exec_extra, root, protected=never_bound(self.config_path))
            policy = SandboxPolicy(workspace=root, temp_dir=temp_dir, hidden=default_hidden(self.config_path),
                                   network=self.network, namespaces=sandbox_support().namespaces,
                                   limits=self.limits, system_only=binds.system_only,
                                   read_only=list(binds.read_only), read_write=list(binds.read_write))
            os.write(write_end, policy.to_json().encode())  # a few KB: fits the pipe's buffer
            os.close(write_end)
            write_end = -1
            env = sandbox_environment(temp_dir, self.path_append)
            process = await _started(asyncio.ensure_future(asyncio.create_subprocess_exec(
                *launcher_argv(read_end, command), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=str(cwd), env=env,
                start_new_session=True, pass_fds=(read_end,),
            )))
            os.close(read_end)
            read_end = -1
            try:
                return await self._collect(process, self.limits)
            finally:
                await asyncio.shield(asyncio.to_thread(remove_cgroups, process.pid))
        finally:
            for fd in (read_end, write_end):
                if fd >= 0:
                    os.close(fd)
            await asyncio.to_thread(shutil.rmtree, temp_dir, True)

    async def _run(self, command: str, cwd: Path) -> str | ToolResult:
        group_options: dict[str, Any]
        if sys.platform == "win32":
            group_options = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
        else:
            group_options = {"start_new_session": True}
        starting = asyncio.ensure_future(asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=self._environment(),
            **group_options,
        ))
        return await self._collect(await _started(starting))

    async def _collect(self, process: asyncio.subprocess.Process,
                       limits: ResourceLimits | None = None) -> str | ToolResult:
        """Output of a started command. When the shell ends, what is left of its process group is killed
        (a sandboxed command's whole namespace is already gone); on timeout or cancellation, its tree."""
        assert process.stdout is not None and process.stderr is not None
        buffers = (bytearray(), bytearray())
        readers = [asyncio.ensure_future(_drain(stream, buffer))
                   for stream, buffer in zip((process.stdout, process.stderr), buffers, strict=True)]
        try:
            try:
                await asyncio.wait_for(wait_exited(process), self.timeout_s)
            except TimeoutError:
                await kill_process_tree(process)
                await _release(process, readers)
                return failed(f"Error: Command timed out after {self.timeout_s:g} seconds")
            except asyncio.CancelledError:
                await kill_process_tree(process)
                await _release(process, readers)
                raise
            if sys.platform != "win32":
                _signal_group(process, signal.SIGKILL)  # `cmd &` left behind in the group
            await _release(process, readers)
            code = await _returncode(process)
            output = format_output(bytes(buffers[0]), bytes(buffers[1]), code)
            note = limit_note(bytes(buffers[0]) + bytes(buffers[1]), code, limits) if limits is not None else ""
            return f"{output}\n{note}" if note else output
        finally:
            for reader in readers:
                reader.cancel()
