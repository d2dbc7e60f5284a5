"""nanobot 0.3.5's `tools.exec.sandbox` settings, mapped onto the app's own exec sandbox.

0.3.5 wraps exec in bubblewrap (Linux) or Seatbelt (macOS) when `tools.exec.sandbox` names one: the
command then sees only system folders, the workspace (read-write), the media folder (read-only) and
the folders listed in `sandboxRoBinds` (read-only) and `sandboxRwBinds` (read-write), whatever
`restrictToWorkspace` says. The app runs every sandboxed call under Landlock and namespaces instead;
this module reads the same keys so that a config written for 0.3.5 means the same thing here: a
named backend makes exec always sandboxed with the narrow "system folders only" view, and the bind
lists open exactly those folders. Whatever cannot be honoured is said in `problems`, never dropped.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The backends 0.3.5 knows (agent/tools/sandbox.py); both mean the same view of the file system.
KNOWN_BACKENDS = ("bwrap", "seatbelt")


@dataclass(frozen=True)
class ExecBinds:
    """`tools.exec.sandbox` as the app applies it: the narrow view on or off, and the extra folders."""

    backend: str = ""  # as written in the config ("" when not set)
    read_only: tuple[Path, ...] = ()
    read_write: tuple[Path, ...] = ()
    problems: tuple[str, ...] = field(default=())  # sentences: what the app does not do as 0.3.5 would

    @property
    def system_only(self) -> bool:
        """Whether commands see only system folders, the workspace and the bind lists (0.3.5's view)."""
        return bool(self.backend)


def never_bound(config_path: Path | None) -> list[Path]:
    """Folders no bind list may open to commands: the config folder and the app's own files."""
    from nanobot_desktop.engine.tools.sandbox import app_paths

    return [*([Path(config_path).expanduser().parent] if config_path is not None else []), *app_paths()]


def exec_binds(exec_extra: Mapping[str, Any] | None, workspace: Path, protected: Iterable[Path] = ()) -> ExecBinds:
    """Read `tools.exec.sandbox`, `sandboxRoBinds` and `sandboxRwBinds` (either spelling) as 0.3.5 does:
    `$VAR` and `~` expanded, relative paths skipped, the workspace or a folder holding it skipped (it
    would uncover the config folder beside it), duplicates dropped. `protected` are the folders the app
    never opens to commands (its config folder and its own files): a bind reaching into one is refused."""
    extra = exec_extra or {}
    backend = named_backend(extra)
    problems: list[str] = []
    if backend and backend not in KNOWN_BACKENDS:
        problems.append(f"tools.exec.sandbox is {backend!r}, which nanobot does not know (it knows "
                        f"{' and '.join(KNOWN_BACKENDS)}); the app applies its own narrow sandbox all the same")
    if backend and not sys.platform.startswith("linux"):
        problems.append(f"tools.exec.sandbox {backend!r} is not applied on {sys.platform}: the app has no exec "
                        "sandbox on this system")
    workspace = workspace.resolve()
    protected = [p.resolve() for p in protected]
    taken: list[Path] = []

    def paths(key: str) -> tuple[Path, ...]:
        raw = _value(extra, key)
        if raw in (None, ""):
            return ()
        if not isinstance(raw, list):
            problems.append(f"tools.exec.{key} is not a list of folders; it is not applied")
            return ()
        found: list[Path] = []
        for item in raw:
            text = str(item).strip()
            if not text:
                continue
            path = Path(os.path.expandvars(text)).expanduser()
            if not path.is_absolute():
                problems.append(f"tools.exec.{key}: {text!r} is not an absolute path; skipped (as nanobot does)")
                continue
            resolved = path.resolve(strict=False)
            if resolved == workspace or resolved in workspace.parents:
                problems.append(f"tools.exec.{key}: {text!r} holds the workspace; skipped (as nanobot does: it "
                                "would uncover the config folder beside it)")
                continue
            if any(resolved == p or p in resolved.parents or resolved in p.parents for p in protected):
                problems.append(f"tools.exec.{key}: {text!r} reaches the app's config or its own files, which "
                                "commands never see here; skipped")
                continue
            if resolved not in taken:
                taken.append(resolved)
                found.append(resolved)
        return tuple(found)

    read_only = paths("sandboxRoBinds")
    read_write = paths("sandboxRwBinds")
    if (read_only or read_write) and not backend:
        problems.append("tools.exec.sandboxRoBinds / sandboxRwBinds are set without tools.exec.sandbox; nanobot "
                        "ignores them then, and so does the app")
        read_only = read_write = ()
    return ExecBinds(backend, read_only, read_write, tuple(problems))


def named_backend(exec_extra: Mapping[str, Any] | None) -> str:
    """The backend `tools.exec.sandbox` names ("" when none): any name makes exec always sandboxed."""
    return str(_value(exec_extra or {}, "sandbox") or "").strip()


def _value(extra: Mapping[str, Any], camel: str) -> Any:
    """A key in the config's camelCase spelling or its snake_case twin (0.3.5 accepts both)."""
    if camel in extra:
        return extra[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return extra.get(snake)
