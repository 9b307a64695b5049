"""A planned commit made from lines: where the spec's `hunks` name atoms (parts of a hunk, as
`id:LINES`, owners/atoms.py), each commit's tree is worked out by plain code from the merge base.

The planned tree of commit k is the merge base with what commits 1..k take: the hunks they name
whole, the lines of the atoms they name, the hunks under their `paths`; the last takes everything.
A commit is the step from the planned tree of k-1 to that of k, put on the branch's tip: as it is
where the tip is the planned tree of k-1, else by a three-way merge (a WIP or a person's commit
below it). A hunk's ids hash its content, so an id of the branch's diff means the same lines for
as long as the branch's diff is the same; no id of the remaining diff is needed.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

from git_retcon.diff import atoms
from git_retcon.git.ids import TreeId, tree_of
from git_retcon.git.plumbing import get_commit
from git_retcon.model.invented import invented
from git_retcon.model.outcome import Proposed, StepOutcome, Stuck
from git_retcon.model.step import StepResult
from git_retcon.owners.place import spec_diff
from git_retcon.reconstruct.work import Work
from git_retcon.state import spec as specmod
from git_retcon.state.spec import paths_match_any


def in_lines(spec: specmod.Spec) -> bool:
    """Whether some logical commit's `hunks` name an atom (then every planned commit is made here)."""
    return any(atoms.parse_id(i) is not None for c in spec.commits for i in c.hunks)


def planned_tree(w: Work, upto: int, extra: Sequence[str] = (), without: Sequence[str] = ()) -> TreeId:
    """The merge base with what logical commits 0..upto take (upto -1: the merge base), with the
    items of `hunks` in extra and not those in without (a repair's: lines moved between commits)."""
    spec = w.spec
    if w.run.branch_diff is None:
        w.run.branch_diff = spec_diff(w.run.repo, spec)
    if upto >= len(spec.commits) - 1:
        return w.br.source_tree
    # What makes the tree: the items and paths of commits 0..upto (a repair's move changes them).
    key = (*((tuple(c.hunks), tuple(c.paths)) for c in spec.commits[: upto + 1]), tuple(extra), tuple(without))
    if key not in w.run.planned:
        w.run.planned[key] = _planned(w, upto, extra, without)
    return TreeId(w.run.planned[key])


def _planned(w: Work, upto: int, extra: Sequence[str], without: Sequence[str]) -> TreeId:
    repo, spec = w.run.repo, w.spec
    assert w.run.branch_diff is not None
    base, _, hunks = w.run.branch_diff
    base_tree = tree_of(get_commit(repo, base))
    taken: dict[str, frozenset[int] | None] = {}
    by_id = {h.id: h for h in hunks}
    for items, paths in [*((c.hunks, c.paths) for c in spec.commits[: upto + 1]), (list(extra), [])]:
        for item in (i for i in items if i not in without):
            part = atoms.parse_id(item)
            if part is None:
                taken[item] = None
            elif part[0] in by_id and taken.get(part[0], frozenset()) is not None:
                taken[part[0]] = (taken.get(part[0]) or frozenset()) | part[1]
        for h in hunks if paths else []:
            if paths_match_any((h.path, h.old_path), paths):
                taken[h.id] = None
    return TreeId(atoms.with_parts(repo, base_tree, hunks, taken)) if taken else base_tree


def make(w: Work, parent: str, message: str) -> StepOutcome:
    """Logical commit k as its planned step put on parent: Proposed, or Stuck where the step does
    not merge onto what the branch holds (the lines it changes were changed below it)."""
    repo = w.run.repo
    parent_tree = tree_of(get_commit(repo, parent))
    tree = onto(w, parent_tree, planned_tree(w, w.k - 1), planned_tree(w, w.k))
    if isinstance(tree, list):
        return Stuck(f"the lines the spec gives commit {w.number} do not apply onto the commits below it "
                     f"(changed there by hand or by a fix): {', '.join(tree[:8])}; edit the spec's `hunks` "
                     f"(git retcon spec edit {w.spec.cleaned}), then redo it (git retcon resolve --redo)")
    if tree == parent_tree:
        return Stuck(f"the lines the spec gives commit {w.number} are on the branch already: nothing to commit")
    base_tree = planned_tree(w, -1)
    drift = invented(repo, parent_tree, tree, base_tree, w.br.source_tree)
    return Proposed(TreeId(tree), message, drift.note())


def onto(w: Work, parent_tree: TreeId, before: TreeId, after: TreeId) -> TreeId | list[str]:
    """The step from planned tree before to after, put on parent_tree: after itself where the
    parent is before, else a three-way merge; the paths that conflict where it does not merge."""
    if parent_tree == before:
        return after
    merged = w.run.repo.merge_trees(before, parent_tree, after)
    if merged.conflicts is not None:
        return sorted({e.path for side in merged.conflicts for e in side if e is not None})
    return TreeId(str(merged.write_tree(w.run.repo)))


def step(w: Work, parent: str, message: str) -> StepResult:
    """A planned commit whose hunks the questions split into atoms, as a step: its tree is plain
    code's, the worktree is checked out at it, and the build and tests judge it."""
    start = time.monotonic()
    outcome = make(w, parent, message)
    if isinstance(outcome, Proposed):
        w.wt.reset_to_tree(outcome.tree, parent)   # the judge builds what the worktree holds
    return StepResult(outcome, seconds=time.monotonic() - start)
