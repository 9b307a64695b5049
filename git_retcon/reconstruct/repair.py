"""Repair as a search: when a commit fails, the candidate hunks the failure points at (the rework
brief's: a missing name's definition, the file or test it names) are tried one by one, smallest
first, each tree built and tested by plain code (the records answer for a tree tested before),
before all of them together are; the first that passes and leaves every later logical commit
something of its own is the fix, committed with no model call. The tool conversation comes only
after every candidate failed, and the output says what each failed with.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from git_retcon import diff
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.plumbing import get_commit
from git_retcon.reconstruct import steps
from git_retcon.reconstruct.empty import emptied
from git_retcon.reconstruct.work import Work

if TYPE_CHECKING:
    from git_retcon.rework import Candidate

ALONE_AT_MOST = 4        # single candidates tried at most, each a build and a test run


@dataclass
class Search:
    """The candidates that passed alone (the smallest first found), and what each tried failed with."""

    passed: list[Candidate] | None = None
    tried: list[tuple[Candidate, str]] = field(default_factory=list)


def search(w: Work, tip: CommitId, candidates: list[Candidate]) -> Search:
    """Each candidate alone on tip, smallest first, until one passes (see the module's comment)."""
    out = Search()
    if len(candidates) < 2:
        return out      # one candidate, or none: the fix step tries it as it is
    repo = w.run.repo
    tip_tree = tree_of(get_commit(repo, tip))
    for c in sorted(candidates, key=lambda c: c.hunk.added_lines + c.hunk.removed_lines)[:ALONE_AT_MOST]:
        try:
            tree = TreeId(diff.tree_with(repo, tip_tree, [c.hunk]))
        except ValueError:
            continue
        if emptied(w, tip_tree, tree):
            out.tried.append((c, "it would leave a later commit with nothing of its own"))
            continue
        w.wt.reset_to_tree(tree, tip)
        result = steps.check_candidates(w, f"Trying the candidate {c.hunk.path} alone ({c.reason})...")
        if result is None or result.passed:
            out.passed = [c]
            break
        out.tried.append((c, result.reason()))
    w.wt.reset(tip)
    return out
