"""nanobot 0.3.5's `tools.exec.sandbox` with its bind lists, applied by the app's own sandbox (issue 29).

The sandbox cases run real commands through the real launcher (Landlock and namespaces on this
machine) and look at the files on disk afterwards.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nanobot_desktop.engine.config import ToolsConfig
from nanobot_desktop.engine.tools.base import ToolContext
from nanobot_desktop.engine.tools.exec_binds import exec_binds
from nanobot_desktop.engine.tools.sandbox import sandbox_support
from nanobot_desktop.engine.tools.shell import ExecTool

needs_sandbox = pytest.mark.skipif(not sandbox_support().available, reason=sandbox_support().summary)


def test_bind_lists_are_read_as_nanobot_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLS_DIR", str(tmp_path / "tools"))
    workspace = tmp_path / "home" / ".nanobot" / "workspace"
    binds = exec_binds({"sandbox": "bwrap",
                        "sandboxRoBinds": ["$TOOLS_DIR", "~/data", "relative/dir", str(tmp_path / "tools"),
                                           str(workspace.parent)],
                        "sandbox_rw_binds": [str(tmp_path / "out"), "  "]},
                       workspace, protected=[tmp_path / "home" / ".nanobot"])
    assert binds.system_only and binds.backend == "bwrap"
    assert binds.read_only == ((tmp_path / "tools").resolve(), (Path.home() / "data").resolve())
    assert binds.read_write == ((tmp_path / "out").resolve(),)
    said = " ".join(binds.problems)
    assert "'relative/dir' is not an absolute path" in said
    assert "holds the workspace" in said  # the config folder around the workspace is never bound
    assert len(binds.problems) == 2


def test_what_cannot_be_honoured_is_said(tmp_path: Path) -> None:
    config_folder = tmp_path / "conf"
    unknown = exec_binds({"sandbox": "firejail"}, tmp_path / "ws")
    assert unknown.system_only and "'firejail', which nanobot does not know" in unknown.problems[0]
    into_config = exec_binds({"sandbox": "bwrap", "sandboxRoBinds": [str(config_folder / "keys")]},
                             tmp_path / "ws", protected=[config_folder])
    assert into_config.read_only == () and "reaches the app's config" in into_config.problems[0]
    without_backend = exec_binds({"sandboxRwBinds": [str(tmp_path / "out")]}, tmp_path / "ws")
    assert not without_backend.system_only and without_backend.read_write == ()
    assert "without tools.exec.sandbox" in without_backend.problems[0]
    not_a_list = exec_binds({"sandbox": "bwrap", "sandboxRoBinds": "/opt"}, tmp_path / "ws")
    assert "not a list of folders" in not_a_list.problems[0]
    assert exec_binds({}, tmp_path / "ws") == exec_binds(None, tmp_path / "ws")
    assert not exec_binds({}, tmp_path / "ws").system_only


def _tool(exec_keys: dict[str, object]) -> ExecTool:
    tool = ExecTool(timeout_s=60)
    tool.configure(ToolsConfig.model_validate({"exec": {"timeout": 60, **exec_keys}}))
    return tool


def _run(tool: ExecTool, workspace: Path, command: str, *, restrict: bool = False) -> str:
    return asyncio.run(tool.execute(ToolContext(workspace=workspace, restrict_to_workspace=restrict), command))


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """A workspace and, in the (hidden) home, a tools folder, an output folder and a secret."""
    home = Path.home()
    found = {"ws": tmp_path / "ws", "tools": home / "tools", "out": home / "out", "secret": home / "secret.txt"}
    found["ws"].mkdir()
    found["tools"].mkdir()
    found["out"].mkdir()
    (found["tools"] / "data.txt").write_text("tool-data\n")
    found["secret"].write_text("the-secret\n")
    return found


@needs_sandbox
def test_binds_open_exactly_their_folders_and_the_view_is_narrow(folders: dict[str, Path]) -> None:
    tool = _tool({"sandbox": "bwrap", "sandboxRoBinds": ["~/tools"], "sandboxRwBinds": ["~/out"]})
    ws, tools, out = folders["ws"], folders["tools"], folders["out"]
    # restrictToWorkspace is off: a named backend sandboxes exec all the same, as in nanobot 0.3.5
    assert tool.sandboxed(False)
    assert "tool-data" in _run(tool, ws, f"cat {tools / 'data.txt'}")
    _run(tool, ws, f"echo new > {tools / 'new.txt'}")
    assert not (tools / "new.txt").exists()  # read-only bind
    _run(tool, ws, f"echo made > {out / 'made.txt'}; echo here > {ws / 'here.txt'}")
    assert (out / "made.txt").read_bytes() == b"made\n"
    assert (ws / "here.txt").read_bytes() == b"here\n"
    assert "the-secret" not in _run(tool, ws, f"cat {folders['secret']}")
    # only system folders: /etc/passwd is outside 0.3.5's view, readable in the app's usual one
    assert "root:" not in _run(tool, ws, "cat /etc/passwd")
    assert "root:" in _run(_tool({}), ws, "cat /etc/passwd", restrict=True)


@needs_sandbox
def test_without_the_keys_nothing_changes(folders: dict[str, Path]) -> None:
    tool = _tool({})
    assert not tool.sandboxed(False)  # the workspace restriction is off and nothing else asks for it
    assert "tool-data" not in _run(tool, folders["ws"], f"cat {folders['tools'] / 'data.txt'}", restrict=True)


def test_the_engine_says_what_it_cannot_honour_and_sandboxes_exec(make_engine) -> None:
    engine = make_engine()
    assert not any(n.topic.startswith("exec-sandbox") for n in engine.start_notices)
    config_path = engine.config_path
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["tools"]["exec"].update({"sandbox": "firejail", "sandboxRoBinds": ["data"]})
    config_path.write_text(json.dumps(config), encoding="utf-8")
    from nanobot_desktop.engine.runtime import Engine

    reopened = Engine.open(config_path)
    texts = [n.text for n in reopened.start_notices if n.topic.startswith("exec-sandbox")]
    assert any("'firejail', which nanobot does not know" in t for t in texts)
    assert any("'data' is not an absolute path" in t for t in texts)
    assert reopened.exec_allow_possible() == sandbox_support().available
    assert json.loads(config_path.read_text(encoding="utf-8"))["tools"]["exec"]["sandbox"] == "firejail"  # kept
