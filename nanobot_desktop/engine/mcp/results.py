"""An MCP tool result as the agent's tool result: text for the model, images kept as files.

Text blocks are joined with newlines, as the CLI does; other blocks the CLI printed as their repr,
we print something readable. Images are written once (by content hash) under
`<workspace>/uploads/mcp/`, named in the text and returned as media, so the chat can show them and
the loop can hand them to the model as images.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.workspace import atomic_write_bytes

IMAGE_FOLDER = Path("uploads") / "mcp"
_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
NO_OUTPUT = "(no output)"


@dataclass(frozen=True)
class ConvertedResult:
    text: str
    media: tuple[str, ...]
    is_error: bool


def save_image(workspace: Path, data_b64: str, mime: str) -> Path | None:
    """Write an image block to the workspace (deduplicated by content); None if the data is not base64."""
    try:
        data = base64.b64decode(data_b64, validate=True)
    except (binascii.Error, ValueError):
        return None
    digest = hashlib.sha256(data).hexdigest()[:20]
    path = workspace / IMAGE_FOLDER / f"{digest}{_EXTENSIONS.get(mime, '.img')}"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, data)
    return path


def _block_text(block: Any, workspace: Path, media: list[str]) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind == "image":
        path = save_image(workspace, block.data, block.mimeType)
        if path is None:
            return f"[image ({block.mimeType}) that could not be decoded]"
        media.append(str(path))
        return f"[image: {path}]"
    if kind == "audio":
        return f"[audio ({block.mimeType}), not shown]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        return text if isinstance(text, str) else f"[resource {resource.uri} ({resource.mimeType or 'binary'})]"
    if kind == "resource_link":
        return f"[resource link: {block.uri}]"
    return str(block)


def convert_result(result: Any, workspace: Path) -> ConvertedResult:
    """`CallToolResult` → text and media; a structured-only result shows its JSON."""
    media: list[str] = []
    parts = [_block_text(block, workspace, media) for block in result.content]
    text = "\n".join(parts)
    if not text and getattr(result, "structuredContent", None) is not None:
        import json

        text = json.dumps(result.structuredContent, ensure_ascii=False)
    return ConvertedResult(text or NO_OUTPUT, tuple(media), bool(getattr(result, "isError", False)))
