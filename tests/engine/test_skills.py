import os
import shutil
from pathlib import Path

import pytest

from nanobot_desktop.data import builtin_skills_dir
from nanobot_desktop.engine.skills import SkillsLoader, check_frontmatter
from nanobot_desktop.engine.workspace import Workspace

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "skills"


def _write_skill(directory: Path, name: str, text: str) -> Path:
    path = directory / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace.at(tmp_path / "ws")
    workspace.skills_dir.mkdir(parents=True)
    return workspace


@pytest.fixture
def builtins(tmp_path: Path) -> Path:
    directory = tmp_path / "builtin"
    directory.mkdir()
    return directory


@pytest.fixture
def fixture_ws(ws: Workspace) -> Workspace:
    for skill in FIXTURES.iterdir():
        shutil.copytree(skill, ws.skills_dir / skill.name)
    return ws


def _by_name(loader: SkillsLoader) -> dict:
    return {s.name: s for s in loader.list_skills()}


def test_metadata_as_json_string_and_as_yaml_mapping(fixture_ws: Workspace, builtins: Path) -> None:
    skills = _by_name(SkillsLoader(fixture_ws, builtins))
    json_skill, yaml_skill, claw = skills["json-meta"], skills["yaml-meta"], skills["openclaw-meta"]
    assert json_skill.description == "Metadata given as one line of JSON: `quoted` text"
    assert (json_skill.emoji, json_skill.always, json_skill.available) == ("🐙", True, True)
    assert (yaml_skill.emoji, yaml_skill.always, yaml_skill.available) == ("🦊", False, True)
    assert (claw.emoji, claw.always) == ("🦀", True)
    assert json_skill.source == "workspace" and json_skill.path == fixture_ws.skills_dir / "json-meta" / "SKILL.md"


def test_always_false_means_false_even_as_a_string(fixture_ws: Workspace, builtins: Path) -> None:
    loader = SkillsLoader(fixture_ws, builtins)
    assert _by_name(loader)["always-false"].always is False
    assert "always-false" not in loader.get_always_skills()
    assert loader.get_always_skills() == ["json-meta", "openclaw-meta"]  # needs-tools is always but unavailable


def test_crlf_and_bom_frontmatter_is_recognised(ws: Workspace, builtins: Path) -> None:
    text = "\ufeff---\r\nname: crlf\r\ndescription: Written on Windows\r\nalways: true\r\n---\r\n\r\nLine one\r\nLine two\r\n"
    path = ws.skills_dir / "crlf" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(text.encode("utf-8"))
    loader = SkillsLoader(ws, builtins)
    info = _by_name(loader)["crlf"]
    assert (info.description, info.always, info.error) == ("Written on Windows", True, None)
    assert loader.skill_body("crlf") == "Line one\nLine two"


