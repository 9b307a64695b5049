"""A complete spec's build worktree (and --jobs pool) kept for the next run, and freed on request.

Once every logical commit is complete no run needs the worktree, but what git ignores there is
worth keeping: the dependencies setup installed (node_modules/, .venv/) and the build outputs
(target/, dist/). A worktree that holds such files is set aside under retcon/kept/ (out of
`git worktree list`, since its admin dir goes; never by a prune); one that holds none is removed,
as there is nothing to keep warm. The next run that needs it brings it back (Worktree._create).
`git retcon free` deletes it, `abort` and `spec rm` too; each under the spec's run lock.
"""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git.plumbing import git
from git_retcon.sandbox.admin import kept_path, own_admin
from git_retcon.sandbox.pool import PoolWorktree, kept_pool_names, pool_name, pool_names, remove_pool
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state.store import Store

SIZE_SECONDS = 0.5   # how long a size may take to count (a big node_modules has 100,000 files)


@dataclass
class Kept:
    """What a complete spec left for its next run."""

    where: list[Path] = field(default_factory=list)    # the build worktree's kept directory first
    ignored: list[str] = field(default_factory=list)   # the build worktree's top ignored entries
    removed: bool = False                               # a worktree held nothing to keep, and went
    size: int | None = None                             # bytes on disk; None: too many files to count now


def keep(repo: pygit2.Repository, spec: str) -> Kept:
    """Each of the spec's worktrees (build and pool) that holds files git ignores is kept aside; the
    others are removed. The caller holds the spec's run lock."""
    out = Kept()
    worktrees: list[tuple[type[Worktree], str]] = [(Worktree, spec)]
    worktrees += [(PoolWorktree, name) for name in pool_names(repo, spec)]
    for cls, name in worktrees:
        path = cls.location(repo, name)
        in_use = own_admin(repo, path) is not None
        ignored = ignored_entries(path) if in_use else []
        if cls is Worktree:
            out.ignored = ignored
        if in_use and not ignored:
            out.removed = cls.remove(repo, name) or out.removed
        elif (kept := cls.keep(repo, name)) is not None:   # also the end of one a kill left half kept
            out.where.append(kept)
    with contextlib.suppress(OSError):   # the pool's folder, once empty
        PoolWorktree.location(repo, pool_name(spec, 1)).parent.rmdir()
    out.size = disk_usage(out.where)
    return out


def ignored_entries(path: Path) -> list[str]:
    """The files and folders of the worktree at path that git ignores, a folder as one entry
    (`node_modules/`, `src/__pycache__/`)."""
    try:
        text = git(path, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory",
                   "--no-empty-directory")
    except RetconError:
        return []
    return [n for n in text.split("\0") if n]


def where_kept(repo: pygit2.Repository, spec: str) -> list[Path]:
    """The spec's worktrees, kept aside or in use, that exist on disk."""
    paths = [Worktree.location(repo, spec), kept_path(repo, Worktree.location(repo, spec))]
    paths += [PoolWorktree.location(repo, n) for n in pool_names(repo, spec)]
    paths += [kept_path(repo, PoolWorktree.location(repo, n)) for n in kept_pool_names(repo, spec)]
    return [p for p in paths if p.is_dir()]


def free(repo: pygit2.Repository, spec: str) -> tuple[list[Path], int | None]:
    """Delete the spec's worktrees, kept aside or in use, and their setup stamps (the caller holds the
    spec's run lock): which there were, and their size."""
    there = where_kept(repo, spec)
    size = disk_usage(there)
    Worktree.remove(repo, spec)
    remove_pool(repo, spec)
    return there, size


def disk_usage(paths: Iterable[Path], seconds: float = SIZE_SECONDS) -> int | None:
    """Bytes on disk under paths (symbolic links not followed); None when counting takes longer."""
    deadline = time.monotonic() + seconds
    total = 0
    stack = [str(p) for p in paths]
    while stack:
        if time.monotonic() > deadline:
            return None
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
            except OSError:
                continue
            total += getattr(st, "st_blocks", 0) * 512 or st.st_size
    return total


def human(size: int | None) -> str:
    """A size as people read it (`48.2 MB`); "" when not known."""
    if size is None:
        return ""
    value = float(size)
    for unit in ("bytes", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return ""


def shown(repo: pygit2.Repository, path: Path) -> str:
    """path as the user finds it: relative to the repository's top when it is inside, else from ~
    when it is under the home folder (the cache folder, where the worktrees live)."""
    top = Path(repo.workdir).resolve() if repo.workdir else None
    home = Path(os.environ.get("HOME") or Path.home()).resolve()
    for base, prefix in ((top, ""), (home, "~/")):
        try:
            return prefix + str(path.resolve().relative_to(base)) if base is not None else str(path)
        except ValueError:
            continue
    return str(path)


def free_spec(store: Store, name: str, say: Callable[[str], None]) -> int | None:
    """`git retcon free NAME`: the spec's worktrees deleted under its run lock (refused while a run
    holds it); the spec, its branch and its history stay. The bytes freed (None: not counted)."""
    with store.lock(name):
        there, size = free(store.repo, name)
    if not there:
        say(f"Nothing to free: '{name}' has no build worktree.")
        return 0
    amount = human(size)
    say(f"Freed{' ' + amount if amount else ''}: deleted the build worktree of '{name}' "
        f"({', '.join(shown(store.repo, p) for p in there)}). The spec, its branch and its history are "
        "kept; the next run makes the worktree again" + (" and runs its setup." if store.load(name).spec.setup
                                                          else "."))
    return size
