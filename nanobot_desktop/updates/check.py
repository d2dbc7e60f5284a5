"""One update check against the signed channel, with tufup (TUF-verified metadata and archives).

Blocking (tufup downloads with requests): callers run `check_for_update` in an executor, never on the
GUI thread. tufup is imported here only, when a check runs: with tuf, requests and cryptography it
adds 36 MB resident and took 1.4 s on this 2-core machine under load, which a start never pays.

Every way it can go wrong ends in an `Outcome` with one sentence and the installed app untouched:
nothing is moved into place here; a bundle's verified update waits in `.pending` until the next start
(bundle.py).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from nanobot_desktop.identity import FOLDER_NAME
from nanobot_desktop.updates import bundle
from nanobot_desktop.updates.channel import Channel, ChannelMissing, archive_name, load_channel
from nanobot_desktop.updates.install import Installation, how_to_get

log = logging.getLogger(__name__)


class State(Enum):
    CURRENT = "current"
    STAGED = "staged"
    AVAILABLE = "available"
    UNCONFIGURED = "unconfigured"
    UNREACHABLE = "unreachable"
    EXPIRED = "expired"
    BAD_SIGNATURE = "bad-signature"
    TAMPERED = "tampered"
    FAILED = "failed"


@dataclass(frozen=True)
class Outcome:
    state: State
    current: str
    new: str = ""
    detail: str = ""
    """The server's host, the error's text, or the command that gets a new version (AVAILABLE)."""

    @property
    def ok(self) -> bool:
        return self.state in (State.CURRENT, State.STAGED, State.AVAILABLE)

    def sentence(self) -> str:
        """The one sentence for the command line (the GUI words the same fields through translate())."""
        return {
            State.CURRENT: f"nanobot Desktop {self.current} is the newest version.",
            State.STAGED: f"Version {self.new} is downloaded and verified; it starts the next time you open nanobot "
                          f"Desktop (version {self.current} is kept: `nanobot-desktop update --rollback` goes back).",
            State.AVAILABLE: f"Version {self.new} is available (this is {self.current}); get it with: {self.detail}",
            State.UNCONFIGURED: self.detail,
            State.UNREACHABLE: f"Could not reach the update server ({self.detail}); nothing was changed.",
            State.EXPIRED: f"The update server's signed metadata has expired ({self.detail}); the update was refused "
                           "and nothing was changed.",
            State.BAD_SIGNATURE: f"The update server's metadata is not signed by the keys this app trusts ({self.detail}); "
                                 "the update was refused and nothing was changed.",
            State.TAMPERED: f"The downloaded archive of version {self.new} does not match its signed length and hash; it "
                            "was discarded and nothing was changed.",
            State.FAILED: f"Could not prepare version {self.new} ({self.detail}); the installed app was not changed.",
        }[self.state]


def cache_dir(channel: Channel) -> Path:
    """Per channel: the trusted metadata tuf keeps up to date, and downloaded archives."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / FOLDER_NAME / "updates"
    return base / hashlib.sha256(channel.metadata_url.encode()).hexdigest()[:12]


def check_for_update(installation: Installation, current_version: str, *, download: bool = True,
                     channel: Channel | None = None) -> Outcome:
    """Ask the channel for a newer version; for a bundle (and `download`), fetch, verify and stage it."""
    try:
        channel = load_channel() if channel is None else channel
    except ChannelMissing as missing:
        return Outcome(State.UNCONFIGURED, current_version, detail=str(missing))
    try:
        from tuf.api import exceptions as tuf_errors
        from tufup.client import Client
    except ImportError as missing:  # a bundle built without them: say so, never a traceback
        return Outcome(State.UNCONFIGURED, current_version,
                       detail=f"This copy of nanobot Desktop cannot check for updates: the update library is missing ({missing}).")
    host = urlsplit(channel.metadata_url).netloc or channel.metadata_url
    try:
        client = _client(Client, installation, current_version, channel)
        client.refresh()
        found = client.check_for_updates(pre=None, patch=False)
    except tuf_errors.ExpiredMetadataError as error:
        return Outcome(State.EXPIRED, current_version, detail=str(error))
    except tuf_errors.DownloadError as error:
        return Outcome(State.UNREACHABLE, current_version, detail=f"{host}: {_root_cause(error)}")
    except tuf_errors.RepositoryError as error:
        return Outcome(State.BAD_SIGNATURE, current_version, detail=str(error) or type(error).__name__)
    except OSError as error:
        return Outcome(State.FAILED, current_version, detail=str(error))
    if found is None:
        return Outcome(State.CURRENT, current_version)
    new_version = str(found.version)
    if not installation.updates_itself or not download:
        return Outcome(State.AVAILABLE, current_version, new=new_version, detail=how_to_get(installation.kind))
    return _download_and_stage(client, installation, current_version, new_version, host)


