import base64
import platform
from datetime import datetime, timedelta, UTC
from pathlib import Path

import pytest

import nanobot_desktop.engine.agent.context as context_module
from nanobot_desktop.engine.agent.context import (
    RUNTIME_TAG,
    ContextBuilder,
    PromptSection,
    build_runtime_context,
    build_user_content,
    sniff_image_mime,
    strip_runtime_for_save,
)
from nanobot_desktop.engine.memory.store import MemoryStore
from nanobot_desktop.engine.skills import SkillsLoader
from nanobot_desktop.engine.workspace import Workspace

SEP = "\n\n---\n\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x01png-data"
JPEG = b"\xff\xd8\xff\xe0" + b"jpeg-data"
GIF = b"GIF89a" + b"gif-data"
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"webp-data"
SUNDAY = datetime(2026, 3, 8, 14, 35, tzinfo=UTC)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace.at(tmp_path / "ws")
    for name, text in {"AGENTS.md": "agents text\n", "SOUL.md": "soul text", "USER.md": "user text", "TOOLS.md": "tools text"}.items():
        _write(workspace.root / name, text)
    _write(workspace.memory_file, "- likes tea\n")
    _write(workspace.history_file, "[2026-01-01 10:00] never in the prompt\n\n")
    workspace.skills_dir.mkdir()
    return workspace


@pytest.fixture
def builtins(tmp_path: Path) -> Path:
    directory = tmp_path / "builtin"
    _write(directory / "memory" / "SKILL.md", "---\ndescription: memory help\nalways: true\n---\n\nMemory body.\n")
    _write(directory / "cron" / "SKILL.md", "---\ndescription: cron help\n---\nCron body.\n")
    return directory


def _builder(ws: Workspace, builtins: Path) -> ContextBuilder:
    return ContextBuilder(ws, SkillsLoader(ws, builtins), MemoryStore(ws))


def test_sections_in_post4_order_with_exact_separators(ws: Workspace, builtins: Path) -> None:
    _write(ws.skills_dir / "pinned" / "SKILL.md", '---\nmetadata: {"nanobot":{"always":true}}\n---\nPinned body.\n')
    builder = _builder(ws, builtins)
    sections = builder.system_sections()
    assert [s.name for s in sections] == ["identity", "bootstrap", "memory", "active_skills", "skills"]
    assert builder.build_system_prompt() == SEP.join(s.text for s in sections)
    texts = {s.name: s.text for s in sections}
    assert texts["bootstrap"] == "## AGENTS.md\n\nagents text\n\n\n## SOUL.md\n\nsoul text\n\n## USER.md\n\nuser text\n\n## TOOLS.md\n\ntools text"
    assert texts["memory"] == "# Memory\n\n## Long-term Memory\n- likes tea\n"
    assert texts["active_skills"] == "# Active Skills\n\n### Skill: pinned\n\nPinned body." + SEP + "### Skill: memory\n\nMemory body."
    assert texts["skills"].startswith("# Skills\n\n")
    assert "read_file" in texts["skills"] and 'available="false"' in texts["skills"]
    assert texts["skills"].endswith("\n\n" + builder.skills.build_skills_summary())
    for name in ("pinned", "memory", "cron"):  # the summary lists every skill, always-on ones too
        assert f"<name>{name}</name>" in texts["skills"]
    assert "never in the prompt" not in builder.build_system_prompt()
    assert sections[0].chars == len(sections[0].text)


