"""Sharing a run's state with a colleague: `git retcon push` and `git retcon pull`.

What moves: the spec chains (refs/retcon/*), both notes refs, and each cleaned
branch, which is kept on the remote as refs/retcon-branches/<cleaned> so that an
unfinished branch is never published as a branch. Refspecs are given on the
command line, so the user's remote configuration is never changed.

A spec chain only fast-forwards (a diverged one is an error that says how to pick
a side); notes are merged, a note both sides changed keeping the union of its
JSON keys (ours win). A local branch is created or moved only as the cleaned
branch of a spec the pull brings, and only when its name is free or the branch is
git-retcon's (git/ownership.py). The pull is one transaction: fetched into a
scratch namespace, every move decided and checked, then all made at once
(compare-and-swap); a refused pull changes nothing here.
"""
from __future__ import annotations

import json
import os
import subprocess
import uuid
from dataclasses import dataclass
from typing import Any

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import ownership
from git_retcon.git.plumbing import (
    cas_ref,
    clean_env,
    git,
    main_workdir,
    ref_target,
    short,
)
from git_retcon.state import spec as specmod
from git_retcon.state.store import NOTES_REF, SPEC_PREFIX, TESTS_REF, Store, sweep_dead_scratch

BRANCHES = "refs/retcon-branches/"
NOTES = (NOTES_REF, TESTS_REF)


def pick_remote(repo: pygit2.Repository, remote: str | None) -> str:
    """REMOTE, else the only remote, else origin."""
    names = [n for n in repo.remotes.names() if n is not None]  # typed optional; listed remotes have names
    if remote:
        if remote not in names:
            raise RetconError(f"no remote named '{remote}': see `git remote -v`")
        return remote
    if len(names) == 1:
        return names[0]
    if "origin" in names:
        return "origin"
    if not names:
        raise RetconError("this repository has no remote: add one with `git remote add NAME URL`")
    raise RetconError(f"several remotes and none is origin: name one of {', '.join(names)}")


def _git(repo: pygit2.Repository, *args: str) -> subprocess.CompletedProcess[str]:
    """git with its exit code and both streams (a refused push is an answer, not a crash)."""
    return subprocess.run(["git", *args], cwd=main_workdir(repo), env=clean_env(),
                          text=True, capture_output=True)


# -- push -------------------------------------------------------------------------


def push(repo: pygit2.Repository, remote: str | None, no_verify: bool = False) -> list[str]:
    remote = pick_remote(repo, remote)
    store = Store(repo)
    names = store.names()
    if not names:
        raise RetconError("no specs to push: create one with `git retcon plan`")
    # No '+' on specs and notes: git refuses anything but a fast-forward, and
    # --atomic makes one refusal refuse the whole push.
    refspecs = [f"{SPEC_PREFIX}{n}:{SPEC_PREFIX}{n}" for n in names]
    refspecs += [f"{ref}:{ref}" for ref in NOTES if ref_target(repo, ref)]
    # A cleaned branch follows its spec (an abort and a new run rewrite it); a branch of
    # that name git-retcon did not make is the user's, not the spec's, and stays here.
    kept = []
    for n in names:
        if ref_target(repo, ownership.branch_ref(n)) is None:
            continue
        spec = store.load(n).spec
        if ownership.spec_branch_foreign(repo, n, spec.cleaned, spec.source, spec.remote,
                                         [s for c in spec.commits for s in c.created],
                                         any(c.history for c in spec.commits)):
            kept.append(n)
        else:
            refspecs.append(f"+{ownership.branch_ref(n)}:{BRANCHES}{n}")
    note = [f"Not pushed: branch '{n}' is not git-retcon's (see `git retcon status {n}`)." for n in kept]
    proc = _git(repo, "push", "--atomic", "--porcelain", *(["--no-verify"] if no_verify else []),
                remote, *refspecs)
    rows = [line.split("\t") for line in proc.stdout.splitlines() if line.count("\t") >= 2]
    if proc.returncode != 0:
        stale = [to for flag, ref, summary in rows if flag == "!" and ("fetch first" in summary
                 or "non-fast-forward" in summary) for to in [ref.partition(":")[2]]]
        if stale:
            raise RetconError(f"{remote} has state this clone lacks ({', '.join(stale)}): "
                              f"run `git retcon pull {remote}`, then push again")
        err = [line for line in proc.stderr.splitlines() if line.strip()]
        raise RetconError(f"git push to {remote} failed: {err[-1] if err else 'exit ' + str(proc.returncode)}")
    changed = [ref.partition(":")[2] for flag, ref, _ in rows if flag != "="]
    if not changed:
        return [f"{remote} is up to date: {len(names)} specs, notes and branches."] + note
    return [f"Pushed to {remote}: {', '.join(changed)}"] + note


