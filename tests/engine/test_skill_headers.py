"""SKILL.md headers are read as nanobot 0.1.4.post4 reads them (table built from its rules and checked
against the real loader), a header that is not YAML falls back to its line reading, and a hostile
header (an alias bomb, a huge header) is refused quickly and shown as broken with the reason."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from nanobot_desktop.engine.skills import SkillsLoader
from nanobot_desktop.engine.workspace import Workspace

META = '{"nanobot":{"requires":{"bins":["gh"],"env":["GH_TOKEN"]}}}'
# (header lines between the '---' fences, expected description ("" -> the skill's name), bins, env)
HEADERS: dict[str, tuple[str, str, list[str], list[str]]] = {
    "plain": ("description: Plain words", "Plain words", [], []),
    "double quoted": ('description: "Quoted words"', "Quoted words", [], []),
    "single quoted": ("description: 'Single quoted'", "Single quoted", [], []),
    "colon-space inside (not YAML)": ("description: Use when: the user asks", "Use when: the user asks", [], []),
    "starts with * (not YAML)": ("description: *bold* claims", "*bold* claims", [], []),
    "hash kept": ("description: Works with C# and #tags  # really", "Works with C# and #tags  # really", [], []),
    "no description": ("name: only-a-name", "", [], []),
    "empty description": ("description:", "", [], []),
    "json metadata": (f"description: GitHub\nmetadata: {META}", "GitHub", ["gh"], ["GH_TOKEN"]),
    "openclaw metadata": ('description: Claw\nmetadata: {"openclaw":{"requires":{"bins":["tmux"]}}}', "Claw",
                          ["tmux"], []),
    "invalid metadata json": ("description: Broken meta\nmetadata: {nanobot: [", "Broken meta", [], []),
    "metadata quoted": (f"description: Q\nmetadata: '{META}'", "Q", ["gh"], ["GH_TOKEN"]),
    "extra keys": ("description: Extra\nhomepage: https://example.org/x\nalways: false", "Extra", [], []),
    "trailing spaces": ("description:    spaced out   ", "spaced out", [], []),
    "quotes only at one end": ('description: "half quoted', "half quoted", [], []),
    "unicode": ("description: Wetter für morgen — ☀", "Wetter für morgen — ☀", [], []),
    "key with spaces": ("  description  : indented key", "indented key", [], []),
    "first colon splits": ("description: a: b: c", "a: b: c", [], []),
}


def _workspace(tmp_path: Path) -> Workspace:
    ws = Workspace.at(tmp_path / "ws")
    for index, (header, *_expected) in enumerate(HEADERS.values()):
        folder = ws.root / "skills" / f"s{index:02d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\n{header}\n---\n\nBody {index}.\n", encoding="utf-8")
    return ws


def _expected(index: int, description: str, bins: list[str], env: list[str]) -> tuple[str, list[str]]:
    missing = [f"CLI: {b}" for b in bins] + [f"ENV: {e}" for e in env]
    return description or f"s{index:02d}", missing


@pytest.mark.parametrize("case", list(HEADERS))
def test_each_header_shape_loads_as_nanobot_loads_it(tmp_path: Path, case: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-bins"))
    monkeypatch.delenv("GH_TOKEN", raising=False)
    index = list(HEADERS).index(case)
    ws = _workspace(tmp_path)
    info = {s.name: s for s in SkillsLoader(ws, tmp_path / "no-builtins").list_skills()}[f"s{index:02d}"]
    description, missing = _expected(index, *HEADERS[case][1:])
    assert info.error is None
    assert info.description == description
    assert info.missing_text == ", ".join(missing)


@pytest.mark.slow
def test_the_table_is_what_the_real_nanobot_post4_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ask nanobot 0.1.4.post4's own SkillsLoader about the same files: same descriptions, same requirements.

    Its skills.py (standard library only) is loaded on its own in the CLI's interpreter: importing it as
    nanobot.agent.skills would run nanobot/agent/__init__.py, which imports the agent loop and litellm
    (7 to 12 s here) that the loader never uses."""
    from tests.reference_cli import POST4, reference_cli

    monkeypatch.setenv("PATH", str(tmp_path / "no-bins"))  # requirements are judged the same way on both sides
    monkeypatch.delenv("GH_TOKEN", raising=False)
    python = reference_cli(POST4).parent / "python"
    ws = _workspace(tmp_path)
    script = ("import importlib.util, json, sys; from pathlib import Path; import nanobot\n"
              "spec = importlib.util.spec_from_file_location('nanobot.agent.skills',"
              " Path(nanobot.__file__).parent / 'agent' / 'skills.py')\n"
              "skills = importlib.util.module_from_spec(spec); spec.loader.exec_module(skills)\n"
              "l = skills.SkillsLoader(Path(sys.argv[1]), Path(sys.argv[2]))\n"
              "print(json.dumps({s['name']: [l._get_skill_description(s['name']),"
              " l._get_missing_requirements(l._get_skill_meta(s['name']))] for s in l.list_skills(False)}))")
    result = subprocess.run([str(python), "-c", script, str(ws.root), str(tmp_path / "none")], capture_output=True,
                            text=True, timeout=60, env={"PATH": str(tmp_path / "no-bins"),
                                                            "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert result.returncode == 0, result.stderr
    original = json.loads(result.stdout.strip().splitlines()[-1])
    ours = {s.name: [s.description, s.missing_text]
            for s in SkillsLoader(ws, tmp_path / "none").list_skills()}
    assert len(original) == len(HEADERS) >= 15
    for index, case in enumerate(HEADERS):
        name = f"s{index:02d}"
        expected_description, missing = _expected(index, *HEADERS[case][1:])
        assert original[name] == [expected_description, ", ".join(missing)], case  # the table is the original's
        assert ours[name] == original[name], case


def test_an_alias_bomb_is_refused_fast_and_shown_as_broken(tmp_path: Path) -> None:
    levels = ["a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]"]
    for n in range(1, 12):
        prev, cur = chr(ord("a") + n - 1), chr(ord("a") + n)
        levels.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    bomb = "---\ndescription: harmless\n" + "\n".join(levels) + "\n---\nbody\n"  # 9^12 strings if expanded
    ws = Workspace.at(tmp_path / "ws")
    (ws.root / "skills" / "bomb").mkdir(parents=True)
    (ws.root / "skills" / "bomb" / "SKILL.md").write_text(bomb, encoding="utf-8")
    loader = SkillsLoader(ws, tmp_path / "none")
    start = time.perf_counter()
    info = {s.name: s for s in loader.list_skills()}["bomb"]
    elapsed = time.perf_counter() - start
    assert info.error is not None and "alias" in info.error
    assert elapsed < 0.05, f"{elapsed * 1000:.1f} ms"
    assert "bomb" not in loader.build_skills_summary()


def test_a_huge_header_is_refused_with_its_size(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path / "ws")
    (ws.root / "skills" / "big").mkdir(parents=True)
    (ws.root / "skills" / "big" / "SKILL.md").write_text("---\n" + "k: v\n" * 40_000 + "---\n", encoding="utf-8")
    info = {s.name: s for s in SkillsLoader(ws, tmp_path / "none").list_skills()}["big"]
    assert info.error is not None and "characters" in info.error
