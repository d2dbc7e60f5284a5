"""Living beside a running nanobot CLI (or another nanobot Desktop) on the same workspace.

`nanobot gateway` fires the cron jobs of its config and the heartbeat of its workspace; if the app did
too, every job would run twice. So while such a process runs on the same config or workspace, the app
leaves cron and the heartbeat to it and says so (`BackgroundOwnerChanged`), and warns before the person
sends into a session that process keeps in memory (the CLI rewrites a whole session file from its
cache, erasing lines another program appended). An interactive `nanobot agent` runs no cron or
heartbeat, but holds its session (`-s`, default `cli:direct`).

How a process is recognised: it is the same user's (another user's serves another user's files), and
its command line (Linux: /proc/<pid>/cmdline) runs `nanobot` with the `gateway` or `agent` command — or
is the title a 0.3.x process gives itself, `nanobot-gateway` / `nanobot-agent`. What it serves is read
from what that process itself would use: its `--config`/`--workspace` (relative to its cwd, `~` as
its HOME), else a 0.3.x gateway's runtime record (`<config dir>/run/gateway.json`, gateway_record.py),
else the default config of *its* HOME; all compared as resolved paths with ours. Which version it runs
and since when are read from the package beside its executable and its record (or /proc).
For the reverse direction — two app instances on one workspace with different configs — the instance
that runs cron and the heartbeat holds an OS lock on a file of the app's own (one per workspace, in
the user's cache folder, with its pid and config inside); the other one sees it held and stands by.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from nanobot_desktop.engine.config.paths import keyed_cache_file
from nanobot_desktop.engine.events import BackgroundOwnerChanged, EventBus
from nanobot_desktop.engine.background.gateway_record import GatewayRecord, read_gateway_records
from nanobot_desktop.engine.background.process_facts import ProcessFacts, facts_of, installed_version, scan_processes
from nanobot_desktop.engine.sessions.key import SessionKey

log = logging.getLogger(__name__)

CHECK_INTERVAL_S = 3.0  # a gateway started meanwhile is seen within this (plus one scan)
APP_SESSION_CHANNELS = ("desktop",)


@dataclass(frozen=True)
class OtherProcess:
    """A process using our config or workspace: `command` is "gateway", "agent" or "desktop"."""

    pid: int
    command: str
    config: Path | None
    workspace: Path | None
    session: str | None = None  # an interactive agent's session key
    version: str | None = None  # the nanobot version it runs, when it can be told
    since: datetime | None = None  # when it started

    @property
    def runs_background(self) -> bool:
        return self.command in ("gateway", "desktop")

    def describe(self) -> str:
        """e.g. "nanobot gateway 0.3.5 (pid 4242) since 09:14" — which process, which version, since when."""
        what = {"gateway": "nanobot gateway", "agent": "nanobot agent", "desktop": "another nanobot Desktop"}
        version = f" {self.version}" if self.version else ""
        since = f" since {self.since.astimezone().strftime('%H:%M')}" if self.since else ""
        return f"{what.get(self.command, self.command)}{version} (pid {self.pid}){since}"


def _resolved(path: str | Path | None) -> Path | None:
    if path is None:
        return None
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return Path(path).expanduser().absolute()


def _expand(path: Path | None, home: Path | None) -> Path | None:
    """`~` as another process's HOME would expand it (ours when its HOME is unknown)."""
    if path is None or home is None:
        return path
    text = str(path)
    return Path(str(home) + text[1:]) if text == "~" or text.startswith("~/") else path


def _option(argv: list[str], *names: str) -> str | None:
    for index, token in enumerate(argv):
        for name in names:
            if token == name and index + 1 < len(argv):
                return argv[index + 1]
            if name.startswith("--") and token.startswith(name + "="):
                return token.split("=", 1)[1]
    return None


RENAMED = {"nanobot-gateway": "gateway", "nanobot-agent": "agent"}  # the titles 0.3.x processes take


