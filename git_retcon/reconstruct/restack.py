"""Restack: the source was rebased onto a moved remote, so the clean history is rebuilt on the
new merge base with the same placements (what `--into` and absorb put where stays there).

Each commit of the cleaned branch is re-made as the same change on the new base: its old
tree merged three-way onto the new parent's tree, from its old parent's (a cherry-pick),
with its message, author and committer. A commit whose change does not merge there (the
remote changed the same lines) stops the restack at its logical commit: the ones below it
are kept, re-made, and it and those after it are built afresh from the rebased source by
the run (their placements are said to be lost, not kept silently). Every re-made commit is
built and tested as absorb does it (a tree recorded already answers at once).

Writes in absorb's order: notes, the spec (CAS), the branch (CAS); a kill between the last
two is finished by absorb.finish_interrupted. `run` and `absorb` call it inside their
operation record, so `git retcon undo` takes it back with the rest.
"""
from __future__ import annotations

from dataclasses import dataclass

import pygit2

from git_retcon.errors import RetconError
from git_retcon.failpoint import failpoint
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.ownership import move_branch, refuse_checked_out
from git_retcon.git.plumbing import full_sha, get_commit, get_tree, short
from git_retcon.git.rebased import older_base
from git_retcon.reconstruct import remake
from git_retcon.reconstruct.branch import Branches, recorded, refuse_foreign
from git_retcon.reconstruct.remake import Remade, copy_onto, merged, verify
from git_retcon.state import spec as specmod
from git_retcon.state.store import Store, Stored
from git_retcon.ui import UI, plural


@dataclass
class Conflict:
    """Logical commit k's commit sha does not merge onto the new base: these paths."""

    k: int
    sha: CommitId
    paths: list[str]


def restack_if_rebased(store: Store, stored: Stored, br: Branches, ui: UI) -> bool:
    """Restack a complete spec whose source was rebased onto a moved remote (under the spec's
    lock, inside the caller's operation record); False when it was not. Afterwards the spec is
    complete, or its first logical commit not done is the run's to finish (said here)."""
    repo, spec = store.repo, stored.spec
    made = recorded(repo, spec)
    if spec.current() is not None or (old := older_base(repo, made, br.cleaned_tip, br.base)) is None:
        return False
    refuse_foreign(repo, stored.name, spec, br)
    refuse_checked_out(repo, spec.cleaned)
    tip = made[-1]
    ui.line(f"'{spec.source}' was rebased onto a new base: restacking '{spec.cleaned}' from {short(old)} "
            f"onto {short(br.base)}, with the same logical commits and placements...")
    remade, conflict = _remake(repo, spec, br.base)
    if conflict is not None:
        c = spec.commits[conflict.k]
        later = len(spec.commits) - conflict.k - 1
        after = f" and the {plural(later, 'logical commit')} after it" if later else ""
        ui.line(f"Commit {conflict.k + 1}/{len(spec.commits)} ({c.summary}) does not apply on the new base: "
                f"{short(conflict.sha)} changes lines the remote changed too ({', '.join(conflict.paths[:5])}). "
                f"It{after} will be built "
                f"afresh from '{spec.source}' as rebased: the run takes their changes again, and what absorb "
                "or --into placed in them is not kept there.")
    if any(r.commits for r in remade):
        verify(store, stored, remade, ui)
    _write(store, stored, br.base, old, tip, remade, conflict, ui)
    return True


