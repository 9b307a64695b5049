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

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import ownership
from git_retcon.git.ids import CommitId
from git_retcon.git.plumbing import clean_env, full_sha, git, main_workdir, ref_target, short
from git_retcon.reconstruct.branch import Branches
from git_retcon.state import oplog
from git_retcon.state.store import Store
from git_retcon.ui import plural


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
            _push(store, name, spec.source, push, level.branch, say)


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


def _push(store: Store, name: str, source: str, remote: str, branch: str, say: Callable[[str], None]) -> None:
    """One branch, force-with-lease on the value the remote has now, and only when every commit
    there that the push would drop is git-retcon's for this spec, or one the source has taken
    (cherry-picked, then absorbed): a fetch never turns a colleague's commit into ours."""
    ref = ownership.branch_ref(branch)
    top = main_workdir(store.repo)
    listed = git(top, "ls-remote", remote, ref, check=False).split()
    theirs = listed[0] if listed else ""
    mine = ref_target(store.repo, ref)
    if theirs and theirs != mine:
        dropped = _not_ours(store, name, source, remote, branch, theirs, mine)
        if dropped:
            shown = ", ".join(f"{short(s)} {subject}" for s, subject in dropped[:3])
            picks = " ".join(s[:12] for s, _ in reversed(dropped))
            raise RetconError(
                f"{branch} on {remote} has {plural(len(dropped), 'commit')} git-retcon did not push ({shown}): "
                f"nothing is overwritten; keep them: take them into '{source}' (`git cherry-pick {picks}` "
                f"there), then `git retcon absorb {name}` and `git retcon stack {name} --push {remote}`")
    proc = subprocess.run(["git", "push", f"--force-with-lease={ref}:{theirs}", remote, f"{ref}:{ref}"],
                          cwd=top, env=clean_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        raise RetconError(f"pushing {branch} to {remote} failed: {lines[-1] if lines else f'exit {proc.returncode}'}"
                          f": the branches below it are pushed; run the command again (it pushes only over "
                          f"what git-retcon pushed)")
    say(f"Pushed {branch} to {remote} ({short(ref_target(store.repo, ref))}).")


def _not_ours(store: Store, name: str, source: str, remote: str, branch: str, theirs: str,
              mine: str | None) -> list[tuple[str, str]]:
    """The commits of the remote's branch that pushing ours would drop and that are neither
    git-retcon's for this spec nor taken into the source (a patch the source has), newest first."""
    repo = store.repo
    if not isinstance(repo.get(theirs), pygit2.Commit):
        raise RetconError(f"{branch} on {remote} is at {short(theirs)}, which this repository has not seen: "
                          f"fetch it (`git fetch {remote}`) and run the command again; commits git-retcon did "
                          "not push are never overwritten")
    walk = repo.walk(theirs, pygit2.enums.SortMode.TOPOLOGICAL)
    if mine:
        walk.hide(mine)
    found = [c for c in walk if not ownership.made_by(repo, str(c.id), name)]
    if not found:
        return []
    # `git cherry SOURCE THEIRS MINE`: `-` marks a commit whose patch the source has.
    out = git(main_workdir(repo), "cherry", source, theirs, *([mine] if mine else []), check=False)
    taken = {line[2:].strip() for line in out.splitlines() if line.startswith("- ")}
    return [(str(c.id), (c.message or "").splitlines()[0][:60] if c.message else "")
            for c in found if str(c.id) not in taken]
