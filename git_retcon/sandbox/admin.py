"""Where git-retcon's worktrees live, and a linked worktree's admin dir (.git/worktrees/X): which
one is ours, and removing a worktree of ours with it, as a kill at any instant leaves it
recoverable. Never `git worktree prune`, never another worktree's admin dir.

The worktrees live in the user's cache folder, a folder per repository (worktrees_root), not
inside the checkout: tools that look for their configuration in parent folders (tsc and vitest's
tsconfig.json, eslint, editorconfig) must not find the user's checkout above a build worktree.
Each one's setup stamp stays under the git dir (retcon/setup/). Worktrees of the layout before
(under the git dir's retcon/) move on the next run that needs them (`migrate`).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import uuid
from pathlib import Path

import pygit2

from git_retcon.errors import RetconError
from git_retcon.failpoint import failpoint
from git_retcon.git.plumbing import common_dir, git, main_workdir


def cache_dir() -> Path:
    """git-retcon's folder in the user's cache: $XDG_CACHE_HOME, else ~/.cache."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        base = str(Path(os.environ.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "git-retcon"


def worktrees_root(repo: pygit2.Repository) -> Path:
    """The folder of this repository's worktrees (worktrees/, pool/, kept/, trash/): its name and a
    hash of its git dir, in the user's cache folder."""
    common = common_dir(repo)
    top = common.parent if common.name == ".git" else common
    name = re.sub(r"[^A-Za-z0-9._-]", "_", top.name)[:40].lstrip(".") or "repo"
    return cache_dir() / f"{name}-{hashlib.sha256(os.fsencode(common)).hexdigest()[:12]}"


def _old_root(repo: pygit2.Repository) -> Path:
    """Where worktrees lived before: the git dir's retcon/ (inside the checkout)."""
    return common_dir(repo) / "retcon"


def own_admin(repo: pygit2.Repository, path: Path) -> Path | None:
    """The admin dir (.git/worktrees/X) of the worktree at path: the one whose
    gitdir file points at path/.git. The other worktrees are the user's."""
    dirs = _admin_dirs(repo, path)
    return dirs[0] if len(dirs) == 1 and (path / ".git").is_file() else None


def _admin_dirs(repo: pygit2.Repository, path: Path) -> list[Path]:
    """Every admin dir that belongs to a worktree at path, complete or half made
    (a kill inside `git worktree add` leaves one "locked: initializing")."""
    root = common_dir(repo) / "worktrees"
    want = (path / ".git").resolve()
    found = []
    try:
        candidates = sorted(root.iterdir())
    except OSError:
        return []
    for admin in candidates:
        try:
            target = Path((admin / "gitdir").read_text().strip())
        except OSError:
            continue
        if target.resolve() == want:
            found.append(admin)
    return found


def discard(repo: pygit2.Repository, path: Path) -> bool:
    """Delete the worktree at path and its admin dirs (locked or not: they are ours);
    never `git worktree prune`, which would also drop a user's worktree whose
    directory is elsewhere for a moment."""
    admins = _admin_dirs(repo, path)
    # A kill between `worktree add` writing path/.git and its gitdir file: the .git
    # file names an admin dir that points nowhere yet.
    named = _named_admin(repo, path)
    if named is not None and named not in admins:
        admins.append(named)
    existed = bool(admins) or path.exists()
    trash = common_dir(repo) / "retcon" / "trash"
    # Each goes at once (a rename): a kill half way through a removal leaves no admin
    # dir without its gitdir file, which git would list as a broken worktree.
    for admin in admins:
        _to_trash(admin, trash)
    failpoint("worktree-discarding")
    shutil.rmtree(trash, ignore_errors=True)  # also what a killed removal left there
    if path.exists() or path.is_symlink():
        where = _trash_of(repo, path)
        _to_trash(path, where)
        shutil.rmtree(where, ignore_errors=True)
    return existed