def parse_nanobot_command(argv: list[str], cwd: Path | None = None, home: Path | None = None,
                          ) -> tuple[str, Path | None, Path | None, str | None] | None:
    """(command, config, workspace, session) when `argv` runs the nanobot CLI's gateway or an
    interactive agent; None for anything else (including `nanobot agent -m …`, one turn and gone).

    A 0.3.x process renamed to `nanobot-gateway`/`nanobot-agent` has no arguments left to read: its
    config and workspace come back None (its runtime record or its HOME's default config tell).
    """
    if argv and os.path.basename(argv[0]) in RENAMED and len(argv) == 1:
        command = RENAMED[os.path.basename(argv[0])]
        return command, None, None, "cli:direct" if command == "agent" else None
    start = None
    for index, token in enumerate(argv):
        base = os.path.basename(token).lower()
        if base in ("nanobot", "nanobot.exe") or (token == "-m" and index + 1 < len(argv) and argv[index + 1] == "nanobot"):
            start = index + (2 if token == "-m" else 1)
            break
    if start is None:
        return None
    rest = argv[start:]
    found = next((t for t in rest if not t.startswith("-")), None)
    if found not in ("gateway", "agent"):
        return None
    command = str(found)
    if command == "agent" and _option(rest, "-m", "--message") is not None:
        return None

    def local(value: str | None) -> Path | None:
        if value is None:
            return None
        if home is not None and (value == "~" or value.startswith("~/")):
            value = str(home) + value[1:]  # its HOME, not ours
        path = Path(value).expanduser()
        return _resolved(path if path.is_absolute() or cwd is None else cwd / path)

    session = _option(rest, "-s", "--session") or ("cli:direct" if command == "agent" else None)
    return command, local(_option(rest, "-c", "--config")), local(_option(rest, "-w", "--workspace")), session


def _lock_path(workspace: Path) -> Path:
    resolved = _resolved(workspace)
    assert resolved is not None  # a path given resolves (or is made absolute)
    return keyed_cache_file("locks", "workspace", resolved, ".lock")