def test_missing_bin_and_env_make_a_skill_unavailable(
    fixture_ws: Workspace, builtins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLTEST_TOKEN_7F3A", raising=False)
    info = _by_name(SkillsLoader(fixture_ws, builtins))["needs-tools"]
    assert info.available is False
    assert info.missing == ["CLI: nanobot-desktop-no-such-cli-7f3a", "ENV: SKILLTEST_TOKEN_7F3A"]
    assert info.missing_text == "CLI: nanobot-desktop-no-such-cli-7f3a, ENV: SKILLTEST_TOKEN_7F3A"

    monkeypatch.setenv("SKILLTEST_TOKEN_7F3A", "secret")
    info = _by_name(SkillsLoader(fixture_ws, builtins))["needs-tools"]
    assert info.missing_text == "CLI: nanobot-desktop-no-such-cli-7f3a"


def test_a_present_bin_and_env_make_it_available(ws: Workspace, builtins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / ("fake-tool-7f3a.bat" if os.name == "nt" else "fake-tool-7f3a")
    tool.write_text("@echo off\n" if os.name == "nt" else "#!/bin/sh\n", encoding="utf-8")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("SKILLTEST_KEY", "x")
    _write_skill(ws.skills_dir, "tooly", '---\nmetadata: {"nanobot":{"requires":{"bins":["fake-tool-7f3a"],"env":["SKILLTEST_KEY"]}}}\n---\nbody\n')
    info = _by_name(SkillsLoader(ws, builtins))["tooly"]
    assert (info.available, info.missing, info.description) == (True, [], "tooly")


def test_workspace_skill_shadows_builtin(ws: Workspace, builtins: Path) -> None:
    _write_skill(builtins, "cron", "---\ndescription: builtin cron\n---\nBUILTIN BODY\n")
    _write_skill(builtins, "weather", "---\ndescription: builtin weather\n---\nweather body\n")
    _write_skill(ws.skills_dir, "cron", "---\ndescription: my cron\n---\nMY BODY\n")
    loader = SkillsLoader(ws, builtins)
    skills = loader.list_skills()
    assert [(s.name, s.source, s.shadows_builtin) for s in skills] == [
        ("cron", "workspace", True),
        ("weather", "builtin", False),
    ]
    assert loader.skill_body("cron") == "MY BODY"
    assert "MY BODY" in (loader.load_skill("cron") or "")
    summary = loader.build_skills_summary()
    assert "<description>my cron</description>" in summary and "builtin cron" not in summary


def test_order_is_workspace_then_builtin_each_sorted(ws: Workspace, builtins: Path) -> None:
    for name in ("zeta", "alpha"):
        _write_skill(ws.skills_dir, name, "body\n")
    for name in ("beta", "aardvark"):
        _write_skill(builtins, name, "body\n")
    (ws.skills_dir / "not-a-skill").mkdir()
    (ws.skills_dir / ".hidden").mkdir()
    _write_skill(ws.skills_dir, ".hidden", "body\n")
    names = [s.name for s in SkillsLoader(ws, builtins).list_skills()]
    assert names == ["alpha", "zeta", "aardvark", "beta"]


def test_summary_xml_is_exact_and_escaped(ws: Workspace, builtins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(FIXTURES / "escaping", ws.skills_dir / "escaping")
    _write_skill(builtins, "a&b", '---\nmetadata: {"nanobot":{"requires":{"bins":["no-such-cli-7f3a&<x>"]}}}\n---\n')
    loader = SkillsLoader(ws, builtins)
    escaping_path = ws.skills_dir / "escaping" / "SKILL.md"
    odd_path = builtins / "a&b" / "SKILL.md"
    assert loader.build_skills_summary() == (
        "<skills>\n"
        '  <skill available="true">\n'
        "    <name>escaping</name>\n"
        "    <description>Tom &amp; Jerry &lt;b&gt;bold&lt;/b&gt; &gt; all</description>\n"
        f"    <location>{escaping_path}</location>\n"
        "  </skill>\n"
        '  <skill available="false">\n'
        "    <name>a&amp;b</name>\n"
        "    <description>a&amp;b</description>\n"
        f"    <location>{odd_path}</location>\n"
        "    <requires>CLI: no-such-cli-7f3a&amp;&lt;x&gt;</requires>\n"
        "  </skill>\n"
        "</skills>"
    )


def test_disabled_skills_are_listed_but_left_out_of_the_prompt(fixture_ws: Workspace, builtins: Path) -> None:
    loader = SkillsLoader(fixture_ws, builtins, disabled=["json-meta"])
    info = _by_name(loader)["json-meta"]
    assert info.enabled is False and info.available is True
    assert "json-meta" not in [s.name for s in loader.list_skills(include_disabled=False)]
    assert "json-meta" not in loader.get_always_skills()
    assert "<name>json-meta</name>" not in loader.build_skills_summary()
    loader.set_disabled([])
    assert "json-meta" in loader.get_always_skills()


def test_a_header_that_is_not_yaml_is_read_line_by_line_as_nanobot_does(fixture_ws: Workspace,
                                                                       builtins: Path) -> None:
    loader = SkillsLoader(fixture_ws, builtins)
    skills = _by_name(loader)
    broken = skills["broken-yaml"]
    assert broken.available is True and broken.error is None
    assert broken.description == "this: breaks the YAML"
    assert skills["yaml-meta"].available is True
    assert "<description>this: breaks the YAML</description>" in loader.build_skills_summary()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"---\nname: x\n---\nok\n", None),
        (b"no frontmatter at all\n", None),
        (b"---\n- a\n- b\n---\n", None),  # nanobot reads no key from it, and loads the skill
        (b"---\ndescription: ok\nbody without end\n", "line 1: the frontmatter starts with '---' but no closing '---' line follows"),
        (b'---\nmetadata: {"nanobot": [1]}\n---\n', "metadata.nanobot must be a mapping"),
        (b"---\nmetadata: '{not json'\n---\n", None),  # as nanobot: no requirements, still a skill
        (b"---\nname: x\ndescription: caf\xe9\n---\n", "line 3: not valid UTF-8 (byte 0xe9); save the file as UTF-8"),
    ],
)
def test_bad_skill_files_get_a_specific_error(ws: Workspace, builtins: Path, data: bytes, expected: str | None) -> None:
    path = ws.skills_dir / "odd" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(data)
    assert _by_name(SkillsLoader(ws, builtins))["odd"].error == expected
    if b"\xe9" not in data and expected is not None:
        assert check_frontmatter(data.decode("utf-8")) == expected