# -- pull -------------------------------------------------------------------------


@dataclass
class Move:
    """One local ref the pull moves, compare-and-swap from old, and the line that says so."""

    ref: str
    new: str
    old: str | None
    says: str


@dataclass(frozen=True)
class Scratch:
    """Where one pull fetches the remote's state: refs of its own, gone when it ends."""

    refs: str           # the remote's specs under refs: specs/, its branches under branches/
    notes: str          # under refs/notes/, the only place `git notes merge` accepts

    @classmethod
    def new(cls) -> Scratch:
        tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"   # the pid: a killed pull's refs are swept
        return cls(f"{_PULL}{tag}/", f"{_PULL_NOTES}{tag}/")

    @property
    def specs(self) -> str:
        return self.refs + "specs/"

    @property
    def branches(self) -> str:
        return self.refs + "branches/"


_PULL = "refs/retcon-pull/"
_PULL_NOTES = "refs/notes/retcon-pull/"


def pull(repo: pygit2.Repository, remote: str | None) -> list[str]:
    """Fetch REMOTE's state into a scratch namespace, decide every local move, check
    them all, then make them in one transaction: a refused pull changes nothing here."""
    remote = pick_remote(repo, remote)
    sweep_dead_scratch(repo, (_PULL, _PULL_NOTES))  # what a killed pull left
    scratch = Scratch.new()
    try:
        return _pull(repo, remote, scratch)
    finally:
        for ref in list(repo.references):
            if ref.startswith((scratch.refs, scratch.notes)):
                repo.references.delete(ref)


def _pull(repo: pygit2.Repository, remote: str, scratch: Scratch) -> list[str]:
    proc = _git(repo, "fetch", "--no-tags", "--no-write-fetch-head", remote, f"+{SPEC_PREFIX}*:{scratch.specs}*",
                f"+{BRANCHES}*:{scratch.branches}*", f"+refs/notes/retcon*:{scratch.notes}retcon*")
    if proc.returncode != 0:
        err = [line for line in proc.stderr.splitlines() if line.strip()]
        raise RetconError(f"git fetch from {remote} failed: {err[-1] if err else 'exit ' + str(proc.returncode)}")
    theirs_specs = _under(repo, scratch.specs)
    if not theirs_specs:
        return [f"{remote} has no git-retcon state: push it from the other clone with `git retcon push`"]
    store = Store(repo)
    their_branches = _under(repo, scratch.branches)
    moves: list[Move] = []
    problems: list[str] = []
    for name, theirs in theirs_specs.items():
        _pull_spec(store, remote, name, theirs, their_branches, moves, problems)
    for ref in NOTES:
        theirs_ref = scratch.notes + ref.removeprefix("refs/notes/")
        their_notes = ref_target(repo, theirs_ref)
        if their_notes is not None and not problems:
            move = _merge_notes(repo, ref, theirs_ref, their_notes, scratch.notes + "merge-")
            if move is not None:
                moves.append(move)
    if problems:
        raise RetconError("; ".join(problems) + " (the pull changed nothing here)")
    _apply(repo, moves, f"retcon pull {remote}")
    done = [m.says for m in moves] + _hints(store, remote, list(theirs_specs))
    return done or [f"Already up to date with {remote}."]


