"""A linked worktree's admin dir (.git/worktrees/X): which one is ours, and removing a
worktree of ours with it, as a kill at any instant leaves it recoverable. Never
`git worktree prune`, never another worktree's admin dir."""
from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pygit2

from git_retcon.failpoint import failpoint
from git_retcon.git.plumbing import common_dir


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
    if path.exists() or path.is_symlink():
        _to_trash(path, trash)
    shutil.rmtree(trash, ignore_errors=True)  # also what a killed removal left there
    return existed


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
    """Where the worktree at path (ours, under the git dir's retcon/) is kept while no run needs
    it: retcon/kept/ and the same path below retcon/ (worktrees/NAME, pool/NAME/I)."""
    return common_dir(repo) / "retcon" / "kept" / _under_retcon(repo, path)


def stamp_path(repo: pygit2.Repository, path: Path) -> Path:
    """The setup stamp of the worktree at path (sandbox/setup.py): retcon/setup/..., a JSON file."""
    rel = _under_retcon(repo, path)
    return common_dir(repo) / "retcon" / "setup" / rel.with_name(rel.name + ".json")


def _under_retcon(repo: pygit2.Repository, path: Path) -> Path:
    root = (common_dir(repo) / "retcon").resolve()
    try:
        return Path(path).resolve().relative_to(root)
    except ValueError:
        return Path(Path(path).name)


def trash(repo: pygit2.Repository, path: Path) -> bool:
    """Delete a directory of ours at once (a rename, then the removal); True if there was one."""
    if not (path.exists() or path.is_symlink()):
        return False
    where = common_dir(repo) / "retcon" / "trash"
    _to_trash(path, where)
    shutil.rmtree(where, ignore_errors=True)
    return True


def clear_locks(admin: Path) -> None:
    """Lock files a killed git left in the worktree's own admin dir. Only git-retcon
    runs git there, and the caller holds the spec's run lock: they are stale."""
    for lock in admin.glob("*.lock"):
        lock.unlink(missing_ok=True)
