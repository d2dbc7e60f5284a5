"""Two real Syncthing instances on this machine, sharing one folder over loopback only.

Recipe: ../shared/reference/real-parts.md. Each instance has its own home, listens and serves its REST
API on 127.0.0.1, knows the other by a static tcp://127.0.0.1 address, and has every way of reaching
outside switched off (global and local discovery, relays, NAT, STUN, usage and crash reports, upgrades).
"""

from __future__ import annotations

import copy
import json
import os
import secrets
import shutil
import socket
import subprocess
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

FOLDER_ID = "nanobot-ws"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def syncthing() -> str:
    found = shutil.which("syncthing")
    if found is None:
        pytest.skip("syncthing is not installed (python3 dev.py test --heavy installs it on Debian)")
    return found


class Instance:
    def __init__(self, home: Path, folder: Path, name: str) -> None:
        self.home, self.folder, self.name = home, folder, name
        self.gui_port, self.listen_port = _free_port(), _free_port()
        self.api_key = secrets.token_hex(16)
        self.device_id = ""
        self.process: subprocess.Popen[bytes] | None = None
        self.env = {**os.environ, "STNOUPGRADE": "1", "STNODEFAULTFOLDER": "1", "HOME": str(home)}

    def generate(self) -> None:
        subprocess.run([syncthing(), "generate", f"--home={self.home}", "--no-default-folder", "--skip-port-probing"],
                       check=True, capture_output=True, env=self.env, timeout=60)
        self.device_id = subprocess.run([syncthing(), "serve", f"--home={self.home}", "--device-id"], check=True,
                                        capture_output=True, text=True, env=self.env, timeout=60).stdout.strip()

    def configure(self, peer: Instance) -> None:
        path = self.home / "config.xml"
        tree = ET.parse(path)
        root = tree.getroot()
        gui = root.find("gui")
        assert gui is not None
        gui.find("address").text = f"127.0.0.1:{self.gui_port}"  # type: ignore[union-attr]
        gui.find("apikey").text = self.api_key  # type: ignore[union-attr]
        options = root.find("options")
        assert options is not None
        settings = {"listenAddress": f"tcp://127.0.0.1:{self.listen_port}", "globalAnnounceEnabled": "false",
                    "localAnnounceEnabled": "false", "relaysEnabled": "false", "natEnabled": "false",
                    "urAccepted": "-1", "crashReportingEnabled": "false", "autoUpgradeIntervalH": "0",
                    "startBrowser": "false", "stunKeepaliveStartS": "0", "stunKeepaliveMinS": "0",
                    "announceLANAddresses": "false", "setLowPriority": "false"}
        for tag, value in settings.items():
            node = options.find(tag)
            if node is None:
                node = ET.SubElement(options, tag)
            node.text = value
        for stun in options.findall("stunServer"):
            options.remove(stun)
        device = ET.SubElement(root, "device", id=peer.device_id, name=peer.name, compression="metadata",
                               introducer="false")
        ET.SubElement(device, "address").text = f"tcp://127.0.0.1:{peer.listen_port}"
        # The folder starts from Syncthing's own defaults: an element left out is zero, not the default (a
        # missing maxConflicts is 0, which overwrites the losing version of a conflict instead of keeping a copy).
        template = root.find("defaults/folder")
        assert template is not None
        folder = copy.deepcopy(template)
        folder.attrib.update(id=FOLDER_ID, label="workspace", path=str(self.folder), fsWatcherDelayS="1")
        for device in folder.findall("device"):
            folder.remove(device)
        for device_id in (self.device_id, peer.device_id):
            ET.SubElement(folder, "device", id=device_id)
        root.insert(0, folder)
        tree.write(path)

    def start(self, log: Path) -> None:
        self.process = subprocess.Popen([syncthing(), "serve", f"--home={self.home}", "--no-browser", "--no-restart",
                                         f"--logfile={log}"], env=self.env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)

    def rest(self, method: str, path: str) -> Any:
        request = urllib.request.Request(f"http://127.0.0.1:{self.gui_port}{path}", method=method,
                                         headers={"X-API-Key": self.api_key})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


class SyncthingPair:
    """`a` and `b` sync `a.folder` and `b.folder` (one folder id); `settle()` waits until they agree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.a = Instance(root / "st-a", root / "machine-a" / "ws", "laptop")
        self.b = Instance(root / "st-b", root / "machine-b" / "ws", "desktop")

    def __enter__(self) -> SyncthingPair:
        for instance in (self.a, self.b):
            instance.folder.mkdir(parents=True, exist_ok=True)
            (instance.folder / ".stfolder").mkdir(exist_ok=True)
            instance.generate()
        self.a.configure(self.b)
        self.b.configure(self.a)
        self.a.start(self.root / "st-a.log")
        self.b.start(self.root / "st-b.log")
        self._wait(lambda: self._connected(), 60, "the two Syncthing instances never connected")
        return self

    def __exit__(self, *exc: object) -> None:
        self.a.stop()
        self.b.stop()

    def _connected(self) -> bool:
        try:
            connections = self.a.rest("GET", "/rest/system/connections")["connections"]
        except OSError:
            return False
        return bool(connections.get(self.b.device_id, {}).get("connected"))

    @staticmethod
    def _wait(check: Any, timeout: float, message: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                return
            time.sleep(0.2)
        raise AssertionError(message)

    def rescan(self) -> None:
        for instance in (self.a, self.b):
            instance.rest("POST", f"/rest/db/scan?folder={FOLDER_ID}")

    def in_sync(self) -> bool:
        """Both idle, nothing needed, each 100 % complete for the other."""
        try:
            for me, peer in ((self.a, self.b), (self.b, self.a)):
                status = me.rest("GET", f"/rest/db/status?folder={FOLDER_ID}")
                if status["state"] != "idle" or status["needTotalItems"] or status.get("pullErrors"):
                    return False
                completion = me.rest("GET", f"/rest/db/completion?folder={FOLDER_ID}&device={peer.device_id}")
                if completion["completion"] < 100 or completion.get("needItems"):
                    return False
        except OSError:
            return False
        return True

    def settle(self, timeout: float = 90) -> None:
        """Rescan now and wait until both sides agree (twice in a row, a second apart)."""
        self.rescan()
        deadline = time.monotonic() + timeout
        agreed = 0
        while time.monotonic() < deadline:
            agreed = agreed + 1 if self.in_sync() else 0
            if agreed >= 3:
                return
            time.sleep(0.5)
        raise AssertionError("the two Syncthing instances did not settle")