def _pull_spec(store: Store, remote: str, name: str, theirs: str, their_branches: dict[str, str],
               moves: list[Move], problems: list[str]) -> None:
    """The moves a pulled spec needs here (its chain, then its cleaned branch), or why not."""
    repo = store.repo
    ref = SPEC_PREFIX + name
    ours = ref_target(repo, ref)
    how = _relation(repo, ours, theirs)
    if how == "diverged":
        problems.append(
            f"spec '{name}' changed both here and on {remote}: keep theirs with "
            f"`git update-ref {ref} {theirs}`, or yours with "
            f"`git push {remote} +{ref}:{ref}`, then pull again")
        return
    try:
        spec = store.read(theirs if how in ("create", "forward") else ours or theirs, f"{remote}:{ref}")
    except RetconError as exc:
        problems.append(f"spec '{name}' on {remote} cannot be read: {exc}")
        return
    if ours is None:
        why = ownership.name_problem(name) or ownership.taken_problem(repo, name, spec.source, spec.remote)
        if why:
            problems.append(f"spec '{name}' on {remote} cannot be created here: {why}")
            return
    if how in ("create", "forward"):
        moves.append(Move(ref, theirs, ours, f"spec '{name}': {_verb(ours)} ({short(theirs)})"))
    branch = their_branches.get(spec.cleaned)
    if branch is not None:
        _pull_branch(store, remote, name, spec, branch, moves, problems)


def _pull_branch(store: Store, remote: str, name: str, spec: specmod.Spec, theirs: str,
                 moves: list[Move], problems: list[str]) -> None:
    """A pulled spec's cleaned branch: created when the name is free, fast-forwarded when
    the local branch is git-retcon's for that spec and not checked out."""
    repo = store.repo
    cleaned = spec.cleaned
    ref = ownership.branch_ref(cleaned)
    ours = ref_target(repo, ref)
    how = _relation(repo, ours, theirs)
    if how == "diverged":
        problems.append(
            f"branch '{cleaned}' has commits here that {remote}'s lacks: take theirs with "
            f"`git branch -f {cleaned} {theirs}`, or push yours with `git retcon push {remote}`")
        return
    if how not in ("create", "forward"):
        return
    if ours is None:
        why = ownership.name_problem(cleaned) or ownership.taken_problem(repo, cleaned, spec.source, spec.remote)
    else:
        why = _foreign(store, name, spec)
        where = ownership.checked_out_in(repo, cleaned)
        if why is None and where is not None:
            why = (f"it is checked out in {where} and must move to {short(theirs)}: switch that work tree "
                   "to another branch, then pull again")
    if why:
        problems.append(f"branch '{cleaned}' cannot be {'created' if ours is None else 'moved'} here: {why}")
        return
    moves.append(Move(ref, theirs, ours, f"branch '{cleaned}': {_verb(ours)} ({short(theirs)})"))


def _verb(old: str | None) -> str:
    return "created" if old is None else "fast-forwarded"


def _foreign(store: Store, name: str, pulled: specmod.Spec) -> str | None:
    """Why the local cleaned branch is not git-retcon's, judged by the local spec (what
    this clone ran) and by the pulled one (what the other clone ran): either will do."""
    specs = [pulled] + ([store.load(name).spec] if store.exists(name) else [])
    why: str | None = None
    for spec in specs:
        why = ownership.spec_branch_foreign(
            store.repo, name, spec.cleaned, spec.source, spec.remote,
            [s for c in spec.commits for s in c.created], any(c.history for c in spec.commits))
        if why is None:
            return None
    return why


def _apply(repo: pygit2.Repository, moves: list[Move], message: str) -> None:
    """Every move at once: all refs locked, each checked against what the pull saw,
    then all written; a ref that moved meanwhile refuses the lot."""
    if not moves:
        return
    try:
        with repo.transaction() as txn:
            for m in moves:
                txn.lock_ref(m.ref)
            for m in moves:
                if ref_target(repo, m.ref) != m.old:
                    raise RetconError(f"{m.ref} moved while git-retcon was pulling: the pull changed nothing "
                                      "here; pull again")
            for m in moves:
                txn.set_target(m.ref, m.new, message=message)
    except pygit2.GitError as exc:
        raise RetconError(f"could not update the pulled refs: {exc}: pull again") from None


