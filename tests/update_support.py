"""A signed update channel on 127.0.0.1 and small bundle installs, for the update tests.

The repository is made by packaging/update_repo.py (tufup) with keys in the test's temporary folder.
A "bundle" here is the layout PyInstaller makes (`nanobot-desktop` beside `_internal/`, holding the
`nanobot_desktop` package and its resources), with the program a Python script that starts the copied
package as PyInstaller's bootloader does (`sys.frozen`, `sys._MEIPASS`, `sys.executable`): what the
update machinery sees is the same, and building it takes a second instead of minutes. The heavy test
in tests/test_updates.py uses a real PyInstaller bundle.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import stop_serving

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "nanobot_desktop"

LAUNCHER = """#!{python}
# The bootloader's part: what PyInstaller sets before the app's code runs.
import sys
from pathlib import Path
from typing import Any

here = Path(__file__).resolve().parent
sys.frozen = True
sys._MEIPASS = str(here / "_internal")
sys.executable = str(here / "nanobot-desktop")
sys.path.insert(0, sys._MEIPASS)
from nanobot_desktop.cli import run

sys.exit(run())
"""


def _load_update_repo() -> Any:  # packaging/update_repo.py, which is not a package
    spec = importlib.util.spec_from_file_location("update_repo", ROOT / "packaging" / "update_repo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


update_repo = _load_update_repo()


def write_channel(folder: Path, url: str, root: Path) -> Path:
    """channel.json naming the loopback server, and the repository's root.json beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "channel.json").write_text(
        f'{{"metadataUrl": "{url}/metadata/", "targetsUrl": "{url}/targets/"}}\n', encoding="utf-8")
    shutil.copyfile(root, folder / "root.json")
    return folder


def make_bundle(folder: Path, version: str, channel: Path | None) -> Path:
    """A bundle folder of `version` carrying the channel (when given) among its resources."""
    internal = folder / "_internal" / "nanobot_desktop"
    shutil.copytree(PACKAGE, internal, ignore=shutil.ignore_patterns("__pycache__"))
    init = internal / "__init__.py"
    text = init.read_text(encoding="utf-8")
    assert '__version__ = "' in text
    init.write_text(text.replace(text.split('__version__ = "')[1].split('"')[0], version, 1), encoding="utf-8")
    if channel is not None:
        shutil.copytree(channel, internal / "resources" / "updates")
    else:
        (internal / "resources").mkdir()
    program = folder / "nanobot-desktop"
    program.write_text(LAUNCHER.format(python=sys.executable), encoding="utf-8")
    program.chmod(0o755)
    return folder


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def update_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(base URL, served folder): an HTTP server on 127.0.0.1 serving the folder's files."""
    served = tmp_path / "served"
    served.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        stop_serving(server)  # server.shutdown() without waiting out serve_forever's 0.5 s poll
        server.server_close()
        thread.join(5)
