"""nanobot 0.3.x's gateway runtime records: `<config dir>/run/gateway.json` (and `gateway.<instance>.json`).

A 0.3.x gateway renames its process `nanobot-gateway`, so its command line no longer says which config or
workspace it serves. It writes them, with its pid, its start time and its process identity (process
group and start ticks), into a record in the `run/` folder beside its config, replaced atomically
under the lock `gateway.json.lock`. The app reads those records (taking the same lock briefly, so it
never reads between two of the gateway's steps) to learn what a running gateway serves and since when.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.background.process_facts import start_ticks

log = logging.getLogger(__name__)

RUN_DIR = "run"
LOCK_WAIT_S = 0.5


@dataclass(frozen=True)
class GatewayRecord:
    """One running gateway as its record says: config None = the default `~/.nanobot/config.json`."""

    path: Path
    pid: int
    config: Path | None
    workspace: Path | None
    started: datetime | None
    executable: str | None

    def config_path(self) -> Path:
        """The config it serves (a default instance's record sits beside its config)."""
        return self.config or self.path.parent.parent / "config.json"


def _read(path: Path) -> dict[str, Any] | None:
    from filelock import FileLock, Timeout

    try:
        try:
            with FileLock(f"{path}.lock", timeout=LOCK_WAIT_S):
                text = path.read_text(encoding="utf-8")
        except Timeout:  # the gateway is mid-transition: its file is replaced atomically, read it anyway
            text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive_as_recorded(data: dict[str, Any]) -> bool:
    """The recorded pid still runs the recorded process (its start ticks match; a reused pid does not)."""
    pid = data.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    ticks = start_ticks(pid)
    if ticks is None:
        return False
    identity = data.get("identity")
    if isinstance(identity, str) and ":" in identity:
        recorded = identity.rsplit(":", 1)[1]
        return not recorded.isdigit() or int(recorded) == ticks
    return True


def _path(value: Any) -> Path | None:
    return Path(value).expanduser() if isinstance(value, str) and value else None


def read_gateway_records(data_dir: Path) -> list[GatewayRecord]:
    """The gateways whose records in `<data_dir>/run/` belong to processes that still run."""
    folder = data_dir / RUN_DIR
    try:
        candidates = sorted(folder.glob("gateway*.json"))
    except OSError:
        return []
    records: list[GatewayRecord] = []
    for path in candidates:
        data = _read(path)
        if data is None or "pid" not in data or not _alive_as_recorded(data):
            continue
        started = None
        if isinstance(data.get("started_at"), str):
            try:
                started = datetime.fromisoformat(data["started_at"])
            except ValueError:
                started = None
        command = data.get("command")
        executable = command[0] if isinstance(command, list) and command and isinstance(command[0], str) else None
        records.append(GatewayRecord(path, int(data["pid"]), _path(data.get("config_path")),
                                     _path(data.get("workspace")), started, executable))
    return records


__all__ = ["GatewayRecord", "read_gateway_records"]
