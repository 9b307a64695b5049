"""The build worktree: a linked worktree in the user's cache folder (sandbox/admin.py, outside the
checkout) where files are written, built and tested. Every path the model names is confined to it."""
from __future__ import annotations

import os
from pathlib import Path

import pygit2

from git_retcon.errors import RetconError
from git_retcon.failpoint import failpoint
from git_retcon.git.ids import CommitId, TreeId
from git_retcon.git.plumbing import git, main_workdir
from git_retcon.sandbox.admin import (
    clear_locks,
    discard,
    kept_path,
    migrate,
    own_admin,
    stamp_path,
    trash,
    worktrees_root,
)
from git_retcon.sandbox.filters import Filters
from git_retcon.sandbox.watch import Watch
from git_retcon.sandbox.wtfiles import PathRefused, WorktreeFiles
from git_retcon.state.store import safe_name

__all__ = ["PathRefused", "Worktree"]

# Marker in the admin dir: the worktree was made to the end (a kill before leaves none).
_READY = "retcon-ready"
# Attributes under which git converts a file's bytes on checkout and add.
# The user's hooks never run for git-retcon's own worktree.
_NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


class Worktree(WorktreeFiles):
    """The build worktree's lifecycle (made, kept, reset, removed) and its state against the
    commands that run in it; its files, as the model's tools reach them, are WorktreeFiles'."""

    def __init__(self, path: Path):
        self.path = path
        self.repo = pygit2.Repository(str(path))
        self.index = self.repo.index
        # The commit that index and files are known to equal exactly (no stray
        # files); None once a command has run here or the state is unknown.
        self.synced: str | None = None
        self.edited = False  # the tools changed index and files since `synced`
        self._unsaved = False  # the in-memory index is ahead of the index file
        # Files are exactly the index's tree and nothing else is there (but ignored
        # files): no command ran since the last reset, and the tools keep both in step.
        self.exact = False
        self.filters = Filters(self.repo, path)   # git's conversions between blob and file
        # The commit the worktree was exactly when commands started to run, watched since
        # (inotify): if nothing but ignored files changed, it still is, with no scan.
        self._clean_at: str | None = None
        self._watch: Watch | None | bool = False   # False: not opened yet; None: not available

    @classmethod
    def location(cls, repo: pygit2.Repository, name: str) -> Path:
        return worktrees_root(repo) / "worktrees" / safe_name(name)

    @classmethod
    def admin_dir(cls, repo: pygit2.Repository, name: str) -> Path:
        """Where git keeps the worktree's HEAD and index (from its .git file)."""
        link = cls.location(repo, name) / ".git"
        try:
            text = link.read_text().strip()
        except OSError:
            return cls.location(repo, name) / ".git"
        return Path(text.removeprefix("gitdir:").strip())

    @classmethod
    def ensure(cls, repo: pygit2.Repository, name: str, commit: str) -> Worktree:
        """Open the spec's worktree, creating (or re-creating) it detached at commit.

        Detached, so the cleaned branch is never "checked out" there and the user
        stays free to check it out themselves. The caller holds the spec's run lock:
        the worktree's own lock files left by a killed run are cleared at once.
        """
        path = cls.location(repo, name)
        migrate(repo, path)   # one of the layout before, inside the checkout, moves out
        admin = own_admin(repo, path)
        if admin is None or not (admin / _READY).exists():
            return cls._create(repo, path, commit)
        clear_locks(admin)
        wt = cls(path)
        wt.reset(commit)
        return wt

    @classmethod
    def _create(cls, repo: pygit2.Repository, path: Path, commit: str) -> Worktree:
        """A fresh worktree at commit, made so that a kill at any instant leaves
        something the next call (or abort) discards: it counts as made only once
        the ready marker is in its admin dir. No hook of the user's runs. A worktree
        kept since its spec completed (`keep`) comes back with the files git ignores
        there (installed dependencies, build outputs) and its setup stamp."""
        discard(repo, path)
        kept = kept_path(repo, path)
        stamp = stamp_path(repo, path)
        saved = _read(stamp) if kept.is_dir() else None
        stamp.unlink(missing_ok=True)   # until the kept files are all back: a kill leaves setup to do
        path.parent.mkdir(parents=True, exist_ok=True)
        top = main_workdir(repo)
        # --no-checkout: `worktree add` runs no post-checkout hook; the files come
        # from read-tree, through git's filters (eol, clean/smudge), like a checkout.
        git(top, *_NO_HOOKS, "worktree", "add", "--quiet", "--no-checkout", "--detach", str(path), commit)
        failpoint("worktree-added")
        revived = kept.is_dir() and _move_in(kept, path)
        if revived:
            # The index only: the kept files are compared with it, and only those that differ are
            # written (unchanged sources keep their times, so incremental builds stay warm).
            git(path, *_NO_HOOKS, "read-tree", commit)
        else:
            trash(repo, kept)
            git(path, *_NO_HOOKS, "read-tree", "--reset", "-u", commit)
        failpoint("worktree-checked-out")
        admin = own_admin(repo, path)
        if admin is None:
            raise RetconError(f"git worktree add made no worktree at {path}: run the command again")
        wt = cls(path)
        if revived:
            wt.reset(commit)
        else:
            # Just checked out: exactly commit already. A reset now would also re-hash
            # every file, since the fresh index is racy (as new as the files).
            wt.synced = commit
            wt.exact = True
        (admin / _READY).write_text("git-retcon\n")
        if saved is not None:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(saved)
        return wt

    @classmethod
    def keep(cls, repo: pygit2.Repository, name: str) -> Path | None:
        """Set the spec's worktree aside for the next run (its spec is complete): moved to
        retcon/kept/, out of `git worktree list` (its admin dir goes, by our own discard, never a
        prune), with everything in it. Where it is kept, or None when there is none (a half-made
        one is removed)."""
        path = cls.location(repo, name)
        migrate(repo, path)
        kept = kept_path(repo, path)
        admin = own_admin(repo, path)
        if admin is not None and (admin / _READY).exists():
            trash(repo, kept)   # an older one (kept by hand, or a kill before it came back)
            kept.parent.mkdir(parents=True, exist_ok=True)
            path.rename(kept)
            (kept / ".git").unlink(missing_ok=True)   # it named the admin dir, which goes now
        discard(repo, path)
        return kept if kept.is_dir() else None

    @classmethod
    def remove(cls, repo: pygit2.Repository, name: str) -> bool:
        """Delete the spec's worktree, also a half-made or a kept one, and its setup stamp;
        nobody else's. True if there was anything to delete."""
        path = cls.location(repo, name)
        migrate(repo, path)   # so that one of the layout before goes too
        removed = discard(repo, path)
        removed = trash(repo, kept_path(repo, path)) or removed
        stamp_path(repo, path).unlink(missing_ok=True)
        return removed

    def reset_to_tree(self, tree: TreeId, parent: str) -> None:
        """reset, to a tree no commit holds yet: through a scratch commit object on parent that no
        ref names (git gc takes it), so that files pass through git's checkout and its filters."""
        who = pygit2.Signature("git-retcon", "git-retcon@localhost", 0, 0)
        scratch = self.repo.create_commit(None, who, who, "retcon: scratch tree", pygit2.Oid(hex=tree),
                                          [pygit2.Oid(hex=parent)])
        self.reset(str(scratch))

    def reset(self, commit: str) -> None:
        """Make index and files exactly commit's tree. Untracked files go (they could
        make a build pass that the commit alone would not); ignored ones stay warm."""
        if self.synced == commit and not self.edited:
            return
        watched = self._clean_at == commit and self._untouched(commit)
        self._clean_at = None
        if not watched:
            if not self._as_left(commit):
                git(self.path, *_NO_HOOKS, "reset", "--quiet", "--hard", commit)
                git(self.path, "clean", "-fdq")
            # git wrote the index file (a reset, or status refreshing its stat data): read it
            # back, or a later write of ours would put stale stat data in it.
            self.index.read(True)
        self._unsaved = False
        self.synced = commit
        self.edited = False
        self.exact = True

    def _untouched(self, commit: str) -> bool:
        """Whether the commands run since the worktree was exactly commit touched nothing but
        ignored files (no file, no index, no HEAD): inotify says, with no scan and no re-read."""
        try:
            return (not self._unsaved and isinstance(self._watch, Watch) and not self._watch.changed()
                    and str(self.repo.head.target) == commit)
        except pygit2.GitError:
            return False

    def _as_left(self, commit: str) -> bool:
        """Whether the worktree is exactly commit already: HEAD there, and git status (one scan,
        where reset and clean take two) finds nothing staged, modified or untracked. The usual
        case after a build and a test, which leave only ignored files (kept warm), if any."""
        try:
            if self._unsaved or str(self.repo.head.target) != commit:
                return False
            return git(self.path, "status", "--porcelain", "-z", "--untracked-files=normal", "--no-renames",
                       "--ignore-submodules=none") == ""
        except (RetconError, pygit2.GitError):
            return False   # whatever stopped HEAD or status: reset and clean say it plainly

    def make_exact(self) -> None:
        """Files exactly the index's tree again, nothing untracked left (ignored files
        stay warm): what a command left mid-step is undone, the tools' edits are kept."""
        if self.exact:
            return
        self.save_index()
        git(self.path, *_NO_HOOKS, "read-tree", "--reset", "-u", self.tree())
        git(self.path, "clean", "-fdq")
        self._clean_at = None
        self.index.read(True)
        self.exact = True

    def touched_by_command(self) -> None:
        """A build or test is about to run here: it sees the index file, and it may
        leave files behind (watched from the first command on, when the worktree is
        exactly a commit then)."""
        self.save_index()
        if self._clean_at is None and self.synced is not None and self.exact and not self.edited:
            watch = self._watcher()
            if watch is not None:
                watch.arm()
                self._clean_at = self.synced
        self.synced = None
        self.exact = False

    def _watcher(self) -> Watch | None:
        if self._watch is False:
            self._watch = Watch.open(self.path, Path(self.repo.path), lambda rel: bool(self.repo.path_is_ignored(rel)),
                                     lambda rel: rel in self.index)
        return self._watch if isinstance(self._watch, Watch) else None

    # -- trees and commits -------------------------------------------------

    def tree(self) -> TreeId:
        """The index's tree (written to the object store): what a commit of it would hold."""
        return TreeId(str(self.index.write_tree(self.repo)))

    def move_head(self, commit: CommitId) -> None:
        """After a commit of the index: files were written only through the tools,
        so they equal the commit unless a command ran since the last reset."""
        self.repo.set_head(pygit2.Oid(hex=commit))
        self.save_index()
        if self.synced is not None:
            self.synced = commit
            self.edited = False


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _move_in(kept: Path, path: Path) -> bool:
    """The kept worktree's files under path, just made by `git worktree add --no-checkout` (only
    its .git file is there): that file goes into the kept directory, which takes path's place.
    False when it cannot (another file system): the caller checks out afresh."""
    try:
        os.replace(path / ".git", kept / ".git")
        path.rmdir()
        kept.rename(path)
    except OSError:
        if not (path / ".git").exists() and (kept / ".git").is_file():
            path.mkdir(exist_ok=True)
            os.replace(kept / ".git", path / ".git")
        return False
    return True
