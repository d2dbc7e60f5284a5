"""Which machine runs the heartbeat and the scheduled jobs of a workspace that several machines share.

A sync tool carries files, not locks, so the machines agree through files only, each writing nothing but
its own: `<workspace>/.nanobot-desktop/machines/<machine id>.json` says "this machine, named so, was
running at <time>" and is rewritten every `beat_s`; `<workspace>/.nanobot-desktop/background.json` names
the machine the person chose in Settings (written only when they choose). Every machine reads the same
files and applies the same rule, so all of them reach the same answer without talking to each other:

- the chosen machine runs the work while it has been seen within `takeover_s`;
- otherwise (none chosen, or the chosen one silent) the machine with the smallest id among those seen
  within `takeover_s` runs it; this machine always counts as seen.

While the machines cannot see each other's files (the sync is broken or one is offline), each one sees the
other fall silent and, after `takeover_s`, runs the work itself: a reminder may then come on both, which is
better than on none. The machine id and name live outside the workspace (the app's state folder), so a
copied or synced workspace never makes two machines one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nanobot_desktop.engine.workspace import atomic_write_text

log = logging.getLogger(__name__)

APP_FOLDER = ".nanobot-desktop"
BEAT_S = 60.0
TAKEOVER_S = 300.0


def state_dir() -> Path:
    """The app's per-machine state folder (never synced): $XDG_STATE_HOME/nanobot-desktop."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "nanobot-desktop"


def this_machine_id(folder: Path | None = None) -> str:
    """A random id made once per machine (per user), kept in the state folder."""
    path = (folder or state_dir()) / "machine-id"
    try:
        text = path.read_text(encoding="utf-8").strip()
        if len(text) == 32 and all(c in "0123456789abcdef" for c in text):
            return text
    except OSError:
        pass
    new = secrets.token_hex(16)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, new + "\n")
    return new


@dataclass(frozen=True)
class Machine:
    """One machine that uses the workspace, as its own file says."""

    machine_id: str
    name: str
    seen: float  # epoch seconds of its last beat

    def describe(self, now: float) -> str:
        ago = max(0, int(now - self.seen))
        when = f"{ago} s ago" if ago < 120 else f"{ago // 60} min ago"
        return f"{self.name} (seen {when})"


class Machines:
    """This machine's beat, the other machines' files, and the rule that picks the runner (see module)."""

    def __init__(self, workspace: Path, machine_id: str | None = None, name: str | None = None,
                 takeover_s: float = TAKEOVER_S, beat_s: float = BEAT_S, clock: Callable[[], float] = time.time) -> None:
        self.folder = workspace / APP_FOLDER
        self.beat_s = beat_s
        self.machine_id = machine_id or this_machine_id()
        self.name = name or socket.gethostname() or "this machine"
        self.takeover_s = takeover_s
        self._clock = clock

    @property
    def _own_file(self) -> Path:
        return self.folder / "machines" / f"{self.machine_id}.json"

    def beat(self) -> None:
        """Say "this machine is running" (atomically; the sync tool carries it to the others)."""
        record = {"id": self.machine_id, "name": self.name, "seen": round(self._clock(), 3)}
        self._own_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self._own_file, json.dumps(record) + "\n")

    def leave(self) -> None:
        """This machine stops (the app quits): the others may take over at once, not after `takeover_s`."""
        try:
            record = json.loads(self._own_file.read_text(encoding="utf-8"))
            record["seen"] = 0
            atomic_write_text(self._own_file, json.dumps(record) + "\n")
        except (OSError, ValueError):
            pass

    def known(self) -> list[Machine]:
        """Every machine with a readable file, this one included (with its current name), by id."""
        found: dict[str, Machine] = {}
        folder = self.folder / "machines"
        try:
            paths = sorted(folder.glob("*.json"))
        except OSError:
            paths = []
        for path in paths:
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                machine = Machine(str(record["id"]), str(record.get("name") or record["id"][:7]), float(record["seen"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a sync tool's half-copied or conflict file: the next beat rewrites it
            if path.stem == machine.machine_id:
                found[machine.machine_id] = machine
        found[self.machine_id] = Machine(self.machine_id, self.name, self._clock())
        return sorted(found.values(), key=lambda m: m.machine_id)

    def chosen(self) -> str | None:
        """The machine id the person chose to run the background work, if any."""
        try:
            value = json.loads((self.folder / "background.json").read_text(encoding="utf-8")).get("machine")
        except (OSError, ValueError, AttributeError):
            return None
        return value if isinstance(value, str) and value else None

    def choose(self, machine_id: str | None) -> None:
        """The person's choice (None: whichever machine the rule picks)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.folder / "background.json", json.dumps({"machine": machine_id}) + "\n")

    def in_use(self) -> bool:
        """Whether this workspace is shared: it lies in a synced folder, another machine's file is there,
        or the person chose a machine. Only then does this machine beat (an unsynced workspace gets no
        file of this module)."""
        from nanobot_desktop.engine.sync.folder import synced_folder

        if (self.folder / "background.json").exists():
            return True
        if any(m.machine_id != self.machine_id for m in self.known()):
            return True
        return synced_folder(self.folder.parent) is not None

    def runner(self) -> Machine:
        """The machine that runs the background work now, by the rule every machine applies."""
        now = self._clock()
        alive = [m for m in self.known() if m.machine_id == self.machine_id or now - m.seen <= self.takeover_s]
        chosen = self.chosen()
        for machine in alive:
            if machine.machine_id == chosen:
                return machine
        return alive[0]  # this machine is always alive, so there is one

    def background_owner(self) -> str | None:
        """Why this machine does not run the background work now (None: it does)."""
        runner = self.runner()
        if runner.machine_id == self.machine_id:
            return None
        minutes = max(1, round(self.takeover_s / 60))
        return (f"{runner.describe(self._clock())} runs the heartbeat and scheduled jobs of this synced workspace; "
                f"this machine takes over when it has not been seen for {minutes} min")


async def keep_beating(machines: Machines, report: Callable[[str | None], None], beat_s: float | None = None) -> None:
    """Beat every `beat_s` (default: the machines' own) while the workspace is shared, and `report` the runner's answer whenever it
    changes (the first time too); file work runs off the event loop. Ends only by being cancelled, and
    then says "this machine left" so another takes over at once."""
    last: str | object | None = object()
    try:
        while True:
            try:
                if await asyncio.to_thread(machines.in_use):
                    await asyncio.to_thread(machines.beat)
                owner = await asyncio.to_thread(machines.background_owner)
            except OSError as error:  # a full or read-only disk must not stop the app's services
                log.warning("could not write this machine's file in %s: %s", machines.folder, error)
                owner = None
            if owner != last:
                last = owner
                report(owner)
            await asyncio.sleep(machines.beat_s if beat_s is None else beat_s)
    except asyncio.CancelledError:
        if (machines.folder / "machines" / f"{machines.machine_id}.json").exists():
            machines.leave()
        raise
