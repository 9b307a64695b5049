"""`git retcon stack`: a branch per complete logical commit, each on the one below, for
stacked pull requests; `--push` pushes them in order, bottom first, with force-with-lease.

A stack branch is made and moved under the ownership rule: one that does not exist yet, or
whose every commit past the merge base git-retcon made for this spec (its note says so:
after an absorb the same branches move to the re-made commits). One with a commit of
anyone else's (a review fix pushed to it, say) is left as it is, and the output says so.
Each move is compare-and-swap, never of a branch checked out, and recorded for undo.
"""
from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from git_retcon.errors import RetconError
from git_retcon.git import ownership
from git_retcon.git.ids import CommitId
from git_retcon.git.plumbing import clean_env, full_sha, main_workdir, ref_target, short
from git_retcon.reconstruct.branch import Branches
from git_retcon.state import oplog
from git_retcon.state.store import Store


@dataclass
class Level:
    """Logical commit k's branch of the stack."""

    k: int
    branch: str
    tip: CommitId
    summary: str


def stack(store: Store, name: str, prefix: str | None, push: str | None, say: Callable[[str], None]) -> None:
    with store.lock(name):
        stored = store.load(name)
        spec = stored.spec
        prefix = f"{spec.cleaned}-" if prefix is None else prefix
        levels = _levels(store, name, prefix)
        if not levels:
            raise RetconError(f"no logical commit of '{name}' is complete yet: run `git retcon run {name}` first")
        refs = [ownership.branch_ref(level.branch) for level in levels]
        with oplog.recording(store, name, "stack", refs):
            base = Branches(store.repo, spec).base
            for level in levels:
                _set(store, name, base, level, say)
        if (k := spec.current()) is not None:
            say(f"Commit {k + 1}/{len(spec.commits)} and those after it are not complete: no branch for them yet.")
    if push:
        for level in levels:
            _push(store, push, level.branch, say)


def _levels(store: Store, name: str, prefix: str) -> list[Level]:
    """The stack's branches, for the complete logical commits at the bottom (one with no commit
    of its own shares the branch below it, and gets none)."""
    spec = store.load(name).spec
    out: list[Level] = []
    for k, c in enumerate(spec.commits):
        if c.state != "complete":
            break
        if c.created:
            out.append(Level(k, f"{prefix}{k + 1}", full_sha(store.repo, c.created[-1]), c.summary))
    for level in out:
        problem = ownership.name_problem(level.branch)
        if problem:
            raise RetconError(f"cannot name a stack branch '{level.branch}': {problem}: choose another --prefix")
    return out


def _set(store: Store, name: str, base: str, level: Level, say: Callable[[str], None]) -> None:
    repo = store.repo
    now = ref_target(repo, ownership.branch_ref(level.branch))
    label = f"{level.branch} -> {short(level.tip)} {level.summary}"
    if now == level.tip:
        say(f"{label} (as it was)")
        return
    if now is not None:
        why = ownership.foreign(repo, name, level.branch, base, [], False)
        if why is not None:
            say(f"{label}: not moved: {why}")
            return
    try:
        ownership.move_branch(repo, level.branch, level.tip, now, f"stack {name}: commit {level.k + 1}")
    except ownership.NotOurs:
        raise
    except RetconError as exc:   # a ref in the way (a file where a directory must be), say
        say(f"{label}: not {'moved' if now else 'made'}: {exc}")
        return
    say(f"{label} (" + (f"moved from {short(now)})" if now else "made)"))


def _push(store: Store, remote: str, branch: str, say: Callable[[str], None]) -> None:
    """One branch, force-with-lease: what the remote has must be what we last saw of it."""
    ref = ownership.branch_ref(branch)
    proc = subprocess.run(["git", "push", "--force-with-lease=" + ref, remote, f"{ref}:{ref}"],
                          cwd=main_workdir(store.repo), env=clean_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        raise RetconError(f"pushing {branch} to {remote} failed: {lines[-1] if lines else f'exit {proc.returncode}'}"
                          f": the branches below it are pushed; fetch ({'git fetch ' + remote}) and look, then run "
                          f"the command again")
    say(f"Pushed {branch} to {remote} ({short(ref_target(store.repo, ref))}).")