def _download_and_stage(client: Any, installation: Installation, current: str, new: str, host: str) -> Outcome:
    from tuf.api import exceptions as tuf_errors

    staged: list[Path] = []

    def install(src_dir: Path, dst_dir: Path, **_: Any) -> None:
        staged.append(bundle.stage(dst_dir, Path(src_dir), new))

    try:
        client.extract_dir = bundle.fresh_staging(installation.app_dir)
        client.download_and_apply_update(skip_confirmation=True, install=install)
    except tuf_errors.LengthOrHashMismatchError:
        _discard(client)
        return Outcome(State.TAMPERED, current, new=new)
    except tuf_errors.DownloadError as error:
        return Outcome(State.UNREACHABLE, current, new=new, detail=f"{host}: {_root_cause(error)}")
    except tuf_errors.RepositoryError as error:
        return Outcome(State.BAD_SIGNATURE, current, new=new, detail=str(error) or type(error).__name__)
    except (OSError, bundle.BundleProblem, shutil.ReadError) as error:
        return Outcome(State.FAILED, current, new=new, detail=str(error))
    finally:
        shutil.rmtree(bundle.staging_dir(installation.app_dir), ignore_errors=True)
    if not staged:
        return Outcome(State.FAILED, current, new=new, detail="the archive could not be unpacked")
    return Outcome(State.STAGED, current, new=new)


def _discard(client: Any) -> None:
    """A rejected download must not be found in the cache next time (tuf writes only verified files,
    but an earlier partial one could remain)."""
    path = getattr(client, "new_archive_local_path", None)
    if isinstance(path, Path):
        path.unlink(missing_ok=True)


def _root_cause(error: BaseException) -> str:
    while error.__cause__ is not None:
        error = error.__cause__
    text = str(error)
    if "Connection refused" in text or "NewConnectionError" in text:
        return "connection refused"
    if "Name or service not known" in text or "NameResolutionError" in text:
        return "no network, or the name does not resolve"
    return text[:200] or type(error).__name__


def _client(client_class: Any, installation: Installation, current_version: str, channel: Channel) -> Any:
    """tufup's client over this channel's cache, the shipped root copied in on first use."""

    class _OnceRefreshed(client_class):  # type: ignore[misc]  # tufup ships no type information
        """tufup's check swallows refresh errors (it would read "no update"): the refresh runs first
        here, its errors reach us, and tufup's own call is then a no-op."""

        _refreshed = False

        def refresh(self) -> None:
            if not self._refreshed:
                super().refresh()
                self._refreshed = True

    cache = cache_dir(channel)
    metadata, targets = cache / "metadata", cache / "targets"
    metadata.mkdir(parents=True, exist_ok=True)
    targets.mkdir(parents=True, exist_ok=True)
    trusted_root = metadata / "root.json"
    if not trusted_root.exists():
        temporary = metadata / ".root.json.tmp"
        shutil.copyfile(channel.root, temporary)
        os.replace(temporary, trusted_root)
    return _OnceRefreshed(app_name=archive_name(), app_install_dir=installation.app_dir, current_version=current_version,
                          metadata_dir=metadata, metadata_base_url=channel.metadata_url, target_dir=targets,
                          target_base_url=channel.targets_url, refresh_required=False)
