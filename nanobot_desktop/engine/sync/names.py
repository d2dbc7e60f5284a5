"""Recognising a sync tool's conflict copy by its name, and naming the device it came from.

Each tool keeps one version under the file's name and renames the other (facts from each tool's
documentation and, for Syncthing, from running two instances on one machine):

- Syncthing: `notes.sync-conflict-20261128-101500-ABCDEFG.md` (date, time, the first 7 characters of
  the other device's id);
- Dropbox: `notes (Ann's conflicted copy 2026-11-28).md`, also without a name and with ` (1)` counters;
- Nextcloud and ownCloud: `notes (conflicted copy 2026-11-28 101500).md`, older clients
  `notes_conflict-20261128-101500.md`;
- OneDrive: `notes-LAPTOP-7Q2.md`, the computer's name after a hyphen (optionally `-2`, `-3`): a name any
  person could choose, so it counts only when the original file is right beside it and the suffix is
  a Windows computer name (capitals, digits, hyphens, at most 15 characters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

SYNCTHING = "Syncthing"
DROPBOX = "Dropbox"
NEXTCLOUD = "Nextcloud"
ONEDRIVE = "OneDrive"


@dataclass(frozen=True)
class ConflictName:
    """What a conflict copy's name says: the file it is a version of, the device and the tool."""

    original_name: str
    tool: str
    device: str = ""  # "" when the tool does not name it (Nextcloud, Dropbox's short form)
    when: datetime | None = None
    device_name: str = ""  # the name the person gave that device, when the sync tool tells (Syncthing)

    def describe_device(self) -> str:
        """The device as a person reads it: "laptop (Syncthing)", "device ABCDEFG (Syncthing)", or the tool."""
        if self.device_name:
            return f"{self.device_name} ({self.tool})"
        if not self.device:
            return f"another device ({self.tool})"
        return f"device {self.device} ({self.tool})" if self.tool == SYNCTHING else f"{self.device} ({self.tool})"


# The suffix that ends the name: `.md`, `.jsonl`, `.tar.gz` would be read as `.gz` (good enough: what
# matters is that the original name is put back together exactly).
_EXT = r"(?P<ext>\.[^.\s()]+)?"
_SYNCTHING = re.compile(r"^(?P<stem>.+?)\.sync-conflict-(?P<date>\d{8})-(?P<time>\d{6})-(?P<device>[A-Z0-9]{7})" + _EXT + "$")
_DROPBOX = re.compile(r"^(?P<stem>.+?) \((?:(?P<device>[^()]+?)'s )?conflicted copy(?: (?P<date>\d{4}-\d{2}-\d{2}))?"
                      r"(?: \(\d+\))?\)" + _EXT + "$")
_NEXTCLOUD = re.compile(r"^(?P<stem>.+?) \(conflicted copy (?P<date>\d{4}-\d{2}-\d{2}) (?P<time>\d{6})\)" + _EXT + "$")
_OWNCLOUD_OLD = re.compile(r"^(?P<stem>.+?)_conflict-(?P<date>\d{8})-(?P<time>\d{6})" + _EXT + "$")
_ONEDRIVE = re.compile(r"^(?P<stem>.+?)-(?P<device>[A-Z0-9][A-Z0-9-]{0,14}?)(?:-(?P<counter>\d{1,3}))?" + _EXT + "$")


def _stamp(date: str | None, time: str | None) -> datetime | None:
    if not date:
        return None
    digits = date.replace("-", "") + (time or "000000")
    try:
        return datetime.strptime(digits, "%Y%m%d%H%M%S")
    except ValueError:
        return None


def parse_conflict_name(name: str, siblings: set[str] | None = None) -> ConflictName | None:
    """The conflict copy `name` describes, or None when it is an ordinary file name.

    `siblings` are the names in the same folder: a OneDrive-style name counts only when its original is
    among them (without them, OneDrive names are never recognised).
    """
    # Each of these four names its copy with "conflict": the substring test spares every listing of
    # 20,000 sessions four regular expressions a name (~30 ms of its executor's CPU).
    for pattern, tool in ((_SYNCTHING, SYNCTHING), (_NEXTCLOUD, NEXTCLOUD), (_DROPBOX, DROPBOX),
                          (_OWNCLOUD_OLD, NEXTCLOUD)) if "conflict" in name else ():
        match = pattern.match(name)
        if match is None:
            continue
        groups = match.groupdict()
        when = _stamp(groups.get("date"), groups.get("time"))
        if groups.get("date") and when is None:
            return None  # the shape of a copy with no real date in it: an ordinary name after all
        original = match["stem"] + (match["ext"] or "")
        return ConflictName(original_name=original, tool=tool, device=(groups.get("device") or "").strip(), when=when)
    if siblings:
        match = _ONEDRIVE.match(name)
        if match is not None and not match["device"].endswith("-"):
            original = match["stem"] + (match["ext"] or "")
            if original in siblings and original != name:
                return ConflictName(original_name=original, tool=ONEDRIVE, device=match["device"])
    return None


def conflict_copies(folder: Path, suffix: str = "") -> list[tuple[Path, ConflictName]]:
    """Every conflict copy directly in `folder` (only names ending in `suffix`, when given), oldest first."""
    try:
        names = {entry.name for entry in folder.iterdir() if entry.is_file()}
    except OSError:
        return []
    found: list[tuple[Path, ConflictName]] = []
    for name in sorted(names):
        if suffix and not name.endswith(suffix):
            continue
        parsed = parse_conflict_name(name, names)
        if parsed is not None:
            found.append((folder / name, parsed))
    found.sort(key=lambda item: (item[1].when or datetime.min, item[0].name))
    return found
