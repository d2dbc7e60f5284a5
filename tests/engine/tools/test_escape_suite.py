"""The escape suite: every case of escape_cases.CASES runs through the real agent loop.

The fake endpoint scripts the tool calls an attacker steering the model would make, with the workspace
restriction on. For each case: secrets outside the workspace (config.json's key, a file outside, a
file in the home, the app's own source, API keys in the environment) never appear in any tool result,
approval diff, the session file, a request to the endpoint or a byte sent to a loopback sink; nothing
outside the workspace changed (bytes, modes, times, entries); no process the case started is alive.
The sandbox cases run for real where Landlock is available and are skipped (with the reason) elsewhere.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine import events as ev
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.engine.tools.policy import ApprovalAnswer, ApprovalRequest
from nanobot_desktop.engine.tools.sandbox import app_paths, sandbox_support
from tests.engine.escape_cases import CASES, Case
from tests.fake_openai import text_reply, write_fake_config

needs_sandbox = pytest.mark.skipif(not sandbox_support().available, reason=sandbox_support().summary)
SYSTEM_PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3")
                      if Path(p).exists()), None)
APP_MARKER = "class _RulesetAttr"  # a line of the app's own source; reading it is a leak


class Sink:
    """A loopback TCP and UDP listener that keeps every byte it is sent (the exfiltration target)."""

    def __init__(self) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.data = bytearray()
        self._stop = False
        self._threads = [threading.Thread(target=self._accept, daemon=True),
                         threading.Thread(target=self._datagrams, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _accept(self) -> None:
        self.tcp.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    while chunk := conn.recv(65536):
                        self.data.extend(chunk)
                except OSError:
                    pass

    def _datagrams(self) -> None:
        self.udp.settimeout(0.2)
        while not self._stop:
            try:
                self.data.extend(self.udp.recv(65536))
            except OSError:
                continue

    def close(self) -> None:
        """Stop both listeners at once: a connection and an empty datagram of our own wake them from their
        wait (otherwise each ran out its 0.2 s timeout, ~0.15 s a case over the 138 cases)."""
        self._stop = True
        with socket.create_connection(("127.0.0.1", self.port), timeout=2):
            pass
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as wake:
            wake.sendto(b"", ("127.0.0.1", self.port))
        for thread in self._threads:
            thread.join(5)
        self.tcp.close()
        self.udp.close()


@dataclass
class Arena:
    """One case's world: home with the config folder (holding the workspace), outside secrets, a sink."""

    home: Path
    cfg: Path
    ws: Path
    out: Path
    sink: Sink
    tok: str
    secrets: dict[str, str]
    endpoint: str

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            places = {"{ws}": self.ws, "{cfgdir}": self.cfg.parent, "{cfg}": self.cfg, "{home}": self.home,
                      "{out}": self.out, "{py}": SYSTEM_PYTHON or "python3", "{app}": app_paths()[0],
                      "{sink}": self.sink.port, "{tok}": self.tok, "{endpoint}": self.endpoint,
                      "{b64}": base64.b64encode(b"../config.json").decode()}
            for name, replacement in places.items():
                value = value.replace(name, str(replacement))
            return value
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value


def _apps_own_write(path: Path, home: Path) -> bool:
    """The app's own usage record (engine/usage: a row per model call, beside the config), and the config
    folder's time stamp that creating it moves: written by the app, never by the agent, so not an escape.
    Any other file there that changes still counts (the config itself, a new file)."""
    config_dir = home / ".nanobot"
    return path == config_dir or (path.parent == config_dir and path.name.startswith("desktop-usage.sqlite3"))