def _trash_of(repo: pygit2.Repository, path: Path) -> Path:
    """Where a directory of ours goes to be deleted: a trash on its own file system (a rename)."""
    root = worktrees_root(repo)
    return root / "trash" if _inside(path, root) else common_dir(repo) / "retcon" / "trash"


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _to_trash(path: Path, trash: Path) -> None:
    trash.mkdir(parents=True, exist_ok=True)
    try:
        path.rename(trash / f"{path.name}-{uuid.uuid4().hex[:8]}")
    except OSError:  # another file system (a symlinked .git/worktrees): delete in place
        shutil.rmtree(path, ignore_errors=True)


def _named_admin(repo: pygit2.Repository, path: Path) -> Path | None:
    """The admin dir path/.git names, if it is one of this repository's and does not
    name another worktree (its gitdir file, if any, points at path)."""
    try:
        text = (path / ".git").read_text().strip()
    except OSError:
        return None
    admin = Path(text.removeprefix("gitdir:").strip())
    root = (common_dir(repo) / "worktrees").resolve()
    if admin.resolve().parent != root or not admin.is_dir():
        return None
    try:
        target = Path((admin / "gitdir").read_text().strip())
    except OSError:
        return admin
    return admin if target.resolve() == (path / ".git").resolve() else None


def kept_path(repo: pygit2.Repository, path: Path) -> Path:
    """Where the worktree at path (ours, under worktrees_root) is kept while no run needs it:
    kept/ and the same path below the root (worktrees/NAME, pool/NAME/I)."""
    return worktrees_root(repo) / "kept" / _under_retcon(repo, path)


def stamp_path(repo: pygit2.Repository, path: Path) -> Path:
    """The setup stamp of the worktree at path (sandbox/setup.py): retcon/setup/..., a JSON file."""
    rel = _under_retcon(repo, path)
    return common_dir(repo) / "retcon" / "setup" / rel.with_name(rel.name + ".json")


def _under_retcon(repo: pygit2.Repository, path: Path) -> Path:
    """path below the worktrees' root (worktrees/NAME, pool/NAME/I), or below the layout's before."""
    for root in (worktrees_root(repo), _old_root(repo)):
        try:
            return Path(path).resolve().relative_to(root.resolve())
        except ValueError:
            continue
    return Path(Path(path).name)


def migrate(repo: pygit2.Repository, path: Path) -> None:
    """The worktree that lived, in the layout before, where path's is now (under the git dir's
    retcon/) moves to path, warm (`git worktree move`), and what was kept of it to its kept place.
    Where it cannot move (another file system), it is removed, and its setup stamp with it: the
    next run makes it afresh. The caller holds the spec's run lock."""
    rel = _under_retcon(repo, path)
    old, old_kept = _old_root(repo) / rel, _old_root(repo) / "kept" / rel
    if old.exists() and not path.exists():
        moved = False
        if own_admin(repo, old) is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                git(main_workdir(repo), "worktree", "move", str(old), str(path))
                moved = True
            except RetconError:   # another file system, a submodule: made afresh instead
                moved = False
        if not moved:
            discard(repo, old)
            stamp_path(repo, path).unlink(missing_ok=True)
    if old_kept.is_dir():
        new_kept = kept_path(repo, path)
        try:
            if new_kept.exists():
                raise OSError("kept already")
            new_kept.parent.mkdir(parents=True, exist_ok=True)
            old_kept.rename(new_kept)
        except OSError:
            trash(repo, old_kept)
            if not new_kept.exists():
                stamp_path(repo, path).unlink(missing_ok=True)


def trash(repo: pygit2.Repository, path: Path) -> bool:
    """Delete a directory of ours at once (a rename, then the removal); True if there was one."""
    if not (path.exists() or path.is_symlink()):
        return False
    where = _trash_of(repo, path)
    _to_trash(path, where)
    shutil.rmtree(where, ignore_errors=True)
    return True


def clear_locks(admin: Path) -> None:
    """Lock files a killed git left in the worktree's own admin dir. Only git-retcon
    runs git there, and the caller holds the spec's run lock: they are stale."""
    for lock in admin.glob("*.lock"):
        lock.unlink(missing_ok=True)
