import os
from pathlib import Path

import pytest

from nanobot_desktop.engine.workspace import Workspace, append_text, atomic_write_text

POST4_FILE_SET = {
    "AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md", "HEARTBEAT.md",
    "memory/MEMORY.md", "memory/HISTORY.md", "skills",
}


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.parent == root or p.parent.name == "memory"}


def test_sync_creates_exactly_the_post4_file_set(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path / "ws")
    created = ws.sync_templates()
    assert _tree(ws.root) == POST4_FILE_SET | {"memory"}
    assert len(created) == len(POST4_FILE_SET)
    assert ws.history_file.read_bytes() == b""
    assert ws.memory_file.read_text(encoding="utf-8").strip()


def test_sync_never_overwrites(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path)
    (tmp_path / "SOUL.md").write_text("my own soul", encoding="utf-8")
    ws.memory_dir.mkdir()
    ws.memory_file.write_text("facts I wrote", encoding="utf-8")
    ws.sync_templates()
    assert (tmp_path / "SOUL.md").read_text(encoding="utf-8") == "my own soul"
    assert ws.memory_file.read_text(encoding="utf-8") == "facts I wrote"
    assert ws.sync_templates() == []


def test_atomic_write_replaces_whole_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two ✓")
    assert target.read_bytes() == "two ✓".encode()
    assert os.listdir(tmp_path) == ["a.md"]


def test_atomic_write_failure_keeps_old_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.md"
    atomic_write_text(target, "old")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["a.md"]


def test_append_text_only_whole_lines(tmp_path: Path) -> None:
    target = tmp_path / "log.jsonl"
    assert append_text(target, "a\n") == 2
    assert append_text(target, "é\n") == 3
    assert target.read_bytes() == "a\né\n".encode()
    with pytest.raises(ValueError):
        append_text(target, "no newline")
