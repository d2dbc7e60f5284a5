"""Containment beyond the escape table: nothing outlives a call (success, timeout, Stop), race-free
file tools under a symlink-swapping attacker, bounded resources (1 GB sparse file, huge MEMORY.md,
a failing consolidation), bundled skills, and what happens where no sandbox exists."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from nanobot_desktop.data import builtin_skills_dir
from nanobot_desktop.engine import events as ev
from nanobot_desktop.engine.agent.context import MAX_MEMORY_PROMPT_BYTES
from nanobot_desktop.engine.tools import safe_files, sandbox
from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.tools.policy import ApprovalAnswer, ToolPolicy, build_approval_request
from nanobot_desktop.engine.tools.registry import build_default_registry
from nanobot_desktop.engine.tools.sandbox import SandboxSupport, sandbox_environment, sandbox_support
from tests.engine.tools.test_escape_suite import alive_with
from tests.fake_openai import error_reply, text_reply

needs_sandbox = pytest.mark.skipif(not sandbox_support().available, reason=sandbox_support().summary)
SPAWNERS = ("sleep 300.{t} & setsid sleep 301.{t} & nohup sleep 302.{t} >/dev/null 2>&1 & "
            "setsid -f sh -c 'sleep 303.{t}' ; (trap '' TERM HUP INT; sleep 304.{t}) & "
            "sh -c 'sleep 305.{t} &' &")


async def allow_all(_request):
    return ApprovalAnswer.ALLOW_ONCE


@needs_sandbox
async def test_a_turn_whose_exec_left_children_behind_leaves_none_alive(make_engine, fake_openai) -> None:
    engine = make_engine(restrict_to_workspace=True)
    engine.approvals.respond_with(allow_all)
    token = "4711"
    fake_openai.add_tool_calls([("exec", {"command": SPAWNERS.format(t=token) + " echo spawned"})])
    fake_openai.add_text("done")
    result = await engine.loop.process("desktop:kids", "start them")
    assert result.status == "ok"
    assert "spawned" in json.dumps(fake_openai.requests[-1]["messages"][-1])
    assert alive_with(f".{token}") == []


@needs_sandbox
async def test_timeout_kills_every_process_of_the_call(tmp_path: Path) -> None:
    registry = build_default_registry(exec_timeout_s=1)
    ctx = ToolContext(workspace=tmp_path, restrict_to_workspace=True)
    result = await registry.execute("exec", {"command": SPAWNERS.format(t="4712") + " sleep 306.4712"}, ctx)
    assert "timed out after 1 seconds" in result
    assert alive_with(".4712") == []


@needs_sandbox
async def test_stop_kills_every_process_of_the_call(make_engine, fake_openai) -> None:
    engine = make_engine(restrict_to_workspace=True)
    engine.approvals.respond_with(allow_all)
    started = asyncio.Event()
    engine.bus.subscribe(lambda e: started.set() if isinstance(e, ev.ToolCallStarted) else None)
    marker = engine.workspace.root / "ready"
    fake_openai.add_tool_calls([("exec", {"command": SPAWNERS.format(t="4713") + " touch ready; sleep 307.4713"})])
    task = engine.loop.submit("desktop:stopkids", "go")
    await asyncio.wait_for(started.wait(), 10)
    for _ in range(500):
        if marker.exists():
            break
        await asyncio.sleep(0.02)
    assert marker.exists()
    assert alive_with(".4713")  # they do run before the stop
    await asyncio.wait_for(engine.loop.submit("desktop:stopkids", "/stop"), 10)
    assert task.cancelled()
    assert alive_with(".4713") == []


def test_environment_is_built_from_an_allow_list(tmp_path: Path) -> None:
    source = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "NANOBOT_PROVIDERS__OPENAI__API_KEY": "k",
              "OPENAI_API_KEY": "k", "GITHUB_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "s", "HOME": "/root",
              "SSH_AUTH_SOCK": "/tmp/agent", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus"}
    env = sandbox_environment(tmp_path, "/opt/tools", source)
    assert env == {"PATH": "/usr/bin:/opt/tools", "LANG": "C.UTF-8", "LC_ALL": "C", "HOME": str(tmp_path),
                   "TMPDIR": str(tmp_path), "TMP": str(tmp_path), "TEMP": str(tmp_path)}


def test_hidden_folders_cover_home_config_app_and_temp(tmp_path: Path) -> None:
    hidden = sandbox.default_hidden(tmp_path / "cfg" / "config.json")
    for folder in (Path.home().resolve(), (tmp_path / "cfg").resolve(), Path("/tmp").resolve(),
                   *sandbox.app_paths()):
        assert folder in hidden
    folders, files = sandbox.read_rules(hidden)
    granted = [*folders, *files]
    assert Path("/usr") in granted or Path("/usr").is_symlink()
    assert not any(h == g or h in g.parents for h in hidden for g in granted)


# ---- where no sandbox exists ---------------------------------------------------------------------

@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> SandboxSupport:
    missing = SandboxSupport(False, "not sandboxed: this kernel has no Landlock (Linux 5.13 or newer needed)")
    monkeypatch.setattr(sandbox, "_SUPPORT", missing)
    return missing


async def test_without_a_sandbox_exec_cannot_be_allowed_and_cards_say_so(no_sandbox, tmp_path: Path) -> None:
    policy = ToolPolicy({"exec": "allow"})  # e.g. written by another machine's app
    assert policy.decision_for("exec") == "ask"
    with pytest.raises(ValueError, match="exec cannot be set to allow: commands are not sandboxed"):
        policy.set("exec", "allow")
    assert policy.allow_always("read_file") == {"read_file": "allow"}  # the refused allow is not saved back
    registry = build_default_registry()
    ctx = ToolContext(workspace=tmp_path, restrict_to_workspace=True)
    request = await build_approval_request(registry.get("exec"), {"command": "ls"}, ctx)
    assert request.sandbox == no_sandbox.summary
    # and the command is still run by the pattern guard's rules, not in a sandbox
    assert "safety guard" in await registry.execute("exec", {"command": "cat ../x"}, ctx)


@needs_sandbox
async def test_card_line_says_how_a_command_is_contained(tmp_path: Path) -> None:
    registry = build_default_registry()
    tool = registry.get("exec")
    restricted_ctx = ToolContext(tmp_path, restrict_to_workspace=True)
    restricted = await build_approval_request(tool, {"command": "ls"}, restricted_ctx)
    assert restricted.sandbox.startswith("sandboxed (Landlock ABI") and restricted.sandbox.endswith("network on")
    free = await build_approval_request(tool, {"command": "ls"}, ToolContext(tmp_path))
    assert free.sandbox == "not sandboxed: the workspace restriction is off (Settings → Tools)"
    tool.sandbox_always, tool.network = True, False
    always = await build_approval_request(tool, {"command": "ls"}, ToolContext(tmp_path))
    assert always.sandbox.endswith("network off")
    outside = tmp_path.parent / f"{tmp_path.name}-sibling.txt"
    result = await registry.execute("exec", {"command": f"echo x > {outside}; echo ran"}, ToolContext(tmp_path))
    assert "ran" in result and not outside.exists()  # sandboxAlways contains an unrestricted session too


# ---- race-free file tools --------------------------------------------------------------------------

@pytest.fixture(params=["openat2", "openat-walk"])
def resolution(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "openat-walk":
        monkeypatch.setattr(safe_files, "_openat2_missing", True)
    return request.param


@pytest.mark.slow
async def test_directory_swapped_for_a_symlink_never_reads_or_writes_outside(tmp_path: Path, resolution: str) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    (ws / "d" / "f.txt").write_text("inside", encoding="utf-8")
    (outside / "f.txt").write_text("OUTSIDE-SECRET", encoding="utf-8")
    stop = threading.Event()

    (ws / "d.swap").symlink_to(outside, target_is_directory=True)
    libc = ctypes.CDLL(None, use_errno=True)

    def attacker() -> None:  # renameat2(RENAME_EXCHANGE): "d" is the folder, then the symlink, then...
        while not stop.is_set():
            assert libc.renameat2(-100, bytes(ws / "d"), -100, bytes(ws / "d.swap"), 2) == 0, ctypes.get_errno()

    thread = threading.Thread(target=attacker)
    thread.start()
    registry = build_default_registry()
    ctx = ToolContext(workspace=ws, restrict_to_workspace=True)
    results = []
    try:
        for index in range(300):
            results.append(await registry.execute("read_file", {"path": "d/f.txt"}, ctx))
            results.append(await registry.execute("write_file", {"path": f"d/n{index}.txt", "content": "x"}, ctx))
            results.append(await registry.execute("list_dir", {"path": "d"}, ctx))
    finally:
        stop.set()
        thread.join()
    assert not any("OUTSIDE-SECRET" in r for r in results)
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert sum(r == "inside" for r in results) > 0  # the calls really ran between swaps


async def test_hard_linked_files_are_refused_only_under_the_restriction(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "config.json").write_text("KEY", encoding="utf-8")
    os.link(tmp_path / "config.json", ws / "c.json")
    registry = build_default_registry()
    restricted = ToolContext(workspace=ws, restrict_to_workspace=True)
    for tool, args in (("read_file", {"path": "c.json"}), ("write_file", {"path": "c.json", "content": "x"}),
                       ("edit_file", {"path": "c.json", "old_text": "KEY", "new_text": "x"})):
        result = await registry.execute(tool, args, restricted)
        assert result.startswith("Error: c.json has 2 hard links; with the workspace restriction on"), result
    assert (tmp_path / "config.json").read_text() == "KEY"
    assert await registry.execute("read_file", {"path": "c.json"}, ToolContext(workspace=ws)) == "KEY"


async def test_bundled_skills_are_readable_but_read_only_under_the_restriction(tmp_path: Path) -> None:
    skill = builtin_skills_dir() / "memory" / "SKILL.md"
    registry = build_default_registry()
    ctx = ToolContext(workspace=tmp_path, restrict_to_workspace=True)
    assert await registry.execute("read_file", {"path": str(skill)}, ctx) == skill.read_text(encoding="utf-8")
    assert "📄 SKILL.md" in await registry.execute("list_dir", {"path": str(skill.parent)}, ctx)
    before = skill.read_bytes()
    result = await registry.execute("write_file", {"path": str(skill), "content": "x"}, ctx)
    assert result.startswith(f"Error: Path {skill} is outside allowed directory"), result
    assert skill.read_bytes() == before
    beside = await registry.execute("read_file", {"path": str(builtin_skills_dir().parent / "AGENTS.md")}, ctx)
    assert beside.startswith("Error: Path ")


# ---- bounded resources ----------------------------------------------------------------------------

_BIG_FILE_PROBE = textwrap.dedent("""
    import asyncio, json, re, sys, time
    from pathlib import Path
    from nanobot_desktop.engine.tools.base import ToolContext
    from nanobot_desktop.engine.tools.registry import build_default_registry

    async def main():
        ws = Path(sys.argv[1])
        with open(ws / "big.bin", "wb") as f:
            f.truncate(1 << 30)  # 1 GB, sparse
        registry, out = build_default_registry(), {}
        for restrict in (True, False):
            ctx = ToolContext(workspace=ws, restrict_to_workspace=restrict)
            for name, args in (("edit_file", {"path": "big.bin", "old_text": "a", "new_text": "b"}),
                               ("write_file", {"path": "big.bin", "content": "small"}),
                               ("read_file", {"path": "big.bin"})):
                start = time.perf_counter()
                preview = await registry.get(name).preview(ctx, **args)
                result = await registry.execute(name, args, ctx)
                out[f"{name}:{restrict}"] = [time.perf_counter() - start, preview, result]
        # this process's own peak: VmHWM belongs to its address space, whereas ru_maxrss carries over
        # exec from the process that started it (a test run grown to 500 MB made this probe "use" 555 MB)
        status = Path("/proc/self/status").read_text()
        out["maxrss_mb"] = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) / 1024
        out["size"] = (ws / "big.bin").stat().st_size
        print(json.dumps(out))

    asyncio.run(main())
