"""What the person's own Syncthing says about the workspace's folder: in sync with whom, or what is pending.

Read-only, over Syncthing's REST API on the address and with the API key its own config.xml names (the
same machine, the same user). Nothing breaks when Syncthing is absent, stopped or answers oddly: the
status is then simply unknown (None). Also names the other devices, so a conflict copy's 7-character
device id can be shown as the name the person gave that machine.
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.parse
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.sync.names import SYNCTHING, ConflictName
from nanobot_desktop.identity import MACOS_SUPPORT

log = logging.getLogger(__name__)

# urllib.request (with http.client and email) and ElementTree are imported where they are used: the
# status bar asks for the status at every start, and most machines have no Syncthing config at all
# (~1.3 MB resident the empty window would carry for nothing). urllib's URLError is an OSError.

REQUEST_TIMEOUT_S = 2.0


def config_candidates() -> list[Path]:
    """Where Syncthing keeps config.xml: $STHOMEDIR, then the state and config folders it has used."""
    home = Path.home()
    found = [Path(os.environ["STHOMEDIR"]) / "config.xml"] if os.environ.get("STHOMEDIR") else []
    state = Path(os.environ.get("XDG_STATE_HOME") or home / ".local" / "state")
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    found += [state / "syncthing" / "config.xml", config / "syncthing" / "config.xml",
              home.joinpath(*MACOS_SUPPORT, "Syncthing", "config.xml")]
    if os.environ.get("LOCALAPPDATA"):
        found.append(Path(os.environ["LOCALAPPDATA"]) / "Syncthing" / "config.xml")
    return found


@dataclass(frozen=True)
class SyncthingApi:
    """The REST address and key of one Syncthing, and the folder (id, path) holding the workspace."""

    base_url: str
    api_key: str
    folder_id: str
    folder_path: Path
    device_names: dict[str, str] = field(default_factory=dict)  # device id → its name

    def my_id(self) -> str:
        """This machine's device id, as its Syncthing says ("" when it does not answer)."""
        try:
            return str(self.get("/rest/system/status").get("myID", ""))
        except (OSError, ValueError, AttributeError):
            return ""

    def get(self, path: str) -> Any:
        import urllib.request

        request = urllib.request.Request(self.base_url + path, headers={"X-API-Key": self.api_key})
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:  # loopback only
            return json.loads(response.read() or b"null")


def find_api(workspace: Path, config_file: Path | None = None) -> SyncthingApi | None:
    """Syncthing's API for the folder that holds `workspace`, read from its config.xml; None when there
    is no Syncthing, no folder holds the workspace, or its GUI is not on this machine's loopback."""
    try:
        target = workspace.resolve()
    except OSError:
        return None
    for path in ([config_file] if config_file else config_candidates()):
        if not path.is_file():
            continue
        import xml.etree.ElementTree as ET

        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            continue
        gui = root.find("gui")
        address = gui.findtext("address", "") if gui is not None else ""
        key = gui.findtext("apikey", "") if gui is not None else ""
        host = address.rpartition(":")[0].strip("[]")
        if not key or host not in ("127.0.0.1", "localhost", "::1"):
            continue  # the status is read only from this machine's own loopback
        scheme = "https" if gui is not None and gui.get("tls") == "true" else "http"
        names = {d.get("id", ""): d.get("name", "") for d in root.findall("device")}
        for folder in root.findall("folder"):
            folder_path = Path(os.path.expanduser(folder.get("path", "")))
            try:
                folder_path = folder_path.resolve()
            except OSError:
                continue
            if target == folder_path or folder_path in target.parents:
                return SyncthingApi(f"{scheme}://{address}", key, folder.get("id", ""), folder_path, names)
    return None


def name_device(conflict: ConflictName, folder: Path) -> ConflictName:
    """`conflict` with the device's name filled in from the person's Syncthing config, when it knows the
    device (a Syncthing copy names only the first 7 characters of its id); unchanged otherwise."""
    if conflict.tool != SYNCTHING or not conflict.device or conflict.device_name:
        return conflict
    api = find_api(folder)
    if api is None:
        return conflict
    for device_id, name in api.device_names.items():
        if device_id.replace("-", "").startswith(conflict.device) and name:
            # A copy names the device that made the version that lost: often this machine itself.
            if device_id == api.my_id():
                return replace(conflict, device_name=f"this machine ({name})")
            return replace(conflict, device_name=name)
    return conflict


@dataclass(frozen=True)
class SyncStatus:
    """One line for the status bar and the devices behind it."""

    text: str
    in_sync: bool
    devices: tuple[str, ...] = ()


def _ago(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    return f"{int(seconds // 3600)} h ago"


def _parse_time(text: str) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (TypeError, ValueError):
        return None


def read_status(api: SyncthingApi, now: float | None = None) -> SyncStatus | None:
    """Ask Syncthing (blocking, up to a few seconds: call it off the event loop); None when it does not answer."""
    now = time.time() if now is None else now
    folder = urllib.parse.quote(api.folder_id)
    try:
        config = api.get(f"/rest/config/folders/{folder}")
        me = api.get("/rest/system/status").get("myID", "")
        connections = api.get("/rest/system/connections").get("connections", {})
        status = api.get(f"/rest/db/status?folder={folder}")
        peers = [d.get("deviceID", "") for d in config.get("devices", []) if d.get("deviceID") not in ("", me)]
        pending = 0
        for peer in peers:
            completion = api.get(f"/rest/db/completion?folder={folder}&device={urllib.parse.quote(peer)}")
            pending += int(completion.get("needItems", 0) or 0)
    except (OSError, ValueError, AttributeError, TypeError) as error:
        log.debug("Syncthing did not answer: %s", error)
        return None
    names = tuple(api.device_names.get(peer) or peer[:7] for peer in peers)
    online = [api.device_names.get(p) or p[:7] for p in peers if connections.get(p, {}).get("connected")]
    if not peers:
        return SyncStatus("Syncthing: this folder is shared with no other device", False)
    need = int(status.get("needTotalItems", 0) or 0)
    if not online:
        return SyncStatus(f"Syncthing: {', '.join(names)} not connected", False, names)
    if status.get("state") not in ("idle", None) or need or pending:
        waiting = need + pending
        items = f"{waiting} item{'s' if waiting != 1 else ''}" if waiting else "changes"
        return SyncStatus(f"Syncthing: syncing {items} with {', '.join(online)}", False, names)
    changed = _parse_time(str(status.get("stateChanged", "")))
    when = f" · {_ago(now - changed)}" if changed else ""
    return SyncStatus(f"In sync with {', '.join(online)}{when}", True, names)
