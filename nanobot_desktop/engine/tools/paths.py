"""Where a path given to a tool really points, and whether the tool may touch it.

The check runs on fully resolved paths (`~` expanded, relative paths joined to the workspace, symlinks
followed), because comparing the strings the model wrote is what let `~`, `..` and symlinks escape
the workspace in the original (issues #1817, #4072).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol


class _HasWorkspace(Protocol):
    workspace: Path
    restrict_to_workspace: bool


class PathOutsideWorkspace(ValueError):
    """A tool was asked to reach outside the workspace while the workspace restriction is on.

    `str(exc)` is the exact text the tool returns to the model.
    """

    def __init__(self, path: str, allowed_dir: Path) -> None:
        self.path = path
        self.allowed_dir = allowed_dir
        super().__init__(f"Error: Path {path} is outside allowed directory {allowed_dir}")


def workspace_root(ctx: _HasWorkspace) -> Path:
    """The workspace as an absolute, symlink-free path (the base every comparison uses)."""
    return Path(ctx.workspace).expanduser().resolve()


def absolute_tool_path(path: str | os.PathLike[str], workspace: Path) -> Path:
    """Resolve `path` the way tools see it, without any restriction check (for display, e.g. approval cards)."""
    candidate = Path(os.path.expanduser(os.fspath(path)))
    if not candidate.is_absolute():
        candidate = Path(workspace).expanduser() / candidate
    return candidate.resolve()


def is_inside(path: Path, root: Path) -> bool:
    """True if resolved `path` is `root` or below it."""
    return path == root or path.is_relative_to(root)


def resolve_tool_path(path: str, ctx: _HasWorkspace) -> Path:
    """Absolute resolved path for a tool argument; raises PathOutsideWorkspace when restricted and outside."""
    root = workspace_root(ctx)
    resolved = absolute_tool_path(path, root)
    if ctx.restrict_to_workspace and not is_inside(resolved, root):
        raise PathOutsideWorkspace(path, root)
    return resolved


def display_path(path: Path, workspace: Path) -> str:
    """Workspace-relative POSIX text for paths inside the workspace (diff headers), else the absolute path."""
    root = Path(workspace).expanduser().resolve()
    if is_inside(path, root):
        rel = path.relative_to(root).as_posix()
        return rel or "."
    return path.as_posix()
