"""exec: run a shell command for the agent, and make sure nothing it started outlives the call.

The command runs in its own process group (a new session on POSIX), so a timeout or a /stop kills the
shell *and* everything it spawned (`sleep 30 &` included), not just the shell. The guard below is a
seat belt, not a sandbox: it blocks obviously destructive commands and, with the workspace
restriction on, paths that visibly point outside the workspace.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from nanobot_desktop.engine.tools.base import Tool, ToolContext
from nanobot_desktop.engine.tools.paths import PathOutsideWorkspace, is_inside, resolve_tool_path, workspace_root

if TYPE_CHECKING:
    from nanobot_desktop.engine.config import ToolsConfig

MAX_OUTPUT_CHARS = 10_000
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


def _signal_group(process: asyncio.subprocess.Process, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _wait_quietly(process: asyncio.subprocess.Process, seconds: float) -> bool:
    try:
        await asyncio.wait_for(process.wait(), seconds)
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
        await process.wait()


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
                 deny_patterns: Sequence[str] = DEFAULT_DENY_PATTERNS) -> None:
        self.timeout_s = timeout_s
        self.path_append = path_append
        self.deny_patterns = tuple(deny_patterns)

    def configure(self, settings: ToolsConfig) -> None:
        self.timeout_s = settings.exec.timeout
        self.path_append = settings.exec.path_append

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.path_append:
            env["PATH"] = env.get("PATH", "") + os.pathsep + self.path_append
        return env

    async def execute(self, ctx: ToolContext, command: str, working_dir: str | None = None, **_: Any) -> str:
        root = workspace_root(ctx)
        if working_dir:
            try:
                cwd = resolve_tool_path(working_dir, ctx)
            except PathOutsideWorkspace as exc:
                return str(exc)
        else:
            cwd = root
        refusal = guard_command(command, root, ctx.restrict_to_workspace, self.deny_patterns)
        if refusal:
            return refusal
        if not cwd.is_dir():
            return f"Error: Working directory not found: {working_dir or cwd}"
        return await self._run(command, cwd)

    async def _run(self, command: str, cwd: Path) -> str:
        group_options: dict[str, Any]
        if sys.platform == "win32":
            group_options = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
        else:
            group_options = {"start_new_session": True}
        process = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=self._environment(),
            **group_options,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), self.timeout_s)
        except TimeoutError:
            await kill_process_tree(process)
            return f"Error: Command timed out after {self.timeout_s:g} seconds"
        except asyncio.CancelledError:
            await kill_process_tree(process)
            raise
        return format_output(stdout, stderr, process.returncode)
