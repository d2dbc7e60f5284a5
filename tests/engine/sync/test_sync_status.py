"""Finding the person's Syncthing for the workspace from its config.xml, and nothing when there is none."""

from __future__ import annotations

from pathlib import Path

from nanobot_desktop.engine.sync.syncthing import find_api

CONFIG = """<configuration version="36">
    <folder id="abcd-1234" label="Notes" path="{path}" type="sendreceive"><device id="{me}"></device><device id="{peer}"></device></folder>
    <device id="{me}" name="this one"></device>
    <device id="{peer}" name="laptop"></device>
    <gui enabled="true" tls="false"><address>{address}</address><apikey>k3y</apikey></gui>
</configuration>"""


def _config(tmp_path: Path, folder: Path, address: str = "127.0.0.1:8384") -> Path:
    path = tmp_path / "config.xml"
    path.write_text(CONFIG.format(path=folder, me="AAAAAAA-1", peer="BBBBBBB-2", address=address))
    return path


def test_the_folder_holding_the_workspace_is_found_with_its_key_and_device_names(tmp_path: Path) -> None:
    shared = tmp_path / "Sync"
    (shared / "nanobot" / "ws").mkdir(parents=True)
    api = find_api(shared / "nanobot" / "ws", _config(tmp_path, shared))
    assert api is not None
    assert (api.base_url, api.api_key, api.folder_id) == ("http://127.0.0.1:8384", "k3y", "abcd-1234")
    assert api.device_names["BBBBBBB-2"] == "laptop"


def test_no_api_for_a_workspace_outside_every_folder_or_a_gui_not_on_loopback(tmp_path: Path) -> None:
    (tmp_path / "Sync").mkdir()
    (tmp_path / "elsewhere").mkdir()
    assert find_api(tmp_path / "elsewhere", _config(tmp_path, tmp_path / "Sync")) is None
    assert find_api(tmp_path / "Sync", _config(tmp_path, tmp_path / "Sync", address="0.0.0.0:8384")) is None
    assert find_api(tmp_path / "Sync", tmp_path / "missing.xml") is None
    (tmp_path / "broken.xml").write_text("<configuration><gui>")
    assert find_api(tmp_path / "Sync", tmp_path / "broken.xml") is None


async def test_the_engine_reports_nothing_without_syncthing(make_engine) -> None:
    engine = make_engine()
    assert engine.sync_status() is None