""")


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/status and sparse files as on Linux")
def test_one_gigabyte_file_is_refused_fast_with_little_memory(tmp_path: Path) -> None:
    probe = subprocess.run([sys.executable, "-c", _BIG_FILE_PROBE, str(tmp_path)], capture_output=True, text=True,
                           timeout=120, check=True)
    report = json.loads(probe.stdout)
    print("1 GB sparse file:", {k: (round(v[0], 4) if isinstance(v, list) else v) for k, v in report.items()})
    assert report["maxrss_mb"] < 300
    assert report["size"] == 1 << 30  # untouched
    for key, (seconds, preview, result) in ((k, v) for k, v in report.items() if ":" in k):
        assert seconds < 5, key  # generous; the measured figures are a few milliseconds
        if key.startswith("read_file"):
            assert result.startswith("Error: File too large (1,073,741,824 bytes; read_file reads at most")
        else:
            expected = "Error: big.bin is too large to change with write_file or edit_file (1,073,741,824 bytes"
            assert result.startswith(expected), result
            assert preview is None or preview.startswith(expected)


def test_a_huge_memory_file_is_cut_in_the_prompt_with_a_notice(make_engine) -> None:
    engine = make_engine()
    with open(engine.memory.memory_file, "wb") as handle:
        handle.write(b"fact \xc3\xa9 " * 10)
        handle.truncate(50_000_000)
    section = next(s for s in engine.context.system_sections() if s.name == "memory")
    assert section.text.startswith("# Memory\n\n## Long-term Memory\nfact é fact é")
    assert section.text.endswith("[MEMORY.md is cut here: it has 50,000,000 bytes and the prompt takes at most "
                                 f"{MAX_MEMORY_PROMPT_BYTES:,} of it. The rest is not shown; ask the user to "
                                 "shorten MEMORY.md.]")
    assert len(section.text) < MAX_MEMORY_PROMPT_BYTES + 400


async def test_a_failed_consolidation_is_not_resent_every_turn(make_engine, fake_openai) -> None:
    engine = make_engine(memoryWindow=4)
    finished: list[ev.ConsolidationFinished] = []
    engine.bus.subscribe(lambda e: finished.append(e) if isinstance(e, ev.ConsolidationFinished) else None)

    def is_consolidation(body: dict) -> bool:
        return any(t["function"]["name"] == "save_memory" for t in body.get("tools") or [])

    fake_openai.respond_with(lambda body: error_reply(400, "context too long") if is_consolidation(body)
                             else text_reply("ok"))
    for turn in range(6):
        await engine.loop.process("desktop:big", f"message {turn}")
        await engine.loop.wait_for_consolidation("desktop:big")
    sent = [r for r in fake_openai.requests if is_consolidation(r)]
    # Turn 3 starts with 5 messages (its own included): tried, failed. Turn 4 (7) does not resend it,
    # turn 5 (9 = 5 + a window of 4) retries and fails, turn 6 (11) does not resend.
    assert len(sent) == 2
    # A turn that does not resend it does not start a consolidation at all: each failure is said once.
    errors = [e.error for e in finished]
    assert len(errors) == 2 and not any(e.ok for e in finished)
    for failed in errors:
        assert failed.startswith("the model call failed: The endpoint rejected the request (400)"), failed
        assert failed.endswith("; not retried until the conversation has 4 more messages (or at /new)")


async def test_unsandboxed_exec_ends_its_process_group_when_the_shell_ends(tmp_path: Path) -> None:
    registry = build_default_registry(exec_timeout_s=60)
    result = await registry.execute("exec", {"command": "sleep 300.4715 & echo started"}, ToolContext(tmp_path))
    assert result.strip() == "started"  # returned when the shell ended, not after the 60 s timeout
    assert alive_with(".4715") == []
