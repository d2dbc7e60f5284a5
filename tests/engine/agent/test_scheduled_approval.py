"""Nothing scheduled skips the person (issue 28): cron's add/remove asks, a job runs with the
background policy, and exec that is not sandboxed can never be saved as "allow" — not from the card,
not from Settings (update_config), not from a desktop.json edited by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nanobot_desktop.engine import events as ev
from nanobot_desktop.engine.config import ConfigError
from nanobot_desktop.engine.background.cron import CronSchedule
from nanobot_desktop.engine.runtime import Engine
from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.events import ApprovalSource
from nanobot_desktop.engine.tools.policy import ApprovalAnswer, ApprovalRequest
from nanobot_desktop.engine.tools.sandbox import sandbox_support

needs_sandbox = pytest.mark.skipif(not sandbox_support().available, reason=sandbox_support().summary)


class Recorder:
    """An approver that answers `answer` and remembers every request."""

    def __init__(self, answer: ApprovalAnswer) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        return self.answer


def _desktop_json(engine: Engine) -> dict[str, object]:
    path = engine.app_settings.source_path or engine.config_path.with_name("desktop.json")
    return json.loads(Path(path).read_text()) if Path(path).exists() else {}


async def test_a_cron_add_waits_for_approval_and_a_denied_one_saves_nothing(make_engine, fake_openai) -> None:
    engine = make_engine()
    recorder = Recorder(ApprovalAnswer.DENY)
    engine.approvals.respond_with(recorder)
    fake_openai.add_tool_calls([("cron", {"action": "add", "message": "mail the report", "every_seconds": 60})])
    fake_openai.add_text("ok")
    assert (await engine.loop.process("desktop:cron", "schedule it")).status == "ok"
    assert [r.tool for r in recorder.asked] == ["cron"]
    assert engine.cron.list_jobs() == []
    assert "denied" in json.dumps(fake_openai.requests[-1]["messages"][-1])

    recorder.answer = ApprovalAnswer.ALLOW_ONCE
    fake_openai.add_tool_calls([("cron", {"action": "add", "message": "mail the report", "every_seconds": 60})])
    fake_openai.add_tool_calls([("cron", {"action": "list"})])
    fake_openai.add_text("ok")
    assert (await engine.loop.process("desktop:cron", "now yes")).status == "ok"
    assert [r.tool for r in recorder.asked] == ["cron", "cron"]  # list did not ask
    jobs = engine.cron.list_jobs()
    assert [j.payload.message for j in jobs] == ["mail the report"]

    recorder.answer = ApprovalAnswer.DENY
    fake_openai.add_tool_calls([("cron", {"action": "remove", "job_id": jobs[0].id})])
    fake_openai.add_text("ok")
    assert (await engine.loop.process("desktop:cron", "remove it")).status == "ok"
    assert len(recorder.asked) == 3
    assert [j.id for j in engine.cron.list_jobs()] == [jobs[0].id]


async def test_a_job_bound_to_a_chat_runs_with_the_background_policy(make_engine, fake_openai) -> None:
    engine = make_engine()
    engine.approvals.respond_with(Recorder(ApprovalAnswer.ALLOW_ONCE))
    engine.update_config({"app.backgroundToolApproval": {"write_file": "deny"}})
    assert engine._background_source(ToolContext(workspace=engine.workspace.root, session_key="desktop:x",
                                                 in_cron_job=True)) == (ApprovalSource.CRON, "A scheduled task")
    job = engine.cron.add_job(name="j", schedule=CronSchedule(kind="every", every_ms=3_600_000), message="write it",
                              deliver=True, channel="desktop", to="chat1")
    fake_openai.add_tool_calls([("write_file", {"path": "x.txt", "content": "x"})])
    fake_openai.add_text("done")
    await engine._run_cron_job(job)
    assert "background tool policy does not allow 'write_file'" in json.dumps(fake_openai.requests[-1]["messages"])
    assert not (engine.workspace.root / "x.txt").exists()


async def test_always_allow_on_an_unsandboxed_exec_card_is_never_saved(make_engine, fake_openai) -> None:
    engine = make_engine(restrict_to_workspace=False)  # a new person's default: exec is not sandboxed
    assert not engine.exec_allow_possible()
    recorder = Recorder(ApprovalAnswer.ALLOW_ALWAYS)
    engine.approvals.respond_with(recorder)
    for _ in range(2):
        fake_openai.add_tool_calls([("exec", {"command": "echo hi"})])
        fake_openai.add_text("ok")
        assert (await engine.loop.process("desktop:always", "run")).status == "ok"
    assert [r.tool for r in recorder.asked] == ["exec", "exec"]  # asked the second time too
    assert "exec" not in json.dumps(_desktop_json(engine).get("toolApproval", {}))
    assert engine.policy.decision_for("exec") == "ask"


def test_settings_cannot_set_unsandboxed_exec_to_allow(make_engine) -> None:
    engine = make_engine(restrict_to_workspace=False)
    for patch in ({"app.toolApproval": {"exec": "allow"}}, {"app.backgroundToolApproval": {"exec": "allow"}},
                  {"app.toolApproval.exec": "allow"}):
        with pytest.raises(ConfigError, match="exec cannot be set to allow: commands are not sandboxed"):
            engine.update_config(patch)
    assert "exec" not in json.dumps(_desktop_json(engine))


def test_a_hand_edited_exec_allow_is_refused_on_load_with_a_notice(make_engine, capsys) -> None:
    engine = make_engine(restrict_to_workspace=False)
    desktop = engine.config_path.with_name("desktop.json")
    desktop.write_text(json.dumps({"toolApproval": {"exec": "allow", "read_file": "ask"},
                                   "backgroundToolApproval": {"exec": "allow"}}))
    reopened = Engine.open(engine.config_path)
    assert reopened.policy.decision_for("exec") == "ask"
    assert reopened.background_policy.decision_for("exec") == "ask"
    assert reopened.policy.decision_for("read_file") == "ask"
    topics = sorted(n.topic for n in reopened.start_notices)
    assert topics == ["exec-allow:backgroundToolApproval", "exec-allow:toolApproval"]
    assert all("refused" in n.text and isinstance(n, ev.Notice) for n in reopened.start_notices)
    # saving another tool's "always allow" does not write the refused allow back
    reopened.update_config({"app.toolApproval": reopened.policy.allow_always("write_file")})
    assert json.loads(desktop.read_text())["toolApproval"] == {"read_file": "ask", "write_file": "allow"}


@needs_sandbox
def test_sandboxed_exec_may_still_be_allowed(make_engine) -> None:
    engine = make_engine(restrict_to_workspace=True)
    assert engine.exec_allow_possible()
    engine.update_config({"app.toolApproval": {"exec": "allow"}})
    assert engine.policy.decision_for("exec") == "allow"
    assert engine.start_notices == []


async def test_a_damaged_workspace_id_and_an_empty_history_recover_with_a_notice(make_engine, fake_openai,
                                                                                tmp_path: Path) -> None:
    """What a command in the workspace did in the red team's run: every later turn failed on it."""
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    (tmp_path / "ws" / "memory" / "history.jsonl").write_text("")  # a 0.3 workspace
    engine = make_engine()
    assert engine.layout.is_v03
    fake_openai.add_text("first")
    assert (await engine.loop.process("desktop:v03", "hi")).status == "ok"
    marker = engine.workspace.root / ".nanobot" / "workspace-id"
    good = marker.read_text()
    marker.write_text("garbage")
    (engine.workspace.root / "memory" / "history.jsonl").write_text("")
    reopened = Engine.open(engine.config_path)
    assert [n.topic for n in reopened.start_notices] == ["workspace-id"]
    assert marker.read_text() == good  # the id of the session folder that names this workspace
    fake_openai.add_text("second")
    assert (await reopened.loop.process("desktop:v03", "again")).status == "ok"
    assert "hi" in json.dumps(fake_openai.requests[-1]["messages"])  # the same sessions as before
