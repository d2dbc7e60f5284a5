"""Approval policy defaults/overrides and what an approval request shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.tools.filesystem import EditFileTool, ReadFileTool, WriteFileTool
from nanobot_desktop.engine.tools.policy import ApprovalAnswer, ToolPolicy, build_approval_request
from nanobot_desktop.engine.tools.shell import ExecTool


@pytest.mark.parametrize(
    ("name", "decision"),
    [("exec", "ask"), ("write_file", "ask"), ("edit_file", "ask"), ("read_file", "allow"),
     ("list_dir", "allow"), ("web_fetch", "allow"), ("message", "allow"), ("mcp_x_y", "ask")],
)
def test_defaults(name: str, decision: str) -> None:
    assert ToolPolicy().decision_for(name) == decision


def test_overrides_and_allow_always() -> None:
    policy = ToolPolicy({"exec": "deny", "read_file": "ask"})
    assert policy.decision_for("exec") == "deny"
    assert policy.decision_for("read_file") == "ask"
    saved = policy.allow_always("write_file")
    assert saved == {"exec": "deny", "read_file": "ask", "write_file": "allow"}
    assert policy.decision_for("write_file") == "allow"
    saved["exec"] = "allow"  # the returned mapping is a copy
    assert policy.decision_for("exec") == "deny"


def test_bad_override_value_is_refused_with_the_tool_named() -> None:
    with pytest.raises(ValueError, match="'exec' must be one of allow, ask, deny, not 'sometimes'"):
        ToolPolicy({"exec": "sometimes"})


def test_replace_swaps_the_whole_mapping_or_nothing() -> None:
    policy = ToolPolicy({"exec": "deny"})
    policy.replace({"read_file": "deny"})
    assert (policy.decision_for("exec"), policy.decision_for("read_file")) == ("ask", "deny")
    with pytest.raises(ValueError):
        policy.replace({"exec": "allow", "list_dir": "never"})
    assert policy.overrides == {"read_file": "deny"}
    policy.replace(None)
    assert policy.overrides == {}


def test_answers() -> None:
    assert {a.name for a in ApprovalAnswer} == {"ALLOW_ONCE", "ALLOW_ALWAYS", "DENY"}


async def test_request_for_write_shows_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    ctx = ToolContext(workspace=tmp_path, session_key="gui:1")
    request = await build_approval_request(WriteFileTool(), {"path": "a.txt", "content": "one\n2\n"}, ctx)
    assert request.tool == "write_file" and request.session_key == "gui:1"
    assert request.arguments == {"path": "a.txt", "content": "one\n2\n"}
    assert request.command is None and request.working_dir is None
    assert request.diff is not None and "-two\n+2\n" in request.diff and "--- a/a.txt" in request.diff


async def test_request_for_edit_shows_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello world\n", encoding="utf-8")
    ctx = ToolContext(workspace=tmp_path)
    request = await build_approval_request(
        EditFileTool(), {"path": "a.txt", "old_text": "world", "new_text": "there"}, ctx)
    assert request.diff is not None and "-hello world\n+hello there\n" in request.diff


async def test_request_for_exec_has_command_and_resolved_dir(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    ctx = ToolContext(workspace=tmp_path)
    request = await build_approval_request(ExecTool(), {"command": "ls", "working_dir": "sub"}, ctx)
    assert request.command == "ls"
    assert request.working_dir == str((tmp_path / "sub").resolve())
    default_dir = await build_approval_request(ExecTool(), {"command": "ls"}, ctx)
    assert default_dir.working_dir == str(tmp_path.resolve()) and default_dir.diff is None


async def test_request_survives_bad_arguments(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, restrict_to_workspace=True)
    outside = await build_approval_request(WriteFileTool(), {"path": "/etc/x", "content": "y"}, ctx)
    assert outside.diff is None
    missing = await build_approval_request(WriteFileTool(), {"path": "a.txt"}, ctx)
    assert missing.diff is None
    assert (await build_approval_request(ReadFileTool(), {"path": "a"}, ctx)).diff is None