@pytest.mark.parametrize(("header", "editor_says"), [
    ("---\n- a\n- b\n---\n", "the frontmatter must be 'key: value' lines, not a list"),
    ("---\ndescription: Use when: asked\n---\n", "line 2: mapping values are not allowed here (nanobot 0.3 ignores"),
    ("---\nmetadata: '{not json'\n---\n", None),
])
def test_the_editor_is_stricter_than_loading(header: str, editor_says: str | None) -> None:
    """Loaded as nanobot 0.1.4 loads it, but the editor says what nanobot 0.3 would not read."""
    problem = check_frontmatter(header)
    assert (problem or "").startswith(editor_says or "") and (problem is None) == (editor_says is None)


def test_changes_on_disk_are_seen_on_the_next_call(ws: Workspace, builtins: Path) -> None:
    path = _write_skill(ws.skills_dir, "live", "---\ndescription: first\n---\n")
    loader = SkillsLoader(ws, builtins)
    assert _by_name(loader)["live"].description == "first"
    path.write_text("---\ndescription: second, longer\n---\n", encoding="utf-8")
    assert _by_name(loader)["live"].description == "second, longer"
    shutil.rmtree(path.parent)
    assert "live" not in _by_name(loader)
    assert loader.load_skill("live") is None and loader.skill_body("live") == ""


def test_names_that_escape_the_skills_folder_are_not_loaded(ws: Workspace, builtins: Path) -> None:
    (ws.root / "SKILL.md").write_text("secret", encoding="utf-8")
    loader = SkillsLoader(ws, builtins)
    assert loader.load_skill("..") is None
    assert loader.load_skill("../skills") is None
    assert loader.load_skill("") is None


def test_shipped_builtins_parse_and_memory_is_always_on(ws: Workspace) -> None:
    loader = SkillsLoader(ws)
    skills = _by_name(loader)
    assert {"memory", "cron"} <= set(skills)
    assert all(s.error is None and s.source == "builtin" for s in skills.values())
    assert skills["memory"].always is True and skills["cron"].always is False
    assert loader.get_always_skills() == ["memory"]
    assert skills["cron"].path == builtin_skills_dir() / "cron" / "SKILL.md"


def test_new_skill_template_has_valid_frontmatter() -> None:
    template = builtin_skills_dir().parent / "new_skill" / "SKILL.md"
    text = template.read_text(encoding="utf-8").replace("{{name}}", "my-skill")
    assert check_frontmatter(text) is None
    assert "{{name}}" not in text
