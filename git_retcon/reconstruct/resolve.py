"""`git retcon resolve`: a human's way out of a stuck stop.

`resolve` appends `{ resolved = MSG }` to the stuck commit, so the next run goes on.
With `--redo` (the commit extracted afresh after a spec edit) it also drops the commit's
created commits: from its history in the spec, and from the cleaned branch's tip, which
moves back to the commit before them. Only git-retcon's own commits go (each carries
this spec's note, and they are exactly the branch's tip), compare-and-swap, never while
the branch is checked out. The spec is written before the branch moves: a crash in
between leaves commits past the record, which the next run adopts (no redo, no harm).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from git_retcon.errors import RetconError
from git_retcon.git.ids import CommitId
from git_retcon.git.ownership import move_branch, refuse_checked_out
from git_retcon.git.plumbing import find_commit, first_parent_chain, full_sha, ref_target, short
from git_retcon.state import notes, oplog
from git_retcon.state import spec as specmod
from git_retcon.state.store import Store, Stored
from git_retcon.ui import plural


@dataclass
class Resolution:
    """What resolve did, for the command to say."""

    index: int                  # the resolved logical commit, 0-based
    total: int
    summary: str
    redo: bool
    dropped: list[CommitId] = field(default_factory=list)   # with --redo: the commits dropped from the branch
    model: str | None = None    # the model of the run that stopped, for the next command to repeat


def resolve(store: Store, name: str, message: str, redo_it: bool) -> Resolution:
    """Record how the stuck commit was resolved (with redo_it, also drop its commits), under the spec's lock."""
    with store.lock(name):
        stored = store.load(name)   # re-read under the lock
        with oplog.recording(store, name, "resolve", oplog.refs_of(stored.spec.cleaned, name)):
            return _resolve(store, stored, message, redo_it)


def _resolve(store: Store, stored: Stored, message: str, redo_it: bool) -> Resolution:
    spec = stored.spec
    k = spec.current()
    if k is None or spec.commits[k].state != "stuck":
        state = "complete" if k is None else f"commit {k + 1} is {spec.commits[k].state}"
        raise RetconError(f"nothing is stuck in '{stored.name}' ({state}): there is nothing to resolve")
    model = notes.last_run_model(store, stored.commit)
    dropped: list[CommitId] = []
    if redo_it:
        dropped = redo(store, stored, k, message)
    else:
        spec.commits[k].history.append(specmod.Resolved(message))
        store.update(stored, f"commit {k + 1} resolved")
    return Resolution(k, len(spec.commits), spec.commits[k].summary, redo_it, dropped, model)


def redo(store: Store, stored: Stored, k: int, message: str) -> list[CommitId]:
    """Resolve stuck commit k and drop its created commits; return the dropped shas."""
    repo, spec = store.repo, stored.spec
    c = spec.commits[k]
    recorded_k = [full_sha(repo, s) for s in c.created]
    dropped: list[CommitId] = []
    parent = tip = None
    if recorded_k:
        refuse_checked_out(repo, spec.cleaned)
        tip = ref_target(repo, f"refs/heads/{spec.cleaned}")
        first = find_commit(repo, recorded_k[0])
        if first is None or not first.parent_ids:
            raise RetconError(f"commit {short(recorded_k[0])} of commit {k + 1} is missing from the repository: "
                              "resolve without --redo")
        parent = str(first.parent_ids[0])
        # What of commit k is still on the branch: all of it, or the first ones when a human took
        # the last back by hand (those are forgotten with the rest).
        dropped = first_parent_chain(repo, tip, parent) if tip is not None else []
        if tip is None or dropped != recorded_k[: len(dropped)]:
            raise RetconError(
                f"branch '{spec.cleaned}' moved since the run stopped (its tip is {short(tip)}, commit {k + 1}'s "
                f"last is {short(recorded_k[-1])}): --redo drops only the commits git-retcon recorded at the tip. "
                f"Run `git retcon run {spec.cleaned}` to adopt what was added (then resolve --redo drops it "
                "too); nothing was changed")
        foreign = [s for s in dropped if not notes.made_by(store, s, stored.name)]
        if foreign:
            raise RetconError(f"commit {short(foreign[0])} on '{spec.cleaned}' was not made by git-retcon for "
                              f"'{stored.name}': --redo drops only its own commits; nothing was changed")
    c.history = [e for e in c.history if not isinstance(e, (specmod.CommitCreated, specmod.Squashed,
                                                               specmod.Absorbed))]
    c.history.append(specmod.Resolved(message))
    store.update(stored, f"commit {k + 1} resolved, redo: dropped {plural(len(recorded_k), 'commit')}")
    if dropped:
        assert parent is not None and tip is not None
        move_branch(repo, spec.cleaned, parent, tip, f"redo commit {k + 1}: drop {plural(len(dropped), 'commit')}")
    return dropped
