"""The cyclic garbage collector is held off while the program starts (start_up_collector.py).

The headless turn is run in a real process through the process entry (`cli.run`), with the release
and the engine's opening observed from inside; the unit tests pin down hold/release on their own.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest

from nanobot_desktop import start_up_collector
from tests.conftest import write_test_config

REPO = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import gc, json, sys
    from nanobot_desktop import cli, start_up_collector

    seen = {"releases": []}
    open_engine, release, main = cli._open_engine, start_up_collector.release, cli.main

    def observed_open(args):
        seen["collecting_while_the_engine_opens"] = gc.isenabled()
        return open_engine(args)

    def observed_release():
        seen["releases"].append({"openai_imported": "openai" in sys.modules, "main_returned": "code" in seen,
                                 "held": start_up_collector.held()})
        release()

    def observed_main(argv):
        seen["code"] = main(argv)
        return seen["code"]

    cli._open_engine, start_up_collector.release, cli.main = observed_open, observed_release, observed_main
    cli.run(sys.argv[1:])
    seen.update(collecting_after=gc.isenabled(), frozen=gc.get_freeze_count())
    print(json.dumps(seen), file=sys.stderr)
""")


def test_a_headless_turn_collects_again_from_its_first_model_reply(fake_openai, tmp_path: Path) -> None:
    config = write_test_config(tmp_path / "config.json", fake_openai.base_url, tmp_path / "ws")
    fake_openai.add_text("hello back")
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(HOME=str(tmp_path), USERPROFILE=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", PROBE, "agent", "-m", "hello", "--config", str(config)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello back\n"
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen["code"] == 0
    assert seen["collecting_while_the_engine_opens"] is False  # held from the process's start
    # Released once the first reply is in (the SDK imported, the command still running), and the
    # command's end releases nothing more.
    first, *later = seen["releases"]
    assert first == {"openai_imported": True, "main_returned": False, "held": True}
    assert later and all(not call["held"] for call in later)
    assert seen["collecting_after"] is True and seen["frozen"] > 10_000  # start-up's objects, frozen


@pytest.fixture
def collector_state():
    """Start with nothing frozen (tests/conftest.py's collect_and_freeze freezes what earlier tests left)
    and leave the process's collector as it was (and nothing frozen) whatever the test does."""
    was_enabled = gc.isenabled()
    gc.unfreeze()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()
    start_up_collector._held = start_up_collector._managed = False


def test_hold_pauses_and_release_freezes_and_resumes(collector_state) -> None:
    gc.enable()
    start_up_collector.hold()
    assert not gc.isenabled() and start_up_collector.held()
    start_up_collector.release()
    assert gc.isenabled() and not start_up_collector.held() and gc.get_freeze_count() > 0
    gc.unfreeze()
    start_up_collector.release()  # a second release changes nothing
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_release_without_hold_leaves_the_collector_alone(collector_state) -> None:
    """`cli.main` called as a library (as the tests do) never holds: nothing may be frozen then."""
    gc.enable()
    start_up_collector.release()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_settle_frees_young_garbage_then_freezes_what_lives_on(collector_state) -> None:
    """After start-up, a burst of long-lived objects (the window, the SDK) is frozen, and cyclic
    garbage made just before is freed first rather than frozen for ever."""
    gc.enable()
    start_up_collector.hold()
    start_up_collector.release()
    gc.unfreeze()

    class Node:
        pass

    garbage, kept = Node(), Node()
    garbage.me = garbage  # type: ignore[attr-defined]
    kept.me = kept  # type: ignore[attr-defined]
    gone = weakref.ref(garbage)
    del garbage
    start_up_collector.settle()
    assert gone() is None  # collected, not frozen
    assert gc.get_freeze_count() > 0 and not any(obj is kept for obj in gc.get_objects())  # frozen: no generation holds it


def test_settle_freezes_nothing_unless_the_process_entry_manages_the_collector(collector_state) -> None:
    gc.enable()
    start_up_collector.settle()  # a library caller (the tests): never freeze
    assert gc.get_freeze_count() == 0
    start_up_collector.hold()
    start_up_collector.settle()  # still held: release() will freeze
    assert gc.get_freeze_count() == 0 and not gc.isenabled()


SDK_PROBE = textwrap.dedent("""
    import asyncio, gc, json, sys
    from nanobot_desktop import start_up_collector
    from nanobot_desktop.engine.llm.provider import OpenAICompatProvider

    start_up_collector.hold()
    start_up_collector.release()  # as the window's first paint does
    frozen_before = gc.get_freeze_count()

    async def first_message():
        provider = OpenAICompatProvider(api_key="k", api_base=sys.argv[1], default_model="fake-model")
        reply = await provider.chat([{"role": "user", "content": "hi"}])
        await provider.close()
        return reply.content

    reply = asyncio.run(first_message())
    import openai
    walked = {id(obj) for obj in gc.get_objects()}
    print(json.dumps({"reply": reply, "before": frozen_before, "after": gc.get_freeze_count(),
                      "sdk_class_walked": id(openai.AsyncOpenAI) in walked,
                      "sdk_module_dict_walked": id(vars(openai)) in walked}))
""")


def test_the_sdk_imported_at_the_first_message_is_frozen(fake_openai, tmp_path: Path) -> None:
    """A full collection mid-stream walked the SDK's ~100k objects (50–110 ms in one loop turn)."""
    fake_openai.add_text("hello back")
    env = {key: value for key, value in os.environ.items() if not key.startswith("NANOBOT_")}
    env.update(HOME=str(tmp_path), USERPROFILE=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", SDK_PROBE, fake_openai.base_url], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["reply"] == "hello back"
    assert seen["after"] > seen["before"] + 10_000
    assert seen["sdk_class_walked"] is False and seen["sdk_module_dict_walked"] is False


def test_a_collector_already_off_stays_off(collector_state) -> None:
    gc.disable()
    start_up_collector.hold()
    start_up_collector.release()
    assert not gc.isenabled() and gc.get_freeze_count() == 0
