"""Workspace restriction: every escape route is refused when restricted, and works when not."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.tools.base import ERROR_HINT, ToolContext
from nanobot_desktop.engine.tools.paths import PathOutsideWorkspace, resolve_tool_path
from nanobot_desktop.engine.tools.registry import build_default_registry
from nanobot_desktop.engine.tools.sandbox import sandbox_support


@dataclass
class Layout:
    workspace: Path
    outside: Path
    home: Path


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n", encoding="utf-8")
    (workspace / "inside.txt").write_text("fine\n", encoding="utf-8")
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    home = Path.home()  # isolated per test by conftest
    (home / "x.txt").write_text("home file\n", encoding="utf-8")
    return Layout(workspace, outside, home)


# (tool, arguments; "{outside}" is replaced by the outside folder), and what the unrestricted run returns.
ESCAPES: list[tuple[str, dict[str, Any], str | None]] = [
    ("read_file", {"path": "../outside/secret.txt"}, "top secret"),
    ("read_file", {"path": "/etc/passwd"}, "root"),
    ("read_file", {"path": "~/x.txt"}, "home file"),
    ("read_file", {"path": "link/secret.txt"}, "top secret"),
    ("read_file", {"path": "{outside}/secret.txt"}, "top secret"),
    ("list_dir", {"path": ".."}, "📁 outside"),
    ("list_dir", {"path": "link"}, "📄 secret.txt"),
    ("write_file", {"path": "../outside/new.txt", "content": "x"}, "Successfully wrote 1 bytes"),
    ("write_file", {"path": "link/new.txt", "content": "x"}, "Successfully wrote 1 bytes"),
    ("edit_file", {"path": "link/secret.txt", "old_text": "top", "new_text": "bottom"}, "Successfully edited"),
    ("edit_file", {"path": "~/x.txt", "old_text": "home", "new_text": "h"}, "Successfully edited"),
    ("exec", {"command": "pwd", "working_dir": "{outside}"}, "outside"),
    ("exec", {"command": "pwd", "working_dir": ".."}, None),
    ("exec", {"command": "pwd", "working_dir": "link"}, "outside"),
    ("exec", {"command": "cat ../outside/secret.txt"}, "top secret"),
    ("exec", {"command": "cd .. && ls"}, "outside"),
    ("exec", {"command": "cat ..\\outside\\secret.txt"}, None),
    ("exec", {"command": "cat /etc/passwd"}, "root"),
    ("exec", {"command": "wc -l</etc/passwd"}, None),
    ("exec", {"command": "cat {outside}/secret.txt"}, "top secret"),
    ("exec", {"command": "cat \"{outside}/secret.txt\""}, "top secret"),
    ("exec", {"command": "cat ~/x.txt"}, "home file"),
    ("exec", {"command": "cat $HOME/x.txt"}, "home file"),
    ("exec", {"command": "echo hi > {outside}/out.txt"}, "(no output)"),
    ("exec", {"command": "type C:\\Windows\\win.ini"}, None),
]


def _fill(arguments: dict[str, Any], layout: Layout) -> dict[str, Any]:
    return {k: v.replace("{outside}", str(layout.outside)) if isinstance(v, str) else v for k, v in arguments.items()}


@pytest.mark.parametrize(("tool", "arguments", "_unrestricted"), ESCAPES,
                         ids=[f"{t}:{next(iter(a.values()))}" for t, a, _ in ESCAPES])
async def test_escape_is_refused_when_restricted(layout: Layout, tool: str, arguments: dict[str, Any],
                                                 _unrestricted: str | None) -> None:
    before = {p: p.read_bytes() for p in layout.outside.rglob("*") if p.is_file()}
    home_before = (layout.home / "x.txt").read_bytes()
    ctx = ToolContext(workspace=layout.workspace, restrict_to_workspace=True)
    result = await build_default_registry().execute(tool, _fill(arguments, layout), ctx)
    if tool == "exec" and sandbox_support().available and "working_dir" not in arguments:
        # The OS sandbox, not a pattern, decides: the command runs, and the kernel refuses what leaves.
        assert "top secret" not in result and "home file" not in result, result
    else:
        assert result.startswith(("Error: Path ", "Error: Command blocked by safety guard")), result
        assert result.endswith(ERROR_HINT)
        assert "top secret" not in result and "root:" not in result and "home file" not in result
    assert {p: p.read_bytes() for p in layout.outside.rglob("*") if p.is_file()} == before
    assert (layout.home / "x.txt").read_bytes() == home_before


@pytest.mark.parametrize(("tool", "arguments", "unrestricted"), [e for e in ESCAPES if e[2] is not None],
                         ids=[f"{t}:{next(iter(a.values()))}" for t, a, u in ESCAPES if u is not None])
async def test_same_call_works_when_not_restricted(layout: Layout, tool: str, arguments: dict[str, Any],
                                                   unrestricted: str) -> None:
    if not Path("/etc/passwd").exists() and "passwd" in str(arguments):
        pytest.skip("no /etc/passwd on this system")
    ctx = ToolContext(workspace=layout.workspace, restrict_to_workspace=False)
    result = await build_default_registry().execute(tool, _fill(arguments, layout), ctx)
    assert unrestricted in result, result
    assert not result.startswith("Error"), result


def test_path_error_message_names_path_and_workspace(layout: Layout) -> None:
    ctx = ToolContext(workspace=layout.workspace, restrict_to_workspace=True)
    with pytest.raises(PathOutsideWorkspace) as info:
        resolve_tool_path("../outside/secret.txt", ctx)
    assert str(info.value) == f"Error: Path ../outside/secret.txt is outside allowed directory {layout.workspace.resolve()}"


INSIDE: list[tuple[str, dict[str, Any], str]] = [
    ("read_file", {"path": "inside.txt"}, "fine"),
    ("read_file", {"path": "./sub/../inside.txt"}, "fine"),
    ("read_file", {"path": "{ws}/inside.txt"}, "fine"),
    ("list_dir", {"path": "."}, "📄 inside.txt"),
    ("list_dir", {"path": "{ws}"}, "📄 inside.txt"),
    ("write_file", {"path": "deep/new.txt", "content": "ok"}, "Successfully wrote 2 bytes"),
    ("exec", {"command": "cat inside.txt"}, "fine"),
    ("exec", {"command": "cat {ws}/inside.txt 2>/dev/null"}, "fine"),
    ("exec", {"command": "ls > /dev/null && echo done"}, "done"),
    ("exec", {"command": "curl --version >/dev/null 2>&1; echo https://example.com/a/b"}, "https://example.com/a/b"),
    ("exec", {"command": "pwd", "working_dir": "{ws}"}, "ws"),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), INSIDE,
                         ids=[f"{t}:{next(iter(a.values()))}" for t, a, _ in INSIDE])
async def test_inside_workspace_allowed_when_restricted(layout: Layout, tool: str, arguments: dict[str, Any],
                                                        expected: str) -> None:
    (layout.workspace / "sub").mkdir(exist_ok=True)
    filled = {k: v.replace("{ws}", str(layout.workspace)) for k, v in arguments.items()}
    ctx = ToolContext(workspace=layout.workspace, restrict_to_workspace=True)
    result = await build_default_registry().execute(tool, filled, ctx)
    assert expected in result and not result.startswith("Error"), result


async def test_workspace_given_through_a_symlink(layout: Layout, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(layout.workspace, target_is_directory=True)
    ctx = ToolContext(workspace=alias, restrict_to_workspace=True)
    registry = build_default_registry()
    assert await registry.execute("read_file", {"path": f"{alias}/inside.txt"}, ctx) == "fine\n"
    assert await registry.execute("read_file", {"path": f"{layout.workspace}/inside.txt"}, ctx) == "fine\n"
