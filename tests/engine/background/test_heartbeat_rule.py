"""The skip rule, table-driven through a real Engine and the loopback fake: which HEARTBEAT.md shapes
are skipped without a model call, and which reach the model (counted in the fake's request log)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nanobot_desktop.data import templates_dir
from nanobot_desktop.engine.background.heartbeat_rule import analyse
from tests.fake_openai import tool_calls_reply
from tests.reference_cli import POST4, V035, run_reference_cli

# Read before the autouse fixture clears NANOBOT_* from the environment.
REFERENCE_CLIS = os.environ.get("NANOBOT_DESKTOP_REFERENCE_CLIS")

TEMPLATE = (templates_dir() / "HEARTBEAT.md").read_text(encoding="utf-8")
OLD_TEMPLATE = """# Heartbeat Tasks

This file is checked every 30 minutes. When it lists no active task, the check is skipped and no
model is asked anything.

Add a line under "Active Tasks" for anything that should be done periodically, for example
"every morning, summarise my unread newsletters". Move finished one-off tasks to "Completed".

## Active Tasks

<!-- Add your periodic tasks below this line -->


## Completed

<!-- Tasks that are done move here -->
"""
WATER = "Please water the plants every morning."

# (name, file text or None for "no file", expected decision, expected skip reason, model called?)
SHAPES = [
    ("no file", None, "skipped", "missing", False),
    ("empty file", "", "skipped", "empty", False),
    ("only whitespace", "  \n\t\n\n   ", "skipped", "empty", False),
    ("template untouched", TEMPLATE, "skipped", "template", False),
    ("template with CRLF", TEMPLATE.replace("\n", "\r\n"), "skipped", "template", False),
    ("template with comments only added",
     TEMPLATE.replace("## Completed", "<!-- later: plants -->\n<!--\nmulti\nline\n-->\n## Completed"),
     "skipped", "template", False),
    ("previous release's template", OLD_TEMPLATE, "skipped", "template", False),
    ("only headings", "# Tasks\n\n## Active Tasks\n### Daily\n## Completed\n", "skipped", "template", False),
    ("bare bullets, empty checkboxes, rules", "## Active Tasks\n- \n- [ ]\n* [x]\n---\n***\n",
     "skipped", "template", False),
    ("unclosed comment hides the rest", "## Active Tasks\n<!-- draft\n- water the plants\n", "skipped", "template",
     False),
    ("text above the headings", WATER + "\n\n" + TEMPLATE, "skip", "", True),
    ("text under Completed", TEMPLATE.rstrip() + "\n- [x] renew the passport\n", "skip", "", True),
    ("renamed headings", "# My jobs\n\n## Every day\n- back up ~/notes\n", "skip", "", True),
    ("task under Active Tasks with CRLF",
     TEMPLATE.replace("## Completed", "- check the weather\n\n## Completed").replace("\n", "\r\n"), "skip", "", True),
    ("text after a comment on the same line", "## Active Tasks\n<!-- note --> call mum\n", "skip", "", True),
    ("plain text, no headings at all", "Check my inbox for invoices", "skip", "", True),
    ("a heading-looking line without space is text", "#hashtag reminder\n", "skip", "", True),
    ("old template with a task", OLD_TEMPLATE.replace("## Completed", "- feed the cat\n\n## Completed"),
     "skip", "", True),
]


@pytest.mark.parametrize(("name", "text", "decision", "skip_reason", "model_called"), SHAPES,
                         ids=[shape[0] for shape in SHAPES])
async def test_skip_rule_table(make_engine, fake_openai, name: str, text: str | None, decision: str,
                               skip_reason: str, model_called: bool) -> None:
    engine = make_engine()
    path = engine.workspace.heartbeat_file
    if text is None:
        path.unlink()
    else:
        path.write_bytes(text.encode("utf-8"))
    fake_openai.add(tool_calls_reply([("heartbeat", {"action": "skip"})], content="Nothing is due right now."))
    tick = await engine.heartbeat.trigger_now()
    await engine.shutdown()
    assert (tick.decision, tick.skip_reason, tick.error) == (decision, skip_reason, None), name
    decision_requests = [r for r in fake_openai.requests
                         if any(t["function"]["name"] == "heartbeat" for t in r.get("tools") or [])]
    assert len(decision_requests) == (1 if model_called else 0)
    assert len(fake_openai.requests) == len(decision_requests)
    if model_called:  # the whole file goes to the model, as the CLI sends it
        assert text.replace("\r\n", "\n").strip().splitlines()[0] in decision_requests[0]["messages"][1]["content"]
        assert tick.explanation == "Nothing is due right now."
    else:
        assert tick.explanation  # a skipped tick always says why


def test_the_table_covers_both_outcomes() -> None:
    assert len(SHAPES) >= 12
    assert {shape[4] for shape in SHAPES} == {True, False}


def test_text_lines_point_at_what_the_person_wrote() -> None:
    text = WATER + "\n\n" + TEMPLATE.replace("## Completed", "- feed the cat\n\n## Completed")
    content = analyse(text)
    lines = text.split("\n")
    assert [lines[i] for i in content.text_lines] == [WATER, "- feed the cat"]
    assert content.skip_reason is None


@pytest.mark.slow
@pytest.mark.parametrize("version", [POST4, pytest.param(V035, marks=pytest.mark.heavy)])  # heavy: post4 runs by default
def test_the_cli_onboard_template_is_skipped_and_a_task_in_it_is_not(version: str, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if REFERENCE_CLIS:
        monkeypatch.setenv("NANOBOT_DESKTOP_REFERENCE_CLIS", REFERENCE_CLIS)
    done = run_reference_cli(version, ["onboard"], home=tmp_path)
    heartbeat = tmp_path / ".nanobot" / "workspace" / "HEARTBEAT.md"
    assert heartbeat.is_file(), done.stdout + done.stderr
    text = heartbeat.read_text(encoding="utf-8")
    assert analyse(text).skip_reason == "template"
    assert analyse(text.replace("## Active Tasks", "## Active Tasks\n- tidy ~/Downloads")).skip_reason is None
