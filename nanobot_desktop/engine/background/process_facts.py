"""What the app can learn about another process of this machine (Linux /proc; elsewhere nothing).

Coexistence (coexistence.py) needs more than a command line to tell whether a nanobot process serves
our config: whose process it is (a gateway of another user, or of another HOME, serves another
`~/.nanobot`), that process's HOME (its default config), when it started, and which nanobot version
it runs. All of it is read from /proc/<pid> and the files beside its executable; nothing is guessed
from our own environment.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

_PROC = Path("/proc")
_DIST_INFO = re.compile(r"^nanobot_ai-(?P<version>[^-]+)\.dist-info$")


@dataclass(frozen=True)
class ProcessFacts:
    """One process: its argv and cwd, its owner, its HOME (None: unknown) and its start (None: unknown)."""

    pid: int
    argv: list[str]
    cwd: Path | None
    uid: int | None = None
    home: Path | None = None
    started: datetime | None = None

    @classmethod
    def of(cls, item: "ProcessFacts | tuple[int, list[str], Path | None]") -> "ProcessFacts":
        """Accept the plain (pid, argv, cwd) of a scanner that knows nothing more (it is taken as ours)."""
        if isinstance(item, ProcessFacts):
            return item
        pid, argv, cwd = item
        return cls(pid, list(argv), cwd, uid=_my_uid())

    @property
    def mine(self) -> bool:
        """The same user's process (one of another user serves another user's files)."""
        return self.uid is None or self.uid == _my_uid()


def _my_uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return int(getuid()) if getuid is not None else None


def _boot_time() -> float | None:
    try:
        for line in (_PROC / "stat").read_text(encoding="ascii").splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def start_ticks(pid: int) -> int | None:
    """The process's start in clock ticks after boot (/proc/<pid>/stat field 22), to tell a reused pid."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
        return int(raw.rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _started(pid: int) -> datetime | None:
    ticks, boot = start_ticks(pid), _boot_time()
    if ticks is None or boot is None:
        return None
    return datetime.fromtimestamp(boot + ticks / os.sysconf("SC_CLK_TCK"), tz=UTC)


def _home(entry: Path) -> Path | None:
    try:
        environ = (entry / "environ").read_bytes()
    except OSError:
        return None
    for item in environ.split(b"\0"):
        if item.startswith(b"HOME="):
            value = item[5:].decode("utf-8", "replace")
            return Path(value) if value else None
    return None


def facts_of(pid: int, argv: list[str] | None = None) -> ProcessFacts | None:
    """The facts of one live process, or None when it is gone or cannot be read."""
    entry = _PROC / str(pid)
    try:
        uid = entry.stat().st_uid
        if argv is None:
            argv = [part.decode("utf-8", "replace") for part in (entry / "cmdline").read_bytes().split(b"\0")]
    except OSError:
        return None
    try:
        cwd: Path | None = Path(os.readlink(entry / "cwd"))
    except OSError:
        cwd = None
    parts = [part.strip() for part in argv if part.strip()]  # a renamed process pads its title
    return ProcessFacts(pid, parts, cwd, uid=uid, home=_home(entry), started=_started(pid))


def scan_processes() -> list[ProcessFacts]:
    """The readable processes that mention nanobot on their command line (not this one)."""
    if not _PROC.is_dir():
        return []
    me = os.getpid()
    found: list[ProcessFacts] = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"nanobot" not in raw:
            continue
        facts = facts_of(int(entry.name), [part.decode("utf-8", "replace") for part in raw.split(b"\0")])
        if facts is not None:
            found.append(facts)
    return found


def installed_version(executable: str | Path | None) -> str | None:
    """The nanobot-ai version installed beside an executable (`<venv>/bin/…` → its site-packages)."""
    if not executable:
        return None
    path = Path(executable)
    if not path.is_absolute():
        return None
    for lib in (path.parent.parent / "lib", path.parent.parent / "Lib"):
        try:
            for site in lib.glob("python*/site-packages"):
                for entry in site.iterdir():
                    match = _DIST_INFO.match(entry.name)
                    if match:
                        return match.group("version")
        except OSError:
            continue
    return None


__all__ = ["ProcessFacts", "facts_of", "installed_version", "scan_processes", "start_ticks"]
