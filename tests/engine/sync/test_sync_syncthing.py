"""Two machines share one workspace through two real Syncthing instances (heavy: about two minutes).

Each "machine" is an engine of its own with its own config and workspace folder; Syncthing carries the
files between the two folders over loopback. The app's part is what a sync tool cannot do: merge the
conflict copies that concurrent appends make, and agree which machine runs the heartbeat.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.config import patch_settings
from nanobot_desktop.engine.events import BackgroundOwnerChanged, HeartbeatDecided
from nanobot_desktop.engine.layout import LayoutKind, prepare_workspace
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.engine.sync.machines import Machines
from nanobot_desktop.engine.sync.merge import session_conflict_copies
from tests.fake_openai import text_reply, write_fake_config
from tests.reference_cli import POST4, V035, run_reference_cli
from tests.syncthing_pair import SyncthingPair

pytestmark = [pytest.mark.heavy, pytest.mark.slow, pytest.mark.timeout(900)]  # two sync engines on a busy machine
KEY = "cli:direct"
ROUNDS = 20


def _reply_to_last_user(body: dict[str, Any]) -> Any:
    last = next(m for m in reversed(body["messages"]) if m["role"] == "user")
    text = last["content"] if isinstance(last["content"], str) else json.dumps(last["content"])
    return text_reply(f"ok: {text.strip().splitlines()[-1][-40:]}")


def _engine(home: Path, workspace: Path, base_url: str, **heartbeat: Any) -> Engine:
    config = write_fake_config(home / ".nanobot" / "config.json", base_url, workspace)
    if heartbeat:
        data = json.loads(config.read_text())
        data["gateway"]["heartbeat"] = heartbeat
        config.write_text(json.dumps(data))
    return Engine.open(config)


def _user_texts(path: Path) -> list[str]:
    lines = [json.loads(line) for line in path.read_bytes().splitlines()[1:] if line.strip()]
    return [m["content"].split()[-1] for m in lines if m.get("role") == "user" and isinstance(m.get("content"), str)]


async def _settle(pair: SyncthingPair, engines: list[Engine], limit_s: float = 120) -> int:
    """Sync, merge what conflicted, and again, until no copy is left and both files are the same;
    returns how many copies were merged."""
    deadline = time.monotonic() + limit_s
    merged = 0
    while time.monotonic() < deadline:
        await asyncio.to_thread(pair.settle)
        for engine in engines:
            merged += len(engine.merge_sync_copies())
        await asyncio.to_thread(pair.settle)
        files = [engine.sessions.path_for(KEY) for engine in engines]
        copies = [c for engine in engines for c in session_conflict_copies(engine.sessions.sessions_dir)]
        if not copies and files[0].read_bytes() == files[1].read_bytes():
            return merged
    raise AssertionError("the two workspaces never agreed")


async def test_both_machines_append_at_once_and_every_turn_is_kept_once_in_order(tmp_path: Path, fake_openai) -> None:
    fake_openai.respond_with(_reply_to_last_user)
    with SyncthingPair(tmp_path) as pair:
        laptop = _engine(tmp_path / "home-a", pair.a.folder, fake_openai.base_url)
        desktop = _engine(tmp_path / "home-b", pair.b.folder, fake_openai.base_url)
        engines = [laptop, desktop]
        merged = 0
        try:
            for round_ in range(ROUNDS):
                await asyncio.gather(laptop.loop.process(KEY, f"from laptop A{round_:02d}", channel="cli", chat_id="direct"),
                                     desktop.loop.process(KEY, f"from desktop B{round_:02d}", channel="cli", chat_id="direct"))
                await asyncio.to_thread(pair.settle)  # what the watcher would see, then merge
                merged += sum(len(engine.merge_sync_copies()) for engine in engines)
            merged += await _settle(pair, engines)
        finally:
            for engine in engines:
                await engine.shutdown()
        assert merged > 0, "no conflict happened: the test did not test merging"
        for engine in engines:
            texts = _user_texts(engine.sessions.path_for(KEY))
            assert sorted(texts) == sorted([f"A{i:02d}" for i in range(ROUNDS)] + [f"B{i:02d}" for i in range(ROUNDS)])
            assert [t for t in texts if t[0] == "A"] == [f"A{i:02d}" for i in range(ROUNDS)]  # each machine's in order
            assert [t for t in texts if t[0] == "B"] == [f"B{i:02d}" for i in range(ROUNDS)]
            messages = [json.loads(line) for line in engine.sessions.path_for(KEY).read_bytes().splitlines()[1:]]
            for machine, letter in (("laptop", "A"), ("desktop", "B")):
                # each machine's turns, question then answer, exactly once and in order (turns asked at the same
                # moment on two machines may interleave, as two people talking at once do)
                own = [(m["role"], m["content"].split()[-1]) for m in messages if f"from {machine} " in m["content"]]
                assert own == [pair for i in range(ROUNDS) for pair in
                               (("user", f"{letter}{i:02d}"), ("assistant", f"{letter}{i:02d}"))], machine

    # both nanobot CLIs continue the merged conversation with all of it in their history: post4 on this post4
    # workspace; 0.3.5 on the same file in a 0.3 workspace (0.3.5 starts a post4 workspace's cli:direct afresh)
    merged_file = (tmp_path / "machine-a" / "ws" / "sessions" / "cli_direct.jsonl").read_bytes()
    fake_openai.respond_with(None)
    fake_openai.add_text("all there")
    result = run_reference_cli(POST4, ["agent", "-m", "count them", "-s", KEY, "--no-markdown"], home=tmp_path / "home-a")
    assert result.returncode == 0 and "all there" in result.stdout, result.stdout + result.stderr
    _assert_every_turn_once(fake_openai.requests[-1], POST4)

    home = tmp_path / "home-c"
    config = patch_settings(home / ".nanobot" / "config.json", {
        "agents.defaults.model": "fake-model", "agents.defaults.provider": "custom", "agents.defaults.workspace":
        str(home / "ws"), "providers.custom.apiBase": fake_openai.base_url, "providers.custom.apiKey": "sk-test"})
    prepare_workspace(home / "ws", LayoutKind.V03)
    v03 = Engine.open(home / ".nanobot" / "config.json")
    target = v03.sessions.path_for(KEY)
    await v03.shutdown()
    assert config is not None and target.name == "Y2xpOmRpcmVjdA.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(merged_file)
    fake_openai.add_text("all there")
    result = run_reference_cli(V035, ["agent", "-m", "count them", "-s", KEY, "--no-markdown"], home=home)
    assert result.returncode == 0 and "all there" in result.stdout, result.stdout + result.stderr
    _assert_every_turn_once(fake_openai.requests[-1], V035)


def _assert_every_turn_once(request: dict[str, Any], version: str) -> None:
    sent = [str(m.get("content")) for m in request["messages"] if m.get("role") == "user"]
    for i in range(ROUNDS):
        assert sum(f"A{i:02d}" in c for c in sent) == 1, (version, i, sent)
        assert sum(f"B{i:02d}" in c for c in sent) == 1, (version, i)


async def test_a_memory_edited_on_both_machines_waits_named_and_the_choice_reaches_both(tmp_path: Path, fake_openai,
                                                                                    monkeypatch) -> None:
    with SyncthingPair(tmp_path) as pair:
        laptop = _engine(tmp_path / "home-a", pair.a.folder, fake_openai.base_url)
        laptop.memory.write_long_term("# Memory\n\n- likes tea\n")
        await asyncio.to_thread(pair.settle)  # the desktop gets the workspace before its app first opens it
        desktop = _engine(tmp_path / "home-b", pair.b.folder, fake_openai.base_url)
        try:
            assert desktop.memory.read_long_term() == "# Memory\n\n- likes tea\n"
            laptop.memory.write_long_term("# Memory\n\n- likes tea\n- lives in Lisbon\n")
            desktop.memory.write_long_term("# Memory\n\n- likes tea\n- has a dog\n")
            deadline = time.monotonic() + 60
            while not (laptop.text_conflicts() and desktop.text_conflicts()) and time.monotonic() < deadline:
                await asyncio.to_thread(pair.settle)
            monkeypatch.setenv("STHOMEDIR", str(pair.a.home))  # the laptop's own Syncthing names the devices
            (conflict,) = laptop.text_conflicts()
            assert conflict.name == "memory/MEMORY.md"
            # the copy names the device whose version lost, which may be this one: both are said by name
            said = conflict.conflict.describe_device()
            assert said == "desktop (Syncthing)" or (said.startswith("this machine (") and said.endswith(") (Syncthing)"))
            versions = {conflict.ours(), conflict.theirs()}
            assert versions == {"# Memory\n\n- likes tea\n- lives in Lisbon\n", "# Memory\n\n- likes tea\n- has a dog\n"}
            chosen = "# Memory\n\n- likes tea\n- lives in Lisbon\n- has a dog\n"
            laptop.resolve_text_conflict(conflict.copy.name, chosen)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                await asyncio.to_thread(pair.settle)
                if desktop.memory.read_long_term() == chosen and not desktop.text_conflicts():
                    break
            assert laptop.memory.read_long_term() == desktop.memory.read_long_term() == chosen
            assert laptop.text_conflicts() == [] and desktop.text_conflicts() == []
        finally:
            for engine in (laptop, desktop):
                await engine.shutdown()


async def test_one_machine_runs_the_heartbeat_and_the_other_takes_over(tmp_path: Path, fake_openai) -> None:
    fake_openai.respond_with(lambda body: text_reply("skip"))
    with SyncthingPair(tmp_path) as pair:
        for folder in (pair.a.folder, pair.b.folder):
            (folder / "HEARTBEAT.md").write_text("# Heartbeat\n\n- [ ] water the plants\n")
        engines = [_engine(tmp_path / f"home-{n}", folder, fake_openai.base_url, enabled=True, intervalS=3)
                   for n, folder in (("a", pair.a.folder), ("b", pair.b.folder))]
        for name, engine in zip(("laptop", "desktop"), engines, strict=True):
            engine._machines = Machines(engine.workspace.root, machine_id=(name[0] * 32).replace("l", "a").replace("d", "b"),
                                        name=name, takeover_s=8, beat_s=1)
        ticks: dict[str, list[float]] = {"laptop": [], "desktop": []}
        counting = {"laptop": asyncio.Event(), "desktop": asyncio.Event()}
        seen_other = asyncio.Event()
        wanted = {"laptop": 10, "desktop": 1}

        def listen(event: object, name: str) -> None:
            if isinstance(event, HeartbeatDecided) and event.reason != "external":
                ticks[name].append(time.monotonic())
                if len(ticks[name]) >= wanted[name]:
                    counting[name].set()
            if name == "desktop" and isinstance(event, BackgroundOwnerChanged) and event.owner:
                seen_other.set()

        for name, engine in zip(("laptop", "desktop"), engines, strict=True):
            engine.bus.subscribe(lambda e, n=name: listen(e, n))
        try:
            for engine in engines:
                await engine.start_services()
            await asyncio.wait_for(seen_other.wait(), 30)  # both see each other (beats through Syncthing)
            ticks["laptop"].clear()
            ticks["desktop"].clear()
            counting["laptop"].clear()
            started = time.monotonic()
            await asyncio.wait_for(counting["laptop"].wait(), 10 * 3 + 10)  # ten heartbeat intervals
            assert ticks["desktop"] == [], "both machines ran the heartbeat"
            assert time.monotonic() - started >= 9 * 3 - 1  # they were real intervals, not a burst
            await engines[0].shutdown()  # the laptop's app quits
            stopped = time.monotonic()
            await asyncio.wait_for(counting["desktop"].wait(), 8 + 3 + 10)
            assert ticks["desktop"][0] - stopped <= 8 + 3 + 3  # the take-over time, one interval, sync's delay
        finally:
            for engine in engines:
                await engine.shutdown()


def test_the_status_says_in_sync_with_the_other_device_and_when_it_is_gone(tmp_path: Path) -> None:
    from nanobot_desktop.engine.sync.syncthing import find_api, read_status

    with SyncthingPair(tmp_path) as pair:
        (pair.a.folder / "notes.md").write_text("hello")
        pair.settle()
        api = find_api(pair.a.folder, pair.a.home / "config.xml")
        assert api is not None
        status = read_status(api)
        assert status is not None and status.in_sync and status.text.startswith("In sync with desktop")
        pair.b.stop()
        deadline = time.monotonic() + 30
        while (status := read_status(api)) is not None and status.in_sync and time.monotonic() < deadline:
            time.sleep(0.5)
        assert status is not None and status.text == "Syncthing: desktop not connected"
