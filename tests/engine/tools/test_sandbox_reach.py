"""What exec can still reach from inside the sandbox (issue 28): no local service, its own temp folders,
the app's state read-only, pre-existing hard links covered, bounded resources, a policy it cannot read.

Every case runs a real command through the real sandbox (Landlock + namespaces on this machine).
The services are the test's own: a `dbus-daemon --session` bus in the test's runtime folder, an Xvfb
server (socket in /tmp/.X11-unix, and its abstract twin), a Unix socket in the test's home.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.tools.sandbox import ResourceLimits, sandbox_support
from nanobot_desktop.engine.tools.shell import ExecTool, limits_summary

needs_sandbox = pytest.mark.skipif(not (sandbox_support().available and sandbox_support().namespaces),
                                   reason=sandbox_support().summary)
PY = "/usr/bin/python3"
CONNECT = PY + " -c \"import socket,sys; s=socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(sys.argv[1]); print('CONNECTED')\" "


def _run(command: str, workspace: Path, *, network: bool = True, limits: ResourceLimits | None = None,
         timeout_s: float = 60) -> str:
    tool = ExecTool(timeout_s=timeout_s, network=network, limits=limits)
    ctx = ToolContext(workspace=workspace, restrict_to_workspace=True)
    return asyncio.run(tool.execute(ctx, command))


def _wait_for(path: Path, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"{path} did not appear")
        time.sleep(0.02)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A session bus in $XDG_RUNTIME_DIR/bus, an X server, and a socket in the home, all answering."""
    missing = [b for b in ("dbus-daemon", "dbus-send", "Xvfb") if shutil.which(b) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    from tests.gui.xvfb_support import start_xvfb, stop_process

    runtime = Path(os.environ["XDG_RUNTIME_DIR"])
    bus_path = runtime / "bus"
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", f"--address=unix:path={bus_path}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    xvfb, display = start_xvfb()
    home_socket = socket.socket(socket.AF_UNIX)
    agent_path = Path.home() / ".ssh-agent.sock"
    home_socket.bind(str(agent_path))
    home_socket.listen(5)
    try:
        _wait_for(bus_path)
        x_path = f"/tmp/.X11-unix/X{display.lstrip(':')}"
        found = {"bus": str(bus_path), "x11": x_path, "x11-abstract": "\0" + x_path, "home": str(agent_path)}
        for address in found.values():  # each answers from outside the sandbox
            probe = socket.socket(socket.AF_UNIX)
            probe.connect(address)
            probe.close()
        yield found
    finally:
        home_socket.close()
        stop_process(xvfb)
        stop_process(bus)


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("network", [True, False], ids=["network-on", "network-off"])
def test_no_local_service_answers_from_inside(services: dict[str, str], tmp_path: Path, network: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, address in services.items():
        argument = repr(address) if name != "x11-abstract" else "'\\0" + address[1:] + "'"
        out = _run(CONNECT.replace("sys.argv[1]", argument), ws, network=network)
        assert "CONNECTED" not in out, (name, out)
    listed = _run(f"dbus-send --bus=unix:path={services['bus']} --print-reply --dest=org.freedesktop.DBus "
                  "/org/freedesktop/DBus org.freedesktop.DBus.ListNames", ws, network=network)
    assert "org.freedesktop.DBus" not in listed.split("STDERR")[0], listed
    shown = _run(f"ls -A /tmp/.X11-unix {os.environ['XDG_RUNTIME_DIR']} {Path.home()} 2>/dev/null; echo end", ws,
                 network=network)
    assert shown.split() == ["end"], shown  # the folders are empty or not there at all


@needs_sandbox
def test_exec_gets_its_own_empty_writable_tmp(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = Path("/tmp") / f"host-only-{os.getpid()}"
    marker.write_text("host")
    try:
        out = _run("ls -A /tmp; echo private > /tmp/mine && cat /tmp/mine; ls /var/tmp /dev/shm | wc -l", ws)
    finally:
        marker.unlink()
    assert marker.name not in out and "private" in out
    assert not Path("/tmp/mine").exists()


@needs_sandbox
def test_the_apps_state_is_read_only_to_exec(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".nanobot").mkdir(parents=True)
    (ws / ".nanobot" / "workspace-id").write_text("a" * 32 + "\n")
    (ws / "memory").mkdir()
    (ws / "memory" / ".cursor").write_text("7")
    out = _run("echo bad > .nanobot/workspace-id; rm .nanobot/workspace-id; echo 0 > memory/.cursor; "
               "mv .nanobot elsewhere; echo done", ws)
    assert "Read-only file system" in out and "done" in out
    assert (ws / ".nanobot" / "workspace-id").read_text() == "a" * 32 + "\n"
    assert (ws / "memory" / ".cursor").read_text() == "7"
    assert _run("echo note > notes.md && cat notes.md", ws).startswith("note")  # the rest stays writable


@needs_sandbox
def test_a_pre_existing_hard_link_can_be_neither_read_nor_written(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "config.json"
    outside.write_text('{"apiKey": "sk-hard-link-secret"}')
    os.link(outside, ws / "hard")
    out = _run("cat hard; echo pwned >> hard; echo x > hard; rm hard; echo done", ws)
    assert "sk-hard-link-secret" not in out
    assert "other hard links" in out and "hard" in out and "done" in out  # the clear message
    assert outside.read_text() == '{"apiKey": "sk-hard-link-secret"}'


@needs_sandbox
def test_the_policy_is_not_readable_from_inside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    out = _run("tr '\\0' ' ' < /proc/1/cmdline; echo; cat /proc/1/environ | tr '\\0' '\\n' | grep -c . ; "
               "ls /proc/1/fd", ws)
    assert "hidden" not in out and str(Path.home()) not in out and "--spec-fd=" in out


@needs_sandbox
@pytest.mark.slow
def test_a_3_gb_allocation_stops_at_the_memory_limit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    started = time.monotonic()
    out = _run(f"{PY} -c 'b = bytearray(3 * 1024 ** 3); print(\"GOT\", len(b))'", ws)
    assert "GOT" not in out and "MemoryError" in out
    assert "memory limit (2048 MB per process) stopped this command" in out
    assert time.monotonic() - started < 30


@needs_sandbox
@pytest.mark.slow
def test_a_fork_bomb_stops_at_the_process_limit_and_the_loop_stays_responsive(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    token = f"29.{os.getpid()}"  # unique: other sessions' tests may run sleeps of their own
    bomb = (f"{PY} -c 'import os\nwhile True:\n    os.fork()'; i=0; while [ $i -lt 1500 ]; do sleep {token} & "
            "i=$((i+1)); done")

    async def scenario() -> tuple[str, int]:
        tool = ExecTool(timeout_s=20, limits=ResourceLimits(processes=64))
        ctx = ToolContext(workspace=ws, restrict_to_workspace=True)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        running = asyncio.ensure_future(ticker())
        try:
            return await tool.execute(ctx, bomb), ticks
        finally:
            running.cancel()

    started = time.monotonic()
    out, ticks = asyncio.run(scenario())
    took = time.monotonic() - started
    assert "process limit (64 processes) stopped this command" in out or "timed out" in out, out
    assert ticks >= took / 0.05 * 0.5  # the event loop kept turning while the bomb went off
    from tests.engine.tools.test_escape_suite import alive_with

    # the kernel kills the namespace's processes when its init exits; on a loaded machine the last
    # ones take a moment to go
    deadline = time.monotonic() + 15
    while alive_with(f"sleep {token}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive_with(f"sleep {token}") == []


@needs_sandbox
def test_limits_apply_and_are_said(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    limits = ResourceLimits(memory_mb=512, processes=32, open_files=64, cpu_s=2, file_size_mb=1)
    out = _run("ulimit -n; ulimit -t; ulimit -f; ulimit -d", ws, limits=limits)
    assert out.split()[:4] == ["64", "2", "2048", str(512 * 1024)]
    spin = _run(f"{PY} -c 'while True: pass'", ws, limits=limits)
    assert "CPU time limit (2 s) stopped this command" in spin
    big = _run("head -c 3000000 /dev/zero > big.bin", ws, limits=limits)
    assert "file size limit (1 MB)" in big and (ws / "big.bin").stat().st_size <= 1024 * 1024
    summary = limits_summary(limits)
    assert "512 MB memory" in summary and "32 processes" in summary
    assert json.loads(json.dumps(limits.as_dict()))["cpu_s"] == 2


def test_the_hard_link_scan_finds_the_same_files_with_and_without_find(tmp_path: Path) -> None:
    from nanobot_desktop.engine.tools import sandbox

    ws = tmp_path / "ws"
    (ws / "deep" / "er").mkdir(parents=True)
    (tmp_path / "o").write_text("o")
    for name in ("a", "deep/b c", "deep/er/d"):
        os.link(tmp_path / "o", ws / name)
    (ws / "single").write_text("s")
    (ws / "link").symlink_to(tmp_path / "o")  # a symlink is not a second name of the file
    expected = sorted(str(ws / n) for n in ("a", "deep/b c", "deep/er/d"))
    assert sorted(sandbox._walk_hard_linked(str(ws))) == expected
    found = sandbox._find_hard_linked(str(ws))
    assert found is None or sorted(found) == expected


def test_the_session_runtime_folder_is_hidden_even_without_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from nanobot_desktop.engine.tools import sandbox

    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert Path(f"/run/user/{os.getuid()}").resolve() in sandbox.default_hidden(None)
