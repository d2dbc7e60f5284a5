"""The one exception every config problem becomes, and how paths are shown in its message."""

from __future__ import annotations

from pathlib import Path


class ConfigError(Exception):
    """A config problem a person can fix; `str()` is one line naming the file, where, and what."""

    def __init__(self, message: str, *, path: Path | None = None, line: int | None = None,
                 column: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.path, self.line, self.column, self.field = message, path, line, column, field


def display_path(path: Path) -> str:
    """`~/…` for paths in the home folder, so messages stay short and hide the user name."""
    try:
        return "~/" + path.expanduser().relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)