def _under(repo: pygit2.Repository, prefix: str) -> dict[str, str]:
    return {r[len(prefix):]: ref_target(repo, r) or "" for r in repo.references if r.startswith(prefix)}


def _relation(repo: pygit2.Repository, ours: str | None, theirs: str) -> str:
    """What taking theirs would be: create, forward, same, behind (ours is newer), diverged."""
    if ours is None:
        return "create"
    if ours == theirs:
        return "same"
    if repo.descendant_of(theirs, ours):
        return "forward"
    if repo.descendant_of(ours, theirs):
        return "behind"
    return "diverged"


def _merge_notes(repo: pygit2.Repository, ref: str, theirs_ref: str, theirs: str, scratch: str) -> Move | None:
    """The move that brings the remote's notes into ref (None: nothing to bring). Both
    sides added notes: a merge commit, built on scratch refs (the pull drops them)."""
    ours = ref_target(repo, ref)
    how = _relation(repo, ours, theirs)
    if how in ("same", "behind"):
        return None
    if how in ("create", "forward"):
        return Move(ref, theirs, ours, f"{ref}: {_verb(ours)}")
    assert ours is not None  # a missing ref is "create"
    store = Store(repo)
    work = scratch + ref.removeprefix("refs/notes/")
    base = f"{work}-base"
    cas_ref(repo, work, ours, None, "retcon pull: notes merge")
    common = repo.merge_base(ours, theirs)  # None: both sides started their notes apart
    if common is not None:
        cas_ref(repo, base, str(common), None, "retcon pull: notes merge base")
    both = _conflicts(repo, ref, theirs_ref, base)
    git(main_workdir(repo), "notes", f"--ref={work}", "merge", "-q", "-s", "ours", theirs_ref)
    for target, (mine, other) in both.items():
        store.write_note(work, target, {**other, **mine})
    merged = ref_target(repo, work)
    assert merged is not None
    return Move(ref, merged, ours, f"{ref}: merged" + (
        f" ({len(both)} notes changed on both sides, keys combined)" if both else ""))


def _note(repo: pygit2.Repository, target: str, ref: str) -> pygit2.Note | None:
    try:
        return repo.lookup_note(target, ref)
    except KeyError:
        return None


def _conflicts(repo: pygit2.Repository, ours_ref: str, theirs_ref: str,
               base_ref: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Objects whose JSON note both sides changed since base_ref, with both notes
    (a note only one side changed needs nothing: the merge takes that side's)."""
    out = {}
    for note in repo.notes(theirs_ref):  # type: ignore[call-arg]  # the stub lacks notes(ref), which pygit2 has
        target = str(note.annotated_id)
        mine = _note(repo, target, ours_ref)
        if mine is None or mine.id == note.id:
            continue
        old = _note(repo, target, base_ref) if ref_target(repo, base_ref) else None
        if old is not None and old.id in (mine.id, note.id):
            continue
        try:
            a, b = json.loads(mine.message), json.loads(note.message)
        except ValueError:
            continue  # not ours to combine: `-s ours` keeps this side's text
        if isinstance(a, dict) and isinstance(b, dict):
            out[target] = (a, b)
    return out


def _hints(store: Store, remote: str, names: list[str]) -> list[str]:
    """What a fresh clone still needs before `run` or `check` can use a pulled spec."""
    hints = []
    for name in names:
        spec = store.load(name).spec
        for branch in dict.fromkeys((spec.source, spec.remote)):
            if store.repo.references.get(f"refs/heads/{branch}") is None and \
                    store.repo.references.get(f"refs/remotes/{branch}") is None and \
                    store.repo.references.get(f"refs/remotes/{remote}/{branch}") is not None:
                hints.append(f"spec '{name}' needs branch '{branch}' here: "
                             f"git branch {branch} {remote}/{branch}")
    return list(dict.fromkeys(hints))
