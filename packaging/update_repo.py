"""The signed update repository (TUF metadata through tufup): keys, bundles, publishing.

    python3 dev.py update-repo init  --repo DIR --keys DIR          new keys and an empty repository
    python3 dev.py update-repo add   --repo DIR --keys DIR BUNDLE --version V   publish a bundle folder
    python3 dev.py update-repo root  --repo DIR                     print the root.json path to ship

How releases are signed: the maintainer keeps the keys folder offline (never in this repository; the
tests make theirs in their temporary folder). `add` packs the bundle folder as
`nanobot-desktop-<platform>-<machine>-<version>.tar.gz`, records its length and SHA-256 in the
targets metadata and signs targets, snapshot and timestamp; `repo/metadata` and `repo/targets` are
then uploaded as they are to the channel's URLs (resources/updates/channel.json). Bundles built with
`packaging/build.py --update-root repo/metadata/root.json` carry that root, the one file the app's
trust starts from. Timestamp metadata expires after a day, so the repository must be re-signed
(`add` again, or tufup's own `tufup sign`) at least daily while it serves updates.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _archive_name() -> str:
    sys.path.insert(0, str(ROOT))
    from nanobot_desktop.updates.channel import archive_name

    return archive_name()


def open_repository(repo: Path, keys: Path, expiration_days: dict[str, int] | None = None) -> Any:
    """tufup's Repository for `repo` (created with new keys in `keys` when it does not exist yet).

    tufup keeps its config file in the working folder: the repository folder is used as that folder."""
    from tufup.repo import Repository

    repo.mkdir(parents=True, exist_ok=True)
    with contextlib.chdir(repo):
        if (repo / Repository.config_filename).exists():
            return Repository.from_config()  # its keys and roles as saved (initialize() would ask about keys)
        repository = Repository(app_name=_archive_name(), repo_dir=repo, keys_dir=keys,
                                expiration_days=expiration_days)
        repository.initialize()  # new keys (in `keys`) and the signed root metadata
    return repository


def publish_bundle(repo: Path, keys: Path, bundle: Path, version: str) -> Path:
    """Add the bundle folder as version `version` and sign; returns the archive's path."""
    repository = open_repository(repo, keys)
    with contextlib.chdir(repo):
        repository.add_bundle(new_bundle_dir=bundle, new_version=version, skip_patch=True)
        repository.publish_changes(private_key_dirs=[keys])
    return repo / "targets" / f"{_archive_name()}-{version}.tar.gz"


def resign(repo: Path, keys: Path, role: str, days: int) -> None:
    """Give `role` a new expiry `days` from now (negative: already expired) and sign it again."""
    repository = open_repository(repo, keys)
    with contextlib.chdir(repo):
        repository.refresh_expiration_date(role, days=days)
        repository.publish_changes(private_key_dirs=[keys])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The signed update repository of nanobot Desktop (tufup).")
    parser.add_argument("action", choices=("init", "add", "root"))
    parser.add_argument("bundle", nargs="?", type=Path, help="the bundle folder to publish (add)")
    parser.add_argument("--repo", type=Path, required=True, help="the repository folder (metadata/ and targets/)")
    parser.add_argument("--keys", type=Path, help="the private keys' folder: keep it offline, never commit it")
    parser.add_argument("--version", help="the bundle's version (add)")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    if args.action == "root":
        print(repo / "metadata" / "root.json")
        return 0
    if args.keys is None:
        parser.error("--keys is required for init and add")
    keys = args.keys.resolve()
    if args.action == "init":
        open_repository(repo, keys)
        print(f"repository {repo}; ship {repo / 'metadata' / 'root.json'} (build.py --update-root)")
        return 0
    if args.bundle is None or not args.version:
        parser.error("add needs the bundle folder and --version")
    archive = publish_bundle(repo, keys, args.bundle.resolve(), args.version)
    print(f"published {archive}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
