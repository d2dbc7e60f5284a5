"""read_file, write_file, edit_file and list_dir: the agent's hands on the workspace.

Every path goes through `locate` (so the workspace restriction sees `~`, `..` and symlinks resolved) and
is then opened race-free from the workspace's descriptor (`safe_files`); every rewrite is atomic (a
crash never leaves half a file); sizes are checked before reading; file I/O runs in a worker thread so
a big file never freezes the window.
"""

from __future__ import annotations

import asyncio
from typing import Any

from nanobot_desktop.engine.tools.base import Tool, ToolContext, ToolResult, failed
from nanobot_desktop.engine.tools.paths import PathOutsideWorkspace, display_path, workspace_root
from nanobot_desktop.engine.tools.safe_files import (
    FileToolError,
    Place,
    file_size,
    list_entries,
    locate,
    read_limited,
    write_atomic,
)

MAX_READ_CHARS = 128_000
MAX_READ_BYTES = 4 * MAX_READ_CHARS  # 512,000: beyond this even reading would flood the context
MAX_EDIT_BYTES = 2_000_000  # write/edit show a diff of the whole file before approval: keep it affordable
_TOO_LARGE_TO_READ = ("Error: File too large ({size:,} bytes; read_file reads at most {limit:,} bytes). "
                      "Use exec with head, tail or grep to read the parts you need.")
_TOO_LARGE_TO_CHANGE = ("Error: {shown} is too large to change with write_file or edit_file ({size:,} bytes; "
                        "at most {limit:,}, because the whole diff is shown before approval). "
                        "Use exec (e.g. sed, truncate) for a file this size.")
FUZZY_MIN_RATIO = 0.5
FUZZY_MAX_LINES = 20_000  # beyond this the closest-match search would take too long to be worth it


class NotUtf8Error(ValueError):
    """The file is not UTF-8 text; the message says where and what to do instead."""


def _decode_utf8(data: bytes, shown_path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(
            f"Error: {shown_path} is not UTF-8 text (invalid byte at offset {exc.start}). "
            "It may be binary or use another encoding; inspect it with exec (e.g. `file`, `xxd`, `iconv`)."
        ) from None


def unified_diff_text(old: str | None, new: str, shown: str) -> str:
    """A `git diff`-like unified diff of a whole-file change (`old=None` means the file is new)."""
    prefixed = not shown.startswith("/")
    from_name = "/dev/null" if old is None else (f"a/{shown}" if prefixed else shown)
    to_name = f"b/{shown}" if prefixed else shown
    import difflib  # on first use: a turn that edits nothing does not import it

    lines = difflib.unified_diff((old or "").splitlines(keepends=True), new.splitlines(keepends=True),
                                 from_name, to_name)
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out) or "(no changes)"


def _lines_equal_diff(expected: list[str], actual: list[str], shown: str, line_no: int) -> str:
    import difflib

    diff = difflib.unified_diff(expected, actual, "old_text (provided)", f"{shown} (actual, line {line_no})",
                                lineterm="")
    return "\n".join(diff)


def _closest_window(content: str, old_text: str) -> tuple[float, int, list[str]]:
    """The run of file lines most similar to `old_text`: (ratio, 1-based line, lines)."""
    import difflib

    lines = content.splitlines()
    if len(lines) > FUZZY_MAX_LINES:
        return 0.0, 0, []
    wanted = old_text.splitlines() or [old_text]
    size = len(wanted)
    target = "\n".join(wanted)
    best: tuple[float, int, list[str]] = (0.0, 0, [])
    for start in range(max(1, len(lines) - size + 1)):
        window = lines[start:start + size]
        matcher = difflib.SequenceMatcher(None, target, "\n".join(window), autojunk=False)
        if matcher.real_quick_ratio() <= best[0] or matcher.quick_ratio() <= best[0]:
            continue
        ratio = matcher.ratio()
        if ratio > best[0]:
            best = (ratio, start + 1, window)
    return best


