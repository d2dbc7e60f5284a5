"""The app's own reads never follow a link out of the workspace (issue 28, class "own reads").

The attack: exec (sandboxed, so it can only make links) points MEMORY.md, AGENTS.md, USER.md or a
skill at the config (API key) or a home file; the app, outside the sandbox, must not read them into
the next request. Each refusal is told once as an `Notice` event; links inside still work.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nanobot_desktop.engine import events as ev
from nanobot_desktop.engine.own_files import LinkedOut, OwnFiles
from nanobot_desktop.engine.tools.policy import ApprovalAnswer
from nanobot_desktop.engine.tools.sandbox import sandbox_support

KEY = "sk-own-files-9d1e4b7a2c"
HOME_SECRET = "home-secret-5f3a9c1e"
OUTSIDE_SECRET = "outside-secret-77b2e0d4"
needs_sandbox = pytest.mark.skipif(not sandbox_support().available, reason=sandbox_support().summary)


async def allow_all(_request: object) -> ApprovalAnswer:
    return ApprovalAnswer.ALLOW_ONCE


def _sent(fake_openai: object) -> str:
    return json.dumps([dict(r) for r in fake_openai.requests])  # type: ignore[attr-defined]


def _secrets(tmp_path: Path) -> tuple[Path, Path]:
    home_file = Path.home() / "diary.txt"
    home_file.write_text(HOME_SECRET)
    outside = tmp_path / "outside.txt"
    outside.write_text(OUTSIDE_SECRET)
    return home_file, outside


async def test_links_out_of_the_workspace_are_never_read_into_a_request(make_engine, fake_openai,
                                                                        tmp_path: Path) -> None:
    engine = make_engine(restrict_to_workspace=True, api_key=KEY)
    refused: list[ev.Notice] = []
    engine.bus.subscribe(lambda e: refused.append(e) if isinstance(e, ev.Notice) else None)
    home_file, outside = _secrets(tmp_path)
    root = engine.workspace.root
    (root / "notes").mkdir()
    (root / "notes" / "soul.md").write_text("soul-inside-marker")
    links = {root / "memory" / "MEMORY.md": engine.config_path, root / "AGENTS.md": home_file,
             root / "USER.md": outside, root / "skills" / "leak" / "SKILL.md": engine.config_path,
             root / "HEARTBEAT.md": engine.config_path}
    for link, target in links.items():
        link.parent.mkdir(exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(target)
    (root / "SOUL.md").unlink()
    (root / "SOUL.md").symlink_to("notes/soul.md")  # a link inside the workspace keeps working
    fake_openai.add_text("one")
    fake_openai.add_text("two")
    assert (await engine.loop.process("desktop:own", "hi")).status == "ok"
    assert (await engine.loop.process("desktop:own", "again")).status == "ok"
    sent = _sent(fake_openai)
    assert "soul-inside-marker" in sent
    for secret in (KEY, HOME_SECRET, OUTSIDE_SECRET):
        assert secret not in sent
    told = {e.topic: e.text for e in refused}
    assert str(engine.config_path.resolve()) in told[f"own-file:{root / 'memory' / 'MEMORY.md'}"]
    assert str(home_file.resolve()) in told[f"own-file:{root / 'AGENTS.md'}"]
    assert str(outside.resolve()) in told[f"own-file:{root / 'USER.md'}"]
    assert "leads out of the workspace" in told[f"own-file:{root / 'USER.md'}"]
    assert len(refused) == len(told)  # told once per file, not on every turn
    assert engine.memory.read_long_term() == ""
    assert engine.skills.load_skill("leak") is None
    assert "not read: it leads out of the workspace" in (engine.skills.list_skills()[0].error or "")


async def test_a_hard_link_to_an_outside_file_is_not_read(make_engine, fake_openai, tmp_path: Path) -> None:
    engine = make_engine(restrict_to_workspace=True, api_key=KEY)
    _home_file, outside = _secrets(tmp_path)
    user = engine.workspace.root / "USER.md"
    user.unlink()
    os.link(outside, user)
    fake_openai.add_text("ok")
    assert (await engine.loop.process("desktop:hard", "hi")).status == "ok"
    assert OUTSIDE_SECRET not in _sent(fake_openai)


def test_own_files_reads_beneath_the_root_and_refuses_links_out(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "in.md").write_text("inside")
    (root / "link-in.md").symlink_to("in.md")
    (root / "link-out.md").symlink_to(tmp_path)
    (root / "dir-out").symlink_to(tmp_path)
    (tmp_path / "x.md").write_text("outside")
    told: list[tuple[Path, str]] = []
    own = OwnFiles(root)
    own.listen(lambda path, target: told.append((path, target)))
    assert own.read(root / "link-in.md") == b"inside"
    with pytest.raises(LinkedOut):
        own.read(root / "dir-out" / "x.md")
    with pytest.raises(LinkedOut):
        own.read(root / "dir-out" / "x.md")
    assert own.read_or_none(root / "link-out.md") is None
    assert own.read_or_none(root / "missing.md") is None
    assert [t for _, t in told] == [str(tmp_path / "x.md"), str(tmp_path)]


@needs_sandbox
async def test_exec_made_links_do_not_carry_the_config_into_later_requests(make_engine, fake_openai) -> None:
    """The red team's case as it happened: the sandboxed command only makes links; the app must not follow them."""
    engine = make_engine(restrict_to_workspace=True, api_key=KEY)
    engine.approvals.respond_with(allow_all)
    config = engine.config_path.resolve()
    fake_openai.add_tool_calls([("exec", {"command": f"ln -sf {config} memory/MEMORY.md && ln -sf {config} AGENTS.md"
                                                     f" && mkdir -p skills/k && ln -sf {config} skills/k/SKILL.md"
                                                     " && echo linked"})])
    fake_openai.add_text("done")
    fake_openai.add_text("later")
    assert (await engine.loop.process("desktop:exec-links", "link them")).status == "ok"
    assert (engine.workspace.root / "AGENTS.md").is_symlink()
    assert (await engine.loop.process("desktop:exec-links", "and now?")).status == "ok"
    sent = _sent(fake_openai)
    assert "linked" in sent
    assert KEY not in sent


