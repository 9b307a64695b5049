"""The `run --jobs N` pool: linked worktrees beside the build worktree (pool/<spec>/<i> in the
user's cache folder, sandbox/admin.py)
where a created commit is built and tested while the model works on the next commit in
the build worktree. They are ours like the build worktree: kept warm across runs (a
reset is cheap, a checkout of the whole tree is not), kept aside with the build worktree once
the spec is complete (sandbox/keep.py), removed by abort and `free`."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pygit2

from git_retcon.git.plumbing import common_dir
from git_retcon.sandbox.admin import kept_path, worktrees_root
from git_retcon.sandbox.confine import Sandbox
from git_retcon.sandbox.runner import Commands, Result
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state.notes import CommandKind
from git_retcon.state.store import Store, safe_name


def _pools(repo: pygit2.Repository) -> Path:
    return worktrees_root(repo) / "pool"


def _root(repo: pygit2.Repository, spec: str) -> Path:
    return _pools(repo) / safe_name(spec)


class PoolWorktree(Worktree):
    """One worktree of a spec's pool; `name` is pool_name(spec, i)."""

    @classmethod
    def location(cls, repo: pygit2.Repository, name: str) -> Path:
        return _pools(repo) / name


def pool_name(spec: str, i: int) -> str:
    return f"{safe_name(spec)}/{i}"


def _names(spec: str, *roots: Path) -> list[str]:
    found = {int(p.name) for root in roots if root.is_dir() for p in root.iterdir() if p.name.isdigit()}
    return [pool_name(spec, i) for i in sorted(found)]


def _old(repo: pygit2.Repository, spec: str, kept: bool = False) -> Path:
    """The spec's pool in the layout before (the git dir's retcon/): moved by the next run."""
    return common_dir(repo) / "retcon" / ("kept/pool" if kept else "pool") / safe_name(spec)


def pool_names(repo: pygit2.Repository, spec: str) -> list[str]:
    """The names of the spec's pool worktrees that exist on disk."""
    return _names(spec, _root(repo, spec), _old(repo, spec))


def kept_pool_names(repo: pygit2.Repository, spec: str) -> list[str]:
    """The names of the spec's pool worktrees kept aside (sandbox/keep.py)."""
    return _names(spec, kept_path(repo, _root(repo, spec)), _old(repo, spec, kept=True))


def remove_pool(repo: pygit2.Repository, spec: str) -> int:
    """Remove the spec's pool worktrees (abort, free), those kept aside too; how many there were."""
    names = list(dict.fromkeys(pool_names(repo, spec) + kept_pool_names(repo, spec)))
    for name in names:
        PoolWorktree.remove(repo, name)
    for root in (_root(repo, spec), kept_path(repo, _root(repo, spec)), _old(repo, spec), _old(repo, spec, True)):
        shutil.rmtree(root, ignore_errors=True)
    return len(names)


class PoolCommands(Commands):
    """The commands in a pool worktree, on its own repository handle (it runs in a thread beside
    the model's step). Its outputs name the build worktree's paths, as if the commands had run
    there: the fix loop reads a failure's file names relative to the build worktree."""

    def __init__(self, wt: Worktree, shown_as: Path, build: str | None, test: str | None,
                 timeout: int | None, setup: str | None = None, sandbox: Sandbox | None = None,
                 retest: bool = False):
        from git_retcon.sandbox.setup import Setup

        super().__init__(Store(pygit2.Repository(str(common_dir(wt.repo)))), wt.path, build, test, timeout,
                         on_run=wt.touched_by_command, setup=Setup.of(wt, setup, timeout, sandbox), sandbox=sandbox,
                         retest=retest)
        self.shown_as = shown_as

    def run(self, kind: CommandKind, on_output: Callable[[str], None] | None = None,
            on_setup: Callable[[Result], None] | None = None) -> Result:
        res = super().run(kind, on_output, on_setup)
        for root in {str(self.workdir.resolve()), str(self.workdir)}:
            res.output = res.output.replace(root, str(self.shown_as))
        return res
