"""Dropping what a run made: `git retcon abort` (the cleaned branch, if git-retcon made
it, the build worktree, the --jobs pool, the spec's history) and `git retcon spec rm`
(the spec itself and its build worktree). Both under the spec's lock; a branch is
deleted compare-and-swap, and only one git-retcon owns that no work tree has checked out.
"""
from __future__ import annotations

from collections.abc import Callable

from git_retcon.git import ownership
from git_retcon.git.plumbing import cas_ref, ref_target, short
from git_retcon.sandbox.pool import remove_pool
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import oplog
from git_retcon.state.store import Store, Stored


def abort(store: Store, stored: Stored, say: Callable[[str], None]) -> None:
    """Drop the run of stored's spec; the spec keeps its commits and hints, and its old
    history stays in the spec's own chain (git log refs/retcon/NAME)."""
    spec = stored.spec
    ref = ownership.branch_ref(spec.cleaned)
    ran = any(c.history for c in spec.commits)
    with store.lock(stored.name), oplog.recording(store, stored.name, "abort",
                                                  oplog.refs_of(spec.cleaned, stored.name)):
        tip = ref_target(store.repo, ref)
        # Only a branch git-retcon made goes; another is the user's, whatever the spec says.
        kept = ownership.spec_branch_foreign(store.repo, stored.name, spec.cleaned, spec.source, spec.remote,
                                             [s for c in spec.commits for s in c.created], ran) if tip else None
        if tip is not None and kept is None:
            ownership.refuse_checked_out(store.repo, spec.cleaned)
            cas_ref(store.repo, ref, None, tip, "retcon: abort")
            say(f"Deleted branch {spec.cleaned} (was {short(tip)}).")
        elif kept is not None:
            say(f"Kept branch {spec.cleaned} ({short(tip)}): {kept}, so it is not git-retcon's to delete.")
        removed = Worktree.remove(store.repo, stored.name)
        if removed:
            say("Removed the build worktree.")
        if pooled := remove_pool(store.repo, stored.name):
            say(f"Removed the --jobs pool ({pooled} worktree{'s' if pooled > 1 else ''}).")
            removed = True
        if tip is None and not removed and not ran:
            say(f"Nothing to abort: '{stored.name}' never ran (no cleaned branch, build worktree or "
                "history); the spec is kept (delete it with `git retcon spec rm`).")
        if ran:
            before = stored.commit
            for c in spec.commits:
                c.history.clear()
            store.update(stored, f"abort: history cleared (was {short(before)})")
            say(f"Cleared the run's history (the old one is {short(before)} in git log refs/retcon/{stored.name}).")


def remove_spec(store: Store, stored: Stored) -> str:
    """Delete the spec (refs/retcon/NAME) and its build worktree; the cleaned branch and its
    notes stay the user's. Returns the line that says what was done."""
    with store.lock(stored.name), oplog.recording(store, stored.name, "spec rm",
                                                  oplog.refs_of(stored.spec.cleaned, stored.name)):
        store.drop(stored, "retcon: spec rm")
        removed = Worktree.remove(store.repo, stored.name)
        removed = bool(remove_pool(store.repo, stored.name)) or removed
    kept = f"; the branch '{stored.spec.cleaned}' is kept" if ref_target(
        store.repo, f"refs/heads/{stored.spec.cleaned}") else ""
    return (f"Deleted spec '{stored.name}' (was {short(stored.commit)})"
            + ("; removed its build worktree" if removed else "") + kept + ".")
