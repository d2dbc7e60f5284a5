"""read_file / write_file / edit_file / list_dir: behaviour, limits, messages and bytes on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanobot_desktop.engine.events import ToolStatus
from nanobot_desktop.engine.tools.base import ToolContext, failed
from nanobot_desktop.engine.tools.filesystem import (
    MAX_READ_BYTES,
    MAX_READ_CHARS,
    EditFileTool,
    ListDirTool,
    ReadFileTool,
    WriteFileTool,
)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(workspace=ws)


# ------------------------------------------------------------------------------------------------ read

async def test_read_relative_to_workspace(ctx: ToolContext) -> None:
    (ctx.workspace / "notes.md").write_bytes("héllo\r\nworld\n".encode())
    assert await ReadFileTool().execute(ctx, path="notes.md") == "héllo\nworld\n"


async def test_read_missing_and_directory(ctx: ToolContext) -> None:
    assert await ReadFileTool().execute(ctx, path="nope.txt") == failed("Error: File not found: nope.txt")
    (ctx.workspace / "d").mkdir()
    assert await ReadFileTool().execute(ctx, path="d") == failed("Error: Not a file: d")


async def test_read_refuses_huge_file_with_hint(ctx: ToolContext) -> None:
    (ctx.workspace / "big.log").write_bytes(b"x" * (MAX_READ_BYTES + 1))
    result = await ReadFileTool().execute(ctx, path="big.log")
    assert result.status is ToolStatus.ERROR and result.text.startswith("Error: File too large (512,001 bytes")
    assert "head, tail or grep" in result.text


async def test_read_truncates_long_text_with_note(ctx: ToolContext) -> None:
    (ctx.workspace / "long.txt").write_text("a" * (MAX_READ_CHARS + 500), encoding="utf-8")
    result = await ReadFileTool().execute(ctx, path="long.txt")
    assert result.startswith("a" * MAX_READ_CHARS + "\n\n... (truncated")
    assert "128,000 of 128,500 characters" in result


async def test_read_exactly_at_limit_is_not_truncated(ctx: ToolContext) -> None:
    (ctx.workspace / "edge.txt").write_text("b" * MAX_READ_CHARS, encoding="utf-8")
    assert await ReadFileTool().execute(ctx, path="edge.txt") == "b" * MAX_READ_CHARS


async def test_read_non_utf8_gives_clear_error(ctx: ToolContext) -> None:
    (ctx.workspace / "latin1.txt").write_bytes(b"caf\xe9")
    result = await ReadFileTool().execute(ctx, path="latin1.txt")
    assert result.text.startswith("Error: latin1.txt is not UTF-8 text (invalid byte at offset 3)")


async def test_read_empty_file(ctx: ToolContext) -> None:
    (ctx.workspace / "e.txt").write_bytes(b"")
    assert await ReadFileTool().execute(ctx, path="e.txt") == "(empty file)"


async def test_read_home_path(ctx: ToolContext) -> None:
    home = Path.home()
    (home / "h.txt").write_text("from home", encoding="utf-8")
    assert await ReadFileTool().execute(ctx, path="~/h.txt") == "from home"


# ----------------------------------------------------------------------------------------------- write

async def test_write_creates_parents_and_reports_chars(ctx: ToolContext) -> None:
    result = await WriteFileTool().execute(ctx, path="a/b/c.md", content="héllo\n")
    target = (ctx.workspace / "a/b/c.md").resolve()
    assert result == f"Successfully wrote 6 bytes to {target}"
    assert target.read_bytes() == "héllo\n".encode()
    assert [p.name for p in target.parent.iterdir()] == ["c.md"]  # no temp file left behind


async def test_write_overwrites_and_keeps_bytes_exact(ctx: ToolContext) -> None:
    target = ctx.workspace / "x.txt"
    target.write_text("old", encoding="utf-8")
    await WriteFileTool().execute(ctx, path="x.txt", content="line1\r\nline2")
    assert target.read_bytes() == b"line1\r\nline2"


async def test_write_onto_directory_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "d").mkdir()
    assert await WriteFileTool().execute(ctx, path="d", content="x") == failed("Error: d is a directory")


async def test_write_preview_of_change(ctx: ToolContext) -> None:
    (ctx.workspace / "f.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    diff = await WriteFileTool().preview(ctx, path="f.txt", content="one\n2\nthree\n")
    assert diff == (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    )
    assert (ctx.workspace / "f.txt").read_text(encoding="utf-8") == "one\ntwo\nthree\n"  # preview changes nothing


async def test_write_preview_of_new_file(ctx: ToolContext) -> None:
    diff = await WriteFileTool().preview(ctx, path="sub/new.md", content="hi\nthere")
    assert diff == ("--- /dev/null\n+++ b/sub/new.md\n@@ -0,0 +1,2 @@\n+hi\n+there\n"
                    "\\ No newline at end of file\n")
    assert not (ctx.workspace / "sub").exists()


async def test_write_preview_without_change(ctx: ToolContext) -> None:
    (ctx.workspace / "same.txt").write_text("same\n", encoding="utf-8")
    assert await WriteFileTool().preview(ctx, path="same.txt", content="same\n") == "(no changes)"


# ------------------------------------------------------------------------------------------------ edit

async def test_edit_replaces_once(ctx: ToolContext) -> None:
    target = ctx.workspace / "e.py"
    target.write_text("def f():\n    return 1\n", encoding="utf-8")
    result = await EditFileTool().execute(ctx, path="e.py", old_text="return 1", new_text="return 2")
    assert result == f"Successfully edited {target.resolve()}"
    assert target.read_bytes() == b"def f():\n    return 2\n"


async def test_edit_multiple_matches_warns_and_changes_nothing(ctx: ToolContext) -> None:
    target = ctx.workspace / "m.txt"
    target.write_text("x = 1\nx = 1\n", encoding="utf-8")
    result = await EditFileTool().execute(ctx, path="m.txt", old_text="x = 1", new_text="x = 2")
    assert result.startswith("Warning: old_text appears 2 times in m.txt.")
    assert target.read_bytes() == b"x = 1\nx = 1\n"


async def test_edit_not_found_shows_fuzzy_diff_with_line(ctx: ToolContext) -> None:
    target = ctx.workspace / "f.py"
    target.write_text("import os\n\ndef greet(name):\n    print('hello', name)\n    return name\n", encoding="utf-8")
    result = await EditFileTool().execute(
        ctx, path="f.py", old_text="def greet(name):\n    print('helo', name)", new_text="x")
    assert result.status is ToolStatus.ERROR and result.text.startswith("Error: old_text not found in f.py.\nBest match (")
    assert "similar) at line 3:" in result.text
    assert "--- old_text (provided)\n+++ f.py (actual, line 3)" in result.text
    assert "-    print('helo', name)\n+    print('hello', name)" in result.text
    assert target.read_text(encoding="utf-8").count("hello") == 1


async def test_edit_not_found_without_similar_text(ctx: ToolContext) -> None:
    (ctx.workspace / "f.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    result = await EditFileTool().execute(ctx, path="f.txt", old_text="zzzzzzzzzzzzzzzz", new_text="x")
    assert result.text.startswith("Error: old_text not found in f.txt. No similar text found")


async def test_edit_keeps_crlf_line_endings(ctx: ToolContext) -> None:
    target = ctx.workspace / "w.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await EditFileTool().execute(ctx, path="w.txt", old_text="one\ntwo", new_text="1\n2")
    assert result.startswith("Successfully edited")
    assert target.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_errors(ctx: ToolContext) -> None:
    tool = EditFileTool()
    assert await tool.execute(ctx, path="none.txt", old_text="a", new_text="b") == failed("Error: File not found: none.txt")
    (ctx.workspace / "bin").write_bytes(b"\xff\xfe\x00")
    assert (await tool.execute(ctx, path="bin", old_text="a", new_text="b")).text.startswith(
        "Error: bin is not UTF-8 text")
    (ctx.workspace / "t.txt").write_text("abc", encoding="utf-8")
    assert (await tool.execute(ctx, path="t.txt", old_text="", new_text="b")).text.startswith("Error: old_text is empty")
    assert (ctx.workspace / "t.txt").read_text(encoding="utf-8") == "abc"


async def test_edit_preview(ctx: ToolContext) -> None:
    (ctx.workspace / "p.txt").write_text("a\nb\n", encoding="utf-8")
    tool = EditFileTool()
    assert await tool.preview(ctx, path="p.txt", old_text="b", new_text="c") == (
        "--- a/p.txt\n+++ b/p.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
    assert await tool.preview(ctx, path="p.txt", old_text="zz", new_text="c") is None


# ------------------------------------------------------------------------------------------------ list

async def test_list_dir_sorted_with_prefixes(ctx: ToolContext) -> None:
    (ctx.workspace / "b.txt").write_text("", encoding="utf-8")
    (ctx.workspace / "a_dir").mkdir()
    (ctx.workspace / "c.md").write_text("", encoding="utf-8")
    assert await ListDirTool().execute(ctx, path=".") == "📁 a_dir\n📄 b.txt\n📄 c.md"


async def test_list_dir_messages(ctx: ToolContext) -> None:
    (ctx.workspace / "empty").mkdir()
    (ctx.workspace / "f").write_text("", encoding="utf-8")
    tool = ListDirTool()
    assert await tool.execute(ctx, path="empty") == "Directory empty is empty"
    assert await tool.execute(ctx, path="missing") == failed("Error: Directory not found: missing")
    assert await tool.execute(ctx, path="f") == failed("Error: Not a directory: f")


async def test_write_file_refuses_content_above_the_readme_limit(tmp_path) -> None:
    """README: write_file and edit_file change files of at most 2,000,000 bytes (3,000,000 were written)."""
    from nanobot_desktop.engine.tools.base import ToolContext as Ctx
    from nanobot_desktop.engine.tools.registry import build_default_registry as registry_of

    registry = registry_of()
    ctx = Ctx(workspace=tmp_path, restrict_to_workspace=True)
    result = await registry.execute("write_file", {"path": "big.txt", "content": "x" * 3_000_000}, ctx)
    assert "3,000,000 bytes; write_file writes at most 2,000,000" in result
    assert not (tmp_path / "big.txt").exists()
    full = "y" + "x" * 1_999_999
    assert "Successfully" in await registry.execute("write_file", {"path": "ok.txt", "content": full}, ctx)
    grown = await registry.execute("edit_file", {"path": "ok.txt", "old_text": "y", "new_text": "yy"}, ctx)
    assert "Error" in grown and (tmp_path / "ok.txt").stat().st_size == 2_000_000
