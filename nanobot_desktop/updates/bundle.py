"""A bundle install's versions on disk: the installed folder, an update waiting beside it, the one before.

    <parent>/nanobot-desktop/            the version that runs
    <parent>/nanobot-desktop.pending/    verified and unpacked, becomes the installed one at the next start
    <parent>/nanobot-desktop.previous/   the version before the last switch, kept for a roll-back

Every switch is a rename within one folder (atomic on one file system), made at start-up before any of
the app's code that lives in the folder is loaded, and only while no other instance runs from it; the
start then re-executes the new executable. A roll-back moves `.previous` to `.pending`, so it is the
same switch (and the version rolled back from becomes `.previous`: a roll-back can be undone). An
update is unpacked into a hidden staging folder first, so `.pending` only ever holds a whole bundle.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

VERSION_FILE = "nanobot-desktop.version"
"""Inside a pending or previous bundle: its version, for the messages (the executable knows it too)."""
EXECUTABLE = "nanobot-desktop.exe" if os.name == "nt" else "nanobot-desktop"


class BundleProblem(Exception):
    """A switch or roll-back cannot be made; the text says why, and nothing was changed."""


def pending_dir(app_dir: Path) -> Path:
    return app_dir.with_name(app_dir.name + ".pending")


def previous_dir(app_dir: Path) -> Path:
    return app_dir.with_name(app_dir.name + ".previous")


def staging_dir(app_dir: Path) -> Path:
    return app_dir.with_name(f".{app_dir.name}.staging")


def bundle_version(folder: Path) -> str | None:
    """The version written into a pending or previous bundle, or None when it is not known."""
    try:
        return (folder / VERSION_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _write_version(folder: Path, version: str) -> None:
    temporary = folder / f".{VERSION_FILE}.tmp"
    temporary.write_text(version + "\n", encoding="utf-8")
    os.replace(temporary, folder / VERSION_FILE)


def _remove(folder: Path) -> None:
    """Take `folder` out of the way at once (a rename), then delete it; a half-deleted folder never
    sits under a name the app reads."""
    if not folder.exists():
        return
    trash = folder.with_name(f".{folder.name}.removing")
    shutil.rmtree(trash, ignore_errors=True)
    folder.rename(trash)
    shutil.rmtree(trash, ignore_errors=True)


def fresh_staging(app_dir: Path) -> Path:
    """An empty staging folder beside the installed one (the same file system, so the final move is a rename)."""
    staging = staging_dir(app_dir)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    return staging


def stage(app_dir: Path, unpacked: Path, version: str) -> Path:
    """Make the unpacked bundle in `unpacked` (the staging folder) the pending one; an earlier pending
    update is replaced."""
    if not (unpacked / EXECUTABLE).is_file():
        raise BundleProblem(f"the update for version {version} has no {EXECUTABLE} in it")
    _write_version(unpacked, version)
    pending = pending_dir(app_dir)
    _remove(pending)
    unpacked.rename(pending)
    return pending


def stage_rollback(app_dir: Path) -> str:
    """Make the previous version the pending one (it starts next time); returns its version."""
    previous = previous_dir(app_dir)
    if not previous.is_dir():
        raise BundleProblem("There is no previous version to roll back to (none was kept: this copy has not "
                            "been updated yet).")
    version = bundle_version(previous) or "the previous version"
    _remove(pending_dir(app_dir))  # an update waiting to start is dropped: the person asked for the older one
    previous.rename(pending_dir(app_dir))
    return version


def apply_pending(app_dir: Path, running_version: str) -> str | None:
    """Switch to the pending bundle, if there is one: the installed folder becomes `.previous` (with its
    version written in) and the pending one takes its place. Returns the new version, None when nothing
    was pending; raises BundleProblem (with everything as it was) when a rename fails."""
    pending = pending_dir(app_dir)
    if not pending.is_dir():
        return None
    new_version = bundle_version(pending) or "?"
    previous = previous_dir(app_dir)
    try:
        _remove(previous)
        app_dir.rename(previous)
    except OSError as error:
        raise BundleProblem(f"Could not move {app_dir} aside to start version {new_version} "
                            f"({error.strerror or error}); the installed version still runs.") from error
    try:
        pending.rename(app_dir)
    except OSError as error:
        previous.rename(app_dir)
        raise BundleProblem(f"Could not put version {new_version} in place ({error.strerror or error}); "
                            "the installed version still runs.") from error
    try:
        _write_version(previous, running_version)
    except OSError:
        pass  # only a message's detail is lost
    return new_version


def executable(app_dir: Path) -> Path:
    """The bundle's program (what the start re-executes after a switch)."""
    return app_dir / EXECUTABLE