def _plan_edit(content: str, old_text: str, new_text: str, shown: str) -> tuple[str | None, str | ToolResult]:
    """(new content, "") when the edit applies once; (None, what to tell the model) when it does not."""
    if old_text not in content and "\r\n" in content and "\r\n" not in old_text:
        # The model saw LF line endings; match the file's CRLF ones rather than failing or converting the file.
        old_text, new_text = old_text.replace("\n", "\r\n"), new_text.replace("\n", "\r\n")
    count = content.count(old_text)
    if count == 1:
        return content.replace(old_text, new_text, 1), ""
    if count > 1:
        return None, (f"Warning: old_text appears {count} times in {shown}. "
                      "Provide more surrounding context so that it matches exactly once.")
    ratio, line_no, window = _closest_window(content.replace("\r\n", "\n"), old_text.replace("\r\n", "\n"))
    if ratio > FUZZY_MIN_RATIO:
        diff = _lines_equal_diff(old_text.replace("\r\n", "\n").splitlines(), window, shown, line_no)
        return None, failed(f"Error: old_text not found in {shown}.\n"
                            f"Best match ({ratio:.0%} similar) at line {line_no}:\n{diff}")
    return None, failed(f"Error: old_text not found in {shown}. No similar text found; "
                        "read the file again and copy the exact text to replace.")


def _existing_text_for_diff(place: Place, shown: str) -> str | None:
    """Current text for a diff (None when the file does not exist; undecodable bytes shown replaced).

    Refuses (FileToolError) before reading a file too large to show as a diff.
    """
    if file_size(place, shown) is None:
        return None
    return read_limited(place, shown, MAX_EDIT_BYTES, _TOO_LARGE_TO_CHANGE.replace("{shown}", shown)).decode(
        "utf-8", errors="replace")


class ReadFileTool(Tool):
    name = "read_file"
    description = "Read the contents of a UTF-8 text file at the given path."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The file path to read"}},
        "required": ["path"],
    }

    async def execute(self, ctx: ToolContext, path: str, **_: Any) -> str | ToolResult:
        try:
            place = locate(path, ctx, bundled_ok=True)
        except PathOutsideWorkspace as exc:
            return failed(str(exc))
        return await asyncio.to_thread(self._read, place, path)

    @staticmethod
    def _read(place: Place, shown: str) -> str | ToolResult:
        try:
            text = _decode_utf8(read_limited(place, shown, MAX_READ_BYTES, _TOO_LARGE_TO_READ), shown)
        except (FileToolError, NotUtf8Error) as exc:
            return failed(str(exc))
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if len(text) > MAX_READ_CHARS:
            return (text[:MAX_READ_CHARS]
                    + f"\n\n... (truncated: showing the first {MAX_READ_CHARS:,} of {len(text):,} characters; "
                    "use exec with head, tail or grep for the rest)")
        return text or "(empty file)"


class WriteFileTool(Tool):
    name = "write_file"
    description = ("Write content to a file at the given path, replacing it if it exists. "
                   "Parent directories are created as needed.")
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file path to write to"},
            "content": {"type": "string", "description": "The content to write"},
        },
        "required": ["path", "content"],
    }

    async def execute(self, ctx: ToolContext, path: str, content: str, **_: Any) -> str | ToolResult:
        try:
            place = locate(path, ctx)
        except PathOutsideWorkspace as exc:
            return failed(str(exc))

        def write() -> str:
            data = content.encode("utf-8")
            if len(data) > MAX_EDIT_BYTES:  # the new content too: the README's limit is on what is written
                raise FileToolError(f"Error: the content for {path} has {len(data):,} bytes; write_file writes at most "
                                    f"{MAX_EDIT_BYTES:,} (the whole diff is shown before approval). Split it into "
                                    "several files, or write it with a command.")
            size = file_size(place, path)  # refuses folders, hard-linked files and what cannot be opened
            if size is not None and size > MAX_EDIT_BYTES:
                raise FileToolError(_TOO_LARGE_TO_CHANGE.format(shown=path, size=size, limit=MAX_EDIT_BYTES))
            write_atomic(place, data, path)
            return f"Successfully wrote {len(content)} bytes to {place.path}"

        try:
            return await asyncio.to_thread(write)
        except FileToolError as exc:
            return failed(str(exc))
        except PermissionError:
            return failed(f"Error: Permission denied: {path}")

    async def preview(self, ctx: ToolContext, path: str, content: str, **_: Any) -> str | None:
        place = locate(path, ctx)
        shown = display_path(place.path, workspace_root(ctx))
        try:
            old = await asyncio.to_thread(_existing_text_for_diff, place, shown)
        except FileToolError as exc:
            return str(exc)
        return unified_diff_text(old, content, shown)