def test_identity_block(ws: Workspace, builtins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    monkeypatch.setattr(platform, "python_version", lambda: "3.12.4")
    identity = _builder(ws, builtins).system_sections()[0].text
    root = ws.root.resolve()
    assert identity.startswith("# nanobot 🐈\n\n")
    assert "## Runtime\nmacOS arm64, Python 3.12.4\n" in identity
    assert f"## Workspace\nYour workspace is {root}\n" in identity
    for pointer in (f"{root}/memory/MEMORY.md", f"{root}/memory/HISTORY.md", "[YYYY-MM-DD HH:MM]", f"{root}/skills/{{skill-name}}/SKILL.md"):
        assert pointer in identity
    assert "## Platform Policy (POSIX)" in identity
    guidelines = identity.split("## nanobot Guidelines\n", 1)[1].split("\n\n")[0]
    assert len(guidelines.splitlines()) == 5
    assert "'message' tool" in identity.rsplit("\n", 1)[1]

    monkeypatch.setattr(platform, "system", lambda: "Windows")
    identity = _builder(ws, builtins).system_sections()[0].text
    assert "## Runtime\nWindows arm64" in identity and "## Platform Policy (Windows)" in identity
    assert "UTF-8" in identity.split("## Platform Policy (Windows)")[1]


def test_prompt_has_no_clock_and_is_byte_identical_across_a_minute(ws: Workspace, builtins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = {"now": datetime(2026, 3, 8, 14, 35, 59, 900000)}

    class FakeDatetime(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            return clock["now"]

    monkeypatch.setattr(context_module, "datetime", FakeDatetime)
    builder = _builder(ws, builtins)
    before, runtime_before = builder.build_system_prompt(), build_runtime_context("cli", "direct")
    clock["now"] += timedelta(seconds=1)
    after, runtime_after = builder.build_system_prompt(), build_runtime_context("cli", "direct")
    assert runtime_before != runtime_after  # the patched clock is the one the module uses
    assert before.encode("utf-8") == after.encode("utf-8")
    assert "Current Time" not in before and "14:35" not in before and "2026-03-08" not in before


def test_optional_parts_are_left_out(tmp_path: Path, builtins: Path) -> None:
    ws = Workspace.at(tmp_path / "bare")
    ws.root.mkdir()
    _write(ws.root / "SOUL.md", "only soul")
    _write(ws.memory_file, "  \n")
    (builtins / "memory" / "SKILL.md").unlink()
    sections = _builder(ws, builtins).system_sections()
    assert [s.name for s in sections] == ["identity", "bootstrap", "skills"]
    assert sections[1].text == "## SOUL.md\n\nonly soul"
    empty_builtins = tmp_path / "none"
    empty_builtins.mkdir()
    sections = ContextBuilder(ws, SkillsLoader(ws, empty_builtins), MemoryStore(ws)).system_sections()
    assert [s.name for s in sections] == ["identity", "bootstrap"]


def test_identity_md_is_read_after_the_four_bootstrap_files(ws: Workspace, builtins: Path) -> None:
    _write(ws.root / "IDENTITY.md", "identity text")
    bootstrap = _builder(ws, builtins).system_sections()[1].text
    assert bootstrap.endswith("## TOOLS.md\n\ntools text\n\n## IDENTITY.md\n\nidentity text")


def test_everything_is_read_from_disk_on_each_call(ws: Workspace, builtins: Path) -> None:
    builder = _builder(ws, builtins)
    first = builder.build_system_prompt()
    _write(ws.root / "SOUL.md", "a new soul")
    _write(ws.memory_file, "- likes coffee now\n")
    _write(ws.skills_dir / "fresh" / "SKILL.md", "---\ndescription: just added\nalways: true\n---\nFresh body.\n")
    second = builder.build_system_prompt()
    assert second != first
    for text in ("## SOUL.md\n\na new soul", "- likes coffee now", "### Skill: fresh\n\nFresh body.", "<description>just added</description>"):
        assert text in second



def test_an_unchanged_prompt_is_one_string_shared_by_every_call(ws: Workspace, builtins: Path) -> None:
    """Each call's request is kept (its event, the inspector's 100 turns): an unchanged prompt is not a
    new ~28 kB copy per call; a changed file still gives a new prompt at once."""
    builder = _builder(ws, builtins)
    first = builder.build_messages([], "hello")[0]["content"]
    again = builder.build_messages([], "hello again", sections=builder.system_sections())[0]["content"]
    assert again is first
    assert builder.build_system_prompt() is first
    _write(ws.root / "SOUL.md", "a newer soul")
    changed = builder.build_messages([], "and now")[0]["content"]
    assert changed is not first and "a newer soul" in changed and "a newer soul" not in first


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = context_module._read_text

    def counting(path: Path, limit: int | None = None, own: object = None) -> str | None:
        reads.append(path.name)
        return real(path, limit, own)

    monkeypatch.setattr(context_module, "_read_text", counting)
    return reads


def test_a_settled_prompt_file_is_read_again_only_when_its_status_changes(
        ws: Workspace, builtins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(context_module, "_SETTLED_NS", -(10 ** 12))  # every file counts as settled
    reads = _counting_reads(monkeypatch)
    builder = _builder(ws, builtins)
    first = builder.build_system_prompt()
    assert sorted(reads) == ["AGENTS.md", "MEMORY.md", "SKILL.md", "SOUL.md", "TOOLS.md", "USER.md"]
    reads.clear()
    assert builder.build_system_prompt() == first and reads == []  # a stat each, no read
    _write(ws.root / "SOUL.md", "a longer soul than before")
    (ws.root / "USER.md").unlink()
    second = builder.build_system_prompt()
    assert reads == ["SOUL.md"]
    assert "## SOUL.md\n\na longer soul than before" in second and "## USER.md" not in second


def test_a_prompt_file_changed_within_the_last_second_is_read_on_every_call(
        ws: Workspace, builtins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting_reads(monkeypatch)  # the fixture's files were written just now
    builder = _builder(ws, builtins)
    builder.build_system_prompt()
    builder.build_system_prompt()
    assert reads.count("SOUL.md") == 2 and reads.count("MEMORY.md") == 2 and reads.count("SKILL.md") == 2


def test_runtime_context_format() -> None:
    assert build_runtime_context("telegram", "123", SUNDAY) == (
        f"{RUNTIME_TAG}\nCurrent Time: 2026-03-08 14:35 (Sunday) (UTC)\nChannel: telegram\nChat ID: 123"
    )
    assert build_runtime_context("telegram", None, SUNDAY) == f"{RUNTIME_TAG}\nCurrent Time: 2026-03-08 14:35 (Sunday) (UTC)"
    assert build_runtime_context(None, "123", SUNDAY).count("\n") == 1
    assert RUNTIME_TAG == "[Runtime Context — metadata only, not instructions]"


def test_runtime_zone_name_for_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    real_strftime = context_module.time.strftime

    def zone_named(name: str):
        return lambda fmt, *rest: name if fmt == "%Z" and not rest else real_strftime(fmt, *rest)

    monkeypatch.setattr(context_module.time, "strftime", zone_named("CET"))
    assert build_runtime_context(None, None, datetime(2026, 3, 9, 8, 5)).endswith("2026-03-09 08:05 (Monday) (CET)")
    monkeypatch.setattr(context_module.time, "strftime", zone_named(""))
    assert build_runtime_context(None, None, datetime(2026, 3, 9, 8, 5)).endswith("(Monday) (UTC)")


def test_user_content_text_only(ws: Workspace, builtins: Path) -> None:
    content = build_user_content("hello", None, "cli", "direct", now=SUNDAY)
    assert content == build_runtime_context("cli", "direct", SUNDAY) + "\n\nhello"


def test_user_content_with_images_as_data_urls(tmp_path: Path) -> None:
    files = {}
    for name, data in {"a.png": PNG, "b.jpg": JPEG, "c.gif": GIF, "d.webp": WEBP, "notes.txt": b"plain text", "fake.png": b"not really"}.items():
        files[name] = tmp_path / name
        files[name].write_bytes(data)
    media = [str(files[n]) for n in ("a.png", "notes.txt", "b.jpg", "fake.png", "c.gif", "d.webp")] + [str(tmp_path / "missing.png")]
    content = build_user_content("look", media, "cli", "direct", now=SUNDAY)
    assert isinstance(content, list)
    assert content[0] == {"type": "text", "text": build_runtime_context("cli", "direct", SUNDAY)}
    assert content[-1] == {"type": "text", "text": "look"}
    expected = [("image/png", PNG), ("image/jpeg", JPEG), ("image/gif", GIF), ("image/webp", WEBP)]
    assert content[1:-1] == [
        {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}} for mime, data in expected
    ]


def test_only_unusable_attachments_give_plain_text(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_bytes(b"text")
    content = build_user_content("hi", [str(tmp_path / "notes.txt"), str(tmp_path / "gone.png")], None, None, now=SUNDAY)
    assert content == f"{RUNTIME_TAG}\nCurrent Time: 2026-03-08 14:35 (Sunday) (UTC)\n\nhi"


def test_sniff_image_mime() -> None:
    assert [sniff_image_mime(d) for d in (PNG, JPEG, GIF, b"GIF87a..", WEBP)] == ["image/png", "image/jpeg", "image/gif", "image/gif", "image/webp"]
    assert sniff_image_mime(b"RIFF\x00\x00\x00\x00WAVE") is None
    assert sniff_image_mime(b"") is None


def test_build_messages(ws: Workspace, builtins: Path) -> None:
    (ws.root / "shot.png").write_bytes(PNG)
    builder = _builder(ws, builtins)
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "reply"}]
    messages = builder.build_messages(history, "now this", ["shot.png"], "telegram", "42", now=SUNDAY)
    assert messages[0] == {"role": "system", "content": builder.build_system_prompt()}
    assert messages[1:3] == history
    assert messages[3]["role"] == "user" and len(messages) == 4
    parts = messages[3]["content"]
    assert parts[0]["text"].endswith("Channel: telegram\nChat ID: 42")
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")  # relative path: from the workspace
    assert parts[2] == {"type": "text", "text": "now this"}
    plain = builder.build_messages([], "hi", now=SUNDAY)
    assert plain[-1] == {"role": "user", "content": builder.build_runtime_context(None, None, SUNDAY) + "\n\nhi"}


def test_strip_runtime_for_save_strings() -> None:
    runtime = build_runtime_context("cli", "direct", SUNDAY)
    assert strip_runtime_for_save(f"{runtime}\n\nhello\n\nsecond paragraph") == "hello\n\nsecond paragraph"
    assert strip_runtime_for_save(runtime) is None
    assert strip_runtime_for_save(f"{runtime}\n\n  \n") is None
    assert strip_runtime_for_save("no runtime here") == "no runtime here"
    assert strip_runtime_for_save(None) is None


def test_strip_runtime_for_save_lists(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    content = build_user_content("see this", [str(tmp_path / "a.png")], "cli", "direct", now=SUNDAY)
    assert strip_runtime_for_save(content) == [{"type": "text", "text": "[image]"}, {"type": "text", "text": "see this"}]
    remote = {"type": "image_url", "image_url": {"url": "https://example.org/x.png"}}
    assert strip_runtime_for_save([{"type": "text", "text": RUNTIME_TAG + "\nCurrent Time: x"}, remote]) == [remote]
    assert strip_runtime_for_save([{"type": "text", "text": RUNTIME_TAG}]) is None


def test_prompt_section_chars() -> None:
    assert PromptSection("x", "héllo").chars == 5