class Coexistence:
    """Knows which other process (if any) runs cron and the heartbeat for our config or workspace."""

    def __init__(self, config_path: Path, workspace: Path, workspace_of: Callable[[Path], Path | None],
                 bus: EventBus | None = None,
                 scan: Callable[[], Iterable[ProcessFacts | tuple[int, list[str], Path | None]]] = scan_processes,
                 ) -> None:
        self.config_path = _resolved(config_path) or config_path
        self.workspace = _resolved(workspace) or workspace
        self._workspace_of = workspace_of  # the workspace another config names (read only when needed)
        self._bus = bus
        self._scan = scan
        self._others: list[OtherProcess] = []
        self._reason: str | None = None
        self._lock_file: IO[str] | None = None
        self._task: asyncio.Task[None] | None = None

    # --- what the services and views ask -------------------------------------------------------------

    @property
    def others(self) -> list[OtherProcess]:
        return list(self._others)

    def background_owner(self) -> str | None:
        """Why the app does not fire cron jobs and the heartbeat now (None: it does)."""
        return self._reason

    def holder_of(self, session_key: str) -> str:
        """Which other process may hold `session_key` in memory ("" when none is known to)."""
        channel = SessionKey.parse(session_key).channel
        for other in self._others:
            if (other.command == "agent" and other.session == session_key) or (
                    other.command == "gateway" and channel not in APP_SESSION_CHANNELS):
                return other.describe()
        return ""

    def scan_now(self) -> None:
        """Look at the running processes once, without taking the app's workspace lock (a one-shot
        command asks only whether a session is held; it runs no background work)."""
        self._others = self._collect()

    def session_risk(self, session_key: str) -> str | None:
        """Why sending into `session_key` now may be lost: another program may hold it in memory."""
        channel = SessionKey.parse(session_key).channel
        for other in self._others:
            if other.command == "agent" and other.session == session_key:
                return (f"{other.describe()} has this session open: it rewrites the whole file from its memory, "
                        "so what you send here may be erased when it saves.")
            if other.command == "gateway" and channel not in APP_SESSION_CHANNELS:
                return (f"{other.describe()} serves this workspace and may hold this session in memory: its next "
                        "save can erase what you send here.")
        return None

    def session_warning(self, session_key: str) -> str | None:
        """The chat's warning for sending into `session_key` while another program may hold it in memory."""
        risk = self.session_risk(session_key)
        return None if risk is None else (f"{risk} Press Send again to send anyway, or start a new chat "
                                          "(which it does not hold) to continue there.")

    # --- checking --------------------------------------------------------------------------------------

    def _matches(self, config: Path, workspace: Path | None, home: Path | None = None) -> bool:
        if config == self.config_path:
            return True
        if workspace is None:  # the config's own workspace, its `~` being that process's HOME
            workspace = _resolved(_expand(self._workspace_of(config), home))
        return workspace is not None and workspace == self.workspace

    @staticmethod
    def _default_config(home: Path | None) -> Path:
        from nanobot_desktop.engine.config.paths import default_config_path

        return (home / ".nanobot" / "config.json") if home is not None else default_config_path()

    def _collect(self) -> list[OtherProcess]:
        """The same user's CLI processes on our config or workspace (reads /proc: run it off the event loop)."""
        records = {record.pid: record for record in read_gateway_records(self.config_path.parent)}
        others: list[OtherProcess] = []
        for facts in map(ProcessFacts.of, self._scan()):
            if not facts.mine:
                continue
            parsed = parse_nanobot_command(facts.argv, facts.cwd, facts.home)
            if parsed is None:
                continue
            command, config, workspace, session = parsed
            record = records.pop(facts.pid, None)
            if record is None and command == "gateway" and facts.home is not None:
                record = next((r for r in read_gateway_records(facts.home / ".nanobot") if r.pid == facts.pid), None)
            other = self._other(facts, command, config, workspace, session, record)
            if other is not None:
                others.append(other)
        for record in records.values():  # a recorded gateway the scan did not show (its command line unreadable)
            seen = facts_of(record.pid)
            if seen is not None and seen.mine and all(o.pid != record.pid for o in others):
                other = self._other(seen, "gateway", None, None, None, record)
                if other is not None:
                    others.append(other)
        return others

    def _other(self, facts: ProcessFacts, command: str, config: Path | None, workspace: Path | None,
               session: str | None, record: GatewayRecord | None) -> OtherProcess | None:
        """The process as an OtherProcess when it serves our config or workspace, else None."""
        version = next((v for v in map(installed_version, facts.argv[:2]) if v), None)
        since = facts.started
        if record is not None:
            config = config or _resolved(record.config_path())
            workspace = workspace or _resolved(record.workspace)
            since = record.started or since
            version = version or installed_version(record.executable)
        if version is None and facts.argv and os.path.basename(facts.argv[0]) in RENAMED:
            version = "0.3"
        config = config or _resolved(self._default_config(facts.home))
        if config is None or not self._matches(config, workspace, facts.home):
            return None
        return OtherProcess(facts.pid, command, config, workspace, session, version, since)

    def check(self, found: list[OtherProcess] | None = None) -> bool:
        """Look again (or adopt `found`); publishes BackgroundOwnerChanged and returns True when the
        answer changed. Call it on the event loop's thread: subscribers are GUI code."""
        others = self._collect() if found is None else list(found)
        holder = self._lock_holder()
        if holder is not None:
            others.append(holder)
        self._others = others
        runner = next((o for o in others if o.runs_background), None)
        reason = (f"{runner.describe()} runs the heartbeat and scheduled jobs of this workspace; "
                  "the app leaves them to it until it exits") if runner else None
        if reason == self._reason:
            return False
        self._reason = reason
        log.info("%s", reason or "no other program runs the heartbeat and scheduled jobs now: the app runs them")
        if self._bus is not None:
            self._bus.publish(BackgroundOwnerChanged("", owner=reason))
        return True

    # --- the app's own lock ------------------------------------------------------------------------------

    def _lock_holder(self) -> OtherProcess | None:
        """None when this instance holds (or could take) the workspace lock, else who holds it."""
        if self._lock_file is not None:
            return None
        try:
            import fcntl
        except ImportError:  # Windows: no lock; the process check still works where /proc exists
            return None
        path = _lock_path(self.workspace)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held open while we own the lock
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            fields = handle.read().split("\n")
            handle.close()
            pid = int(fields[0]) if fields and fields[0].isdigit() else 0
            config = Path(fields[1]) if len(fields) > 1 and fields[1] else None
            return OtherProcess(pid, "desktop", config, self.workspace)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n{self.config_path}\n")
        handle.flush()
        self._lock_file = handle
        return None

    def release(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()  # closing releases the flock
            self._lock_file = None

    async def start(self, interval_s: float = CHECK_INTERVAL_S) -> None:
        self.check()
        if self._task is None:
            self._task = asyncio.create_task(self._watch(interval_s), name="coexistence")

    async def _watch(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                self.check(await asyncio.to_thread(self._collect))
            except Exception:  # a scan error must never stop the app's services for good
                log.exception("checking for other nanobot processes failed")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self.release()


__all__ = ["Coexistence", "OtherProcess", "parse_nanobot_command", "scan_processes"]
