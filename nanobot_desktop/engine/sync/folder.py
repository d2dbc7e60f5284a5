"""Is the workspace inside a synced folder, and keeping the app's per-machine files out of the sync.

A sync tool marks the root of what it syncs: Syncthing with a `.stfolder` folder, Dropbox with `.dropbox`,
Nextcloud and ownCloud with their `.sync_*.db` journal. The workspace may be that root or any folder under
it. In a Syncthing folder the app adds its own lines to the root's `.stignore` (Syncthing's ignore file)
for the files that belong to one machine: session-file locks and the app's half-written temporary files.
It appends one marked block and never changes a line the person wrote.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from nanobot_desktop.engine.workspace import atomic_write_text

log = logging.getLogger(__name__)

SYNCTHING_MARKER = ".stfolder"
DROPBOX_MARKERS = (".dropbox", ".dropbox.cache")
BLOCK_START = "// nanobot Desktop: files of one machine, never synced (added by the app; keep this block)"
BLOCK_END = "// end of nanobot Desktop's block"
# Syncthing's pattern syntax: `(?d)` lets Syncthing delete them when they block removing a folder.
IGNORED = ["(?d)**/.session-files.lock", "(?d)**/.workspace-migration.lock", "(?d)**/.*.tmp"]


@dataclass(frozen=True)
class SyncedFolder:
    """The root of the synced folder the workspace is in, and which tool syncs it."""

    root: Path
    tool: str


def synced_folder(workspace: Path) -> SyncedFolder | None:
    """The nearest synced folder root at or above `workspace`, or None."""
    try:
        start = workspace.resolve()
    except OSError:
        return None
    for folder in (start, *start.parents):
        try:
            if (folder / SYNCTHING_MARKER).is_dir():
                return SyncedFolder(folder, "Syncthing")
            if any((folder / marker).exists() for marker in DROPBOX_MARKERS):
                return SyncedFolder(folder, "Dropbox")
            if any(folder.glob(".sync_*.db")) or any(folder.glob("._sync_*.db")):
                return SyncedFolder(folder, "Nextcloud")
        except OSError:
            return None
    return None


def ensure_stignore(root: Path) -> bool:
    """Append the app's block to `<root>/.stignore` when it is not there; True when it was added.

    The person's lines stay as they are, in their order; a file that cannot be read as text is left alone.
    """
    path = root / ".stignore"
    try:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as error:
        log.warning("not adding nanobot Desktop's lines to %s: %s", path, error)
        return False
    if BLOCK_START in current:
        return False
    prefix = current if not current or current.endswith("\n") else current + "\n"
    atomic_write_text(path, prefix + "\n".join([BLOCK_START, *IGNORED, BLOCK_END]) + "\n")
    log.info("added the app's per-machine files to %s", path)
    return True
