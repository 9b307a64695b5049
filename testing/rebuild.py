"""A base and a target commit rebuilt hunk by hunk: an in-memory index and a real worktree."""
from __future__ import annotations

import os
import stat as _stat
from pathlib import Path

import pygit2

from git_retcon import diff
from testing.gitrepo import GitRepo


class Rebuild:
    """A base and a target commit, an in-memory index at base and a worktree checked out at base."""

    def __init__(self, repo: GitRepo, base: str, target: str):
        self.git = repo
        self.repo = pygit2.Repository(str(repo.path))
        self.base_tree = repo.tree(base)
        self.target_tree = repo.tree(target)
        self.workdir = repo.path.parent / f"{repo.path.name}-wt"
        repo.git("worktree", "add", "-q", "--detach", str(self.workdir), base)
        self.index = pygit2.Index()
        self.index.read_tree(self.repo[pygit2.Oid(hex=self.base_tree)])

    def current(self) -> str:
        return str(self.index.write_tree(self.repo))

    def remaining(self) -> list[diff.Hunk]:
        return diff.remaining(self.repo, self.current(), self.target_tree)

    def apply(self, hunks: list[diff.Hunk]) -> list[str]:
        touched = diff.apply(self.repo, self.index, self.workdir, hunks)
        assert_workdir_matches(self.repo, self.workdir, self.current())
        return touched

    def apply_ids(self, ids) -> list[str]:
        by_id = {h.id: h for h in self.remaining()}
        return self.apply([by_id[i] for i in ids])

    def finish(self) -> None:
        self.apply(self.remaining())
        assert self.current() == self.target_tree
        assert self.remaining() == []
        assert_workdir_matches(self.repo, self.workdir, self.target_tree)


def tree_entries(repo: pygit2.Repository, tree_id: str) -> dict[str, tuple[int, bytes]]:
    out: dict[str, tuple[int, bytes]] = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for e in tree:
            path = prefix + e.name
            if e.filemode == diff.MODE_TREE:
                walk(repo[e.id], path + "/")
            elif e.filemode == diff.MODE_GITLINK:
                out[path] = (e.filemode, b"")
            else:
                out[path] = (e.filemode, repo[e.id].data)

    walk(repo[pygit2.Oid(hex=tree_id)], "")
    return out


def workdir_entries(workdir: Path) -> dict[str, tuple[int, bytes]]:
    out: dict[str, tuple[int, bytes]] = {}
    dirs: list[str] = []
    for root, dirnames, files in os.walk(workdir):
        rel_root = Path(root).relative_to(workdir)
        if rel_root == Path("."):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            files = [f for f in files if f != ".git"]
        for d in list(dirnames):
            p = Path(root) / d
            if p.is_symlink():
                files.append(d)
                dirnames.remove(d)
            else:
                dirs.append((rel_root / d).as_posix())
        for f in files:
            p = Path(root) / f
            rel = (rel_root / f).as_posix()
            if p.is_symlink():
                out[rel] = (diff.MODE_LINK, os.fsencode(os.readlink(p)))
            else:
                exe = os.stat(p).st_mode & _stat.S_IXUSR
                out[rel] = (diff.MODE_EXEC if exe else diff.MODE_BLOB, p.read_bytes())
    for d in dirs:  # no empty directories left behind
        assert any(k.startswith(d + "/") for k in out), f"empty directory left: {d}"
    return out


def assert_workdir_matches(repo: pygit2.Repository, workdir: Path, tree_id: str) -> None:
    assert workdir_entries(workdir) == tree_entries(repo, tree_id)


def make(repo: GitRepo, base: dict, target: dict, modes: dict | None = None) -> Rebuild:
    """Commit base, then target (a full replacement of the files); optional modes for target."""
    b = repo.commit("base", base)
    for rel in list(base):
        if rel not in target:
            repo.delete(rel)
    for rel, content in target.items():
        p = repo.path / rel
        if p.is_symlink() or p.exists():
            p.unlink()
        repo.write(rel, content)
    for rel, mode in (modes or {}).items():
        os.chmod(repo.path / rel, mode)
    t = repo.commit("target")
    return Rebuild(repo, b, t)


def lines(n: int, fmt: str = "line {}\n") -> str:
    return "".join(fmt.format(i) for i in range(1, n + 1))
