"""Where a workspace's scheduled jobs are kept, by its layout, and moving a store found elsewhere once.

- nanobot 0.1.4.post4 keeps them beside the config: `<config dir>/cron/jobs.json`;
- nanobot 0.3.x keeps them in the workspace: `<workspace>/cron/jobs.json` (with `action.jsonl`), and on
  start moves a `<config dir>/cron/jobs.json` into the workspace when the workspace has none.

The app uses the one store of the workspace's layout. A store it finds only in the other place (its own
older versions wrote `<config dir>/cron/jobs.json` for every workspace) is moved there once: a copy is
left beside the old place as `jobs.json.moved-<time>.bak`, and the log says what moved where. When both
places hold a store, nothing is moved and the log says which one is used.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from nanobot_desktop.engine.layout import WorkspaceLayout
from nanobot_desktop.engine.workspace import atomic_write_bytes

log = logging.getLogger(__name__)

STORE_NAME = "jobs.json"


def cron_store_for(layout: WorkspaceLayout) -> Path:
    """The jobs.json this workspace's layout uses."""
    folder = layout.root if layout.is_v03 else layout.data_dir
    return folder / "cron" / STORE_NAME


def _other_store(layout: WorkspaceLayout) -> Path:
    folder = layout.data_dir if layout.is_v03 else layout.root
    return folder / "cron" / STORE_NAME


def _same(a: Path, b: Path) -> bool:
    return a.resolve(strict=False) == b.resolve(strict=False)


def settle_cron_store(layout: WorkspaceLayout) -> Path:
    """The store to use, after moving one found only in the other layout's place (once, with a backup)."""
    store = cron_store_for(layout)
    stray = _other_store(layout)
    if _same(store, stray) or not stray.is_file():
        return store
    if store.exists():
        log.warning("two job stores: %s is used (the %s keeps its jobs there); %s is left as it is",
                    store, layout.label, stray)
        return store
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = stray.with_name(f"{STORE_NAME}.moved-{stamp}.bak")
    try:
        data = stray.read_bytes()
        atomic_write_bytes(backup, data)
        atomic_write_bytes(store, data)
        stray.unlink()
    except OSError as exc:
        log.error("could not move the job store %s to %s (%s); the jobs there are not used", stray, store,
                  exc.strerror or exc)
        return store
    log.warning("moved the job store %s to %s, where the %s keeps its jobs (a copy is kept as %s)",
                stray, store, layout.label, backup)
    return store


__all__ = ["cron_store_for", "settle_cron_store"]
