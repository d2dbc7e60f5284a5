"""Where updates come from and which keys are trusted: the channel that ships with the app.

`resources/updates/channel.json` names the server ({"metadataUrl": ..., "targetsUrl": ...}) and
`resources/updates/root.json` is the TUF root metadata signed by the release keys: the one file an
update's trust starts from. A source checkout has the channel but no root (the release process adds it
to the bundles it builds: packaging/build.py --update-root); without a root the app says it cannot
check rather than trust anything. `NANOBOT_DESKTOP_UPDATE_CHANNEL` names another folder holding both
files (a test or staging channel).
"""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from nanobot_desktop.identity import FOLDER_NAME

CHANNEL_ENV = "NANOBOT_DESKTOP_UPDATE_CHANNEL"
CHANNEL_FILE = "channel.json"
ROOT_FILE = "root.json"


@dataclass(frozen=True)
class Channel:
    metadata_url: str
    targets_url: str
    root: Path
    """The trusted root metadata shipped with the app."""


class ChannelMissing(Exception):
    """No usable channel (no root metadata, or an unreadable channel.json); the text says which."""


def channel_folder() -> Path:
    override = os.environ.get(CHANNEL_ENV)
    if override:
        return Path(override)
    from nanobot_desktop.data import resources_dir

    return resources_dir() / "updates"


def load_channel(folder: Path | None = None) -> Channel:
    folder = channel_folder() if folder is None else folder
    root = folder / ROOT_FILE
    if not root.is_file():
        raise ChannelMissing("This copy of nanobot Desktop was built without the release keys' root metadata, so it "
                             "cannot check for signed updates.")
    try:
        data = json.loads((folder / CHANNEL_FILE).read_text(encoding="utf-8"))
        metadata_url, targets_url = str(data["metadataUrl"]), str(data["targetsUrl"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ChannelMissing(f"The update channel file {folder / CHANNEL_FILE} is missing or malformed ({error}).") from error
    return Channel(metadata_url.rstrip("/") + "/", targets_url.rstrip("/") + "/", root)


def archive_name() -> str:
    """The targets' name for this system's bundle: an archive for another OS or CPU is never offered."""
    machine = (platform.machine() or "unknown").lower().replace("amd64", "x86_64")
    return f"{FOLDER_NAME}-{sys.platform}-{machine}"
