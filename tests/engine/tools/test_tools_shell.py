"""exec: output format, exit codes, the safety guard, and that timeouts and cancellation leave no process."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Callable

import pytest

from nanobot_desktop.engine.tools import shell
from nanobot_desktop.engine.tools.base import ToolContext, failed
from nanobot_desktop.engine.tools.shell import BLOCKED_DANGEROUS, ExecTool, format_output

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell and process groups")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (a zombie has already been killed)."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.exists() and Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Poll a condition (the process world has no event to await); False if it never became true."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def _pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


@posix_only
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo hello", "hello\n"),
        ("echo out; echo err 1>&2", "out\n\nSTDERR:\nerr\n"),
        ("echo err 1>&2", "STDERR:\nerr\n"),
        ("exit 3", "\nExit code: 3"),
        ("echo x; exit 2", "x\n\n\nExit code: 2"),
        ("true", "(no output)"),
        ("echo '   ' 1>&2", "(no output)"),
        ("printf 'a\\377b'", "a\ufffdb"),
    ],
)
async def test_output_format(ctx: ToolContext, command: str, expected: str) -> None:
    assert await ExecTool().execute(ctx, command=command) == expected


def test_output_truncated_at_10000_chars() -> None:
    result = format_output(b"a" * 10_050 + b"\n", b"", 0)
    assert result == "a" * 10_000 + "\n... (truncated, 51 more chars)"
    assert format_output(b"b" * 10_000, b"", 0) == "b" * 10_000


@posix_only
async def test_runs_in_workspace_or_working_dir(ctx: ToolContext) -> None:
    (ctx.workspace / "sub").mkdir()
    tool = ExecTool()
    assert await tool.execute(ctx, command="pwd") == f"{ctx.workspace.resolve()}\n"
    assert await tool.execute(ctx, command="pwd", working_dir="sub") == f"{(ctx.workspace / 'sub').resolve()}\n"
    assert await tool.execute(ctx, command="pwd", working_dir="nope") == failed("Error: Working directory not found: nope")


@posix_only
async def test_path_append(ctx: ToolContext, tmp_path: Path) -> None:
    bin_dir = tmp_path / "extra-bin"
    bin_dir.mkdir()
    script = bin_dir / "my-helper-cmd"
    script.write_text("#!/bin/sh\necho helper ran\n", encoding="utf-8")
    script.chmod(0o755)
    assert "Exit code: 127" in await ExecTool().execute(ctx, command="my-helper-cmd")
    assert await ExecTool(path_append=str(bin_dir)).execute(ctx, command="my-helper-cmd") == "helper ran\n"


@pytest.mark.parametrize(
    "command",
    ["rm -rf /", "RM -RF build", "rm -f x", "sudo rm -r dir", "del /f x.txt", "DEL /Q x", "rmdir /s c:\\x",
     "format c:", "ls; format c:", "mkfs.ext4 /dev/sdb1", "diskpart", "dd if=/dev/zero of=disk.img",
     "echo x > /dev/sda", "shutdown -h now", "sudo reboot", "poweroff", ":(){ :|:& };:"],
)
@pytest.mark.parametrize("restrict", [False, True])
async def test_deny_patterns(tmp_path: Path, command: str, restrict: bool) -> None:
    ctx = ToolContext(workspace=tmp_path, restrict_to_workspace=restrict)
    assert await ExecTool().execute(ctx, command=command) == failed(BLOCKED_DANGEROUS)


@posix_only
@pytest.mark.parametrize("command", ["echo information", "rm file.txt", "echo performance", "ls -la"])
async def test_harmless_commands_pass_the_guard(ctx: ToolContext, command: str) -> None:
    (ctx.workspace / "file.txt").write_text("x", encoding="utf-8")
    assert not (await ExecTool().execute(ctx, command=command)).startswith("Error: Command blocked")


async def test_custom_deny_patterns(ctx: ToolContext) -> None:
    tool = ExecTool(deny_patterns=[r"\bcurl\b"])
    assert await tool.execute(ctx, command="curl http://127.0.0.1") == failed(BLOCKED_DANGEROUS)


@posix_only
async def test_timeout_kills_the_whole_group(ctx: ToolContext) -> None:
    command = "echo $$ > shell.pid; sleep 300 & echo $! > child.pid; sleep 300"
    result = await ExecTool(timeout_s=1).execute(ctx, command=command)
    assert result == failed("Error: Command timed out after 1 seconds")
    shell_pid, child_pid = _pid(ctx.workspace / "shell.pid"), _pid(ctx.workspace / "child.pid")
    assert shell_pid and child_pid
    assert await _wait_until(lambda: not _alive(child_pid)), "background child survived the timeout"
    assert await _wait_until(lambda: not _alive(shell_pid)), "shell survived the timeout"


@posix_only
async def test_cancel_kills_the_whole_group_and_reraises(ctx: ToolContext) -> None:
    command = "echo $$ > shell.pid; sleep 300 & sleep 300 & echo $! > child.pid; wait"
    task = asyncio.create_task(ExecTool().execute(ctx, command=command))
    assert await _wait_until(lambda: _pid(ctx.workspace / "child.pid") is not None)
    child_pid = _pid(ctx.workspace / "child.pid")
    shell_pid = _pid(ctx.workspace / "shell.pid")
    assert child_pid and shell_pid and _alive(child_pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_until(lambda: not _alive(child_pid)), "background child survived the cancel"
    assert await _wait_until(lambda: not _alive(shell_pid)), "shell survived the cancel"


@posix_only
async def test_cancel_while_the_process_is_starting_kills_it_at_once(tmp_path: Path) -> None:
    """A stop can land while asyncio is still connecting the new process's pipes (the command already
    runs). Whatever moment it lands at, every process dies and the cancel completes at once; it must
    not wait for a `sleep` that holds the pipes open (the stop of a turn once took its full 10 s)."""
    for ticks in range(12):  # cancel after 0, 1, 2, ... turns of the event loop
        ctx = ToolContext(workspace=tmp_path / str(ticks))
        ctx.workspace.mkdir()
        command = "echo $$ > shell.pid; sleep 300 & echo $! > child.pid; wait"
        task = asyncio.create_task(ExecTool().execute(ctx, command=command))
        for _ in range(ticks):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)
        for name in ("shell.pid", "child.pid"):
            pid = _pid(ctx.workspace / name)
            if pid is not None:
                assert await _wait_until(lambda pid=pid: not _alive(pid)), f"{name} survived ({ticks} ticks)"


@posix_only
async def test_cancel_kills_a_child_that_ignores_sigterm(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "KILL_GRACE_S", 0.2)
    command = "trap '' TERM; sh -c 'trap \"\" TERM; echo $$ > child.pid; while :; do sleep 1; done' & wait"
    task = asyncio.create_task(ExecTool().execute(ctx, command=command))
    assert await _wait_until(lambda: _pid(ctx.workspace / "child.pid") is not None)
    child_pid = _pid(ctx.workspace / "child.pid")
    assert child_pid
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_until(lambda: not _alive(child_pid)), "SIGTERM-ignoring child survived"
