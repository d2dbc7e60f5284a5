"""The README's screenshots, made from a demo workspace this script builds: `python3 dev.py screenshots`.

    python3 docs/screenshots.py [--out docs] [--sizes 1280x800,...] [--scales 1,2] [--themes light,dark]

Each shot runs in a process of its own (the screen's size and QT_SCALE_FACTOR are per process),
offscreen, with HOME in a fresh temporary folder, so the status bar reads "~/.nanobot/workspace" and
no personal file or test folder shows. The demo is what a person's first week looks like: a few
conversations in the list, a memory with facts and its history, a skill, a scheduled job, and a
conversation mid-turn — a read_file step done, a table and a code block in an earlier answer, and
the agent waiting for approval to write a file. The model is the project's loopback fake endpoint
(tests/fake_openai.py), scripted with that turn.

Writes docs/<view>-<theme>[-<W>x<H>][@<scale>x].png: the chat, the memory page, the skills drawer
and the Agent area, light and dark. By default the README's set (1280×800, scale 1); pass --sizes
and --scales for the others (a shot takes ~25 s: one process, one demo, one turn).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VIEWS = ("chat", "memory", "skills", "agent", "usage")  # the README's
README_SIZE = "1280x800"

EARLIER = [
    {"role": "user", "content": "Which of my three laptops has the best battery for the trip?"},
    {"role": "assistant", "content": (
        "From the spec sheets in `notes/laptops.md`:\n\n"
        "| Laptop | Battery | Weight | Charges over USB-C |\n"
        "|---|---|---|---|\n"
        "| ThinkPad X1 Carbon | 57 Wh | 1.12 kg | yes |\n"
        "| MacBook Air 13 | 52.6 Wh | 1.24 kg | yes |\n"
        "| Framework 13 | 61 Wh | 1.30 kg | yes |\n\n"
        "The **Framework 13** has the largest battery; the X1 Carbon is the lightest. "
        "To check the real capacity on Linux before you leave:\n\n"
        "```bash\n"
        "upower -i $(upower -e | grep BAT) | grep -E 'energy-full|capacity'\n"
        "```\n")},
]
TURN_TEXT = "Add the Framework to my packing list in notes/trip.md"
PACKING = "# Trip to Lisbon\n\n- passport\n- charger (USB-C, 65 W)\n- adapter EU\n"
SESSIONS = [
    ("Weekly review of the inbox", "Sort my inbox notes by project", "Done: 3 projects, 11 notes. The biggest is the kitchen renovation."),
    ("Recipe for the dinner on Friday", "A vegetarian main for six people?",
     "A mushroom and chestnut pie serves six; here is the shopping list."),
    ("Summarise the paper on sleep", "Summarise notes/sleep-paper.pdf in five bullets", "Five findings, most robust first: …"),
]
MEMORY = ("# Memory\n\n## About the user\n- Lives in Berlin, travels to Lisbon in December\n- Prefers short answers with a table\n"
          "- Vegetarian\n\n## Projects\n- Kitchen renovation: builder starts 12 January\n- Reading group: sleep research\n")
HISTORY = ("[2026-11-21 09:12] Sorted the inbox notes into three projects; the kitchen renovation is the largest.\n\n"
           "[2026-11-23 18:40] Planned Friday's dinner for six: mushroom and chestnut pie.\n\n"
           "[2026-11-27 08:05] Compared three laptops for the Lisbon trip; the Framework 13 has the largest battery.\n")
SKILL = ("---\nname: packing-list\ndescription: Keep packing lists in notes/ up to date for a trip\n---\n\n"
         "# Packing list\n\nWhen the user mentions a trip, add what they need to `notes/trip.md`, one item a line.\n")


def seed_usage(config_folder: Path, chat_keys: list[str], now: float) -> None:
    """A month of model calls in the app's usage record, as a person who mostly runs a local model has
    it: chats and the memory's consolidation on qwen3:14b, the heartbeat twice a day, a scheduled
    job on Mondays, and subagents on a priced cloud model (with prompt-cache reads) on some days.
    Fixed by a seeded generator, so the page looks the same in every screenshot."""
    import random

    from nanobot_desktop.engine.usage.store import UsageRow, UsageWriter

    rng = random.Random(31)
    rows: list[UsageRow] = []
    today = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)

    def call(day: datetime, hour: float, model: str, kind: str, key: str, inp: int, out: int,
             read: int | None = None) -> None:
        started = day + timedelta(hours=hour)
        if started.timestamp() < now:
            rows.append(UsageRow(int(started.timestamp() * 1000), rng.randint(900, 9000), "custom", model, kind, key,
                                 "stop", inp, out, cache_read_tokens=read))

    for days_ago in range(29, -1, -1):
        day = today - timedelta(days=days_ago)
        for hour in (8.0, 18.0):
            call(day, hour, "qwen3:14b", "heartbeat", "heartbeat", rng.randint(1_800, 2_600), rng.randint(40, 160))
        if day.weekday() == 0:
            call(day, 7.5, "qwen3:14b", "cron", "cron:weekly-review", rng.randint(6_000, 9_000), rng.randint(600, 1_200))
        if day.weekday() < 5 or rng.random() < 0.5:
            for _ in range(rng.randint(2, 9)):
                call(day, rng.uniform(9, 22), "qwen3:14b", "chat", rng.choice(chat_keys), rng.randint(3_000, 14_000),
                     rng.randint(150, 1_400))
            call(day, 22.5, "qwen3:14b", "consolidation", rng.choice(chat_keys), rng.randint(4_000, 8_000),
                 rng.randint(300, 700))
        if rng.random() < 0.3:
            for _ in range(rng.randint(2, 5)):
                inp = rng.randint(8_000, 30_000)
                call(day, rng.uniform(10, 20), "gpt-4o-mini", "subagent", rng.choice(chat_keys), inp,
                     rng.randint(500, 2_500), read=inp // 2)
    rows.sort(key=lambda row: row.started_at_ms)
    UsageWriter(config_folder).write(rows, {})


def build_demo(home: Path, base_url: str) -> Path:
    """The demo's config and workspace under `home`; returns the config's path."""
    sys.path.insert(0, str(ROOT))
    from tests.fake_openai import write_fake_config

    workspace = home / ".nanobot" / "workspace"
    config = write_fake_config(home / ".nanobot" / "config.json", base_url, workspace, model="qwen3:14b")
    data = json.loads(config.read_text(encoding="utf-8"))
    data["gateway"]["heartbeat"]["enabled"] = True
    config.write_text(json.dumps(data, indent=2), encoding="utf-8")
    (workspace / "notes").mkdir(parents=True, exist_ok=True)
    (workspace / "notes" / "trip.md").write_text(PACKING, encoding="utf-8")
    (workspace / "notes" / "laptops.md").write_text("# Laptops\n\nX1 Carbon 57 Wh; Air 52.6 Wh; Framework 61 Wh.\n",
                                                    encoding="utf-8")
    (workspace / "skills" / "packing-list").mkdir(parents=True, exist_ok=True)
    (workspace / "skills" / "packing-list" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (workspace / "HEARTBEAT.md").write_text("# Heartbeat\n\n- Every morning: check notes/inbox.md for new items\n",
                                            encoding="utf-8")
    return config


def shoot(out: Path, view: str, theme: str, width: int, height: int) -> None:
    """In this process (HOME and the screen set by `main`): the demo window, grabbed."""
    from tests.gui.window_process import run_in_loop

    run_in_loop(_shoot(out, view, width, height), theme=theme)


async def _shoot(out: Path, view: str, width: int, height: int) -> None:
    import asyncio

    from PySide6.QtCore import QSettings

    from nanobot_desktop.engine import Engine
    from nanobot_desktop.gui.window.lifetime import SESSION_KEY
    from tests.fake_openai import FakeOpenAIServer
    from tests.gui.window_process import close_window, open_window, until

    home = Path(os.environ["HOME"])
    with FakeOpenAIServer(models=("qwen3:14b",)) as server:
        engine = Engine.open(build_demo(home, server.base_url))
        # set up as a person does with Settings' Ollama preset: the switcher names the server, not "Custom"
        engine.update_config({"app.localServers.custom": {"kind": "ollama", "apiBase": server.base_url}})
        memory = engine.memory
        memory.write_long_term(MEMORY.replace("- Vegetarian\n", ""), source="user")
        memory.write_long_term(MEMORY, source="agent")
        history = Path(engine.workspace.root) / "memory" / "HISTORY.md"
        if history.parent.is_dir():
            history.write_text(HISTORY, encoding="utf-8")
        for title, question, answer in SESSIONS:
            session = engine.sessions.get_or_create(engine.new_session_key())
            engine.sessions.append(session, [{"role": "user", "content": question}, {"role": "assistant", "content": answer}])
            engine.sessions.rename(session.key, title)
            await asyncio.sleep(0.01)  # distinct times, in this order
        key = engine.new_session_key()
        engine.sessions.append(engine.sessions.get_or_create(key), EARLIER)
        chat_keys = [info.key for info in engine.sessions.list_sessions()]
        seed_usage(Path(engine.config_path).parent, chat_keys, time.time())
        server.add_tool_calls([("read_file", {"path": "notes/trip.md"})], content="I'll look at the list first.")
        server.add_tool_calls([("write_file", {"path": "notes/trip.md", "content": PACKING + "- Framework 13 laptop and its charger\n"})])
        server.add_text("Added.")
        settings = QSettings(str(home / "window.ini"), QSettings.Format.IniFormat)
        settings.setValue(SESSION_KEY, key)
        window, lifecycle = open_window(engine, home, settings)
        window.resize(width, height)
        window.show()
        await asyncio.sleep(0.3)
        window.open_session(key)
        if view == "chat":
            window.send_message(TURN_TEXT, [])
            await until(lambda: bool(window.chat.pending_approvals(key)), 10.0, "the demo turn asked no approval")
            if width >= 1600:  # room for the drawer beside the reading column: show what the agent did
                window.docking.open_drawer("inspectorDock")
        elif view == "memory":
            window.docking.show_page("memory_view")
        elif view == "skills":
            window.show_skills()
        elif view == "agent":
            window.docking.show_page("heartbeat_view")
        elif view == "usage":
            window.docking.show_page("usage_view")
        await asyncio.sleep(0.8)
        window.grab().save(str(out))
        await close_window(window, lifecycle)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs"))
    parser.add_argument("--sizes", default=README_SIZE, help="e.g. 1024x640,1280x800,1920x1080")
    parser.add_argument("--scales", default="1", help="QT_SCALE_FACTOR values, e.g. 1,1.5,2")
    parser.add_argument("--themes", default="light,dark")
    parser.add_argument("--views", default=",".join(VIEWS))
    parser.add_argument("--shot", nargs=5, metavar=("OUT", "VIEW", "THEME", "WIDTH", "HEIGHT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.shot:
        out, view, theme, width, height = args.shot
        shoot(Path(out), view, theme, int(width), int(height))
        return 0
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    failures = 0
    for scale in args.scales.split(","):
        for size in args.sizes.split(","):
            width, height = (int(part) for part in size.split("x"))
            for theme in args.themes.split(","):
                for view in args.views.split(","):
                    name = f"{view}-{theme}" + ("" if size == README_SIZE else f"-{size}") + ("" if scale == "1" else f"@{scale}x")
                    failures += _one_shot(out_dir / f"{name}.png", view, theme, width, height, float(scale))
    return 1 if failures else 0


def _one_shot(out: Path, view: str, theme: str, width: int, height: int, scale: float) -> int:
    with tempfile.TemporaryDirectory(prefix="nanobot-demo-") as temp:
        home = Path(temp)
        screen = home / "screen.json"
        screen.write_text(json.dumps({"screens": [{"name": "demo", "x": 0, "y": 0, "width": round(width * scale) + 40,
                                                   "height": round(height * scale) + 40, "logicalDpi": 96,
                                                   "logicalBaseDpi": 96, "dpr": 1}]}), encoding="utf-8")
        env = {key: value for key, value in os.environ.items() if not key.startswith("XDG_")}
        env.update(HOME=str(home), QT_QPA_PLATFORM=f"offscreen:configfile={screen}", QT_SCALE_FACTOR=f"{scale:g}",
                   PYTHONPATH=str(ROOT), LANG="en_US.UTF-8", LANGUAGE="en")
        for folder in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
            env[folder] = str(home / folder.lower())
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--shot", str(out), view, theme,
                               str(width), str(height)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=180)
    if done.returncode != 0 or not out.is_file():
        print(f"FAILED {out.name}:\n{done.stderr[-2000:]}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
