"""The versions of MEMORY.md, SOUL.md and USER.md in a nanobot 0.3 workspace: its own git repository.

nanobot 0.3 creates the repository (first commit "init: nanobot memory store", a `.gitignore` that
ignores all but its memory files) and its Dream commits each rewrite. It uses dulwich, so this module
does too: the repository stays exactly as 0.3 expects (same index format, same staged file set, same
author for Dream's commits). Every commit that changed a file is a version of it; the user's own saves
and restores are committed the same way, so Dream and the user never overwrite each other unseen.

Everything here blocks on disk: call it from a worker thread, never the GUI thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from nanobot_desktop.engine.changes import ChangeTracker
from nanobot_desktop.engine.idle_threads import IdleExitingExecutor
from nanobot_desktop.engine.workspace import (
    Workspace,
    atomic_write_bytes,
    atomic_write_text,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MemoryVersion:
    """One saved copy of MEMORY.md (defined here: memory/store.py imports this module): a file in `.versions/`
    (taken just before a rewrite), or, in a nanobot 0.3 workspace with its git repository, a commit that
    changed it (`commit` set)."""

    path: Path
    saved_at: datetime
    source: str
    size: int
    commit: str = ""
    message: str = ""

    @property
    def ident(self) -> str:
        """Tells versions apart (the commit, or the copy's file)."""
        return self.commit or str(self.path)

# What 0.3.5 stages on every commit (its MemoryStore's list; onboard's init uses the first three).
TRACKED_FILES = ("SOUL.md", "USER.md", "memory/MEMORY.md", "memory/.dream_cursor")
APP_AUTHOR = b"nanobot Desktop <desktop@nanobot>"
DREAM_AUTHOR = b"nanobot <nanobot@dream>"  # 0.3's own commits (init, Dream)


class GitVersionsError(RuntimeError):
    """The repository could not be read or written; the message says what failed."""


@dataclass(frozen=True)
class GitVersion:
    """One commit that changed a file: the file's text as of that commit."""

    sha: str  # full hex id
    message: str
    committed_at: datetime
    size: int

    @property
    def subject(self) -> str:
        return self.message.splitlines()[0] if self.message.strip() else "(no message)"

    @property
    def kind(self) -> str:
        """What made it: the message's prefix before ':' (dream, init, revert, user, restore, …)."""
        head, sep, _rest = self.subject.partition(":")
        return head.strip().lower() if sep and head.strip() and " " not in head.strip() else "commit"


class MemoryGit:
    """Read versions from, and commit to, the git repository at the workspace root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()

    def available(self) -> bool:
        return (self.root / ".git").is_dir()

    def _repo(self) -> Any:
        from dulwich.repo import Repo

        return Repo(str(self.root))

    def init(self) -> bool:
        """Create the repository as nanobot 0.3 does for a workspace it sets up; False when there is one.

        Skipped inside another repository (as 0.3 does). The `.gitignore` lets only the memory files
        through; an existing `.gitignore` only gains the lines it lacks.
        """
        from dulwich import porcelain

        if self.available() or any((folder / ".git").exists() for folder in self.root.resolve().parents):
            return False
        lines = ["/*", "!memory/", *[f"!{name}" for name in TRACKED_FILES[:3]], "!.gitignore"]
        gitignore = self.root / ".gitignore"
        try:
            existing = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
            missing = [line for line in lines if line not in existing.splitlines()]
            if missing:
                prefix = existing.rstrip("\n") + "\n" if existing.strip() else ""
                atomic_write_text(gitignore, prefix + "\n".join(missing) + "\n")
            porcelain.init(str(self.root))
            for name in TRACKED_FILES[:3]:
                if not (self.root / name).exists():
                    atomic_write_text(self.root / name, "")
            paths = [str((self.root / name).absolute()) for name in (".gitignore", *TRACKED_FILES[:3])]
            porcelain.add(str(self.root), paths=paths)
            porcelain.commit(str(self.root), message=b"init: nanobot memory store", author=DREAM_AUTHOR,
                             committer=DREAM_AUTHOR)
        except Exception as exc:
            raise GitVersionsError(f"could not create the memory repository in {self.root}: {exc}") from exc
        return True

    def versions(self, rel_path: str, limit: int = 500) -> list[GitVersion]:
        """Commits that changed `rel_path` (e.g. "memory/MEMORY.md"), newest first."""
        from dulwich.object_store import tree_lookup_path

        if not self.available():
            return []
        try:
            with self._lock, self._repo() as repo:
                try:
                    head = repo.head()
                except KeyError:
                    return []
                found: list[GitVersion] = []
                for entry in repo.get_walker(include=[head], paths=[rel_path.encode()], max_entries=limit):
                    commit = entry.commit
                    try:
                        _mode, blob_id = tree_lookup_path(repo.__getitem__, commit.tree, rel_path.encode())
                        size = len(repo[blob_id].data)
                    except KeyError:
                        continue  # the commit removed the file: nothing to restore
                    found.append(GitVersion(
                        sha=commit.id.decode("ascii"),
                        message=commit.message.decode("utf-8", errors="replace").strip(),
                        committed_at=datetime.fromtimestamp(commit.commit_time),
                        size=size,
                    ))
                return found
        except GitVersionsError:
            raise
        except Exception as exc:  # dulwich raises many kinds; the caller shows one message
            raise GitVersionsError(f"could not read the versions of {rel_path} from {self.root}/.git: {exc}") from exc

    def read(self, sha: str, rel_path: str) -> str:
        """`rel_path` as it was in commit `sha`."""
        from dulwich.object_store import tree_lookup_path

        try:
            with self._lock, self._repo() as repo:
                commit = repo[sha.encode("ascii")]
                _mode, blob_id = tree_lookup_path(repo.__getitem__, commit.tree, rel_path.encode())
                data: bytes = repo[blob_id].data
        except Exception as exc:
            raise GitVersionsError(f"could not read {rel_path} at {sha[:8]}: {exc}") from exc
        return data.decode("utf-8-sig", errors="replace")

    def commit(self, message: str, *, author: bytes = APP_AUTHOR) -> str | None:
        """Stage the tracked memory files and commit when one changed; returns the new sha or None.

        The same staging 0.3 does (only its tracked files, which its `.gitignore` lets through), so the
        index stays what Dream expects.
        """
        from dulwich import porcelain

        if not self.available():
            return None
        paths = [str((self.root / name).absolute()) for name in TRACKED_FILES if (self.root / name).exists()]
        try:
            with self._lock:
                porcelain.add(str(self.root), paths=paths)
                status = porcelain.status(str(self.root))
                if not any(status.staged.values()):
                    return None
                sha = porcelain.commit(str(self.root), message=message.encode("utf-8"), author=author,
                                       committer=author)
        except Exception as exc:
            raise GitVersionsError(f"could not commit to {self.root}/.git ({message!r}): {exc}") from exc
        text = sha.decode("ascii") if isinstance(sha, bytes) else str(sha)
        log.info("committed %s to the workspace's git: %s", text[:8], message)
        return text


def _log_failure(future: Future[None]) -> None:
    error = future.exception()
    if error is not None:
        log.error("could not save or commit a memory file: %s", error)


class TrackedFiles:
    """A nanobot 0.3 workspace's git-tracked files (memory/MEMORY.md, SOUL.md, USER.md), owned by
    MemoryStore: saves become commits, made one at a time on one committer thread; versions are commits."""

    def __init__(self, workspace: Workspace, git: MemoryGit | None, changes: ChangeTracker) -> None:
        self.workspace = workspace
        self.git = git
        self.changes = changes
        self._committer: IdleExitingExecutor | None = None
        self._last_job: Future[None] | None = None

    @property
    def uses_git_versions(self) -> bool:
        """True when versions come from (and saves go to) the workspace's git repository (nanobot 0.3)."""
        return self.git is not None and self.git.available()

    def replace(self, rel_path: str, new_data: bytes, source: str, note: str = "") -> None:
        """Write a git-tracked memory file and commit it, on the one committer thread.

        Text that differs from the last commit (an edit nobody committed) is committed first, so the
        new save never buries it. A caller on an event-loop thread does not wait (the commit runs
        beside it; `flush()` waits); any other caller waits and gets the error, if any.
        """
        target = self.workspace.root / rel_path
        git = self.git
        assert git is not None

        def job() -> None:
            try:
                if target.read_bytes() == new_data:
                    return
            except FileNotFoundError:
                pass
            git.commit(f"snapshot: {rel_path} before a {source} save")
            atomic_write_bytes(target, new_data)
            self.changes.wrote(target)
            git.commit(f"{source}: {note or 'edit ' + rel_path}")

        future = self._submit(job)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            future.result()
            return
        future.add_done_callback(_log_failure)

    def _submit(self, job: Any) -> Future[None]:
        if self._committer is None:
            self._committer = IdleExitingExecutor(1, name="memory-git")
        self._last_job = self._committer.submit(job)
        return self._last_job

    def flush(self) -> None:
        """Wait until every queued write and commit is done (not on the GUI thread)."""
        if self._last_job is not None:
            self._last_job.result()

    def file_versions(self, rel_path: str) -> list[Any]:
        """Versions of a git-tracked file ("memory/MEMORY.md", "SOUL.md", "USER.md"), newest first."""
        if not self.uses_git_versions:
            return []
        assert self.git is not None
        self.flush()
        path = self.workspace.root / rel_path
        return [MemoryVersion(path=path, saved_at=v.committed_at, source=v.kind, size=v.size, commit=v.sha,
                              message=v.message) for v in self.git.versions(rel_path)]

    def restore_file_version(self, version: Any) -> None:
        """Put a committed version of SOUL.md / USER.md / MEMORY.md back, as a new commit."""
        rel_path = version.path.relative_to(self.workspace.root).as_posix()
        assert self.git is not None
        data = self.git.read(version.commit, rel_path).encode("utf-8")
        self.replace(rel_path, data, "restore", f"{rel_path} as of {version.commit[:8]}")

    def save_tracked(self, path: Path, text: str) -> None:
        """The user's save of SOUL.md or USER.md (the Files view): written and committed as one version."""
        rel_path = Path(path).resolve().relative_to(self.workspace.root.resolve()).as_posix()
        self.replace(rel_path, text.encode("utf-8"), "user")

    def commit_user_save(self, path: Path) -> str | None:
        """After the user saved SOUL.md or USER.md elsewhere in the app: commit it as 0.3 would see it."""
        if not self.uses_git_versions:
            return None
        assert self.git is not None
        rel_path = Path(path).resolve().relative_to(self.workspace.root.resolve()).as_posix()
        return self.git.commit(f"user: edit {rel_path}")


