"""Sharing a run's state with a colleague: `git retcon push` and `git retcon pull`.

What moves: the spec chains (refs/retcon/*), both notes refs, and each cleaned
branch, which is kept on the remote as refs/retcon-branches/<cleaned> so that an
unfinished branch is never published as a branch. Refspecs are given on the
command line, so the user's remote configuration is never changed.

A spec chain only fast-forwards (a diverged one is an error that says how to pick
a side); notes are merged, a note both sides changed keeping the union of its
JSON keys (ours win). Every local ref moves compare-and-swap, after the whole
pull was checked, so a refused pull changes nothing but the remote-tracking refs.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git.plumbing import (
    cas_ref,
    checked_out_in,
    clean_env,
    git,
    main_workdir,
    ref_target,
    short,
)
from git_retcon.state.store import NOTES_REF, SPEC_PREFIX, TESTS_REF, Store

BRANCHES = "refs/retcon-branches/"
NOTES = (NOTES_REF, TESTS_REF)


def tracking(remote: str) -> tuple[str, str, str]:
    """Where pull keeps the remote's state: specs, branches, and notes (under
    refs/notes/, the only place `git notes merge` accepts a notes ref)."""
    return (f"refs/retcon-remote/{remote}/specs/", f"refs/retcon-remote/{remote}/branches/",
            f"refs/notes/remotes/{remote}/")


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
    # A cleaned branch follows its spec (an abort and a new run rewrite it).
    refspecs += [f"+refs/heads/{n}:{BRANCHES}{n}" for n in names if ref_target(repo, f"refs/heads/{n}")]
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
        return [f"{remote} is up to date: {len(names)} specs, notes and branches."]
    return [f"Pushed to {remote}: {', '.join(changed)}"]


# -- pull -------------------------------------------------------------------------


@dataclass
class Move:
    ref: str
    new: str
    old: str | None
    what: str


def pull(repo: pygit2.Repository, remote: str | None) -> list[str]:
    remote = pick_remote(repo, remote)
    specs, branches, notes = tracking(remote)
    proc = _git(repo, "fetch", "--no-tags", "--no-write-fetch-head", "--prune", remote,
                f"+{SPEC_PREFIX}*:{specs}*", f"+{BRANCHES}*:{branches}*", f"+refs/notes/retcon*:{notes}retcon*")
    if proc.returncode != 0:
        err = [line for line in proc.stderr.splitlines() if line.strip()]
        raise RetconError(f"git fetch from {remote} failed: {err[-1] if err else 'exit ' + str(proc.returncode)}")
    theirs_specs = _under(repo, specs)
    if not theirs_specs:
        return [f"{remote} has no git-retcon state: push it from the other clone with `git retcon push`"]
    moves: list[Move] = []
    problems: list[str] = []
    for name, theirs in theirs_specs.items():
        ref = SPEC_PREFIX + name
        how = _relation(repo, ref_target(repo, ref), theirs)
        if how == "diverged":
            problems.append(
                f"spec '{name}' changed both here and on {remote}: keep theirs with "
                f"`git update-ref {ref} {specs}{name}`, or yours with "
                f"`git push {remote} +{ref}:{ref}`, then pull again")
        elif how in ("create", "forward"):
            moves.append(Move(ref, theirs, ref_target(repo, ref), f"spec '{name}'"))
    for name, theirs in _under(repo, branches).items():
        ref = f"refs/heads/{name}"
        ours = ref_target(repo, ref)
        how = _relation(repo, ours, theirs)
        if how == "diverged":
            problems.append(
                f"branch '{name}' has commits here that {remote}'s lacks: take theirs with "
                f"`git branch -f {name} {branches}{name}`, or push yours with `git retcon push {remote}`")
        elif how in ("create", "forward"):
            where = checked_out_in(repo, ref) if ours else None
            if where is not None:
                problems.append(f"branch '{name}' is checked out in {where} and must move to "
                                f"{short(theirs)}: switch that work tree to another branch, then pull again")
            moves.append(Move(ref, theirs, ours, f"branch '{name}'"))
    if problems:
        raise RetconError("; ".join(problems))
    done = []
    for m in moves:
        cas_ref(repo, m.ref, m.new, m.old, f"retcon pull {remote}")
        done.append(f"{m.what}: {'created' if m.old is None else 'fast-forwarded'} ({short(m.new)})")
    for ref in NOTES:
        their_notes = ref_target(repo, notes + ref.removeprefix("refs/notes/"))
        if their_notes is not None:
            result = _merge_notes(repo, ref, notes + ref.removeprefix("refs/notes/"), their_notes)
            if result:
                done.append(f"{ref}: {result}")
    done += _hints(Store(repo), remote, list(theirs_specs))
    return done or [f"Already up to date with {remote}."]


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


def _merge_notes(repo: pygit2.Repository, ref: str, theirs_ref: str, theirs: str) -> str:
    """Bring the remote's notes into ref; returns what happened ('' for nothing)."""
    ours = ref_target(repo, ref)
    how = _relation(repo, ours, theirs)
    if how in ("same", "behind"):
        return ""
    if how in ("create", "forward"):
        cas_ref(repo, ref, theirs, ours, "retcon pull: notes")
        return "fast-forwarded" if ours else "created"
    # Both sides added notes: a merge commit, built on a scratch ref and swapped in.
    assert ours is not None  # a missing ref is "create"
    store = Store(repo)
    scratch = f"refs/notes/retcon-merge-{os.getpid()}"
    base = f"{scratch}-base"
    cas_ref(repo, scratch, ours, None, "retcon pull: notes merge")
    common = repo.merge_base(ours, theirs)  # None: both sides started their notes apart
    if common is not None:
        cas_ref(repo, base, str(common), None, "retcon pull: notes merge base")
    try:
        both = _conflicts(repo, ref, theirs_ref, base)
        git(main_workdir(repo), "notes", f"--ref={scratch}", "merge", "-q", "-s", "ours", theirs_ref)
        for target, (mine, other) in both.items():
            store.write_note(scratch, target, {**other, **mine})
        merged = ref_target(repo, scratch)
        assert merged is not None
        cas_ref(repo, ref, merged, ours, "retcon pull: notes merged")
    finally:
        for r in (scratch, base):
            if ref_target(repo, r) is not None:
                repo.references.delete(r)
    return f"merged ({len(both)} notes changed on both sides, keys combined)" if both else "merged"


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
