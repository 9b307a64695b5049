"""A spec saved over one that ran: its logical commits may come in another order, or some may
be new or gone. The history of the unchanged prefix is kept (complete logical commits whose
commits still lead the cleaned branch, in order, and the one under way after them); every
later logical commit starts afresh, and the cleaned branch is cut back to the last commit
kept, so that no logical commit is ever built on the wrong parent. What is cut stays
reachable from refs/retcon-backup/<name>, and `git retcon undo` puts it back.

Write order: the backup ref, the branch (CAS), then the spec (by the caller): a kill after
the branch moved leaves a spec whose histories name commits past the branch, which the next
save realigns again, or a run refuses naming them.
"""
from __future__ import annotations

from dataclasses import dataclass

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import ownership
from git_retcon.git.ids import CommitId
from git_retcon.git.plumbing import cas_ref, fork_point, full_sha, ref_target, short
from git_retcon.state import spec as specmod

BACKUP_PREFIX = "refs/retcon-backup/"


@dataclass
class Cut:
    """What a save cut: the logical commits whose history was cleared (0-based), and the branch."""

    cleared: list[int]
    kept_tip: CommitId | None = None     # the branch's new tip (None: not moved)
    old_tip: CommitId | None = None
    backup: str = ""

    def lines(self, cleaned: str) -> list[str]:
        out = []
        if self.cleared:
            which = ", ".join(str(specmod.number(k)) for k in self.cleared)
            out.append(f"Logical commit{'s' if len(self.cleared) > 1 else ''} {which} changed place or content "
                       "after a run: their history is cleared, the next run builds them afresh.")
        if self.kept_tip is not None:
            out.append(f"Cut '{cleaned}' back to {short(self.kept_tip)}, the last commit still in order "
                       f"(the commits past it stay reachable from {self.backup}; `git retcon undo` puts them back).")
        return out


def realign(repo: pygit2.Repository, old: specmod.Spec | None, new: specmod.Spec) -> Cut:
    """Clear the histories of new's logical commits past its unchanged prefix (in place), and
    cut the cleaned branch back to that prefix. The caller holds the spec's lock and saves
    new afterwards."""
    if old is None or not any(c.history for c in old.commits):
        return Cut([])
    try:
        base = str(fork_point(repo, new.source, new.remote, "").base.id)
    except RetconError:
        base = None
    chain = ownership.chain(repo, new.cleaned, base).commits if base else []
    kept, at = _prefix(repo, new, chain)
    cleared = [k for k, c in enumerate(new.commits[kept:], start=kept) if c.history]
    for k in cleared:
        new.commits[k].history.clear()
    cut = Cut(cleared)
    # The branch goes back to what the spec now records, when it held more of what the old one did
    # (commits past them that no spec recorded, a human's, stay: the next run adopts them).
    old_made = sum(len(c.created) for c in old.commits)
    tip = ref_target(repo, ownership.branch_ref(new.cleaned))
    if base is not None and tip is not None and len(chain) > at and (cleared or old_made > at):
        keep = chain[at - 1] if at else CommitId(base)
        ownership.refuse_checked_out(repo, new.cleaned)
        backup = BACKUP_PREFIX + new.cleaned
        cas_ref(repo, backup, tip, ref_target(repo, backup), "retcon: backup before a reordered spec's cut")
        ownership.move_branch(repo, new.cleaned, keep, tip, "cut back for a reordered spec")
        cut.kept_tip, cut.old_tip, cut.backup = keep, tip, backup
    return cut


def _prefix(repo: pygit2.Repository, spec: specmod.Spec, chain: list[CommitId]) -> tuple[int, int]:
    """(logical commits kept, branch commits kept): complete ones whose commits lead the chain
    in order, then the one under way if its commits follow (a later one is never kept: an
    inserted or moved commit before it changes what it is built on)."""
    at = 0
    for upto, c in enumerate(spec.commits, start=1):    # upto: the logical commits up to this one
        mine = [full_sha(repo, s) for s in c.created]
        if chain[at: at + len(mine)] != mine:
            return upto - 1, at
        at += len(mine)
        if c.state != "complete":
            return upto, at      # this one kept, under way
    return len(spec.commits), at