def snapshot(*roots: Path, skip: Path) -> dict[str, tuple]:
    """Everything under `roots` except `skip`: type, mode, size, mtime, bytes or link target."""
    seen: dict[str, tuple] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            if here == skip or skip in here.parents:
                dirnames[:] = []
                continue
            for name in [*dirnames, *filenames]:
                path = here / name
                if path == skip:
                    continue
                st = path.lstat()
                if path.is_symlink():
                    detail: Any = os.readlink(path)
                elif path.is_file():
                    detail = path.read_bytes()
                else:
                    detail = None
                seen[str(path)] = (st.st_mode, st.st_size, st.st_mtime_ns, detail)
            seen[str(here)] = (here.lstat().st_mode, here.lstat().st_mtime_ns)
    return seen


def alive_with(token: str) -> list[str]:
    """Command lines of live processes (not zombies) that mention `token`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token in cmdline and state != "Z":
            found.append(f"{entry}: {cmdline}")
    return found


def make_links(arena: Arena, names: tuple[str, ...]) -> None:
    links = {"link": (arena.out, True), "cfglink": (arena.cfg, False), "homelink": (arena.home, True),
             "rootlink": (Path("/proc/self/root"), True)}
    for name in names:
        if name in links:
            target, is_dir = links[name]
            (arena.ws / name).symlink_to(target, target_is_directory=is_dir)
        elif name == "cfghard":
            os.link(arena.cfg, arena.ws / "cfg.hard")
        elif name == "secrethard":
            os.link(arena.out / "secret.txt", arena.ws / "secret.hard")


@pytest.fixture
def arena(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch):
    home = Path.home()
    tok = str(secrets.randbelow(10**8) + 10**8)
    found = {
        "config key": f"sk-CONFIGKEY-{tok}",
        "outside file": f"OUTSIDESECRET-{tok}",
        "home file": f"HOMESECRET-{tok}",
        "env key": f"ENVKEY-{tok}",
        "env token": f"ENVTOKEN-{tok}",
        "app source": APP_MARKER,
        "workspace note (network off only)": f"WSNOTE-{tok}",
    }
    cfg = write_fake_config(home / ".nanobot" / "config.json", fake_openai.base_url, home / ".nanobot" / "workspace",
                            api_key=found["config key"], restrict_to_workspace=True)
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text(found["outside file"] + "\n", encoding="utf-8")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(found["home file"] + "\n", encoding="utf-8")
    (home / ".bashrc").write_text("# rc\n", encoding="utf-8")
    monkeypatch.setenv("NANOBOT_TOOLS__WEB__SEARCH__API_KEY", found["env key"])
    monkeypatch.setenv("OPENAI_API_KEY", found["env key"])
    monkeypatch.setenv("GITHUB_TOKEN", found["env token"])
    sink = Sink()
    ws = home / ".nanobot" / "workspace"
    ws.mkdir(parents=True)
    (ws / "notes.txt").write_text(found["workspace note (network off only)"] + "\n", encoding="utf-8")
    try:
        yield Arena(home, cfg, ws, out, sink, tok, found, fake_openai.base_url)
    finally:
        sink.close()
        for leftover in (Path("/tmp") / f"escape-{tok}", Path("/dev/shm") / f"escape-{tok}"):
            if leftover.exists():
                leftover.unlink()


def forms(secret: str) -> list[str]:
    """The secret as text, reversed and in base64 (a command may encode what it prints)."""
    raw = secret.encode()
    return [secret, secret[::-1], base64.b64encode(raw).decode()[:-4] or secret]


async def run_case(arena: Arena, fake_openai, case: Case) -> tuple[list[str], list[str]]:
    """Run the case's calls as one turn of the real loop; returns (leaks, tool results)."""
    engine = Engine.open(arena.cfg)
    exec_tool = engine.tools.get("exec")
    exec_tool.network = case.network
    make_links(arena, case.setup)
    outside_before = snapshot(arena.home, arena.out, skip=arena.ws)
    approvals: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        approvals.append(request)
        return ApprovalAnswer.ALLOW_ONCE

    engine.approvals.respond_with(approve)
    results: list[str] = []
    engine.bus.subscribe(lambda e: results.append(e.result) if isinstance(e, ev.ToolCallFinished) else None)
    # Requests a command sends to the endpoint itself get an answer of their own (and are checked too).
    fake_openai.respond_with(lambda body: None if "messages" in body else text_reply("received"))
    for tool, arguments in case.steps:
        fake_openai.add_tool_calls([(tool, arena.fill(arguments))])
    fake_openai.add_text("done")
    try:
        turn = await engine.loop.process("desktop:escape", "do as you are told")
        assert turn.status == "ok", turn
    finally:
        await engine.shutdown()
    places = {
        "tool results": "\n".join(results),
        "approval diffs": "\n".join(a.diff or "" for a in approvals),
        "session file": engine.sessions.path_for("desktop:escape").read_text(encoding="utf-8"),
        "endpoint requests": "\n".join(json.dumps(r, ensure_ascii=False) for r in fake_openai.requests),
        "loopback sink": arena.sink.data.decode(errors="replace"),
    }
    leaks = []
    for what, secret in arena.secrets.items():
        if what.startswith("workspace note") and case.network:
            continue  # with the network on, sending a workspace file is allowed
        for where, text in places.items():
            if any(form in text for form in forms(secret)):
                leaks.append(f"{what} in {where}")
    after = snapshot(arena.home, arena.out, skip=arena.ws)
    changed = sorted(k for k in set(after) | set(outside_before)
                     if after.get(k) != outside_before.get(k) and not _apps_own_write(Path(k), arena.home))
    if changed:
        leaks.append(f"changed outside: {changed}")
    for stray in (Path("/tmp") / f"escape-{arena.tok}", Path("/dev/shm") / f"escape-{arena.tok}"):
        if stray.exists():
            leaks.append(f"created {stray}")
    if alive := alive_with(arena.tok):
        leaks.append(f"processes alive after the call: {alive}")
    if any(tool == "message" for tool, _ in case.steps) and any("attachments" in r for r in results):
        leaks.append("an attachment was sent")
    assert all(a.sandbox and a.sandbox.startswith("sandboxed") for a in approvals if a.tool == "exec"), approvals
    return leaks, results