def _remake(repo: pygit2.Repository, spec: specmod.Spec, base: CommitId) -> tuple[list[Remade], Conflict | None]:
    """Every logical commit's commits re-made on base, up to the first that does not merge."""
    parent = base
    out: list[Remade] = []
    for k, c in enumerate(spec.commits):
        commits: list[CommitId] = []
        for sha in (full_sha(repo, s) for s in c.created):
            old = get_commit(repo, sha)
            ancestor = TreeId(str(old.parents[0].tree_id)) if old.parents else None
            if ancestor is None:
                raise RetconError(f"{short(sha)} has no parent, so it cannot be restacked: start over with "
                                  f"`git retcon abort {spec.cleaned}`")
            tree = merged(repo, ancestor, tree_of(get_commit(repo, parent)), tree_of(old))
            if tree is None:
                return out, Conflict(k, sha, _conflicted(repo, ancestor, tree_of(get_commit(repo, parent)),
                                                          tree_of(old)))
            parent = copy_onto(repo, sha, tree, parent)
            commits.append(parent)
        out.append(Remade(k, commits))
    return out, None


def _conflicted(repo: pygit2.Repository, ancestor: TreeId, ours: TreeId, theirs: TreeId) -> list[str]:
    """The paths a merge that does not apply conflicts on (said to the user)."""
    index = repo.merge_trees(get_tree(repo, ancestor), get_tree(repo, ours), get_tree(repo, theirs))
    paths = {e.path for entries in (index.conflicts or []) for e in entries if e is not None}
    return sorted(paths)


def _write(store: Store, stored: Stored, base: CommitId, old: str, tip: CommitId, remade: list[Remade],
           conflict: Conflict | None, ui: UI) -> None:
    """Notes, the spec (CAS), then the branch (CAS): up to the first commit that failed or
    did not merge; the logical commits after it are the run's to build again."""
    repo, spec = store.repo, stored.spec
    failed, kept = remake.kept(remade)
    remake.write_notes(store, stored, kept)
    what = f"restacked onto {short(base)}, the new merge base of '{spec.source}' and '{spec.remote}' " \
           f"(was {short(old)})"
    for r in kept:
        target = spec.commits[r.k]
        if not r.commits:
            continue   # complete with no commit of its own: still nothing left for it
        if target.history and isinstance(target.history[-1], specmod.Complete):
            target.history.pop()
        target.history += [specmod.Absorbed(what), *(specmod.CommitCreated(s) for s in r.commits)]
        if r.passed:
            target.history.append(specmod.Complete())
    # The last logical commit restacked (a failing one keeps its commits for the fix loop); those
    # after it are built afresh by the run, on the restacked commits.
    last = failed.k if failed is not None else conflict.k - 1 if conflict is not None else len(spec.commits)
    for j, c in enumerate(spec.commits):
        if j > last:
            c.history.clear()
    new_tip = next((r.commits[-1] for r in reversed(kept) if r.commits), base)
    store.update(stored, f"restack onto {short(base)}" + (
        f": up to commit {failed.k + 1}, which fails" if failed is not None else
        f": up to commit {conflict.k}, commit {conflict.k + 1} does not merge" if conflict is not None else ""))
    failpoint("restack-spec-saved")   # the branch not moved yet: absorb.finish_interrupted moves it
    move_branch(repo, spec.cleaned, new_tip, tip, "restack")
    ui.line(f"'{spec.cleaned}' is now at {short(new_tip)} on {short(base)} (it was {short(tip)}; "
            f"`git retcon undo` puts it back).")
    if failed is not None:
        ui.bad(f"Commit {failed.k + 1}/{len(spec.commits)} does not pass on the new base: "
               f"{'; '.join(r.reason() for r in failed.results if not r.passed)}")
    elif conflict is None:
        ui.good(f"✓ Restacked: {plural(sum(1 for r in kept if r.commits), 'logical commit')} re-made, "
                "built and tested on the new base.")


def stopped_text(stored: Stored) -> str | None:
    """For absorb after a restack that left work: what to run (None: the spec is complete)."""
    k = stored.spec.current()
    if k is None:
        return None
    return (f"the restack left commit {k + 1}/{len(stored.spec.commits)} to build again on the new base: "
            f"finish it with `git retcon run {stored.name}` (then absorb what is left), "
            f"or put everything back with `git retcon undo {stored.name}`")