class EditFileTool(Tool):
    name = "edit_file"
    description = ("Edit a file by replacing old_text with new_text. old_text must match the file exactly "
                   "(whitespace included) and occur exactly once.")
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file path to edit"},
            "old_text": {"type": "string", "description": "The exact text to find and replace"},
            "new_text": {"type": "string", "description": "The text to replace it with"},
        },
        "required": ["path", "old_text", "new_text"],
    }

    async def execute(self, ctx: ToolContext, path: str, old_text: str, new_text: str, **_: Any) -> str | ToolResult:
        try:
            place = locate(path, ctx)
        except PathOutsideWorkspace as exc:
            return failed(str(exc))
        return await asyncio.to_thread(self._edit, place, path, old_text, new_text)

    @staticmethod
    def _edit(place: Place, shown: str, old_text: str, new_text: str) -> str | ToolResult:
        try:
            data = read_limited(place, shown, MAX_EDIT_BYTES, _TOO_LARGE_TO_CHANGE.replace("{shown}", shown))
            if old_text == "":
                return failed("Error: old_text is empty; give the exact text to replace (use write_file to rewrite a file).")
            content = _decode_utf8(data, shown)
            new_content, message = _plan_edit(content, old_text, new_text, shown)
            if new_content is None:
                return message
            encoded = new_content.encode("utf-8")
            if len(encoded) > MAX_EDIT_BYTES:
                return failed(f"Error: after this edit {shown} would have {len(encoded):,} bytes; edit_file keeps files "
                              f"at most {MAX_EDIT_BYTES:,} bytes (the whole diff is shown before approval).")
            write_atomic(place, encoded, shown)
        except (FileToolError, NotUtf8Error) as exc:
            return failed(str(exc))
        return f"Successfully edited {place.path}"

    async def preview(self, ctx: ToolContext, path: str, old_text: str, new_text: str, **_: Any) -> str | None:
        place = locate(path, ctx)
        shown = display_path(place.path, workspace_root(ctx))

        def build() -> str | None:
            if not old_text:
                return None
            try:
                if file_size(place, shown) is None:
                    return None
                data = read_limited(place, shown, MAX_EDIT_BYTES, _TOO_LARGE_TO_CHANGE.replace("{shown}", shown))
            except FileToolError as exc:
                return str(exc)
            content = data.decode("utf-8")
            new_content, _message = _plan_edit(content, old_text, new_text, shown)
            return None if new_content is None else unified_diff_text(content, new_content, shown)

        return await asyncio.to_thread(build)


class ListDirTool(Tool):
    name = "list_dir"
    description = "List the contents of a directory."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The directory path to list"}},
        "required": ["path"],
    }

    async def execute(self, ctx: ToolContext, path: str, **_: Any) -> str | ToolResult:
        try:
            place = locate(path, ctx, bundled_ok=True)
        except PathOutsideWorkspace as exc:
            return failed(str(exc))
        return await asyncio.to_thread(self._list, place, path)

    @staticmethod
    def _list(place: Place, shown: str) -> str | ToolResult:
        try:
            entries = list_entries(place, shown)
        except FileToolError as exc:
            return failed(str(exc))
        if not entries:
            return f"Directory {shown} is empty"
        return "\n".join(f"{'📁' if is_dir else '📄'} {name}" for name, is_dir in entries)