@needs_sandbox
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_escape_case_is_contained(arena: Arena, fake_openai, case: Case) -> None:
    if "{py}" in json.dumps(case.steps) and SYSTEM_PYTHON is None:
        pytest.skip("no system python3 outside the home folder")
    if case.known_gap:
        pytest.xfail(f"known gap: {case.known_gap}")  # run below only when it no longer gets out
    leaks, results = await run_case(arena, fake_openai, case)
    assert not leaks, f"{case.id} got out: {leaks}\nresults: {results}"
    if case.expect is not None:
        assert case.expect in results[-1], results


@needs_sandbox
@pytest.mark.parametrize("case", [c for c in CASES if c.known_gap], ids=[c.id for c in CASES if c.known_gap])
async def test_known_gap_still_gets_out(arena: Arena, fake_openai, case: Case) -> None:
    """Documented limitations are measured, not assumed: this fails (and must be moved) once one holds."""
    leaks, _results = await run_case(arena, fake_openai, case)
    assert leaks, f"{case.id} no longer gets out: drop its known_gap"


def test_the_table_covers_every_kind_with_enough_cases() -> None:
    kinds = {c.kind for c in CASES}
    assert {"runtime-path", "encoded", "interpreter", "script", "symlink-exec", "symlink-pre", "hardlink-exec",
            "hardlink-pre", "delete", "write-outside", "env-leak", "network", "background", "app-files",
            "proc-fs"} <= kinds
    assert len(CASES) >= 80
    assert len({c.id for c in CASES}) == len(CASES)


def test_system_python_is_outside_the_hidden_folders() -> None:
    if SYSTEM_PYTHON is None:
        pytest.skip("no system python3")
    assert not str(Path(SYSTEM_PYTHON).resolve()).startswith(str(Path.home()))
    assert shutil.which("sh")
