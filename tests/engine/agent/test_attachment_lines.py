"""A message with images keeps their paths on its session line (`"media"`, as nanobot 0.3.5 writes it):
Regenerate sends them again, and the real post4 CLI goes on with the session (it replays no `media`)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest

from nanobot_desktop.engine import message_media, user_text
from tests.reference_cli import POST4, run_reference_cli


def png(path: Path) -> Path:
    """A 1×1 PNG written by hand (no Qt in engine tests)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"\x00\xff\x00\x00"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return path


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_user_text_leaves_out_the_image_stand_ins_only_when_the_images_are_known() -> None:
    with_media = {"role": "user", "content": [{"type": "text", "text": "[image]"}, {"type": "text", "text": "hi"}],
                  "media": ["/p/a.png"]}
    assert (user_text(with_media), message_media(with_media)) == ("hi", ["/p/a.png"])
    without = {"role": "user", "content": [{"type": "text", "text": "[image]"}, {"type": "text", "text": "hi"}]}
    assert (user_text(without), message_media(without)) == ("[image]\nhi", [])
    assert message_media({"role": "user", "content": "x", "media": "not a list"}) == []


@pytest.mark.slow
async def test_the_media_line_is_resent_on_regenerate_and_read_by_the_post4_cli(make_engine, fake_openai, tmp_path):
    engine = make_engine()
    photo = png(tmp_path / "pictures" / "dot.png")
    fake_openai.add_text("A green dot.")
    await engine.loop.process("cli:direct", "what is this?", media=[str(photo)])
    path = engine.sessions.path_for("cli:direct")
    user = lines_of(path)[1]
    assert user["media"] == [str(photo)]
    assert user["content"] == [{"type": "text", "text": "[image]"}, {"type": "text", "text": "what is this?"}]
    key = engine.branch_session("cli:direct", 1)
    fake_openai.add_text("Still a green dot.")
    await engine.loop.resend(key)
    parts = fake_openai.requests[-1]["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text"] and parts[-1]["text"] == "what is this?"
    await engine.shutdown()
    fake_openai.add_text("Bye.")
    done = run_reference_cli(POST4, ["agent", "-m", "thanks", "-s", "cli:direct", "--no-markdown"],
                             home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Bye." in done.stdout
    replayed = fake_openai.requests[-1]["messages"]
    assert all("media" not in message for message in replayed)
    assert lines_of(path)[1]["media"] == [str(photo)]  # the CLI kept the line as it was