async def test_a_session_file_linked_out_is_neither_read_nor_appended_to(make_engine, fake_openai,
                                                                        tmp_path: Path) -> None:
    engine = make_engine(restrict_to_workspace=True, api_key=KEY)
    refused: list[ev.Notice] = []
    engine.bus.subscribe(lambda e: refused.append(e) if isinstance(e, ev.Notice) else None)
    outside = tmp_path / "other.jsonl"
    secret_line = json.dumps({"role": "user", "content": OUTSIDE_SECRET})
    outside.write_text(secret_line + "\n")
    fake_openai.add_text("first")
    assert (await engine.loop.process("desktop:linked", "hi")).status == "ok"
    path = engine.sessions.path_for("desktop:linked")
    path.unlink()
    path.symlink_to(outside)
    engine.sessions.files.cache.clear()
    fake_openai.add_text("second")
    assert (await engine.loop.process("desktop:linked", "again")).status == "ok"
    assert OUTSIDE_SECRET not in json.dumps(fake_openai.requests[-1]["messages"])
    assert outside.read_text() == secret_line + "\n"  # nothing appended to the other file
    assert any("leads out of the session folder" in n.text for n in refused)


@pytest.mark.slow
def test_the_cli_names_a_file_it_did_not_read_on_stderr(fake_openai, tmp_path: Path) -> None:
    from tests.conftest import write_test_config
    from tests.engine.cli.test_cli import run_cli

    config = write_test_config(tmp_path / "cfg" / "config.json", fake_openai.base_url, tmp_path / "ws", api_key=KEY)
    fake_openai.add_text("first")
    assert run_cli("agent", "-m", "hi", "--config", str(config), home=tmp_path).returncode == 0
    agents = tmp_path / "ws" / "AGENTS.md"
    agents.unlink()
    agents.symlink_to(config)
    fake_openai.add_text("second")
    done = run_cli("agent", "-m", "again", "--config", str(config), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{agents} was not read: it leads out of the workspace ({config.resolve()})" in done.stderr
    assert KEY not in _sent(fake_openai)
