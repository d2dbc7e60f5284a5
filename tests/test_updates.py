"""Signed updates end to end: a bundle install of version N, a tufup repository on 127.0.0.1 with N+1.

Each step runs the installed program as a person would (`nanobot-desktop update`, `--version`,
`update --rollback`) and checks the folders on disk; every failure (a tampered archive, expired or
forged metadata, no server) must leave version N in place, working, with one clear sentence.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from nanobot_desktop.updates import bundle
from nanobot_desktop.updates import bundle as bundle_module  # `bundle` is also the PyInstaller fixture
from nanobot_desktop.updates.channel import load_channel
from nanobot_desktop.updates.check import State, check_for_update
from nanobot_desktop.updates.install import Installation, InstallKind
from tests.update_support import make_bundle, update_repo, write_channel

pytestmark = pytest.mark.slow  # each step starts the installed program (about a second each)

OLD, NEW = "0.1.0", "0.1.1"


def run(program: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([str(program), *args], capture_output=True, text=True, env=env, timeout=120)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts}


@pytest.fixture
def channel_and_keys(tmp_path: Path, update_server: tuple[str, Path]) -> tuple[Path, Path, Path]:
    """(channel folder, served repository, keys): a new repository whose keys live in tmp_path."""
    url, served = update_server
    keys = tmp_path / "keys"
    update_repo.open_repository(served, keys)
    channel = write_channel(tmp_path / "channel", url, served / "metadata" / "root.json")
    return channel, served, keys


@pytest.fixture
def installed(tmp_path: Path, channel_and_keys: tuple[Path, Path, Path]) -> Path:
    """Version N installed under tmp_path/apps, and N+1 published on the server."""
    channel, served, keys = channel_and_keys
    app_dir = make_bundle(tmp_path / "apps" / "nanobot-desktop", OLD, channel)
    new_build = make_bundle(tmp_path / "build" / "nanobot-desktop", NEW, channel)
    update_repo.publish_bundle(served, keys, new_build, NEW)
    return app_dir


def test_a_bundle_finds_verifies_and_applies_the_next_version_then_rolls_back(installed: Path) -> None:
    program = bundle.executable(installed)
    assert run(program, "--version").stdout.strip() == f"nanobot-desktop {OLD}"

    checked = run(program, "update")
    assert checked.returncode == 0, checked.stderr
    assert f"Version {NEW} is downloaded and verified" in checked.stdout
    assert bundle.bundle_version(bundle.pending_dir(installed)) == NEW
    assert not bundle.staging_dir(installed).exists()

    started = run(program, "--version")  # the next start puts N+1 in place and runs it
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == f"nanobot-desktop {NEW}"
    assert f"switched from version {OLD} to {NEW}" in started.stderr
    assert not bundle.pending_dir(installed).exists()
    assert bundle.bundle_version(bundle.previous_dir(installed)) == OLD
    again = run(program, "--version")
    assert (again.stdout.strip(), again.stderr) == (f"nanobot-desktop {NEW}", "")

    assert run(program, "update").stdout.strip() == f"nanobot Desktop {NEW} is the newest version."

    rolled = run(program, "update", "--rollback")
    assert rolled.returncode == 0, rolled.stderr
    assert rolled.stdout.strip() == f"Version {OLD} starts the next time you open nanobot Desktop."
    back = run(program, "--version")
    assert back.stdout.strip() == f"nanobot-desktop {OLD}"
    assert bundle.bundle_version(bundle.previous_dir(installed)) == NEW  # and the roll-back can be undone


def _assert_untouched(installed: Path, before: dict[str, bytes], result: subprocess.CompletedProcess[str],
                      sentence: str) -> None:
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and sentence in lines[0], result.stderr
    assert "nothing was changed" in lines[0]
    assert snapshot(installed) == before
    for beside in (bundle.pending_dir(installed), bundle.previous_dir(installed), bundle.staging_dir(installed)):
        assert not beside.exists()
    assert run(bundle.executable(installed), "--version").stdout.strip() == f"nanobot-desktop {OLD}"


def test_a_tampered_archive_is_refused_and_version_n_keeps_working(installed: Path, channel_and_keys) -> None:
    _channel, served, _keys = channel_and_keys
    archive = next((served / "targets").glob(f"*-{NEW}.tar.gz"))
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same length, one byte changed
    archive.write_bytes(bytes(data))
    before = snapshot(installed)
    _assert_untouched(installed, before, run(bundle.executable(installed), "update"),
                      f"The downloaded archive of version {NEW} does not match its signed length and hash")


def test_expired_metadata_is_refused(installed: Path, channel_and_keys) -> None:
    _channel, served, keys = channel_and_keys
    update_repo.resign(served, keys, "timestamp", days=-1)  # validly signed, but expired yesterday
    before = snapshot(installed)
    _assert_untouched(installed, before, run(bundle.executable(installed), "update"),
                      "The update server's signed metadata has expired")


def test_metadata_not_signed_by_the_trusted_keys_is_refused(installed: Path, channel_and_keys) -> None:
    _channel, served, _keys = channel_and_keys
    timestamp = served / "metadata" / "timestamp.json"
    timestamp.write_text(timestamp.read_text(encoding="utf-8").replace('"version": ', '"version": 1', 1), encoding="utf-8")
    before = snapshot(installed)
    _assert_untouched(installed, before, run(bundle.executable(installed), "update"),
                      "The update server's metadata is not signed by the keys this app trusts")


def test_no_server_leaves_version_n_with_one_sentence(tmp_path: Path, channel_and_keys) -> None:
    channel, _served, _keys = channel_and_keys
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    offline = write_channel(tmp_path / "offline", f"http://127.0.0.1:{port}", channel / "root.json")
    app_dir = make_bundle(tmp_path / "apps" / "nanobot-desktop", OLD, offline)
    before = snapshot(app_dir)
    _assert_untouched(app_dir, before, run(bundle.executable(app_dir), "update"),
                      f"Could not reach the update server (127.0.0.1:{port}: connection refused)")


def test_rollback_without_a_kept_version_says_so(tmp_path: Path, channel_and_keys) -> None:
    app_dir = make_bundle(tmp_path / "apps" / "nanobot-desktop", OLD, channel_and_keys[0])
    result = run(bundle.executable(app_dir), "update", "--rollback")
    assert result.returncode == 1
    assert "There is no previous version to roll back to" in result.stderr
    assert run(bundle.executable(app_dir), "--version").stdout.strip() == f"nanobot-desktop {OLD}"


@pytest.mark.parametrize(("kind", "how"), [(InstallKind.DEB, "sudo apt install"), (InstallKind.PIPX, "pipx upgrade"),
                                           (InstallKind.GIT, "git pull")])
def test_a_package_manager_install_is_only_told_how_to_get_it(tmp_path: Path, installed: Path, channel_and_keys,
                                                            kind: InstallKind, how: str) -> None:
    app_dir = tmp_path / "managed"
    app_dir.mkdir()
    outcome = check_for_update(Installation(kind, app_dir), OLD, channel=load_channel(channel_and_keys[0]))
    assert outcome.state is State.AVAILABLE and outcome.new == NEW
    assert how in outcome.sentence()
    assert list(tmp_path.glob("managed*")) == [app_dir] and not any(app_dir.iterdir())


def test_without_root_metadata_the_app_says_it_cannot_check(tmp_path: Path) -> None:
    app_dir = make_bundle(tmp_path / "apps" / "nanobot-desktop", OLD, None)
    result = run(bundle.executable(app_dir), "update")
    assert result.returncode == 1
    assert "built without the release keys' root metadata" in result.stderr


def test_a_copy_without_the_update_library_says_so_in_a_sentence(tmp_path: Path, channel_and_keys,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tufup.client", None)  # as in a bundle built without it: import fails
    outcome = check_for_update(Installation(InstallKind.BUNDLE, tmp_path), OLD, channel=load_channel(channel_and_keys[0]))
    assert outcome.state is State.UNCONFIGURED and not outcome.ok
    assert outcome.sentence().startswith("This copy of nanobot Desktop cannot check for updates: the update library is missing")


def test_the_start_up_of_the_app_does_not_load_the_update_libraries() -> None:
    """tufup, tuf and requests cost 36 MB: only a check loads them (start-up and empty-window RSS are benchmarked)."""
    code = ("import sys; import nanobot_desktop.cli, nanobot_desktop.gui.window.main_window, nanobot_desktop.gui.window.updates; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'tufup', 'tuf', 'requests', 'securesystemslib'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.heavy
@pytest.mark.timeout(1800)  # the PyInstaller build: one to thirteen minutes on two shared cores
def test_the_real_bundle_is_found_verified_applied_and_rolled_back(tmp_path: Path, bundle: Path, channel_and_keys) -> None:
    """The PyInstaller bundle as N+1: an install of an older version switches to it, the frozen app
    (tufup inside the bundle) reports itself current and rolls back through its own start-up switch."""
    from nanobot_desktop import __version__

    channel, served, keys = channel_and_keys
    real = tmp_path / "build" / "nanobot-desktop"
    shutil.copytree(bundle, real, symlinks=True)
    shipped = real / "_internal" / "nanobot_desktop" / "resources" / "updates"
    shutil.copyfile(channel / "channel.json", shipped / "channel.json")  # what build.py --update-root does
    shutil.copyfile(channel / "root.json", shipped / "root.json")
    update_repo.publish_bundle(served, keys, real, __version__)
    older = "0.0.1"
    installed = make_bundle(tmp_path / "apps" / "nanobot-desktop", older, channel)
    program = bundle_module.executable(installed)

    assert f"Version {__version__} is downloaded and verified" in run(program, "update").stdout
    started = run(program, "--version")
    assert started.stdout.strip() == f"nanobot-desktop {__version__}", started.stderr  # the frozen app now
    checked = run(program, "update")
    assert checked.stdout.strip() == f"nanobot Desktop {__version__} is the newest version.", checked.stderr
    assert run(program, "update", "--rollback").returncode == 0
    back = run(program, "--version")  # the frozen app switches and re-executes the older one
    assert back.stdout.strip() == f"nanobot-desktop {older}", back.stderr
